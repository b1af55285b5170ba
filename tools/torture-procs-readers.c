/*
 * torture-procs-readers.c: srcu-torture --processes' readers.  Objects
 * are published by index in the arena (the index flavour).  Reader
 * processes are children of the torture process, attached by
 * inheritance; --readers threads each, in sections of random length
 * (nothing, microseconds, and 10-30 ms, long enough for a waiting grace
 * period to look for dead owners).  Thread 0 now and then runs a grace
 * period itself, so that kills also land in grace periods and on the GP
 * lock.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "torture-procs.h"

static int reader_orphaned;        /* a reader process: its parent is gone */

static void sleep_range(unsigned int *seed, int64_t min_ns, int64_t max_ns)
{
	sleep_ns(min_ns + (int64_t)(rnd(seed) % (unsigned int)(max_ns - min_ns + 1)));
}

/* A process's start time (field 22 of /proc/<pid>/stat, clock ticks),
 * low 32 bits as libsrcu's owner words keep it; 0 if unreadable.  With
 * the pid it names one process: a long run forks more processes (and
 * threads) than pid_max, and a killed pid comes back. */
static unsigned int proc_start(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');   /* the command may hold spaces */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return (unsigned int)start;
}

/* ---- the index flavour ---- */

void idx_publish(struct writer *w, unsigned int i)
{
	srcu_assign_pointer(w->st->head, i);
}

struct tobj *idx_enter(struct writer *w, unsigned int *seed, int depth, int *idx,
		       unsigned long *b0)
{
	unsigned int i;

	(void)seed;
	(void)depth;
	*idx = srcu_read_lock(w->dom);
	*b0 = srcu_batches_completed(w->dom);
	i = srcu_dereference(w->st->head, w->dom);
	if (i < nobjs)
		return &objs[i];
	torture_fail("a reader loaded object index %u, outside the pool of %u", i, nobjs);
	return NULL;
}

/* Longer than a waiting GP's first look for dead owners (10 ms): a GP
 * that takes this live reader for dead ends its section here. */
void idx_long_sleep(struct reader_stats *st, unsigned int *seed)
{
	bump(&st->long_sleeps);
	sleep_range(seed, 10 * MS, 30 * MS);
}

/* ---- readers ---- */

static bool reader_stopping(void)
{
	return stopping() || __atomic_load_n(&reader_orphaned, __ATOMIC_ACQUIRE);
}

struct rthread {
	int slot, k;
	unsigned int seed;
	pthread_t t;
};

static void *reader_thread(void *arg)
{
	struct rthread *rt = arg;
	struct pproc *p = &A->procs[rt->slot];
	struct reader_stats *st = &p->t[rt->k];
	unsigned int seed = rt->seed;

	while (!reader_stopping()) {
		/* Thread 0 runs a grace period now and then: kills then also
		 * land in GPs of reader processes, holding the GP lock. */
		if (rt->k == 0 && rnd(&seed) % 128 == 0) {
			struct srcu_struct *sp = doms[rnd(&seed) % (unsigned int)ndoms];

			__atomic_store_n(&p->in_gp, 1, __ATOMIC_RELAXED);
			if (rnd(&seed) % 4 == 0)
				synchronize_srcu_expedited(sp);
			else
				synchronize_srcu(sp);
			__atomic_store_n(&p->in_gp, 0, __ATOMIC_RELAXED);
			bump(&p->gps);
			continue;
		}
		torture_read_section(st, &seed, 0);
	}
	return NULL;
}

/* Detach a domain this process holds no section of.  -EBUSY comes back
 * while the callbacks inherited from the torture process are pending
 * here, and also while any process's grace period is needed (the
 * domain's gp_seq_needed, in the file): the writers' last ones, at the
 * end of the run.  So retry for a while. */
void detach_idle(struct srcu_struct *sp)
{
	int64_t until = now_ns() + (int64_t)(cfg.stall_s * 1e9);
	int err;

	while ((err = srcu_shared_detach(sp)) == -EBUSY && now_ns() < until)
		sleep_ns(MS);
	if (err)
		torture_fail("process %d: srcu_shared_detach() of an idle domain returned %d",
		      (int)getpid(), err);
}

/* The body of a reader process (the child of a fork of the torture
 * process: attached to every domain by inheritance).  Never returns. */
static __attribute__((noreturn)) void reader_process(int slot, unsigned int seed)
{
	struct rthread rt[P_MAX_THREADS];
	int tpid = run->torture_pid, k, err;

	if (getppid() != tpid)
		_exit(0);   /* the torture process died before we started */
	for (int d = 0; d < ndoms; d++)
		if (srcu_read_lock_held(doms[d]))
			torture_fail("reader process %d inherited a read-side section of domain tshm-%d "
			      "that nobody holds (its parent's forking thread was outside)",
			      (int)getpid(), d);
	srcu__torture_reader_delay = cfg.reader_delay_permille ? torture_reader_delay : NULL;
	/* A slot per thread, while an error can still be reported. */
	for (int d = 0; d < ndoms; d++)
		if ((err = srcu_shared_reserve(doms[d], (unsigned int)cfg.readers)) != 0) {
			torture_fail("reader process %d: srcu_shared_reserve(%d) returned %d",
			      (int)getpid(), cfg.readers, err);
			_exit(3);
		}
	for (k = 0; k < cfg.readers; k++) {
		rt[k].slot = slot;
		rt[k].k = k;
		rt[k].seed = (seed ^ (unsigned int)k * 0x9e3779b9u) | 1;
		if (pthread_create(&rt[k].t, NULL, reader_thread, &rt[k]) != 0) {
			torture_fail("reader process %d: pthread_create failed", (int)getpid());
			_exit(3);
		}
	}
	/* Orphaned (the torture process died: a fatal error, a busted
	 * flavour): stop, but let the sections in flight finish their
	 * checks first. */
	while (!stopping() && getppid() == tpid)
		sleep_ns(10 * MS);
	__atomic_store_n(&reader_orphaned, 1, __ATOMIC_RELEASE);
	for (k = 0; k < cfg.readers; k++)
		pthread_join(rt[k].t, NULL);
	if (getppid() != tpid)
		_exit(0);
	/* Leave as a well-behaved process does: no slot is left for a
	 * grace period to recover (which would be a report for a process
	 * that was never killed). */
	for (int d = 0; d < ndoms; d++)
		detach_idle(doms[d]);
	_exit(0);
}

/* Lock (or unlock) every domain, idx[] the indices. */
static void lock_all(int *idx, bool lock)
{
	for (int d = 0; d < ndoms; d++)
		if (lock)
			idx[d] = srcu_read_lock(doms[d]);
		else
			srcu_read_unlock(doms[d], idx[d]);
}

/* Fork a reader process into slot; its pid, or -1.  The forking thread
 * reads every domain before the fork (its slots are mapped) and opens a
 * section on each the moment fork() returns: a child whose fork handler
 * copied its counts from those slot pages, which the parent goes on
 * counting in, would inherit a section nobody holds (reader_process()
 * checks first thing).  The sections are held 5 ms, while the child's
 * handler runs. */
int fork_reader(int slot, unsigned int *seed)
{
	struct pproc *p = &A->procs[slot];
	unsigned int child_seed = rnd(seed);
	int idx[P_MAX_DOMAINS];
	pid_t pid;

	lock_all(idx, true);
	lock_all(idx, false);

	/* What a killed predecessor left (it is dead: waitid() said so). */
	for (int k = 0; k < cfg.readers; k++)
		__atomic_store_n(&p->t[k].inside, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&p->in_gp, 0, __ATOMIC_RELAXED);
	pid = fork();

	if (pid == 0)
		reader_process(slot, child_seed);
	lock_all(idx, true);
	if (pid < 0) {
		lock_all(idx, false);
		torture_fail("fork() of a reader process failed: %s", strerror(errno));
		return -1;
	}
	/* Our child, not reaped: its pid names it while we read this. */
	__atomic_store_n(&p->start, proc_start((int)pid), __ATOMIC_RELEASE);
	__atomic_store_n(&p->pid, (int)pid, __ATOMIC_RELEASE);
	__atomic_store_n(&p->state, PROC_LIVE, __ATOMIC_RELEASE);
	bump(&A->forks);
	/* Held while the child's handler runs (it registers membarrier
	 * first, which takes milliseconds). */
	sleep_ns(5 * MS);
	lock_all(idx, false);
	return (int)pid;
}
