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
 * the pids killed.  Objects are named by index, never by pointer, as in a
 * file that processes map at different addresses.
 *
 * The pipeline is srcu-torture's: an object is at age 0 while published,
 * 1 once replaced, one more after each grace period its writer waits for,
 * and is poisoned and reused at PIPE_LEN.  A reader that finds its object
 * poisoned, at age 2 or more, or reused (its generation changed) inside
 * its section, or that saw two grace periods end inside one section, has
 * caught a grace period that did not wait for it.
 *
 * The chaos thread (off with --no-chaos) SIGKILLs a random reader
 * process every 100-500 ms (now and then one just forked, in its first
 * sections), reaps it at once or leaves it a zombie for a while, forks a
 * replacement, and fails the run unless every domain completes two grace
 * periods within --stall seconds (default 5): the second began after the
 * kill, so it had to end the dead reader's sections.  Recoveries are counted from the stall
 * handler's reports (dead_pid), in whichever process runs the grace
 * period; a recovery reported for a process that was never killed (and
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

#define P_NIL         (~0u)
#define P_PER_WRITER  (PIPE_LEN + 2)   /* current + retired + one spare */
#define P_HIST        (PIPE_LEN + 1)
#define P_MAX_DOMAINS 4
#define P_KILLS_MAX   16384            /* a kill every 100 ms for 27 minutes */
#define P_MSGS        8                /* failures printed; the rest are counted */
#define MS            (1000L * 1000)

enum { PROC_NONE, PROC_LIVE, PROC_KILLED, PROC_EXITED };

struct pobj {
	unsigned int magic, age;
	unsigned int gen;      /* bumped at each publication */
	unsigned int next;     /* its writer's free or retired list (P_NIL ends it) */
	unsigned long cookie;  /* poll writers: the GP that frees it */
};

/* One reader thread's statistics: written by that thread only (after a
 * kill, by its successor in the replacement process). */
struct pstats {
	unsigned long reads, poisoned, aged, recycled, long_sleeps;
	unsigned long pipe[P_HIST], batch[P_HIST];
	long max_section_ns;
	int inside;            /* in a section now: for the kill statistics */
};

struct pproc {
	int pid, state;
	unsigned int start;    /* with pid, the process (see proc_start()) */
	int in_gp;             /* its thread 0 runs a grace period now */
	unsigned long gps;     /* grace periods its thread 0 ran */
	struct pstats t[P_MAX_THREADS];
};

struct pkill {
	int pid;
	unsigned int start;      /* with pid, the process: pids wrap (pid_max) */
	unsigned int recovered;  /* a bit per domain whose recovery was reported */
};

struct pwriter {
	unsigned int head;     /* the published object */
	int kind;
	unsigned long gps;     /* sync: GPs; async: callbacks run; poll: cookies done */
	long last_progress_ns, max_gp_ns;
};

struct arena {
	int stop;                  /* everyone: finish up */
	int torture_pid;
	long start_ns;
	char backend[16];
	unsigned long failures, messages;
	double first_failure_s;
	char first_failure[256];
	unsigned long forks, kills, kills_inside, kills_in_gp, kills_young, zombies;
	unsigned long recoveries, recovered_sections, recoveries_exited, stalls;
	long max_kill_gp_ns;
	long chaos_progress_ns;
	unsigned long batches[P_MAX_DOMAINS];   /* each domain's GPs, at the end */
	unsigned int nkilled;
	struct pkill killed[P_KILLS_MAX];
	struct pwriter w[P_MAX_WRITERS];
	struct pproc procs[P_MAX_PROCS];
	unsigned int nobj;
	struct pobj obj[];
};

static struct arena *A;
static int nw, ndoms;
static struct srcu_struct *doms[P_MAX_DOMAINS];

/* The torture process's writers (their lists run through the arena). */
struct lwriter {
	int index;
	enum writer_kind kind;
	struct srcu_struct *sp;
	unsigned int free, retired;
	unsigned int recycled;     /* async: back from callbacks (atomic stack) */
	pthread_t thread;
};
static struct lwriter *lw;
/* call_srcu() heads stay in the torture process, whose worker runs the
 * callbacks: heads[i] is object i's. */
static struct srcu_head *heads;

static int chaos_done;             /* the torture process: stop killing */
static int reader_orphaned;        /* a reader process: its parent is gone */

/* ---- small helpers ---- */

static void bump(unsigned long *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static void store_max(long *m, long v)
{
	long cur = __atomic_load_n(m, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(m, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

static double since_start_s(void)
{
	return (double)(now_ns() - A->start_ns) / 1e9;
}

static bool all_stopping(void)
{
	return __atomic_load_n(&A->stop, __ATOMIC_ACQUIRE);
}

static void all_stop(void)
{
	__atomic_store_n(&A->stop, 1, __ATOMIC_RELEASE);
}

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

/* Record a failure in the arena, from any process: counted; the first
 * one's text kept for the report; the first few printed. */
static void pfail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void pfail(const char *fmt, ...)
{
	unsigned long n = __atomic_fetch_add(&A->failures, 1, __ATOMIC_SEQ_CST);
	char msg[sizeof(A->first_failure)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n == 0) {
		A->first_failure_s = since_start_s();
		memcpy(A->first_failure, msg, sizeof(msg));
	}
	n = __atomic_fetch_add(&A->messages, 1, __ATOMIC_RELAXED);
	if (n < P_MSGS)
		say("srcu-torture: %s after %.2f s (pid %d): %s\n",
		    n ? "failure" : "first failure", since_start_s(), (int)getpid(), msg);
	else if (n == P_MSGS)
		say("srcu-torture: further failures are counted, not printed\n");
	if (cfg.stop_on_fail)
		all_stop();
}

static void sleep_range(unsigned int *seed, long min_ns, long max_ns)
{
	sleep_ns(min_ns + (long)(rnd(seed) % (unsigned int)(max_ns - min_ns + 1)));
}

/* Short sleeps common, long ones still happen (doubling with chance 1/2). */
static void sleep_log_uniform(unsigned int *seed, long min_ns, long max_ns)
{
	long ns = min_ns;

	while (ns < max_ns && rnd(seed) % 2)
		ns *= 2;
	sleep_ns(ns + (long)(rnd(seed) % (unsigned int)ns));
}

/* A writer's domain; readers pick a writer and use its domain. */
static struct srcu_struct *dom_of(int writer)
{
	return doms[writer % ndoms];
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
			pfail("the recovery of killed process %d in domain %s was reported twice",
			      s->dead_pid, s->domain);
		return;
	}
	st = reader_state(s->dead_pid, start);
	if (st == PROC_EXITED && !s->dead_sections) {
		__atomic_fetch_add(&A->recoveries_exited, 1, __ATOMIC_RELAXED);
		return;
	}
	if (st == PROC_LIVE || s->dead_pid == A->torture_pid)
		pfail("libsrcu took live process %d for dead: it ended %lu of its read-side "
		      "sections in domain %s", s->dead_pid, s->dead_sections, s->domain);
	else
		pfail("libsrcu reported process %d dead in domain %s with %lu open sections, "
		      "but srcu-torture never killed it", s->dead_pid, s->domain, s->dead_sections);
}

/* ---- readers ---- */

/* The test-only delay between a reader's index load and its count
 * (SRCU__READ_LOCK_HOOK): the stale-reader window, across processes. */
static void reader_delay(void)
{
	static __thread unsigned int seed;

	if (!seed)
		seed = (unsigned int)now_ns() | 1;
	if (rnd(&seed) % 1000 < (unsigned int)cfg.reader_delay_permille)
		sleep_log_uniform(&seed, 1000, 2 * MS);
}

static bool reader_stopping(void)
{
	return all_stopping() || __atomic_load_n(&reader_orphaned, __ATOMIC_ACQUIRE);
}

static void check_obj(struct pstats *st, unsigned int i, unsigned int gen0, const char *when)
{
	const struct pobj *o = &A->obj[i];
	unsigned int magic = __atomic_load_n(&o->magic, __ATOMIC_RELAXED);
	unsigned int age = __atomic_load_n(&o->age, __ATOMIC_RELAXED);
	unsigned int gen = __atomic_load_n(&o->gen, __ATOMIC_RELAXED);

	if (magic != MAGIC_LIVE) {
		bump(&st->poisoned);
		pfail("a reader found its object poisoned (magic %#x) %s", magic, when);
	} else if (age > 1) {
		bump(&st->aged);
		pfail("a reader found its object at pipeline age %u %s: a grace period ended "
		      "while the reader was inside", age, when);
	} else if (gen != gen0) {
		bump(&st->recycled);
		pfail("a reader found its object reused (generation %u, was %u) %s", gen, gen0, when);
	}
}

/* lock, load the published index, check, stretch, check, unlock. */
static void read_section(struct pstats *st, unsigned int *seed, int depth)
{
	int wi = (int)(rnd(seed) % (unsigned int)nw);
	struct srcu_struct *sp = dom_of(wi);
	long start = now_ns(), len;
	unsigned long b0, batches;
	unsigned int i, gen0, r, age;
	int idx;

	idx = srcu_read_lock(sp);
	b0 = srcu_batches_completed(sp);
	i = srcu_dereference(A->w[wi].head, sp);
	if (depth == 0)
		__atomic_store_n(&st->inside, 1, __ATOMIC_RELAXED);
	if (i >= A->nobj) {
		pfail("a reader loaded object index %u, outside the pool of %u", i, A->nobj);
		goto out;
	}
	gen0 = __atomic_load_n(&A->obj[i].gen, __ATOMIC_RELAXED);
	check_obj(st, i, gen0, "on entry");
	r = rnd(seed) % 100;
	if (r < 40) {
		;                                                /* nothing */
	} else if (r < 50) {
		for (volatile unsigned int n = rnd(seed) % 4000; n; n--)
			;                                        /* spin */
	} else if (r < 55) {
		sched_yield();
	} else if (r < 80) {
		sleep_log_uniform(seed, 1000, 100 * 1000);      /* 1 us .. 200 us */
	} else if (r < 90) {
		/* Longer than a waiting GP's first look for dead owners (10
		 * ms): a GP that takes this live reader for dead ends its
		 * section here. */
		bump(&st->long_sleeps);
		sleep_range(seed, 10 * MS, 30 * MS);
	} else if (depth < 2) {
		read_section(st, seed, depth + 1);               /* nested */
	}
	check_obj(st, i, gen0, "after stretching its section");
	batches = srcu_batches_completed(sp) - b0;
	if (batches > 1)
		pfail("%lu grace periods completed inside one read-side section", batches);
	age = __atomic_load_n(&A->obj[i].age, __ATOMIC_RELAXED);
	bump(&st->reads);
	bump(&st->pipe[age < P_HIST ? age : P_HIST - 1]);
	bump(&st->batch[batches < P_HIST ? batches : P_HIST - 1]);
	len = now_ns() - start;
	if (len > st->max_section_ns)
		__atomic_store_n(&st->max_section_ns, len, __ATOMIC_RELAXED);
out:
	if (depth == 0)
		__atomic_store_n(&st->inside, 0, __ATOMIC_RELAXED);
	srcu_read_unlock(sp, idx);
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
	struct pstats *st = &p->t[rt->k];
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
		read_section(st, &seed, 0);
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
	long until = now_ns() + (long)(cfg.stall_s * 1e9);
	int err;

	while ((err = srcu_shared_detach(sp)) == -EBUSY && now_ns() < until)
		sleep_ns(MS);
	if (err)
		pfail("process %d: srcu_shared_detach() of an idle domain returned %d",
		      (int)getpid(), err);
}

/* The body of a reader process (the child of a fork of the torture
 * process: attached to every domain by inheritance).  Never returns. */
static __attribute__((noreturn)) void reader_process(int slot, unsigned int seed)
{
	struct rthread rt[P_MAX_THREADS];
	int tpid = A->torture_pid, k, err;

	if (getppid() != tpid)
		_exit(0);   /* the torture process died before we started */
	for (int d = 0; d < ndoms; d++)
		if (srcu_read_lock_held(doms[d]))
			pfail("reader process %d inherited a read-side section of domain tshm-%d "
			      "that nobody holds (its parent's forking thread was outside)",
			      (int)getpid(), d);
	srcu__torture_reader_delay = cfg.reader_delay_permille ? reader_delay : NULL;
	/* A slot per thread, while an error can still be reported. */
	for (int d = 0; d < ndoms; d++)
		if ((err = srcu_shared_reserve(doms[d], (unsigned int)cfg.readers)) != 0) {
			pfail("reader process %d: srcu_shared_reserve(%d) returned %d",
			      (int)getpid(), cfg.readers, err);
			_exit(3);
		}
	for (k = 0; k < cfg.readers; k++) {
		rt[k].slot = slot;
		rt[k].k = k;
		rt[k].seed = (seed ^ (unsigned int)k * 0x9e3779b9u) | 1;
		if (pthread_create(&rt[k].t, NULL, reader_thread, &rt[k]) != 0) {
			pfail("reader process %d: pthread_create failed", (int)getpid());
			_exit(3);
		}
	}
	/* Orphaned (the torture process died: a fatal error, a busted
	 * flavour): stop, but let the sections in flight finish their
	 * checks first. */
	while (!all_stopping() && getppid() == tpid)
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
		pfail("fork() of a reader process failed: %s", strerror(errno));
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

/* ---- writers (the torture process) ---- */

static void note_progress(struct lwriter *w, long gp_ns)
{
	struct pwriter *pw = &A->w[w->index];

	bump(&pw->gps);
	__atomic_store_n(&pw->last_progress_ns, now_ns(), __ATOMIC_RELAXED);
	store_max(&pw->max_gp_ns, gp_ns);
}

static unsigned int obj_get(struct lwriter *w)
{
	unsigned int i = w->free;

	if (i != P_NIL)
		w->free = A->obj[i].next;
	return i;
}

static void obj_put(unsigned int *list, unsigned int i)
{
	A->obj[i].next = *list;
	*list = i;
}

/* Publish fresh in place of the current object; return the old one. */
static unsigned int replace_head(struct lwriter *w, unsigned int fresh)
{
	struct pobj *f = &A->obj[fresh];
	unsigned int old = A->w[w->index].head;   /* only this writer stores it */

	__atomic_store_n(&f->age, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->gen, f->gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&f->magic, MAGIC_LIVE, __ATOMIC_RELAXED);
	srcu_assign_pointer(A->w[w->index].head, fresh);
	__atomic_store_n(&A->obj[old].age, 1, __ATOMIC_RELAXED);
	return old;
}

/* After a grace period: age the retired objects, poison and reuse the
 * ones at the end of the pipeline. */
static void age_retired(struct lwriter *w)
{
	unsigned int *pp = &w->retired;

	while (*pp != P_NIL) {
		struct pobj *o = &A->obj[*pp];
		unsigned int age = o->age + 1;

		__atomic_store_n(&o->age, age, __ATOMIC_RELAXED);
		if (age >= PIPE_LEN) {
			unsigned int i = *pp;

			__atomic_store_n(&o->magic, MAGIC_POISON, __ATOMIC_RELAXED);
			*pp = o->next;
			obj_put(&w->free, i);
		} else {
			pp = &o->next;
		}
	}
}

/* A grace period has ended since o was replaced: age it past what a
 * reader tolerates, then poison it. */
static void retire_done(struct pobj *o)
{
	__atomic_store_n(&o->age, PIPE_LEN, __ATOMIC_RELAXED);
	__atomic_store_n(&o->magic, MAGIC_POISON, __ATOMIC_RELAXED);
}

static void async_done(struct srcu_head *h)
{
	unsigned int i = (unsigned int)(h - heads);
	struct lwriter *w = &lw[i / P_PER_WRITER];
	struct pobj *o = &A->obj[i];

	/* A reader process inherits the callbacks pending at its fork: a
	 * shared domain's must not run there too (the objects they free are
	 * shared: they would be freed twice).  Nor must they here. */
	if (getpid() != A->torture_pid) {
		pfail("a call_srcu() callback queued by the torture process ran in process %d, "
		      "forked with it pending", (int)getpid());
		return;
	}
	if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) == MAGIC_POISON)
		pfail("a call_srcu() callback ran twice (its object was already poisoned)");
	retire_done(o);
	o->next = __atomic_load_n(&w->recycled, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&w->recycled, &o->next, i, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	note_progress(w, 0);
}

static void async_writer(struct lwriter *w)
{
	while (!all_stopping()) {
		unsigned int fresh = obj_get(w);

		if (fresh == P_NIL) {   /* everything in flight: take what came back */
			w->free = __atomic_exchange_n(&w->recycled, P_NIL, __ATOMIC_ACQUIRE);
			if (w->free == P_NIL)
				sleep_ns(20 * 1000);
			continue;
		}
		call_srcu(w->sp, &heads[replace_head(w, fresh)], async_done);
	}
	srcu_barrier(w->sp);
}

static void poll_writer(struct lwriter *w, unsigned int *seed)
{
	while (!all_stopping()) {
		unsigned int *pp = &w->retired, fresh, old;

		while (*pp != P_NIL) {   /* free what is done */
			struct pobj *o = &A->obj[*pp];

			if (poll_state_synchronize_srcu(w->sp, o->cookie)) {
				unsigned int i = *pp;

				retire_done(o);
				*pp = o->next;
				obj_put(&w->free, i);
				note_progress(w, 0);
			} else {
				pp = &o->next;
			}
		}
		fresh = obj_get(w);
		if (fresh == P_NIL) {
			if (rnd(seed) % 4 == 0)
				synchronize_srcu(w->sp);   /* for get_state's cookies */
			else
				sleep_ns(10 * 1000);
			continue;
		}
		old = replace_head(w, fresh);
		A->obj[old].cookie = rnd(seed) % 3 ? start_poll_synchronize_srcu(w->sp)
						   : get_state_synchronize_srcu(w->sp);
		obj_put(&w->retired, old);
	}
	synchronize_srcu(w->sp);
}

static void *writer(void *arg)
{
	struct lwriter *w = arg;
	unsigned int seed = cfg.seed * 7919u + (unsigned int)w->index * 104729u + 1;
	unsigned int exp_cut = (unsigned int)(cfg.expedited_ratio * 1000);

	if (w->kind == WRITER_ASYNC) {
		async_writer(w);
		return NULL;
	}
	if (w->kind == WRITER_POLL) {
		poll_writer(w, &seed);
		return NULL;
	}
	while (!all_stopping()) {
		unsigned int fresh = obj_get(w), old;
		long t0;

		if (fresh == P_NIL) {
			pfail("writer %d: object pool exhausted", w->index);
			break;
		}
		old = replace_head(w, fresh);
		obj_put(&w->retired, old);
		t0 = now_ns();
		if (rnd(&seed) % 1000 < exp_cut)
			synchronize_srcu_expedited(w->sp);
		else
			synchronize_srcu(w->sp);
		note_progress(w, now_ns() - t0);
		age_retired(w);
		if (rnd(&seed) % 8 == 0)
			sleep_ns(1000 + rnd(&seed) % 50000);
	}
	return NULL;
}

static void writers_init(void)
{
	lw = calloc((size_t)nw, sizeof(*lw));
	heads = calloc(A->nobj, sizeof(*heads));
	if (!lw || !heads) {
		pfail("out of memory");
		exit(2);
	}
	for (int i = 0; i < nw; i++) {
		struct lwriter *w = &lw[i];
		unsigned int first = (unsigned int)i * P_PER_WRITER;

		w->index = i;
		w->kind = i < cfg.writers ? WRITER_SYNC :
			  i < cfg.writers + cfg.async_writers ? WRITER_ASYNC : WRITER_POLL;
		w->sp = dom_of(i);
		w->free = w->retired = w->recycled = P_NIL;
		for (unsigned int j = first + 1; j < first + P_PER_WRITER; j++)
			obj_put(&w->free, j);
		A->obj[first].magic = MAGIC_LIVE;
		A->obj[first].gen = 1;
		A->w[i].head = first;
		A->w[i].kind = (int)w->kind;
		A->w[i].last_progress_ns = now_ns();
	}
}

/* ---- chaos: kills (the torture process) ---- */

/* Reader processes that died without being killed: a crash. */
static void reap_unexpected(unsigned int *seed)
{
	for (int i = 0; i < cfg.processes; i++) {
		int pid = A->procs[i].pid, status;

		if (A->procs[i].state != PROC_LIVE || waitpid(pid, &status, WNOHANG) != pid)
			continue;
		pfail("reader process %d ended by itself (status %#x)", pid, status);
		__atomic_store_n(&A->procs[i].state, PROC_EXITED, __ATOMIC_RELEASE);
		if (!all_stopping())
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
		pfail("waitid() for killed reader process %d: %s", pid, strerror(errno));
	else if (si.si_code != CLD_KILLED || si.si_status != SIGKILL)
		pfail("reader process %d ended by itself (code %d, status %d) before its kill",
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
			if (all_stopping())   /* --stop-on-fail: writers end */
				return false;
			if (now_ns() - t0 > (long)(cfg.stall_s * 1e9)) {
				pfail("domain tshm-%d completed no grace period in %.0f s after reader "
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

	while (!__atomic_load_n(&chaos_done, __ATOMIC_ACQUIRE) && !all_stopping()) {
		long until = now_ns() + 100 * MS + (long)(rnd(&seed) % 400) * MS;
		bool keep = rnd(&seed) % 2;
		int slot;

		__atomic_store_n(&A->chaos_progress_ns, now_ns(), __ATOMIC_RELAXED);
		while (now_ns() < until && !__atomic_load_n(&chaos_done, __ATOMIC_ACQUIRE) &&
		       !all_stopping())
			sleep_ns(5 * MS);
		if (__atomic_load_n(&chaos_done, __ATOMIC_ACQUIRE) || all_stopping())
			break;
		reap_unexpected(&seed);
		slot = random_live_slot(&seed);
		if (slot < 0)
			continue;
		if (rnd(&seed) % 8 == 0) {
			/* One just forked: killed in its first sections, its
			 * slot reservation or its first slot mapping. */
			kill_reader(slot, false, false, &seed);
			sleep_ns((long)(rnd(&seed) % 3000) * 1000);
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
	long deadline = now_ns() + (long)((cfg.stall_s + 5) * 1e9);

	for (int i = 0; i < cfg.processes; i++) {
		int pid = A->procs[i].pid, status = 0;
		pid_t r;

		if (A->procs[i].state != PROC_LIVE)
			continue;
		while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ns() < deadline)
			sleep_ns(MS);
		if (r != pid) {
			pfail("reader process %d did not finish when asked to", pid);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			pfail("reader process %d ended with status %#x", pid, status);
		}
		__atomic_store_n(&A->procs[i].state, PROC_EXITED, __ATOMIC_RELEASE);
	}
}

/* Writers that cannot be joined hang in a grace period: the run ends
 * here (the supervisor reports). */
static void hang_exit(void)
{
	all_stop();
	for (int i = 0; i < cfg.processes; i++)
		if (A->procs[i].state == PROC_LIVE)
			kill(A->procs[i].pid, SIGKILL);
	_exit(1);
}

/* Join t by the absolute (CLOCK_REALTIME) deadline; past it, t hangs. */
static void join_or_hang(pthread_t t, const char *who, const struct timespec *deadline)
{
	if (pthread_timedjoin_np(t, NULL, deadline) != 0) {
		pfail("%s did not finish: it hangs", who);
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

/* Until the end of the run, or a stop (--stop-on-fail): writers without
 * progress for --stall seconds hang in a grace period. */
static void monitor(void)
{
	long end = A->start_ns + (long)(cfg.duration_s * 1e9);
	long stall = (long)(cfg.stall_s * 1e9);

	while (!all_stopping() && now_ns() < end) {
		long now;

		sleep_ns(20 * MS);
		now = now_ns();
		for (int d = 0; d < ndoms; d++)
			__atomic_store_n(&A->batches[d], srcu_batches_completed(doms[d]),
					 __ATOMIC_RELAXED);
		for (int i = 0; i < nw; i++) {
			long last = __atomic_load_n(&A->w[i].last_progress_ns, __ATOMIC_RELAXED);

			if (now - last > stall) {
				pfail("writer %d made no progress for %.1f s (%lu kills so far): a "
				      "grace period hangs", i, (double)(now - last) / 1e9, A->kills);
				hang_exit();
			}
		}
		/* A kill's wait for grace periods fails the run itself after
		 * --stall; much longer is a fork or waitid that hangs. */
		if (cfg.chaos && now - __atomic_load_n(&A->chaos_progress_ns, __ATOMIC_RELAXED) >
				 2 * stall + 5000 * MS) {
			pfail("the chaos thread made no progress for %.1f s",
			      (double)(now - A->chaos_progress_ns) / 1e9);
			hang_exit();
		}
	}
}

static __attribute__((noreturn)) void torture_process(void)
{
	unsigned int slots = (unsigned int)(cfg.processes * (cfg.readers + 1) * 4 + 16);
	unsigned int seed = cfg.seed * 2654435761u + 17;
	struct timespec deadline;
	pthread_t chaos_t;
	char who[48];
	int err;

	srcu__torture_flavor = cfg.flavor;
	srcu__torture_point = at_point;   /* inherited by the reader processes */
	A->torture_pid = (int)getpid();
	snprintf(A->backend, sizeof(A->backend), "%s", srcu_backend());
	srcu_set_stall_handler(on_report, NULL);
	for (int d = 0; d < ndoms; d++) {
		int fd = memfd_create("srcu-torture-domain", MFD_CLOEXEC);

		snprintf(who, sizeof(who), "tshm-%d", d);
		err = fd < 0 ? -errno : init_srcu_struct_shared(fd, slots, who, &doms[d]);
		if (err) {
			pfail("init_srcu_struct_shared(%u slots) returned %d (%s)", slots, err,
			      strerror(-err));
			exit(2);
		}
		close(fd);   /* the library keeps its own */
	}
	writers_init();
	for (int i = 0; i < nw; i++)
		pthread_create(&lw[i].thread, NULL, writer, &lw[i]);
	for (int i = 0; i < cfg.processes; i++)
		fork_reader(i, &seed);
	A->chaos_progress_ns = now_ns();
	if (cfg.chaos)
		pthread_create(&chaos_t, NULL, chaos_thread, (void *)(uintptr_t)(cfg.seed + 5));
	monitor();
	/* Kills end first, while the writers still run the grace periods
	 * that a kill waits for; then readers and writers end. */
	if (cfg.chaos) {
		__atomic_store_n(&chaos_done, 1, __ATOMIC_RELEASE);
		deadline = join_deadline();
		join_or_hang(chaos_t, "the chaos thread", &deadline);
	}
	all_stop();
	reap_readers();
	deadline = join_deadline();
	for (int i = 0; i < nw; i++) {
		snprintf(who, sizeof(who), "writer %d", i);
		join_or_hang(lw[i].thread, who, &deadline);
	}
	/* Everyone else has gone: one more grace period on each domain, and
	 * a clean detach.  Not after a failure: a broken flavour leaves
	 * counts that no grace period gets past. */
	if (!__atomic_load_n(&A->failures, __ATOMIC_SEQ_CST)) {
		pthread_t t;

		deadline = join_deadline();
		pthread_create(&t, NULL, finish_domains, NULL);
		join_or_hang(t, "the last grace period", &deadline);
	}
	exit(0);
}

/* ---- the supervisor: progress, the end, the report ---- */

struct ptotals {
	unsigned long reads, gps, callbacks, cookies, reader_gps, long_sleeps;
	unsigned long poisoned, aged, recycled, pipe[P_HIST], batch[P_HIST];
	unsigned long killed_recovered;
	long max_section_ns, max_gp_ns;
};

static void sum_totals(struct ptotals *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < cfg.processes; i++) {
		t->reader_gps += __atomic_load_n(&A->procs[i].gps, __ATOMIC_RELAXED);
		for (int k = 0; k < cfg.readers; k++) {
			const struct pstats *s = &A->procs[i].t[k];

			t->reads += __atomic_load_n(&s->reads, __ATOMIC_RELAXED);
			t->long_sleeps += __atomic_load_n(&s->long_sleeps, __ATOMIC_RELAXED);
			t->poisoned += __atomic_load_n(&s->poisoned, __ATOMIC_RELAXED);
			t->aged += __atomic_load_n(&s->aged, __ATOMIC_RELAXED);
			t->recycled += __atomic_load_n(&s->recycled, __ATOMIC_RELAXED);
			for (int h = 0; h < P_HIST; h++) {
				t->pipe[h] += __atomic_load_n(&s->pipe[h], __ATOMIC_RELAXED);
				t->batch[h] += __atomic_load_n(&s->batch[h], __ATOMIC_RELAXED);
			}
			if (s->max_section_ns > t->max_section_ns)
				t->max_section_ns = s->max_section_ns;
		}
	}
	for (int i = 0; i < nw; i++) {
		unsigned long n = __atomic_load_n(&A->w[i].gps, __ATOMIC_RELAXED);

		if (A->w[i].kind == WRITER_ASYNC)
			t->callbacks += n;
		else if (A->w[i].kind == WRITER_POLL)
			t->cookies += n;
		else
			t->gps += n;
		if (A->w[i].max_gp_ns > t->max_gp_ns)
			t->max_gp_ns = A->w[i].max_gp_ns;
	}
	for (unsigned int i = 0; i < A->nkilled; i++)
		t->killed_recovered += A->killed[i].recovered != 0;
}

static void print_hist(const char *name, const unsigned long *h)
{
	printf("%s:", name);
	for (int k = 0; k < P_HIST; k++)
		printf(" %lu", h[k]);
	printf("\n");
}

static void progress_line(void)
{
	struct ptotals t;

	sum_totals(&t);
	printf("srcu-torture: %6.1f s  gps %lu  reads %lu  pipe %lu/%lu/%lu+  kills %lu  "
	       "recoveries %lu  failures %lu\n", since_start_s(), t.gps, t.reads, t.pipe[0],
	       t.pipe[1], t.reads - t.pipe[0] - t.pipe[1], A->kills, A->recoveries, A->failures);
	fflush(stdout);
}

static void write_json(const struct ptotals *t, double secs, const char *result)
{
	FILE *f = fopen(cfg.json, "w");

	if (!f) {
		fprintf(stderr, "srcu-torture: cannot write %s: %s\n", cfg.json, strerror(errno));
		return;
	}
	fprintf(f, "{\n  \"flavor\": \"%s\", \"backend\": \"%s\",\n", cfg.flavor_name, A->backend);
	fprintf(f, "  \"duration_s\": %.3f, \"processes\": %d, \"readers\": %d, \"writers\": %d, "
		"\"domains\": %d,\n", secs, cfg.processes, cfg.readers, cfg.writers, ndoms);
	fprintf(f, "  \"expedited_ratio\": %.3f, \"seed\": %u, \"reader_delay_permille\": %d,\n",
		cfg.expedited_ratio, cfg.seed, cfg.reader_delay_permille);
	fprintf(f, "  \"reads\": %lu, \"grace_periods\": %lu, \"reads_per_s\": %.0f, "
		"\"grace_periods_per_s\": %.0f,\n", t->reads, t->gps, t->reads / secs, t->gps / secs);
	fprintf(f, "  \"max_section_us\": %.1f, \"max_grace_period_us\": %.1f,\n",
		t->max_section_ns / 1e3, t->max_gp_ns / 1e3);
	fprintf(f, "  \"call_srcu_callbacks\": %lu,\n  \"polled_cookies\": %lu,\n",
		t->callbacks, t->cookies);
	fprintf(f, "  \"reader_pipe\": ");
	torture_json_hist(f, t->pipe);
	fprintf(f, ",\n  \"reader_batch\": ");
	torture_json_hist(f, t->batch);
	fprintf(f, ",\n  \"processes_stats\": {\"forks\": %lu, \"kills\": %lu, \"kills_inside\": %lu, "
		"\"kills_in_gp\": %lu, \"kills_young\": %lu, \"zombies\": %lu, \"recoveries\": %lu, "
		"\"killed_recovered\": %lu, \"recovered_sections\": %lu, \"recoveries_exited\": %lu, \"reader_gps\": %lu, "
		"\"long_sleeps\": %lu, \"max_kill_to_gps_ms\": %.1f, \"stalls\": %lu},\n",
		A->forks, A->kills, A->kills_inside, A->kills_in_gp, A->kills_young, A->zombies,
		A->recoveries, t->killed_recovered, A->recovered_sections, A->recoveries_exited, t->reader_gps, t->long_sleeps,
		A->max_kill_gp_ns / 1e6, A->stalls);
	fprintf(f, "  \"poisoned_reads\": %lu, \"aged_reads\": %lu, \"recycled_reads\": %lu,\n",
		t->poisoned, t->aged, t->recycled);
	fprintf(f, "  \"failures\": %lu, \"first_failure_s\": %.3f,\n", A->failures,
		A->failures ? A->first_failure_s : -1.0);
	torture_json_close(f, result);
}

static int report(void)
{
	double secs = since_start_s();
	struct ptotals t;
	char result[300];

	sum_totals(&t);
	printf("\nsrcu-torture: flavor %s, backend %s, %.1f s, %d processes x %d readers, "
	       "%d writers, %d shared domains\n", cfg.flavor_name, A->backend, secs,
	       cfg.processes, cfg.readers, cfg.writers, ndoms);
	printf("reads %lu (%.0f/s, %lu sleeping 10-30 ms), grace periods %lu (%.0f/s), "
	       "longest section %.1f ms, longest grace period %.1f ms\n", t.reads, t.reads / secs,
	       t.long_sleeps, t.gps, t.gps / secs, t.max_section_ns / 1e6, t.max_gp_ns / 1e6);
	printf("grace periods completed per domain:");
	for (int d = 0; d < ndoms; d++)
		printf(" %lu", A->batches[d]);
	printf(" (shared by the writers' synchronize calls and the readers')\n");
	printf("call_srcu: %lu objects freed by callbacks (%d writers); polled: %lu objects "
	       "freed by cookies (%d writers); %lu grace periods run by reader processes\n",
	       t.callbacks, cfg.async_writers, t.cookies, cfg.poll_writers, t.reader_gps);
	print_hist("Reader Pipe ", t.pipe);
	print_hist("Reader Batch", t.batch);
	printf("processes: %lu forked, %lu killed (%lu inside a section, %lu in a grace period, "
	       "%lu just after their fork, %lu left zombies for a while)\n", A->forks, A->kills,
	       A->kills_inside, A->kills_in_gp, A->kills_young, A->zombies);
	printf("recoveries: %lu reported (for %lu of the killed processes, %lu sections ended; "
	       "%lu more of processes that exited as they were found); two grace periods of "
	       "every domain within %.1f ms of a kill\n", A->recoveries, t.killed_recovered,
	       A->recovered_sections, A->recoveries_exited, A->max_kill_gp_ns / 1e6);
	printf("poisoned reads %lu, aged reads %lu, reused reads %lu\n", t.poisoned, t.aged,
	       t.recycled);
	if (A->stalls)
		printf("stall reports: %lu\n", A->stalls);
	if (A->failures) {
		printf("failures: %lu, the first after %.2f s\n", A->failures, A->first_failure_s);
		snprintf(result, sizeof(result), "FAIL: %s",
			 A->first_failure[0] ? A->first_failure :
			 "(its text was lost: the process that found it was killed)");
	} else {
		snprintf(result, sizeof(result), "PASS");
	}
	if (cfg.json)
		write_json(&t, secs, result);
	printf("%s\n", result);
	return A->failures ? 1 : 0;
}

/* Wait for the torture process, printing progress; then for the reader
 * processes it left (ours as the subreaper), killing what remains. */
static void supervise(pid_t tpid)
{
	long deadline = A->start_ns + (long)((cfg.duration_s + 2 * cfg.stall_s + 30) * 1e9);
	long next = A->start_ns, stopped_at = 0, waited;
	bool hung = false;
	int status = 0;
	pid_t r;

	while ((r = waitpid(tpid, &status, WNOHANG)) == 0) {
		long now = now_ns();

		if (now >= next) {
			progress_line();
			next += 3000 * MS;
		}
		/* After a failure with --stop-on-fail, the torture process has
		 * a while to finish what it is doing. */
		if (!stopped_at && all_stopping())
			stopped_at = now;
		if (now > deadline ||
		    (stopped_at && now - stopped_at > (long)((2 * cfg.stall_s + 15) * 1e9))) {
			pfail("the torture process did not finish: it hangs (killed after %.0f s)",
			      since_start_s());
			kill(tpid, SIGKILL);
			waitpid(tpid, &status, 0);
			r = tpid;
			hung = true;
			break;
		}
		sleep_ns(20 * MS);
	}
	if (r == tpid && WIFSIGNALED(status) && !hung)
		pfail("the torture process died of signal %d (%s)%s", WTERMSIG(status),
		      strsignal(WTERMSIG(status)),
		      WTERMSIG(status) == SIGABRT ? ": a libsrcu fatal error, above" : "");
	else if (r == tpid && WIFEXITED(status) && WEXITSTATUS(status) != 0 && !A->failures)
		pfail("the torture process exited with status %d", WEXITSTATUS(status));
	all_stop();
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

int procs_main(void)
{
	int fd = memfd_create("srcu-torture-arena", MFD_CLOEXEC);
	size_t arena_size;
	pid_t tpid;

	nw = cfg.writers + cfg.async_writers + cfg.poll_writers;
	ndoms = cfg.domains < P_MAX_DOMAINS ? cfg.domains : P_MAX_DOMAINS;
	arena_size = sizeof(struct arena) + (size_t)nw * P_PER_WRITER * sizeof(struct pobj);
	if (fd < 0 || ftruncate(fd, (off_t)arena_size) != 0 ||
	    (A = mmap(NULL, arena_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "srcu-torture: cannot make the shared arena: %s\n", strerror(errno));
		return 2;
	}
	close(fd);
	A->nobj = (unsigned int)nw * P_PER_WRITER;
	A->start_ns = now_ns();
	snprintf(A->backend, sizeof(A->backend), "%s", srcu_backend());
	printf("srcu-torture: flavor %s, backend %s, %.0f s, %d processes x %d readers, "
	       "%d writers (+%d async, +%d poll), %d shared domains, expedited %.2f, seed %u, "
	       "reader delay %d/1000, kills %s\n", cfg.flavor_name, A->backend, cfg.duration_s,
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
	supervise(tpid);
	return report();
}
