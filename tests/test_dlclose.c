/*
 * test_dlclose: libsrcu loaded and unloaded with dlopen()/dlclose() (by a
 * plugin that depends on it) while threads that have read stay alive.
 *
 * Bug caught: libsrcu.so was unmapped by the last dlclose() although
 * threads that had read still carried its thread-exit destructor (a
 * pthread key), so each such thread died with SIGSEGV at its exit.  The
 * library is now linked with -z nodelete: it stays mapped once loaded.
 *
 * Usage: test_dlclose PLUGIN.so (this program does not link libsrcu).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define CYCLES 10

struct reader {
	void (*read)(void);
	int has_read, may_exit;
};

static void flag_set(int *f) { __atomic_store_n(f, 1, __ATOMIC_SEQ_CST); }

static void flag_wait(int *f)
{
	while (!__atomic_load_n(f, __ATOMIC_SEQ_CST))
		usleep(100);
}

/* Reads through the plugin, then outlives it. */
static void *reader_main(void *arg)
{
	struct reader *r = arg;

	r->read();
	flag_set(&r->has_read);
	flag_wait(&r->may_exit);
	return NULL;   /* libsrcu's thread-exit destructor runs now */
}

static int one_cycle(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	struct reader r = { 0, 0, 0 };
	int (*fini)(void);
	pthread_t t;

	if (!h) {
		fprintf(stderr, "dlopen(%s): %s\n", path, dlerror());
		return 1;
	}
	r.read = (void (*)(void))dlsym(h, "plugin_read");
	fini = (int (*)(void))dlsym(h, "plugin_fini");
	if (!r.read || !fini || pthread_create(&t, NULL, reader_main, &r) != 0) {
		fprintf(stderr, "plugin symbols or thread missing\n");
		return 1;
	}
	flag_wait(&r.has_read);
	r.read();   /* this thread reads too, and lives on */
	if (fini() != 0) {
		fprintf(stderr, "plugin_fini: cleanup failed\n");
		return 1;
	}
	dlclose(h);
	flag_set(&r.may_exit);
	pthread_join(t, NULL);
	/* musl's dlclose() unloads nothing: the plugin keeps its cleaned-up
	 * static domain, which a next cycle could not use. */
	h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (h) {
		dlclose(h);
		return 2;
	}
	return 0;
}

int main(int argc, char **argv)
{
	alarm(60);
	if (argc < 2) {
		fprintf(stderr, "usage: test_dlclose PLUGIN.so\n");
		return 2;
	}
	for (int i = 0; i < CYCLES; i++) {
		int r = one_cycle(argv[1]);

		if (r == 2) {
			printf("test_dlclose: PASS (1 cycle: this C library's dlclose() unloads "
			       "nothing, so the plugin cannot start again)\n");
			return 0;
		}
		if (r != 0)
			return 1;
	}
	printf("test_dlclose: PASS (%d dlopen/dlclose cycles, threads exited after each)\n",
	       CYCLES);
	return 0;
}
