/*
 * test_prefork: a pre-forking server's lookup table, shared by its worker
 * processes through a process-shared domain (doc/shared.md), and a worker
 * killed with SIGKILL in the middle of a request.  examples/prefork shows
 * the pattern in a few lines; this is its proof.
 *
 * A control process makes two memfds: the domain's file and the table's.
 * The table (keys, a pool of records, per-worker flags, shared counters)
 * is linked by indices, never pointers: each worker maps it again for
 * itself, at an address of its own.  Worker processes, forked, serve
 * lookups: a section of the shared domain, the key's record found through
 * the index the control published, a sleep inside the section (the
 * request's I/O), and a check that the record is still the one read.
 * The control process updates the table all along: a new record from the
 * pool, published, synchronize_srcu(), the old one poisoned and put back
 * in the pool (never unmapped: a stale reader sees the poison, not a
 * fault).
 *
 * Halfway through, the control process asks a worker that is inside its
 * section to stay there (a request that hangs), kills it with SIGKILL,
 * and times the next grace period, which must find the worker dead, end
 * its section and go on (under 1 s).  The stall handler prints the
 * library's recovery report.  The worker is reaped and replaced, and the
 * updates continue.
 *
 *   test_prefork [--workers N] [--duration S] [--keys N] [--inside-ms MS]
 *                [--update-us US] [--kills N] [--no-replace] [--busted]
 *
 * --inside-ms: the longest sleep inside a section (1 to MS ms; default 5).
 * --update-us: the control process's pause between updates (default 100).
 * --kills: how many workers to kill, spread over the run (default 1).
 * --busted: the updater poisons the old record without waiting for a
 * grace period, to show that the check can fail.
 *
 * Exit status 0 only if no worker read a poisoned (or recycled) record,
 * every kill was recovered from within 1 s and reported, and updates went
 * on after the last kill; 77 where shared domains are not available (no
 * global membarrier); 1 otherwise.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <srcu.h>

#include "../tools/clock.h"

#define MAX_WORKERS 64
#define MAX_KEYS    4096
#define QUARANTINE  4096          /* pool records beyond one per key */
#define MAX_KILLS   64
#define LIVE        0x11fe11fe11fe11feull
#define POISON      0xdeaddeaddeaddeadull
#define CHECK_WORDS 5

/* ---- the table, in its own memfd ---- */

/* One version of one key.  Immutable while readers can reach it; the
 * check words depend on key and version, so that a record recycled for
 * another key (or half rewritten) fails the check as well as a poisoned
 * one. */
struct record {
	uint64_t magic;               /* LIVE, or POISON once retired */
	uint64_t key;
	uint64_t version;
	uint64_t check[CHECK_WORDS];
};

enum { OUTSIDE, INSIDE, HELD };

/* A worker's line: the control process writes pid and hold, the worker
 * state and lookups. */
struct worker_slot {
	int pid;
	int state;                    /* OUTSIDE, INSIDE or HELD */
	int hold;                     /* the control's "stay inside" */
	int pad;
	unsigned long lookups;
} __attribute__((aligned(64)));

struct table {
	unsigned int nkeys, nrecords;
	int stop;
	unsigned long poisoned_reads __attribute__((aligned(64)));
	unsigned long recycled_reads;
	struct worker_slot workers[MAX_WORKERS];
	unsigned int current[MAX_KEYS];   /* key -> index of its record */
	struct record records[];          /* the pool */
};

/* ---- the control process's state ---- */

struct kill_report {
	int pid;
	double held_ms;               /* asked to stay -> inside for good */
	double gp_ms;                 /* the grace period after the SIGKILL */
	unsigned long updates_after;  /* before the next kill or the end */
	int reported_sections;        /* by the stall handler; -1: no report */
	int reaped_ok;                /* killed by SIGKILL, as sent */
};

static struct table *tbl;
static size_t tbl_len;
static int tbl_fd;
static struct srcu_struct *sp;
static int nworkers = 4, nkeys = 64, inside_ms = 5, update_us = 100, nkills = 1;
static int replace = 1, busted;

static unsigned int *pool;        /* retired records, oldest first */
static unsigned int pool_head, pool_count;
static unsigned long updates, version, dead_lookups;
static double *gp_ms;
static size_t ngp, gp_cap;
static struct kill_report kills[MAX_KILLS];
static int nkilled;

/* Recovery reports, from the stall handler. */
#define MAX_DEAD 64
static struct { int pid; unsigned long sections; } dead[MAX_DEAD];
static int ndead;

static double now_ms(void)
{
	return (double)clock_now_ns() / 1e6;
}

/* To a deadline, whatever signals land (tools/clock.h says why). */
static void sleep_us(long us)
{
	clock_sleep_ns(us * 1000LL);
}

static uint64_t mix(uint64_t key, uint64_t ver, unsigned int i)
{
	uint64_t z = key * 0x9e3779b97f4a7c15ull ^ ver * 0xbf58476d1ce4e5b9ull ^ i;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- workers ---- */

/* Relaxed loads of a record: in --busted runs the control process
 * rewrites it under us (that is what the check is to catch); otherwise
 * it is immutable while we can reach it, and the acquire of its index
 * in lookup() is what makes its contents visible. */
static void read_record(const struct record *r, struct record *out)
{
	out->magic = __atomic_load_n(&r->magic, __ATOMIC_RELAXED);
	out->key = __atomic_load_n(&r->key, __ATOMIC_RELAXED);
	out->version = __atomic_load_n(&r->version, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < CHECK_WORDS; i++)
		out->check[i] = __atomic_load_n(&r->check[i], __ATOMIC_RELAXED);
}

static bool record_ok(const struct record *r, uint64_t key)
{
	if (r->magic != LIVE || r->key != key)
		return false;
	for (unsigned int i = 0; i < CHECK_WORDS; i++)
		if (r->check[i] != mix(key, r->version, i))
			return false;
	return true;
}

/* Is what we hold now what we read at first?  Counts a poisoned or a
 * recycled record in the table's counters (relaxed: totals, read once
 * every worker has been reaped). */
static bool still_valid(const struct record *r, const struct record *first)
{
	struct record now;

	read_record(r, &now);
	if (now.magic == POISON) {
		__atomic_fetch_add(&tbl->poisoned_reads, 1, __ATOMIC_RELAXED);
		return false;
	}
	if (memcmp(&now, first, sizeof(now)) != 0) {
		__atomic_fetch_add(&tbl->recycled_reads, 1, __ATOMIC_RELAXED);
		return false;
	}
	return true;
}

static void worker_main(int w, unsigned int seed)
{
	struct worker_slot *me;
	struct table *inherited = tbl;
	unsigned long lookups = 0;
	int err;

	/* Map the table again and drop the inherited mapping, so that it
	 * sits at another address than in the control process, as in a
	 * process that attached by exec: only indices cross, and a pointer
	 * from the other side would fault here. */
	tbl = mmap(NULL, tbl_len, PROT_READ | PROT_WRITE, MAP_SHARED, tbl_fd, 0);
	if (tbl == MAP_FAILED) {
		perror("prefork: worker: mmap");
		_exit(3);
	}
	munmap(inherited, tbl_len);
	me = &tbl->workers[w];
	/* The control read right after the fork (start_worker()): that
	 * section is its own, not ours. */
	if (srcu_read_lock_held(sp)) {
		fprintf(stderr, "prefork: worker %d inherited a read-side section that nobody "
			"holds\n", w);
		_exit(6);
	}
	/* The fork made us attached; our slot is taken now, so that a full
	 * file is an error here, not an abort at the first section. */
	if ((err = srcu_shared_reserve(sp, 1)) != 0) {
		fprintf(stderr, "prefork: worker %d: srcu_shared_reserve: %s\n", w, strerror(-err));
		_exit(3);
	}
	/* stop carries no data (the control reads our counters only after
	 * reaping us): relaxed, paired with nothing. */
	while (!__atomic_load_n(&tbl->stop, __ATOMIC_RELAXED)) {
		uint64_t key = rand_r(&seed) % tbl->nkeys;
		struct record first, *r;
		unsigned int i;
		bool ok;
		int idx;

		idx = srcu_read_lock(sp);
		/* state and hold are hints between the two processes, and
		 * relaxed: nothing is published through them.  What makes
		 * the kill land inside a section is that a worker which
		 * stores HELD never leaves it (below). */
		__atomic_store_n(&me->state, INSIDE, __ATOMIC_RELAXED);
		/* Acquire: pairs with the release in publish(): the record's
		 * contents, written before its index, are seen. */
		i = __atomic_load_n(&tbl->current[key], __ATOMIC_ACQUIRE);
		if (i >= tbl->nrecords) {   /* another process wrote it: checked */
			fprintf(stderr, "prefork: worker %d: record index %u out of range\n", w, i);
			_exit(4);
		}
		r = &tbl->records[i];
		read_record(r, &first);
		ok = record_ok(&first, key);
		if (!ok) {
			if (first.magic == POISON)
				__atomic_fetch_add(&tbl->poisoned_reads, 1, __ATOMIC_RELAXED);
			else
				__atomic_fetch_add(&tbl->recycled_reads, 1, __ATOMIC_RELAXED);
		} else {
			/* The request's I/O, holding the record. */
			sleep_us(1000 + (long)(rand_r(&seed) % ((unsigned int)inside_ms * 1000 - 999)));
			ok = still_valid(r, &first);
		}
		if (__atomic_load_n(&me->hold, __ATOMIC_RELAXED)) {
			/* A request that hangs: inside the section for good,
			 * still using the record, until the control's SIGKILL. */
			__atomic_store_n(&me->state, HELD, __ATOMIC_RELAXED);
			for (;;) {
				sleep_us(1000);
				if (ok)
					ok = still_valid(r, &first);
			}
		}
		__atomic_store_n(&me->state, OUTSIDE, __ATOMIC_RELAXED);
		srcu_read_unlock(sp, idx);
		/* Ours alone to write; the control reads it after reaping us
		 * (the exit and the wait order it): relaxed. */
		__atomic_store_n(&me->lookups, ++lookups, __ATOMIC_RELAXED);
	}
	/* Our slot back to the file for the next process (exiting attached
	 * would cost nothing lasting either: a gone process's balanced slot
	 * is taken back by the next attacher or recovery that needs it). */
	err = srcu_shared_detach(sp);
	if (err != 0) {
		fprintf(stderr, "prefork: worker %d: srcu_shared_detach: %s\n", w, strerror(-err));
		_exit(5);
	}
	_exit(0);
}

/* The control process serves from the table too: it reads before each
 * fork (its slot is mapped) and right after, while the worker's fork
 * handler runs (a few milliseconds).  The worker must not get that
 * section, which the control goes on counting in its slot. */
static void control_reads(long hold_us)
{
	int idx = srcu_read_lock(sp);

	sleep_us(hold_us);
	srcu_read_unlock(sp, idx);
}

static int start_worker(int w)
{
	pid_t pid;

	__atomic_store_n(&tbl->workers[w].state, OUTSIDE, __ATOMIC_RELAXED);
	__atomic_store_n(&tbl->workers[w].hold, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tbl->workers[w].lookups, 0, __ATOMIC_RELAXED);
	fflush(NULL);   /* or the child flushes our buffered output again */
	control_reads(0);
	pid = fork();
	if (pid < 0) {
		perror("prefork: fork");
		return -1;
	}
	if (pid == 0)
		worker_main(w, (unsigned int)getpid() * 2654435761u + (unsigned int)w);
	control_reads(5000);
	tbl->workers[w].pid = pid;
	return 0;
}

/* ---- the control process ---- */

static void on_report(const struct srcu_stall *s, void *arg)
{
	(void)arg;
	/* Called inside synchronize_srcu(), in the control process's one
	 * thread (workers run no grace periods): plain variables. */
	if (s->dead_pid) {
		printf("prefork: recovery report: process %d died inside %lu section(s) of "
		       "domain %s; they are ended and its reader slot is free\n",
		       s->dead_pid, s->dead_sections, s->domain);
		if (ndead < MAX_DEAD) {
			dead[ndead].pid = s->dead_pid;
			dead[ndead].sections = s->dead_sections;
			ndead++;
		}
		return;
	}
	printf("prefork: stall report: a grace period of %s has waited %.1f s for %u thread(s)\n",
	       s->domain, s->waited_s, s->nthreads);
}

static void fill(unsigned int i, uint64_t key, uint64_t ver)
{
	struct record *r = &tbl->records[i];

	/* Relaxed: the release in publish() orders these before the index
	 * that makes the record reachable. */
	__atomic_store_n(&r->key, key, __ATOMIC_RELAXED);
	__atomic_store_n(&r->version, ver, __ATOMIC_RELAXED);
	for (unsigned int k = 0; k < CHECK_WORDS; k++)
		__atomic_store_n(&r->check[k], mix(key, ver, k), __ATOMIC_RELAXED);
	__atomic_store_n(&r->magic, LIVE, __ATOMIC_RELAXED);
}

static void poison(unsigned int i)
{
	struct record *r = &tbl->records[i];

	/* Relaxed: after a grace period (synchronize_srcu() orders these
	 * after every section that could reach the record: its scans'
	 * acquire pairs with C in those sections' srcu_read_unlock()), no
	 * reader can see them; in --busted runs readers do, which is the
	 * point. */
	__atomic_store_n(&r->magic, POISON, __ATOMIC_RELAXED);
	__atomic_store_n(&r->key, POISON, __ATOMIC_RELAXED);
	__atomic_store_n(&r->version, POISON, __ATOMIC_RELAXED);
	for (unsigned int k = 0; k < CHECK_WORDS; k++)
		__atomic_store_n(&r->check[k], POISON, __ATOMIC_RELAXED);
}

static void publish(uint64_t key, unsigned int i)
{
	/* Release (srcu_assign_pointer() on an index): pairs with the
	 * acquire in worker_main(): a worker that loads i sees fill()'s
	 * stores. */
	__atomic_store_n(&tbl->current[key], i, __ATOMIC_RELEASE);
}

static double timed_synchronize(void)
{
	double t = now_ms();

	synchronize_srcu(sp);
	return now_ms() - t;
}

/* Replace key's record: publish a new one, wait for the readers that may
 * hold the old one, poison it, back to the pool (oldest out first, so a
 * poisoned record stays poisoned a while: the busted run sees poison
 * rather than a recycled record).  The grace period's length, or -1 in
 * --busted runs. */
static double update(uint64_t key)
{
	unsigned int fresh = pool[pool_head], old;
	double gp = -1;

	pool_head = (pool_head + 1) % tbl->nrecords;
	pool_count--;
	fill(fresh, key, ++version);
	/* Relaxed: only this process writes current[]. */
	old = __atomic_load_n(&tbl->current[key], __ATOMIC_RELAXED);
	publish(key, fresh);
	if (!busted)
		gp = timed_synchronize();
	poison(old);
	pool[(pool_head + pool_count) % tbl->nrecords] = old;
	pool_count++;
	updates++;
	return gp;
}

static void note_gp(double ms)
{
	if (ngp == gp_cap) {
		gp_cap = gp_cap ? 2 * gp_cap : 4096;
		gp_ms = realloc(gp_ms, gp_cap * sizeof(*gp_ms));
		if (!gp_ms) {
			perror("prefork: realloc");
			exit(1);
		}
	}
	gp_ms[ngp++] = ms;
}

static int find_dead_report(int pid)
{
	for (int k = 0; k < ndead; k++)
		if (dead[k].pid == pid)
			return (int)dead[k].sections;
	return -1;
}

/* Kill a worker inside its section and recover.  0, or -1 if no worker
 * could be made to hang (none left). */
static int kill_one(unsigned int seed)
{
	struct kill_report *k = &kills[nkilled];
	int w = -1, status;
	double t;

	/* A worker inside a section now (mostly all of them are: they sleep
	 * there), starting from a random one. */
	for (t = now_ms(); w < 0 && now_ms() - t < 1000;) {
		for (int n = 0; n < nworkers; n++) {
			int c = (int)((seed + (unsigned int)n) % (unsigned int)nworkers);

			if (tbl->workers[c].pid > 0 &&
			    __atomic_load_n(&tbl->workers[c].state, __ATOMIC_RELAXED) == INSIDE) {
				w = c;
				break;
			}
		}
		if (w < 0)
			sleep_us(100);
	}
	if (w < 0) {
		fprintf(stderr, "prefork: no worker inside a section to kill\n");
		return -1;
	}
	/* Ask it to stay inside: it looks at the end of its request.  No
	 * update runs meanwhile (its grace period would wait for it). */
	__atomic_store_n(&tbl->workers[w].hold, 1, __ATOMIC_RELAXED);
	t = now_ms();
	while (__atomic_load_n(&tbl->workers[w].state, __ATOMIC_RELAXED) != HELD) {
		if (now_ms() - t > 5000) {
			fprintf(stderr, "prefork: worker %d never stayed inside\n", w);
			return -1;
		}
		sleep_us(50);
	}
	k->pid = tbl->workers[w].pid;
	k->held_ms = now_ms() - t;
	kill(k->pid, SIGKILL);
	/* The next grace period, before the reap: the worker may still be a
	 * zombie, which the library must take for dead too. */
	k->gp_ms = busted ? timed_synchronize() : update(rand_r(&seed) % tbl->nkeys);
	k->reported_sections = find_dead_report(k->pid);
	k->reaped_ok = waitpid(k->pid, &status, 0) == k->pid &&
		       WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	printf("prefork: kill %d: worker %d (pid %d) inside its section; SIGKILL; next grace "
	       "period %.1f ms%s\n", nkilled + 1, w, k->pid, k->gp_ms,
	       k->reaped_ok ? "; reaped" : "; NOT killed by our SIGKILL");
	k->updates_after = busted ? 0 : 1;
	nkilled++;
	tbl->workers[w].pid = 0;
	/* Lookups are counted in the worker's line, which a replacement
	 * starts again: keep the dead one's (relaxed: it is reaped). */
	dead_lookups += __atomic_load_n(&tbl->workers[w].lookups, __ATOMIC_RELAXED);
	if (replace) {
		if (start_worker(w) != 0)
			return -1;
		printf("prefork: worker %d replaced by pid %d\n", w, tbl->workers[w].pid);
	}
	return 0;
}

static int cmp_double(const void *x, const void *y)
{
	double d = *(const double *)x - *(const double *)y;

	return (d > 0) - (d < 0);
}

static int usage(void)
{
	fprintf(stderr, "usage: test_prefork [--workers N] [--duration S] [--keys N] "
		"[--inside-ms MS] [--update-us US] [--kills N] [--no-replace] [--busted]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workers", required_argument, 0, 'w' },
		{ "duration", required_argument, 0, 'd' },
		{ "keys", required_argument, 0, 'k' },
		{ "inside-ms", required_argument, 0, 'i' },
		{ "update-us", required_argument, 0, 'u' },
		{ "kills", required_argument, 0, 'K' },
		{ "no-replace", no_argument, 0, 'n' },
		{ "busted", no_argument, 0, 'b' },
		{ 0, 0, 0, 0 },
	};
	double duration = 3, t0, elapsed, next_kill;
	unsigned long lookups = 0, poisoned, recycled;
	unsigned int seed = (unsigned int)getpid(), nrecords;
	int dom_fd, c, err, failed = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'w': nworkers = atoi(optarg); break;
		case 'd': duration = atof(optarg); break;
		case 'k': nkeys = atoi(optarg); break;
		case 'i': inside_ms = atoi(optarg); break;
		case 'u': update_us = atoi(optarg); break;
		case 'K': nkills = atoi(optarg); break;
		case 'n': replace = 0; break;
		case 'b': busted = 1; break;
		default: return usage();
		}
	}
	if (optind != argc || nworkers < 1 || nworkers > MAX_WORKERS || duration <= 0 ||
	    nkeys < 1 || nkeys > MAX_KEYS || inside_ms < 1 || inside_ms > 10000 ||
	    update_us < 0 || nkills < 0 || nkills > MAX_KILLS)
		return usage();

	/* The domain's file: a slot for us, one per worker, and room for
	 * replacements forked before a dead worker's slot is recovered. */
	dom_fd = memfd_create("prefork-srcu", MFD_CLOEXEC);
	if (dom_fd < 0) {
		perror("prefork: memfd_create");
		return 1;
	}
	err = init_srcu_struct_shared(dom_fd, 2 * (unsigned int)nworkers + 2, "prefork", &sp);
	if (err == -ENOSYS || err == -EOPNOTSUPP) {
		printf("prefork: shared domains are not available here: %s\n", strerror(-err));
		return 77;
	}
	if (err) {
		fprintf(stderr, "prefork: init_srcu_struct_shared: %s\n", strerror(-err));
		return 1;
	}
	close(dom_fd);   /* the library keeps its own descriptor */
	srcu_set_stall_handler(on_report, NULL);

	/* The table's file. */
	nrecords = (unsigned int)nkeys + QUARANTINE;
	tbl_len = sizeof(struct table) + nrecords * sizeof(struct record);
	tbl_fd = memfd_create("prefork-table", MFD_CLOEXEC);
	if (tbl_fd < 0 || ftruncate(tbl_fd, (off_t)tbl_len) != 0) {
		perror("prefork: table memfd");
		return 1;
	}
	tbl = mmap(NULL, tbl_len, PROT_READ | PROT_WRITE, MAP_SHARED, tbl_fd, 0);
	pool = calloc(nrecords, sizeof(*pool));
	if (tbl == MAP_FAILED || !pool) {
		perror("prefork: table");
		return 1;
	}
	tbl->nkeys = (unsigned int)nkeys;
	tbl->nrecords = nrecords;
	for (unsigned int k = 0; k < (unsigned int)nkeys; k++) {
		fill(k, k, ++version);
		tbl->current[k] = k;   /* no worker yet: the fork orders it */
	}
	for (unsigned int i = (unsigned int)nkeys; i < nrecords; i++)
		pool[pool_count++] = i;

	for (int w = 0; w < nworkers; w++)
		if (start_worker(w) != 0)
			return 1;
	printf("prefork: %d worker processes, %d keys, sections sleep 1-%d ms, %d kill(s)%s\n",
	       nworkers, nkeys, inside_ms, nkills,
	       busted ? " (--busted: no grace period before poisoning)" : "");

	t0 = now_ms();
	next_kill = nkills ? t0 + duration * 1e3 / (nkills + 1) : -1;
	/* Past the duration while the kills are not all made, or the last
	 * has had no updates after it yet (a loaded machine slows both), up
	 * to a minute: the verdict is about what followed each kill, not
	 * about how soon. */
	while ((elapsed = now_ms() - t0) < duration * 1e3 ||
	       (!failed && nkills && elapsed < (duration + 60) * 1e3 &&
		(nkilled < nkills || kills[nkilled - 1].updates_after < 10))) {
		double gp;

		if (next_kill >= 0 && now_ms() >= next_kill) {
			if (kill_one(rand_r(&seed)) != 0) {
				failed = 1;
				next_kill = -1;
			} else {
				next_kill = nkilled < nkills ?
					    t0 + duration * 1e3 * (nkilled + 1) / (nkills + 1) : -1;
			}
			continue;
		}
		gp = update(rand_r(&seed) % (unsigned int)nkeys);
		if (gp >= 0)
			note_gp(gp);
		if (nkilled)
			kills[nkilled - 1].updates_after++;
		if (update_us)
			sleep_us(update_us);
	}

	/* Stop, reap, and only then read the workers' counters. */
	__atomic_store_n(&tbl->stop, 1, __ATOMIC_RELAXED);
	for (int w = 0; w < nworkers; w++) {
		int status;

		if (tbl->workers[w].pid <= 0)
			continue;
		if (waitpid(tbl->workers[w].pid, &status, 0) != tbl->workers[w].pid ||
		    !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			fprintf(stderr, "prefork: worker %d (pid %d) failed\n", w, tbl->workers[w].pid);
			failed = 1;
		}
		lookups += __atomic_load_n(&tbl->workers[w].lookups, __ATOMIC_RELAXED);
	}
	lookups += dead_lookups;
	poisoned = __atomic_load_n(&tbl->poisoned_reads, __ATOMIC_RELAXED);
	recycled = __atomic_load_n(&tbl->recycled_reads, __ATOMIC_RELAXED);

	if (ngp)
		qsort(gp_ms, ngp, sizeof(*gp_ms), cmp_double);
	printf("prefork: %lu updates (%.0f/s), %lu lookups (%.0f/s)\n", updates,
	       updates / (elapsed / 1e3), lookups, lookups / (elapsed / 1e3));
	if (ngp)
		printf("prefork: grace period median %.3f ms, max %.3f ms (%zu, not counting "
		       "the ones after a kill)\n", gp_ms[ngp / 2], gp_ms[ngp - 1], ngp);
	else
		printf("prefork: no grace period before poisoning\n");
	for (int k = 0; k < nkilled; k++) {
		struct kill_report *r = &kills[k];

		printf("prefork: kill %d: pid %d, asked to stay inside %.1f ms before; grace "
		       "period after the SIGKILL %.1f ms; recovery %s", k + 1, r->pid, r->held_ms,
		       r->gp_ms, r->reported_sections >= 0 ? "reported" : "NOT reported");
		if (r->reported_sections >= 0)
			printf(" (%d section)", r->reported_sections);
		printf("; %lu updates after\n", r->updates_after);
		if (r->gp_ms >= 1000 || r->reported_sections < 1 || !r->reaped_ok)
			failed = 1;
	}
	if (nkills && (nkilled < nkills || kills[nkilled - 1].updates_after == 0)) {
		fprintf(stderr, "prefork: updates did not go on after the last kill\n");
		failed = 1;
	}
	printf("prefork: poisoned reads: %lu, recycled records read: %lu\n", poisoned, recycled);

	free(gp_ms);
	free(pool);
	munmap(tbl, tbl_len);
	close(tbl_fd);
	if ((err = srcu_shared_detach(sp)) != 0) {
		fprintf(stderr, "prefork: srcu_shared_detach: %s\n", strerror(-err));
		failed = 1;
	}
	return poisoned || recycled || failed ? 1 : 0;
}
