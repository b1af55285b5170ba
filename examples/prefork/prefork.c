/*
 * prefork: a pre-forking server's lookup table, read by worker processes
 * under a process-shared domain (doc/shared.md).
 *
 * The parent creates the domain in a memfd and forks workers, which are
 * attached already.  Workers look keys up inside srcu_read_lock()
 * sections and sleep there (a request's I/O).  The parent replaces
 * records: it publishes a new one, waits with synchronize_srcu(), and only
 * then reuses the old one.  Halfway through, a worker's request hangs
 * inside its section and the parent SIGKILLs it: the next grace period
 * finds it dead, ends its section and goes on (the stall handler says so).
 *
 *   prefork [--duration S]
 *
 * tests/test_prefork.c is the same server with the checks that prove it.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <srcu.h>

#define NWORKERS 3
#define NKEYS    16
#define NRECORDS (2 * NKEYS)      /* one current per key, the rest spare */

struct record {
	unsigned int key, version;
};

/* In shared memory, linked by indices, not pointers: a process that
 * attaches by exec maps the table at an address of its own. */
struct table {
	int stop;
	int hang, hung;               /* the pid whose request hangs; it has */
	unsigned int current[NKEYS];  /* key -> index of its record */
	struct record records[NRECORDS];
};

static struct srcu_struct *sp;
static struct table *tbl;
static unsigned int spare[NRECORDS], nspare;   /* the parent's alone */

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void worker(unsigned int seed)
{
	unsigned long lookups = 0;

	/* Take our reader slot now: a full file is an error here rather
	 * than an abort at the first section. */
	if (srcu_shared_reserve(sp, 1) != 0)
		_exit(1);
	while (!__atomic_load_n(&tbl->stop, __ATOMIC_RELAXED)) {
		unsigned int key = (unsigned int)rand_r(&seed) % NKEYS;
		int idx = srcu_read_lock(sp);
		/* Acquire (srcu_dereference() under SRCU_DEREFERENCE_ACQUIRE,
		 * on an index): pairs with the parent's release, so the
		 * record's contents are seen. */
		unsigned int i = __atomic_load_n(&tbl->current[key], __ATOMIC_ACQUIRE);
		const struct record *r = &tbl->records[i];

		/* r is ours until the unlock, asleep or not: the parent
		 * reuses a record only after a grace period. */
		sleep_ms(1 + rand_r(&seed) % 5);   /* the request's I/O */
		lookups += r->key == key;          /* always true */
		if (__atomic_load_n(&tbl->hang, __ATOMIC_RELAXED) == getpid()) {
			__atomic_store_n(&tbl->hung, 1, __ATOMIC_RELAXED);
			for (;;)
				pause();   /* inside, until the SIGKILL */
		}
		srcu_read_unlock(sp, idx);
	}
	printf("prefork: worker %d: %lu lookups\n", getpid(), lookups);
	fflush(stdout);               /* _exit() does not */
	_exit(srcu_shared_detach(sp) == 0 ? 0 : 1);
}

/* Replace key's record.  The old one may be in a worker's hands until a
 * grace period ends; a worker killed holding it does not delay that. */
static void update(unsigned int key, unsigned int version)
{
	unsigned int fresh = spare[--nspare];
	unsigned int old = tbl->current[key];   /* only we write it */

	tbl->records[fresh] = (struct record){ key, version };
	/* Release (srcu_assign_pointer() on an index): a worker that loads
	 * fresh sees the record written above. */
	__atomic_store_n(&tbl->current[key], fresh, __ATOMIC_RELEASE);
	synchronize_srcu(sp);
	spare[nspare++] = old;        /* no section can reach it now */
}

/* Kill pid inside its section.  No update runs meanwhile: its grace
 * period would wait for the hung request. */
static void kill_inside(pid_t pid)
{
	__atomic_store_n(&tbl->hang, pid, __ATOMIC_RELAXED);
	while (!__atomic_load_n(&tbl->hung, __ATOMIC_RELAXED))
		sleep_ms(1);
	kill(pid, SIGKILL);
}

static void on_report(const struct srcu_stall *s, void *arg)
{
	(void)arg;
	/* Recoveries only: no section here lasts long enough to stall. */
	if (s->dead_pid)
		printf("prefork: process %d died inside %lu section(s); ended\n",
		       s->dead_pid, s->dead_sections);
}

static int setup(void)
{
	int fd = memfd_create("prefork-srcu", MFD_CLOEXEC);
	int err = fd < 0 ? -errno : init_srcu_struct_shared(fd, NWORKERS + 1, "prefork", &sp);

	if (err) {
		fprintf(stderr, "prefork: init_srcu_struct_shared: %s\n", strerror(-err));
		/* 77: shared domains are not available here. */
		return err == -ENOSYS || err == -EOPNOTSUPP ? 77 : 1;
	}
	close(fd);                    /* the library keeps its own */
	srcu_set_stall_handler(on_report, NULL);
	tbl = mmap(NULL, sizeof(*tbl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (tbl == MAP_FAILED)
		return 1;
	for (unsigned int k = 0; k < NKEYS; k++) {
		tbl->records[k] = (struct record){ k, 0 };
		tbl->current[k] = k;  /* before any fork: no ordering needed */
	}
	for (unsigned int i = NKEYS; i < NRECORDS; i++)
		spare[nspare++] = i;
	return 0;
}

/* Update until ms have passed; the next version. */
static unsigned int run_updates(double ms, unsigned int version)
{
	double end = now_ms() + ms;

	do {
		update(version % NKEYS, version);
		version++;
	} while (now_ms() < end);
	return version;
}

int main(int argc, char **argv)
{
	double ms = argc == 3 && !strcmp(argv[1], "--duration") ? atof(argv[2]) * 1e3 : 2e3;
	pid_t pids[NWORKERS];
	unsigned int n;
	int err = setup(), status, failed = 0;
	double t;

	if (err)
		return err;
	/* Lines in order even in a pipe, and none buffered for fork() to copy. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int w = 0; w < NWORKERS; w++) {
		if ((pids[w] = fork()) == 0)
			worker((unsigned int)getpid());
		if (pids[w] < 0)
			return 1;
	}
	n = run_updates(ms / 2, 0);
	kill_inside(pids[0]);
	t = now_ms();
	n = run_updates(0, n);        /* one update: its grace period recovers */
	printf("prefork: worker %d killed; the next grace period took %.1f ms\n",
	       pids[0], now_ms() - t);
	waitpid(pids[0], NULL, 0);
	n = run_updates(ms / 2, n);
	__atomic_store_n(&tbl->stop, 1, __ATOMIC_RELAXED);
	for (int w = 1; w < NWORKERS; w++)
		if (waitpid(pids[w], &status, 0) != pids[w] || !WIFEXITED(status) ||
		    WEXITSTATUS(status) != 0)
			failed = 1;
	printf("prefork: %u updates in all\n", n);
	return srcu_shared_detach(sp) == 0 && !failed ? 0 : 1;
}
