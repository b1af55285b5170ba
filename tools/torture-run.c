/*
 * torture-run.c: the run as every part of srcu-torture sees it: its state
 * (struct torture_run, in the shared mapping with --processes), the
 * mode's operations, the writers and their objects (set up by
 * torture-pipeline.c), the clock, the stop, the failures and the test-only
 * reader delay.  Below everything but the configuration: the pipeline,
 * the liveness oracle and the modes call down into it, and it calls
 * nothing of theirs (a failure reaches the mode through ops->announce).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "srcu-torture.h"

static struct torture_run private_run;
struct torture_run *run = &private_run;
const struct torture_ops *ops;
struct writer *writers;
int nwriters;
struct wstats *wstats;
struct tobj *objs;
unsigned int nobjs;

int64_t now_ns(void)
{
	return clock_now_ns();
}

/* To a deadline: a sleep restarted with its remaining time after each
 * signal never ends under a signal storm (timer slack outlasts the storm's
 * period), holding a reader's section open for ever. */
void sleep_ns(int64_t ns)
{
	clock_sleep_ns(ns);
}

void sleep_log_uniform(unsigned int *seed, int64_t min_ns, int64_t max_ns)
{
	int64_t ns = min_ns;

	while (ns < max_ns && rnd(seed) % 2)
		ns *= 2;
	sleep_ns(ns + (int64_t)(rnd(seed) % (unsigned int)ns));
}

double elapsed_s(void)
{
	return (double)(now_ns() - run->start_ns) / 1e9;
}

bool stopping(void)
{
	return __atomic_load_n(&run->stop, __ATOMIC_ACQUIRE);
}

void torture_stop(void)
{
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELEASE);
}

/* Lock-free: any process of the run may fail it. */
void torture_fail(const char *fmt, ...)
{
	unsigned long n = __atomic_fetch_add(&run->failures, 1, __ATOMIC_SEQ_CST);
	char msg[sizeof(run->first_failure)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n == 0) {
		run->first_failure_s = elapsed_s();
		memcpy(run->first_failure, msg, sizeof(msg));
	}
	ops->announce(n, msg);
	if (cfg.stop_on_fail)
		torture_stop();
}

__thread int torture_in_handler;

void torture_reader_delay(void)
{
	static __thread unsigned int seed;

	/* Not in a signal handler: a storm's timer fires every 20 us, and a
	 * handler that sleeps longer runs again as it returns, for ever,
	 * while the thread it interrupted holds its section open (a
	 * torture.storms run hung so on a loaded machine). */
	if (torture_in_handler)
		return;
	if (!seed)
		seed = (unsigned int)now_ns() | 1;
	if (rnd(&seed) % 1000 < (unsigned int)cfg.reader_delay_permille)
		sleep_log_uniform(&seed, 1000, 2 * MS);
}
