/*
 * plugin-unload: the SRCU article's "nomoresrcu" teardown on real code.
 *
 * A host dlopen()s a plugin; worker threads call its plugin_work()
 * through a gate-protected pointer, and the calls sleep.  The host then
 * unloads it: srcu_gate_shutdown() (on return no worker is inside the
 * plugin, and none can get in), then dlclose(), which unmaps the code.
 * Workers that arrive later get -ESHUTDOWN and carry on without it.  A
 * call into the unmapped plugin would be a SIGSEGV; every call either
 * returns the right answer or is refused with -ESHUTDOWN.
 *
 *   plugin-unload PLUGIN.so [--cycles N] [--workers N]
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srcu_gate.h"

struct plugin {
	void *handle;
	int (*work)(int);
};

static struct srcu_gate gate;
static struct plugin *loaded;   /* valid while the gate is open */
static int stop;
static unsigned long calls, refused, wrong;

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* One call, or a clean refusal: never a call into unloaded code. */
static void call_plugin(int x)
{
	int tag = srcu_gate_enter(&gate);

	if (tag == -ESHUTDOWN) {
		__atomic_fetch_add(&refused, 1, __ATOMIC_RELAXED);
		return;   /* carry on without the plugin */
	}
	if (tag < 0) {
		fprintf(stderr, "plugin-unload: enter failed: %d\n", tag);
		__atomic_fetch_add(&wrong, 1, __ATOMIC_RELAXED);
		return;
	}
	struct plugin *p = srcu_dereference(loaded, &gate.srcu);

	if (p->work(x) != 2 * x + 1)
		__atomic_fetch_add(&wrong, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
	srcu_gate_exit(&gate, tag);
}

static void *worker(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		call_plugin(rand_r(&seed) % 1000);
		if (rand_r(&seed) % 4 == 0)
			sleep_us(rand_r(&seed) % 50);
	}
	return NULL;
}

__attribute__((unused)) static int mapped(const char *path)
{
	char line[4096], *base = strrchr(path, '/');
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	base = base ? base + 1 : (char *)path;
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, base))
			found = 1;
	if (f)
		fclose(f);
	return found;
}

/* Load, let the workers use it, unload under them, let them go on. */
static int cycle(const char *path, int nworkers, unsigned int seed)
{
	struct plugin p;
	pthread_t t[64];
	int i;

	p.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p.handle) {
		fprintf(stderr, "plugin-unload: %s\n", dlerror());
		return -1;
	}
	*(void **)&p.work = dlsym(p.handle, "plugin_work");
	if (!p.work || srcu_gate_init(&gate) != 0)
		return -1;
	srcu_set_name(&gate.srcu, "plugin");
	srcu_assign_pointer(loaded, &p);
	stop = 0;
	for (i = 0; i < nworkers; i++)
		pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(seed + i));
	sleep_us(2000 + rand_r(&seed) % 20000);
	srcu_gate_shutdown(&gate);          /* nobody is inside, nobody gets in */
	dlclose(p.handle);                  /* the code is gone */
#ifdef __GLIBC__   /* musl's dlclose() never unmaps: nothing to check there */
	if (mapped(path)) {
		fprintf(stderr, "plugin-unload: the plugin is still mapped after dlclose\n");
		return -1;
	}
#endif
	sleep_us(2000);                     /* workers keep coming: refused */
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nworkers; i++)
		pthread_join(t[i], NULL);
	return srcu_gate_destroy(&gate);
}

int main(int argc, char **argv)
{
	int cycles = 20, workers = 8, i;

	if (argc < 2) {
		fprintf(stderr, "usage: plugin-unload PLUGIN.so [--cycles N] [--workers N]\n");
		return 2;
	}
	for (i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--cycles"))
			cycles = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--workers"))
			workers = atoi(argv[i + 1]);
	}
	if (workers < 1 || workers > 64)
		return 2;
	for (i = 0; i < cycles; i++)
		if (cycle(argv[1], workers, (unsigned int)i * 1000 + 1) != 0)
			return 1;
	printf("plugin-unload: %d load/unload cycles, %d workers: %lu calls answered, "
	       "%lu refused with -ESHUTDOWN after unload, %lu wrong, 0 crashes\n",
	       cycles, workers, calls, refused, wrong);
	return wrong ? 1 : 0;
}
