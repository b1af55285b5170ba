/*
 * torture-procs.c: srcu-torture --processes N, the grace-period guarantee
 * of a process-shared domain (doc/shared.md) with readers in several
 * processes, which are SIGKILLed at random, inside their sections or not.
 *
 * Three kinds of process take part:
 *
 *   the supervisor   the process srcu-torture started in.  It attaches to
 *                    nothing: it maps the arena, forks the torture
 *                    process, prints progress from the arena, and the
 *                    report.  So a torture process that dies (a libsrcu
 *                    fatal error aborts it, and a busted flavour makes
 *                    one) or hangs is a failure that still gets its
 *                    report and its FAIL line.
 *   the torture      creates the shared domains (one memfd each), runs
 *   process          the writers (--writers synchronize, --async-writers
 *                    call_srcu, --poll-writers polled cookies, spread over
 *                    --domains, at most 4), the chaos thread and a
 *                    monitor, and forks the reader processes.
 *   reader           children of the torture process, attached by
 *   processes        inheritance; --readers threads each, in sections of
 *                    random length (nothing, microseconds, and 10-30 ms,
 *                    long enough for a waiting grace period to look for
 *                    dead owners).  Thread 0 now and then runs a grace
 *                    period itself, so that kills also land in grace
 *                    periods and on the GP lock.
 *
 * The arena is one more memfd, mapped MAP_SHARED by every process: the
 * objects, one published object per writer, the statistics, the failure
 * count and the first failure's text, the table of reader processes and
 * the pids killed.  Objects are published by index, never by pointer,
 * as in a file that processes map at different addresses.
 *
 * The pipeline (writers, the reader's section and checks, the report) is
 * torture-pipeline.c's; this mode publishes objects by index, finds them
 * in the arena and adds the processes' statistics to the report.  A
 * reader that finds its object poisoned, at age 2 or more, or reused (its
 * generation changed) inside its section, or that saw two grace periods
 * end inside one section, has caught a grace period that did not wait for
 * it.
 *
 * The chaos thread (off with --no-chaos) SIGKILLs a random reader
 * process every 100-500 ms (now and then one just forked, in its first
 * sections), reaps it at once or leaves it a zombie for a while, forks a
 * replacement, and fails the run unless every domain completes two grace
 * periods within --stall seconds (default 5): the second began after the
 * kill, so it had to end the dead reader's sections.  Recoveries are
 * counted from the stall handler's reports (dead_pid), in whichever
 * process runs the grace period; a recovery reported for a process that was never killed (and
 * has not exited) is a failure: libsrcu took a live process for dead.
 *
 * Flavours: srcu, and busted-discardlive (every other process is taken
 * for dead, so a waiting grace period ends live readers' sections): the
 * reports name live processes and readers find their objects aged.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "srcu-torture.h"
#include "../src/torture.h"   /* the library's test-only hooks */

#define P_MAX_DOMAINS 4
#define P_KILLS_MAX   16384            /* a kill every 100 ms for 27 minutes */
#define P_MSGS        8                /* failures printed; the rest are counted */

enum { PROC_NONE, PROC_LIVE, PROC_KILLED, PROC_EXITED };

struct pproc {
	int pid, state;
	unsigned int start;    /* with pid, the process (see proc_start()) */
	int in_gp;             /* its thread 0 runs a grace period now */
	unsigned long gps;     /* grace periods its thread 0 ran */
	/* Per reader thread: after a kill, its successor's in the
	 * replacement process. */
	struct reader_stats t[P_MAX_THREADS];
};

struct pkill {
	int pid;
	unsigned int start;      /* with pid, the process: pids wrap (pid_max) */
	unsigned int recovered;  /* a bit per domain whose recovery was reported */
};

struct arena {
	struct torture_run run;    /* stop, failures, start time ... */
	unsigned long forks, kills, kills_inside, kills_in_gp, kills_young, zombies;
	unsigned long recoveries, recovered_sections, recoveries_exited, stalls;
	int64_t max_kill_gp_ns;
	unsigned long batches[P_MAX_DOMAINS];   /* each domain's GPs, at the end */
	unsigned int nkilled;
	struct pkill killed[P_KILLS_MAX];
	struct wstats w[P_MAX_WRITERS];
	struct pproc procs[P_MAX_PROCS];
	struct tobj obj[];
};

static struct arena *A;
static int ndoms;
static struct srcu_struct *doms[P_MAX_DOMAINS];

static int chaos_done;             /* the torture process: stop killing */
static int reader_orphaned;        /* a reader process: its parent is gone */

/* ---- small helpers ---- */

/* Write a whole message with one write(2): every process prints, and a
 * reader process is the child of a multithreaded fork, where stdio's
 * locks may have been held by another thread at the fork. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	if (n > 0 && write(2, line, (size_t)n) < 0)
		return;
}

/* Every process prints failures: the first few, then a count. */
static void procs_announce(unsigned long n, const char *msg)
{
	(void)n;
	n = __atomic_fetch_add(&A->run.messages, 1, __ATOMIC_RELAXED);
	if (n < P_MSGS)
		say("srcu-torture: %s after %.2f s (pid %d): %s\n",
		    n ? "failure" : "first failure", elapsed_s(), (int)getpid(), msg);
	else if (n == P_MSGS)
		say("srcu-torture: further failures are counted, not printed\n");
}

static void sleep_range(unsigned int *seed, int64_t min_ns, int64_t max_ns)
{
	sleep_ns(min_ns + (int64_t)(rnd(seed) % (unsigned int)(max_ns - min_ns + 1)));
}


/* ---- the stall handler: recoveries, from whichever process ran the GP ---- */

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

/* The owner word (pid and start time) of the dead process whose recovery
 * is reported next in this thread (libsrcu's test-only hook: the report
 * itself carries only the pid). */
static __thread uint64_t reported_owner;

static void at_point(enum srcu__torture_point p, void *arg)
{
	if (p == SRCU_TORTURE_POINT_DEAD_REPORT)
		reported_owner = *(const uint64_t *)arg;
}

/* The start time of the dead process a report names, 0 if unknown. */
static unsigned int reported_start(int pid)
{
	uint64_t o = reported_owner;

	reported_owner = 0;
	return (int)((uint32_t)o & 0x7fffffffu) == pid ? (unsigned int)(o >> 32) : 0;
}

/* Does the process (pid, start) match the one remembered as (rpid,
 * rstart)?  An unknown start time matches by pid alone. */
static bool same_process(int pid, unsigned int start, int rpid, unsigned int rstart)
{
	return pid == rpid && (!start || !rstart || start == rstart);
}

static int domain_index(const char *name)
{
	const char *p = name ? strstr(name, "tshm-") : NULL;

	return p ? atoi(p + 5) : -1;
}

/* The killed process (pid, start): newest first, so that an unknown
 * start time finds the pid's latest holder. */
static struct pkill *find_killed(int pid, unsigned int start)
{
	unsigned int n = __atomic_load_n(&A->nkilled, __ATOMIC_ACQUIRE);

	for (unsigned int i = n; i-- > 0;)
		if (same_process(pid, start, __atomic_load_n(&A->killed[i].pid, __ATOMIC_RELAXED),
				 __atomic_load_n(&A->killed[i].start, __ATOMIC_RELAXED)))
			return &A->killed[i];
	return NULL;
}

/* What the arena says of (pid, start), if it is one of our reader
 * processes now. */
static int reader_state(int pid, unsigned int start)
{
	for (int i = 0; i < cfg.processes; i++)
		if (same_process(pid, start, __atomic_load_n(&A->procs[i].pid, __ATOMIC_ACQUIRE),
				 __atomic_load_n(&A->procs[i].start, __ATOMIC_ACQUIRE)))
			return __atomic_load_n(&A->procs[i].state, __ATOMIC_ACQUIRE);
	return PROC_NONE;
}

/* The chaos thread marks a process killed before it sends SIGKILL, so a
 * recovery for a pid not marked is one of a process we did not kill.
 * Only one that exited on its own (at the end, racing its own detach,
 * which frees its slots) may show up, with no section open. */
static void on_report(const struct srcu_stall *s, void *arg)
{
	int d = domain_index(s->domain), st;
	unsigned int start = reported_start(s->dead_pid);
	struct pkill *k;

	(void)arg;
	if (!s->dead_pid) {
		bump(&A->stalls);
		say("srcu-torture: grace period of domain %s stalled for %.1f s on index %d "
		    "(%u threads, report %u)\n", s->domain, s->waited_s, s->idx, s->nthreads,
		    s->report);
		return;
	}
	k = find_killed(s->dead_pid, start);
	if (k) {
		unsigned int bit = d >= 0 && d < 32 ? 1u << d : 0;

		__atomic_fetch_add(&A->recoveries, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&A->recovered_sections, s->dead_sections, __ATOMIC_RELAXED);
		if (__atomic_fetch_or(&k->recovered, bit, __ATOMIC_RELAXED) & bit)
			torture_fail("the recovery of killed process %d in domain %s was reported twice",
			      s->dead_pid, s->domain);
		return;
	}
	st = reader_state(s->dead_pid, start);
	if (st == PROC_EXITED && !s->dead_sections) {
		__atomic_fetch_add(&A->recoveries_exited, 1, __ATOMIC_RELAXED);
		return;
	}
	if (st == PROC_LIVE || s->dead_pid == run->torture_pid)
		torture_fail("libsrcu took live process %d for dead: it ended %lu of its read-side "
		      "sections in domain %s", s->dead_pid, s->dead_sections, s->domain);
	else
		torture_fail("libsrcu reported process %d dead in domain %s with %lu open sections, "
		      "but srcu-torture never killed it", s->dead_pid, s->domain, s->dead_sections);
}

/* ---- the index flavour ---- */

static void idx_publish(struct writer *w, unsigned int i)
{
	srcu_assign_pointer(w->st->head, i);
}

static struct tobj *idx_enter(struct writer *w, unsigned int *seed, int depth, int *idx,
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
static void idx_long_sleep(struct reader_stats *st, unsigned int *seed)
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
static void detach_idle(struct srcu_struct *sp)
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
static int fork_reader(int slot, unsigned int *seed)
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

/* ---- chaos: kills (the torture process) ---- */

/* Reader processes that died without being killed: a crash. */
static void reap_unexpected(unsigned int *seed)
{
	for (int i = 0; i < cfg.processes; i++) {
		int pid = A->procs[i].pid, status;

		if (A->procs[i].state != PROC_LIVE || waitpid(pid, &status, WNOHANG) != pid)
			continue;
		torture_fail("reader process %d ended by itself (status %#x)", pid, status);
		__atomic_store_n(&A->procs[i].state, PROC_EXITED, __ATOMIC_RELEASE);
		if (!stopping())
			fork_reader(i, seed);
	}
}

static int random_live_slot(unsigned int *seed)
{
	int start = (int)(rnd(seed) % (unsigned int)cfg.processes);

	for (int n = 0; n < cfg.processes; n++) {
		int i = (start + n) % cfg.processes;

		if (__atomic_load_n(&A->procs[i].state, __ATOMIC_ACQUIRE) == PROC_LIVE)
			return i;
	}
	return -1;
}

/* SIGKILL the reader process in slot, fork its replacement, and check
 * that every domain's grace periods go on: two must complete, the second
 * of which began after the kill and so had to end the dead sections.
 * keep_zombie: dead, not reaped (reaped after the next kill); !wait_gps:
 * the replacement is to be killed at once (the next kill checks). */
static bool kill_reader(int slot, bool keep_zombie, bool wait_gps, unsigned int *seed)
{
	struct pproc *p = &A->procs[slot];
	int pid = p->pid, inside = 0, in_gp = __atomic_load_n(&p->in_gp, __ATOMIC_RELAXED);
	unsigned long b0[P_MAX_DOMAINS];
	unsigned int n = A->nkilled;
	siginfo_t si;
	long t0;

	if (n >= P_KILLS_MAX)
		return false;   /* no room to remember it: no more kills */
	for (int k = 0; k < cfg.readers; k++)
		inside |= __atomic_load_n(&p->t[k].inside, __ATOMIC_RELAXED);
	/* Marked before the signal: a recovery can only follow the death. */
	A->killed[n].pid = pid;
	A->killed[n].start = __atomic_load_n(&p->start, __ATOMIC_RELAXED);
	__atomic_store_n(&A->nkilled, n + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&p->state, PROC_KILLED, __ATOMIC_SEQ_CST);
	for (int d = 0; d < ndoms; d++)
		b0[d] = srcu_batches_completed(doms[d]);
	t0 = now_ns();
	kill(pid, SIGKILL);
	/* Wait for the death (WNOWAIT leaves a zombie), so that the
	 * replacement never shares the slot's statistics with it. */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | (keep_zombie ? WNOWAIT : 0)) != 0)
		torture_fail("waitid() for killed reader process %d: %s", pid, strerror(errno));
	else if (si.si_code != CLD_KILLED || si.si_status != SIGKILL)
		torture_fail("reader process %d ended by itself (code %d, status %d) before its kill",
		      pid, si.si_code, si.si_status);
	bump(&A->kills);
	if (inside)
		bump(&A->kills_inside);
	if (in_gp)
		bump(&A->kills_in_gp);
	if (keep_zombie)
		bump(&A->zombies);
	fork_reader(slot, seed);
	for (int d = 0; wait_gps && d < ndoms; d++) {
		while (srcu_batches_completed(doms[d]) - b0[d] < 2) {
			if (stopping())   /* --stop-on-fail: writers end */
				return false;
			if (now_ns() - t0 > (int64_t)(cfg.stall_s * 1e9)) {
				torture_fail("domain tshm-%d completed no grace period in %.0f s after reader "
				      "process %d was killed%s", d, cfg.stall_s, pid,
				      inside ? " inside a section" : "");
				return false;
			}
			sleep_ns(MS / 2);
		}
	}
	store_max(&A->max_kill_gp_ns, now_ns() - t0);
	return true;
}

static void *chaos_thread(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;
	int zombie = 0;

	while (!__atomic_load_n(&chaos_done, __ATOMIC_ACQUIRE) && !stopping()) {
		int64_t until = now_ns() + 100 * MS + (int64_t)(rnd(&seed) % 400) * MS;
		bool keep = rnd(&seed) % 2;
		int slot;

		__atomic_store_n(&run->chaos_progress_ns, now_ns(), __ATOMIC_RELAXED);
		while (now_ns() < until && !__atomic_load_n(&chaos_done, __ATOMIC_ACQUIRE) &&
		       !stopping())
			sleep_ns(5 * MS);
		if (__atomic_load_n(&chaos_done, __ATOMIC_ACQUIRE) || stopping())
			break;
		reap_unexpected(&seed);
		slot = random_live_slot(&seed);
		if (slot < 0)
			continue;
		if (rnd(&seed) % 8 == 0) {
			/* One just forked: killed in its first sections, its
			 * slot reservation or its first slot mapping. */
			kill_reader(slot, false, false, &seed);
			sleep_ns((int64_t)(rnd(&seed) % 3000) * 1000);
			bump(&A->kills_young);
		}
		if (!kill_reader(slot, keep, true, &seed))
			break;
		if (zombie)   /* the previous kill's zombie, reaped only now */
			waitpid(zombie, NULL, 0);
		zombie = keep ? A->killed[A->nkilled - 1].pid : 0;
	}
	if (zombie)
		waitpid(zombie, NULL, 0);
	return NULL;
}

/* ---- the torture process ---- */

/* Every reader process still alive ends (asked through the arena), with
 * status 0. */
static void reap_readers(void)
{
	int64_t deadline = now_ns() + (int64_t)((cfg.stall_s + 5) * 1e9);

	for (int i = 0; i < cfg.processes; i++) {
		int pid = A->procs[i].pid, status = 0;
		pid_t r;

		if (A->procs[i].state != PROC_LIVE)
			continue;
		while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ns() < deadline)
			sleep_ns(MS);
		if (r != pid) {
			torture_fail("reader process %d did not finish when asked to", pid);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			torture_fail("reader process %d ended with status %#x", pid, status);
		}
		__atomic_store_n(&A->procs[i].state, PROC_EXITED, __ATOMIC_RELEASE);
	}
}

/* Writers that cannot be joined hang in a grace period: the run ends
 * here (the supervisor reports). */
static void hang_exit(void)
{
	torture_stop();
	for (int i = 0; i < cfg.processes; i++)
		if (A->procs[i].state == PROC_LIVE)
			kill(A->procs[i].pid, SIGKILL);
	_exit(1);
}

/* Join t by the absolute (CLOCK_REALTIME) deadline; past it, t hangs. */
static void join_or_hang(pthread_t t, const char *who, const struct timespec *deadline)
{
	if (pthread_timedjoin_np(t, NULL, deadline) != 0) {
		torture_fail("%s did not finish: it hangs", who);
		hang_exit();
	}
}

/* One deadline for all the joins of the end of the run: --stall from now. */
static struct timespec join_deadline(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)cfg.stall_s + 1;
	return ts;
}

static void *finish_domains(void *arg)
{
	(void)arg;
	for (int d = 0; d < ndoms; d++) {
		synchronize_srcu(doms[d]);
		A->batches[d] = srcu_batches_completed(doms[d]);
		detach_idle(doms[d]);
	}
	return NULL;
}

/* ---- the monitor's hooks (the torture process) ---- */

/* Each domain's grace periods, for the report. */
static void procs_tick(void)
{
	for (int d = 0; d < ndoms; d++)
		__atomic_store_n(&A->batches[d], srcu_batches_completed(doms[d]), __ATOMIC_RELAXED);
}

static void procs_writer_hangs(int i, double secs)
{
	torture_fail("writer %d made no progress for %.1f s (%lu kills so far): a grace period "
		     "hangs", i, secs, A->kills);
	hang_exit();
}

/* A kill's wait for grace periods fails the run itself after --stall;
 * much longer (the ops' limit) is a fork or waitid that hangs. */
static void procs_chaos_hangs(double secs)
{
	torture_fail("the chaos thread made no progress for %.1f s", secs);
	hang_exit();
}

/* The shared domains, one memfd each, named tshm-<d>. */
static void shared_domains_init(void)
{
	unsigned int slots = (unsigned int)(cfg.processes * (cfg.readers + 1) * 4 + 16);
	char name[16];
	int err;

	for (int d = 0; d < ndoms; d++) {
		int fd = memfd_create("srcu-torture-domain", MFD_CLOEXEC);

		snprintf(name, sizeof(name), "tshm-%d", d);
		err = fd < 0 ? -errno : init_srcu_struct_shared(fd, slots, name, &doms[d]);
		if (err) {
			torture_fail("init_srcu_struct_shared(%u slots) returned %d (%s)", slots, err,
				     strerror(-err));
			exit(2);
		}
		close(fd);   /* the library keeps its own */
	}
}

static __attribute__((noreturn)) void torture_process(void)
{
	unsigned int seed = cfg.seed * 2654435761u + 17;
	struct timespec deadline;
	pthread_t chaos_t;
	char who[48];

	srcu__torture_flavor = cfg.flavor;
	srcu__torture_point = at_point;   /* inherited by the reader processes */
	run->torture_pid = (int)getpid();
	snprintf(run->backend, sizeof(run->backend), "%s", srcu_backend());
	srcu_set_stall_handler(on_report, NULL);
	shared_domains_init();
	writers_init(doms, ndoms);
	for (int i = 0; i < nwriters; i++)
		pthread_create(&writers[i].thread, NULL, torture_writer, &writers[i]);
	for (int i = 0; i < cfg.processes; i++)
		fork_reader(i, &seed);
	run->chaos_progress_ns = now_ns();
	if (cfg.chaos)
		pthread_create(&chaos_t, NULL, chaos_thread, (void *)(uintptr_t)(cfg.seed + 5));
	torture_monitor();
	/* Kills end first, while the writers still run the grace periods
	 * that a kill waits for; then readers and writers end. */
	if (cfg.chaos) {
		__atomic_store_n(&chaos_done, 1, __ATOMIC_RELEASE);
		deadline = join_deadline();
		join_or_hang(chaos_t, "the chaos thread", &deadline);
	}
	torture_stop();
	reap_readers();
	deadline = join_deadline();
	for (int i = 0; i < nwriters; i++) {
		snprintf(who, sizeof(who), "writer %d", i);
		join_or_hang(writers[i].thread, who, &deadline);
	}
	/* Everyone else has gone: one more grace period on each domain, and
	 * a clean detach.  Not after a failure: a broken flavour leaves
	 * counts that no grace period gets past. */
	if (!__atomic_load_n(&run->failures, __ATOMIC_SEQ_CST)) {
		pthread_t t;

		deadline = join_deadline();
		pthread_create(&t, NULL, finish_domains, NULL);
		join_or_hang(t, "the last grace period", &deadline);
	}
	exit(0);
}

/* ---- the supervisor: progress, the end, the report ---- */

static void procs_sum(struct totals *t)
{
	for (int i = 0; i < cfg.processes; i++) {
		t->reader_gps += __atomic_load_n(&A->procs[i].gps, __ATOMIC_RELAXED);
		sum_readers(t, A->procs[i].t, cfg.readers);
	}
	for (unsigned int i = 0; i < A->nkilled; i++)
		t->killed_recovered += A->killed[i].recovered != 0;
}

static void procs_progress_more(char *buf, size_t n)
{
	snprintf(buf, n, "  kills %lu  recoveries %lu", A->kills, A->recoveries);
}

static void procs_report_rates(void)
{
	printf("grace periods completed per domain:");
	for (int d = 0; d < ndoms; d++)
		printf(" %lu", A->batches[d]);
	printf(" (shared by the writers' synchronize calls and the readers')\n");
}

static void procs_report_more(const struct totals *t)
{
	printf("processes: %lu forked, %lu killed (%lu inside a section, %lu in a grace period, "
	       "%lu just after their fork, %lu left zombies for a while)\n", A->forks, A->kills,
	       A->kills_inside, A->kills_in_gp, A->kills_young, A->zombies);
	printf("recoveries: %lu reported (for %lu of the killed processes, %lu sections ended; "
	       "%lu more of processes that exited as they were found); two grace periods of "
	       "every domain within %.1f ms of a kill\n", A->recoveries, t->killed_recovered,
	       A->recovered_sections, A->recoveries_exited, A->max_kill_gp_ns / 1e6);
	printf("poisoned reads %lu, aged reads %lu, reused reads %lu\n", t->poisoned, t->aged,
	       t->recycled);
	if (A->stalls)
		printf("stall reports: %lu\n", A->stalls);
	shared_report();
}

static void procs_json_more(FILE *f, const struct totals *t)
{
	fprintf(f, "  \"processes_stats\": {\"forks\": %lu, \"kills\": %lu, \"kills_inside\": %lu, "
		"\"kills_in_gp\": %lu, \"kills_young\": %lu, \"zombies\": %lu, \"recoveries\": %lu, "
		"\"killed_recovered\": %lu, \"recovered_sections\": %lu, \"recoveries_exited\": %lu, "
		"\"reader_gps\": %lu, \"long_sleeps\": %lu, \"max_kill_to_gps_ms\": %.1f, "
		"\"stalls\": %lu},\n", A->forks, A->kills, A->kills_inside, A->kills_in_gp,
		A->kills_young, A->zombies, A->recoveries, t->killed_recovered, A->recovered_sections,
		A->recoveries_exited, t->reader_gps, t->long_sleeps, A->max_kill_gp_ns / 1e6, A->stalls);
	fprintf(f, "  \"poisoned_reads\": %lu, \"aged_reads\": %lu, \"recycled_reads\": %lu,\n",
		t->poisoned, t->aged, t->recycled);
	shared_json(f);
}

/* A line for each concern, as thread_ops (torture-threads.c). */
static const struct torture_ops procs_ops = {
	.publish = idx_publish, .enter = idx_enter, .objects_shared = true,
	.stretch = { 40, 50, 55, 80, 90 }, .max_depth = 2, .long_sleep = idx_long_sleep,
	.announce = procs_announce,
	.writer_hangs = procs_writer_hangs, .chaos_hangs = procs_chaos_hangs,
	.chaos_stall_factor = 2, .chaos_stall_extra_s = 5, .tick = procs_tick,
	.sum = procs_sum, .progress_more = procs_progress_more, .report_rates = procs_report_rates,
	.report_more = procs_report_more, .json_more = procs_json_more,
};

/* Wait for the torture process, printing progress; then for the reader
 * processes it left (ours as the subreaper), killing what remains. */
static void supervise(pid_t tpid, pid_t spid)
{
	int64_t deadline = run->start_ns + (int64_t)((cfg.duration_s + 2 * cfg.stall_s + 30) * 1e9);
	int64_t next = run->start_ns, stopped_at = 0, waited;
	bool hung = false;
	int status = 0;
	pid_t r;

	while ((r = waitpid(tpid, &status, WNOHANG)) == 0) {
		int64_t now = now_ns();

		if (now >= next) {
			progress_line();
			next += 3000 * MS;
		}
		/* After a failure with --stop-on-fail, the torture process has
		 * a while to finish what it is doing. */
		if (!stopped_at && stopping())
			stopped_at = now;
		if (now > deadline ||
		    (stopped_at && now - stopped_at > (int64_t)((2 * cfg.stall_s + 15) * 1e9))) {
			torture_fail("the torture process did not finish: it hangs (killed after %.0f s)",
			      elapsed_s());
			kill(tpid, SIGKILL);
			waitpid(tpid, &status, 0);
			r = tpid;
			hung = true;
			break;
		}
		sleep_ns(20 * MS);
	}
	if (r == tpid && WIFSIGNALED(status) && !hung)
		torture_fail("the torture process died of signal %d (%s)%s", WTERMSIG(status),
		      strsignal(WTERMSIG(status)),
		      WTERMSIG(status) == SIGABRT ? ": a libsrcu fatal error, above" : "");
	else if (r == tpid && WIFEXITED(status) && WEXITSTATUS(status) != 0 && !run->failures)
		torture_fail("the torture process exited with status %d", WEXITSTATUS(status));
	torture_stop();
	shared_finish(spid);
	/* Orphaned readers see their parent gone within 10 ms, finish the
	 * sections in flight (30 ms at most) and exit. */
	for (waited = 0; waited < 3000; waited += 10) {
		while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (r < 0)   /* ECHILD: none left */
			return;
		sleep_ns(10 * MS);
	}
	for (int i = 0; i < cfg.processes; i++)
		if (A->procs[i].state == PROC_LIVE)
			kill(A->procs[i].pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

/* The arena: every process of the run maps it (MAP_SHARED). */
static int arena_init(void)
{
	int fd = memfd_create("srcu-torture-arena", MFD_CLOEXEC);
	size_t size = sizeof(struct arena) +
		      (size_t)(cfg.writers + cfg.async_writers + cfg.poll_writers) *
		      PER_WRITER * sizeof(struct tobj);

	if (fd < 0 || ftruncate(fd, (off_t)size) != 0 ||
	    (A = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "srcu-torture: cannot make the shared arena: %s\n", strerror(errno));
		return -1;
	}
	close(fd);
	run = &A->run;
	pipeline_setup(A->obj, A->w);
	return 0;
}

int procs_main(void)
{
	pid_t tpid, spid;

	if (cfg.cotenant) {
		if (arena_init() != 0)
			return 2;
		return cotenant_main();
	}
	ops = &procs_ops;
	ndoms = cfg.domains < P_MAX_DOMAINS ? cfg.domains : P_MAX_DOMAINS;
	cfg.domains = ndoms;
	if (arena_init() != 0 || shared_setup() != 0)
		return 2;
	run->start_ns = now_ns();
	snprintf(run->backend, sizeof(run->backend), "%s", srcu_backend());
	snprintf(run->shape, sizeof(run->shape), "%d processes x %d readers, %d writers, "
		 "%d shared domains", cfg.processes, cfg.readers, cfg.writers, ndoms);
	printf("srcu-torture: flavor %s, backend %s, %.0f s, %d processes x %d readers, "
	       "%d writers (+%d async, +%d poll), %d shared domains, expedited %.2f, seed %u, "
	       "reader delay %d/1000, kills %s\n", cfg.flavor_name, run->backend, cfg.duration_s,
	       cfg.processes, cfg.readers, cfg.writers, cfg.async_writers, cfg.poll_writers,
	       ndoms, cfg.expedited_ratio, cfg.seed, cfg.reader_delay_permille,
	       cfg.chaos ? "on" : "off");
	/* Reader processes orphaned by a torture process that died come to
	 * us, to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	tpid = fork();
	if (tpid < 0) {
		fprintf(stderr, "srcu-torture: fork: %s\n", strerror(errno));
		return 2;
	}
	if (tpid == 0)
		torture_process();
	/* Issue 34's scenarios, on files of their own, beside the run. */
	spid = shared_start();
	supervise(tpid, spid);
	return torture_report();
}
