/*
 * torture-live.c: srcu-torture's liveness oracle (issue 33, "every grace
 * period ends"), and the workload that gives it something to judge.
 *
 * The oracle.  Every tracked read-side section holds a slot, from its
 * begin to its end, that says when it began; at its end its length goes
 * into a ring of 64 ms buckets (the longest section that ended in each).
 * Every tracked grace-period wait (synchronize_srcu*(), an async writer's
 * wait for its callbacks, srcu_barrier()) holds a slot that says when it
 * began and what it is.  A wait that lasted T is a liveness failure when
 *
 *     T > 3 * L + margin
 *
 * where L is the longest section that was open at any moment of the wait
 * (those that ended meanwhile, from the buckets, and those still open,
 * as long as they have been so far) and the margin is --liveness-margin
 * (3 s by default: 2 s and 1 s of scheduling slack, times
 * SRCU_TEST_TIMEOUT_SCALE on emulated runs).  Three times L: a caller
 * that arrives while a GP runs needs that GP's last wait on readers and
 * then both waits of a GP of its own, each on sections no longer than L.
 * Waits are judged when they end, and a watchdog thread judges those in
 * flight every 20 ms, so a wait that never ends is reported too; once the
 * run stops (--stop-on-fail, or its end), a wait past its bound ends the
 * run, report and all, since its thread cannot be joined.  Cheap on the
 * read side: a section's slot is one compare-and-swap on a line its
 * thread mostly has to itself, its end a store and, at most, a CAS on
 * its bucket; the bound is computed only for waits longer than the
 * margin.  Only the threads mode is judged (--processes keeps its stall
 * limit: its reader processes' sections are in other address spaces).
 *
 * The workload (with chaos): sections begun with srcu_down_read_fast() in
 * one short-lived thread and ended with srcu_up_read_fast() in another,
 * both exiting in each order, on a fast up/down domain whose grace
 * periods run back to back; each exit's hand-over of its imbalance is
 * held half done (SRCU_TORTURE_POINT_HANDOVER) until such a grace period
 * sleeps, so a hand-over that wakes nobody (busted-handovernowake) leaves
 * it asleep for ever (the domain's stall timer is off).  Normal grace
 * periods on a domain whose reader runs, paced, while the run's other
 * domains issue membarriers, with a pacing gap that every membarrier
 * moves on (SRCU_TORTURE_POINT_PACE: now + 5 ms at each read, in that
 * updater's thread only): a paced wait that keeps re-reading it
 * (busted-paceunbounded) never ends; the library's is bounded to 1 ms
 * after the GP began.  And srcu_expedite_current() on the run's domains
 * at random, beside their normal and expedited writers.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "srcu-torture.h"
#include "../src/torture.h"   /* the library's test-only hooks */

#define LIVE_SECTIONS 1024
#define LIVE_GPS      256
#define BUCKET_SHIFT  26      /* 2^26 ns: 67 ms */
#define BUCKETS       1024    /* 69 s of ended sections */
#define PACE_GAP_NS   (5 * MS)
#define HOLD_MAX_NS   (50 * MS)

struct live_stats live;

static bool live_on;
static int64_t margin_ns;
static void (*on_hang)(void);

/* An open section: when it began (0: the slot is free). */
struct sec_slot {
	int64_t begun;
} __attribute__((aligned(64)));

/* A grace-period wait in flight: claimed by owner, then described, then
 * begun published (release), which the watchdog reads (acquire). */
struct gp_slot {
	int owner;
	int who;
	int reported;            /* judged a failure once (by its end or the watchdog) */
	const char *what;
	int64_t begun;
} __attribute__((aligned(64)));

static struct sec_slot sec_slots[LIVE_SECTIONS];
static struct gp_slot gp_slots[LIVE_GPS];
/* Bucket b % BUCKETS: (b << 32) | the longest section (us) that ended in
 * bucket b; a newer bucket's value is larger, so store_max() resets it. */
static uint64_t ended[BUCKETS];

static void store_max_u64(uint64_t *m, uint64_t v)
{
	uint64_t cur = __atomic_load_n(m, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(m, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

/* ---- sections ---- */

int live_open(int64_t start)
{
	static __thread unsigned int hint;

	if (!live_on)
		return -1;
	for (unsigned int n = 0; n < LIVE_SECTIONS; n++) {
		unsigned int i = (hint + n) % LIVE_SECTIONS;
		int64_t free_slot = 0;

		/* Relaxed: the watchdog only needs the value, no data with it. */
		if (__atomic_compare_exchange_n(&sec_slots[i].begun, &free_slot, start, false,
						__ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			hint = i;
			return (int)i;
		}
	}
	__atomic_fetch_add(&live.untracked, 1, __ATOMIC_RELAXED);
	return -1;
}

void live_close(int token)
{
	int64_t now, begun, len;
	uint64_t b;

	if (token < 0)
		return;
	now = now_ns();
	begun = __atomic_load_n(&sec_slots[token].begun, __ATOMIC_RELAXED);
	len = now - begun;
	b = (uint64_t)now >> BUCKET_SHIFT;
	store_max_u64(&ended[b % BUCKETS], (b << 32) | (uint64_t)(len / 1000 < 0xffffffffLL ?
								   len / 1000 : 0xffffffffLL));
	/* Release pairs with longest_since()'s acquire: the bucket before
	 * the slot is freed, so a wait judged meanwhile sees the section in
	 * one or the other. */
	__atomic_store_n(&sec_slots[token].begun, 0, __ATOMIC_RELEASE);
}

/* The longest section open at any moment in [from, now]: the open ones
 * first, then the buckets, so that one freed meanwhile is in its bucket. */
static int64_t longest_since(int64_t from, int64_t now)
{
	uint64_t last = (uint64_t)now >> BUCKET_SHIFT, b = (uint64_t)from >> BUCKET_SHIFT;
	int64_t longest = 0;

	for (int i = 0; i < LIVE_SECTIONS; i++) {
		/* Acquire pairs with live_close()'s release: a slot seen free
		 * has its length in its bucket, read below. */
		int64_t begun = __atomic_load_n(&sec_slots[i].begun, __ATOMIC_ACQUIRE);

		if (begun && now - begun > longest)
			longest = now - begun;
	}
	if (last - b >= BUCKETS)
		b = last - BUCKETS + 1;
	for (; b <= last; b++) {
		uint64_t v = __atomic_load_n(&ended[b % BUCKETS], __ATOMIC_RELAXED);

		if (v >> 32 == (b & 0xffffffffu) && (int64_t)(v & 0xffffffffu) * 1000 > longest)
			longest = (int64_t)(v & 0xffffffffu) * 1000;
	}
	return longest;
}

/* ---- grace-period waits ---- */

int live_gp_begin(const char *what, int who)
{
	static __thread unsigned int hint;

	if (!live_on)
		return -1;
	for (unsigned int n = 0; n < LIVE_GPS; n++) {
		unsigned int i = (hint + n) % LIVE_GPS;
		struct gp_slot *g = &gp_slots[i];
		int free_slot = 0;

		/* Acquire pairs with live_gp_end()'s release of owner: the
		 * last wait's accesses to the slot come before ours. */
		if (__atomic_compare_exchange_n(&g->owner, &free_slot, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED)) {
			hint = i;
			/* Relaxed stores, and loads in judge(): a watchdog that
			 * read begun before this slot was freed and claimed
			 * again may read them as they change (its label, no
			 * more, could be the next wait's). */
			__atomic_store_n(&g->what, what, __ATOMIC_RELAXED);
			__atomic_store_n(&g->who, who, __ATOMIC_RELAXED);
			__atomic_store_n(&g->reported, 0, __ATOMIC_RELAXED);
			/* Release pairs with the watchdog's acquire load of begun:
			 * it sees what this wait is. */
			__atomic_store_n(&g->begun, now_ns(), __ATOMIC_RELEASE);
			return (int)i;
		}
	}
	__atomic_fetch_add(&live.untracked, 1, __ATOMIC_RELAXED);
	return -1;
}

/* Judge g, begun at begun, at now: fails the run once if it is past its
 * bound (ended: it took that long; else it is still in flight). */
static bool judge(struct gp_slot *g, int64_t begun, int64_t now, bool ended_now)
{
	int64_t took = now - begun, longest, bound;
	const char *what = __atomic_load_n(&g->what, __ATOMIC_RELAXED);
	int w = __atomic_load_n(&g->who, __ATOMIC_RELAXED);
	char who[16] = "";

	if (took <= margin_ns)
		return false;
	longest = longest_since(begun, now);
	bound = 3 * longest + margin_ns;
	if (took <= bound)
		return false;
	if (!__atomic_exchange_n(&g->reported, 1, __ATOMIC_RELAXED)) {
		if (w >= 0)
			snprintf(who, sizeof(who), " %d", w);
		__atomic_fetch_add(&live.failures, 1, __ATOMIC_RELAXED);
		torture_fail("liveness: %s%s %s %.2f s; the longest section open meanwhile "
			     "lasted %.1f ms: bound %.2f s (3 x that + %.1f s)", what, who,
			     ended_now ? "took" : "still waits after", took / 1e9, longest / 1e6,
			     bound / 1e9, margin_ns / 1e9);
	}
	return true;
}

void live_gp_end(int token)
{
	struct gp_slot *g;
	int64_t begun, now;

	if (token < 0)
		return;
	g = &gp_slots[token];
	now = now_ns();
	begun = __atomic_load_n(&g->begun, __ATOMIC_RELAXED);   /* the watchdog reads it too */
	judge(g, begun, now, true);
	__atomic_fetch_add(&live.waits, 1, __ATOMIC_RELAXED);
	store_max(&live.longest_wait_ns, now - begun);
	__atomic_store_n(&g->begun, 0, __ATOMIC_RELAXED);
	/* Release: the slot's fields are done with before another claims it. */
	__atomic_store_n(&g->owner, 0, __ATOMIC_RELEASE);
}

/* ---- the watchdog ---- */

static pthread_t watchdog_thread;
static int watchdog_done;

static void *watchdog(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&watchdog_done, __ATOMIC_ACQUIRE)) {
		int64_t now = now_ns();
		bool past = false;

		for (int i = 0; i < LIVE_GPS; i++) {
			struct gp_slot *g = &gp_slots[i];
			/* Acquire pairs with live_gp_begin()'s release store. */
			int64_t begun = __atomic_load_n(&g->begun, __ATOMIC_ACQUIRE);

			if (begun && judge(g, begun, now, false))
				past = true;
		}
		/* A wait past its bound once the run stops would hang the
		 * joins: the run ends here, with its report. */
		if (past && stopping())
			on_hang();
		sleep_ns(20 * MS);
	}
	return NULL;
}

/* ---- the library's test-only points ---- */

static void (*next_point)(enum srcu__torture_point p, void *arg);
static __thread bool pace_moving;   /* the paced updater's thread */
static struct srcu_struct ud, pd;   /* up/down, paced */
static unsigned int ud_sleeps;

static void live_point(enum srcu__torture_point p, void *arg)
{
	switch (p) {
	case SRCU_TORTURE_POINT_PACE:
		/* What other domains' membarriers do to the process's gap,
		 * here at every read: it moves on. */
		if (pace_moving)
			*(int64_t *)arg = now_ns() + PACE_GAP_NS;
		return;
	case SRCU_TORTURE_POINT_GP_SLEEP:
		if (arg == &ud)
			__atomic_fetch_add(&ud_sleeps, 1, __ATOMIC_SEQ_CST);
		return;
	case SRCU_TORTURE_POINT_HANDOVER: {
		/* Half handed over (only ud is an up/down domain): hold until
		 * one of its GPs has checked and gone to sleep on the counts. */
		unsigned int s = __atomic_load_n(&ud_sleeps, __ATOMIC_SEQ_CST);
		int64_t end = now_ns() + HOLD_MAX_NS;

		while (__atomic_load_n(&ud_sleeps, __ATOMIC_SEQ_CST) == s && now_ns() < end)
			sleep_ns(50 * 1000);
		__atomic_fetch_add(&live.handovers_held, 1, __ATOMIC_RELAXED);
		if (__atomic_load_n(&ud_sleeps, __ATOMIC_SEQ_CST) != s)
			__atomic_fetch_add(&live.handovers_slept_on, 1, __ATOMIC_RELAXED);
		return;
	}
	default:
		if (next_point)
			next_point(p, arg);
	}
}

/* ---- the workload ---- */

static pthread_t load_threads[8];
static int nload;

static void *ud_updater(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		bool exp = rnd(&seed) % 4 == 0;
		int t = live_gp_begin(exp ? "synchronize_srcu_expedited() on the up/down domain" :
				      "synchronize_srcu() on the up/down domain", -1);

		if (exp)
			synchronize_srcu_expedited(&ud);
		else
			synchronize_srcu(&ud);
		live_gp_end(t);
		/* Not back to back (on an idle domain a GP is a few loads):
		 * one begins within 0.3 ms of any hand-over. */
		sleep_ns(50 * 1000 + rnd(&seed) % 250000);
	}
	return NULL;
}

/* One section, begun in D and ended in U, both short-lived. */
struct pair {
	struct srcu_ctr *scp;
	int token;
	int begun, up_go, ended, down_exit;
};

static void flag_set(int *f)
{
	__atomic_store_n(f, 1, __ATOMIC_RELEASE);
}

static void flag_wait(int *f)
{
	/* Acquire pairs with flag_set()'s release. */
	while (!__atomic_load_n(f, __ATOMIC_ACQUIRE))
		sleep_ns(20 * 1000);
}

static void *down_thread(void *arg)
{
	struct pair *p = arg;

	p->token = live_open(now_ns());
	p->scp = srcu_down_read_fast(&ud);
	flag_set(&p->begun);
	flag_wait(&p->down_exit);
	return NULL;   /* open here (+1): handed over as it exits */
}

static void *up_thread(void *arg)
{
	struct pair *p = arg;

	flag_wait(&p->up_go);
	srcu_up_read_fast(&ud, p->scp);
	live_close(p->token);
	flag_set(&p->ended);
	return NULL;   /* ended another's section (-1): handed over as it exits */
}

/* Each order of the two exits: (0) U ends it and exits, then D exits;
 * (1) U ends it, D exits, then U; (2) D exits with it open, then U ends
 * it and exits. */
static void one_pair(int order)
{
	struct pair p = { .token = -1 };
	pthread_t d, u;

	if (pthread_create(&d, NULL, down_thread, &p) != 0)
		return;
	if (pthread_create(&u, NULL, up_thread, &p) != 0) {
		flag_wait(&p.begun);
		srcu_up_read_fast(&ud, p.scp);
		live_close(p.token);
		flag_set(&p.down_exit);
		pthread_join(d, NULL);
		return;
	}
	flag_wait(&p.begun);
	if (order == 2) {
		flag_set(&p.down_exit);
		pthread_join(d, NULL);
		flag_set(&p.up_go);
		pthread_join(u, NULL);
	} else {
		flag_set(&p.up_go);
		flag_wait(&p.ended);
		if (order == 0) {
			pthread_join(u, NULL);
			flag_set(&p.down_exit);
			pthread_join(d, NULL);
		} else {
			flag_set(&p.down_exit);
			pthread_join(d, NULL);
			pthread_join(u, NULL);
		}
	}
	__atomic_fetch_add(&live.pairs, 1, __ATOMIC_RELAXED);
}

static void *pairs(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		one_pair((int)(rnd(&seed) % 3));
		sleep_ns(200 * 1000 + rnd(&seed) % 800000);
	}
	return NULL;
}

/* pd's reader: sections always coming, so its GPs are paced. */
static void *pd_reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		int t = live_open(now_ns());
		int idx = srcu_read_lock(&pd);

		sleep_ns(10 * 1000 + rnd(&seed) % 100000);
		srcu_read_unlock(&pd, idx);
		live_close(t);
		sleep_ns(10 * 1000 + rnd(&seed) % 100000);
	}
	return NULL;
}

static void *pd_updater(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	pace_moving = true;
	while (!stopping()) {
		int t = live_gp_begin("synchronize_srcu() (paced) on the paced domain", -1);

		synchronize_srcu(&pd);
		live_gp_end(t);
		__atomic_fetch_add(&live.paced_gps, 1, __ATOMIC_RELAXED);
		sleep_ns(100 * 1000 + rnd(&seed) % 400000);
	}
	return NULL;
}

/* srcu_expedite_current() on the run's domains (never pd: an expedited
 * request ends a pacing wait, the case pd is there for). */
static void *expediter(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		unsigned int r = rnd(&seed) % (unsigned int)(nwriters + 1);

		srcu_expedite_current(r < (unsigned int)nwriters ? writers[r].dom : &ud);
		__atomic_fetch_add(&live.expedite_current, 1, __ATOMIC_RELAXED);
		sleep_ns(200 * 1000 + rnd(&seed) % 1800000);
	}
	return NULL;
}

/* ---- start and stop ---- */

void live_start(void (*hang)(void), bool load)
{
	const char *scale = getenv("SRCU_TEST_TIMEOUT_SCALE");
	double s = scale ? atof(scale) : 1;

	on_hang = hang;
	margin_ns = (int64_t)(cfg.liveness_margin_s * (s > 1 ? s : 1) * 1e9);
	live_on = true;
	pthread_create(&watchdog_thread, NULL, watchdog, NULL);
	if (!load)
		return;
	if (init_srcu_struct_fast_updown(&ud) != 0 || init_srcu_struct(&pd) != 0) {
		torture_fail("init_srcu_struct() of the liveness domains failed");
		return;
	}
	srcu_set_name(&ud, "live-updown");
	srcu_set_name(&pd, "live-paced");
	/* No stall timer: a lost wake-up is a wait for ever, which the
	 * oracle must report (and then end the run). */
	srcu_set_stall_timeout(&ud, 0);
	srcu_set_stall_timeout(&pd, 0);
	next_point = srcu__torture_point;
	srcu__torture_point = live_point;
	pthread_create(&load_threads[nload++], NULL, ud_updater, (void *)(uintptr_t)(cfg.seed + 21));
	pthread_create(&load_threads[nload++], NULL, pairs, (void *)(uintptr_t)(cfg.seed + 22));
	pthread_create(&load_threads[nload++], NULL, pd_reader, (void *)(uintptr_t)(cfg.seed + 23));
	pthread_create(&load_threads[nload++], NULL, pd_updater, (void *)(uintptr_t)(cfg.seed + 24));
	pthread_create(&load_threads[nload++], NULL, expediter, (void *)(uintptr_t)(cfg.seed + 25));
	live.load = true;
}

/* After torture_stop(): the workload's threads end (the watchdog still
 * runs, and ends the run if one of them cannot). */
void live_stop_load(void)
{
	for (int i = 0; i < nload; i++)
		pthread_join(load_threads[i], NULL);
	if (!nload)
		return;
	nload = 0;
	/* live_point stays (other threads still reach the library's points);
	 * with its domains gone it passes every point on. */
	if (cleanup_srcu_struct(&ud) != 0)
		torture_fail("cleanup_srcu_struct() of the idle up/down domain failed");
	if (cleanup_srcu_struct(&pd) != 0)
		torture_fail("cleanup_srcu_struct() of the idle paced domain failed");
}

/* Once every other thread is joined. */
void live_stop(void)
{
	if (!live_on)
		return;
	__atomic_store_n(&watchdog_done, 1, __ATOMIC_RELEASE);   /* pairs with its acquire */
	pthread_join(watchdog_thread, NULL);
	live_on = false;
}
