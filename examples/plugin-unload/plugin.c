/*
 * plugin.c: the plugin that examples/plugin-unload loads and unloads.
 * Its work sleeps, as a real plugin's I/O would, so that callers are
 * often inside it when the host decides to unload it.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>

int plugin_work(int x);

int plugin_work(int x)
{
	struct timespec ts = { 0, 20 * 1000 + (x % 8) * 10 * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
	return 2 * x + 1;
}
