/*
 * bench_sharing.c: srcu-bench's figure 12, update-side sharing: libsrcu's
 * grace periods against urcu-memb's, in one process, in interleaved
 * rounds (libsrcu, memb, libsrcu, memb, ...: one pair in each round of
 * srcu-bench's run), so that a noisy machine moves both sides of a ratio
 * alike.  Each round records one value a cell, each ratio taken within
 * the round (the two sides ran back to back); the run's merge makes them
 * the median [min-max] of the rounds (merge_rounds()).  The goals are issue
 * 23's, marked ok or MISS for the reader: a benchmark measures, it never
 * fails on a goal (tests assert).
 *
 * The physics.  On this membarrier backend a grace period with a reader
 * thread that has used the domain needs membarrier(PRIVATE_EXPEDITED),
 * which since Linux 6.8 serializes on a kernel mutex (one at a time in the
 * whole process) and interrupts every CPU that runs a thread of the
 * process.  N updaters therefore cannot gain by running N grace periods
 * side by side: they can gain only by sharing them (one grace period ends
 * several calls) and by sharing membarriers (one membarrier serves several
 * grace periods, of one domain or of several).  And a reader pays for each
 * membarrier with the interrupt to its CPU.  The rows:
 *
 *   (12a) one updater, a reader thread that read once and sleeps: calls/s.
 *         The reader makes the grace period need a membarrier (without one,
 *         libsrcu's lone updater uses local fences), as in figure 4.
 *   (12b) the same, 200 us between calls: synchronize's p50 on a domain
 *         that is idle when the call starts (no grace period to join), the
 *         latency a lone caller sees.
 *   (12c) 2 and 4 updaters on one domain, same sleeping reader: calls per
 *         grace period (calls / grace periods completed), the sharing of
 *         grace periods; and membarriers per call, for reading (12e).
 *         Shown, no goal since issue 38: sharing is a means, calls/s the
 *         end, and the runner that waited for callers to share its GP
 *         (issue 23's goals of 1.5 and 3.0 calls per GP) lost calls/s,
 *         up to 4x with a CPU-bound process beside it (combine.h).
 *   (12d) the same runs: calls/s against memb's with as many updaters
 *         (urcu-memb shares grace periods between waiters too).
 *   (12e) 2 and 4 updaters, each on a domain of its own with a sleeping
 *         reader of its own: membarriers per call (the process-wide
 *         fence_membarriers counter; nothing else runs meanwhile), the
 *         sharing of membarriers across domains.  One per call would be
 *         no sharing.  Shown, no goal, as (12c).
 *   (12f) the same runs: calls/s against memb's single domain with as
 *         many updaters (memb has no separate domains to offer).
 *   (12g) a reader thread looping empty read pairs: ns per pair while one
 *         updater runs grace periods back to back, over ns per pair while
 *         none does.  Normal grace periods should leave the reader almost
 *         alone (few membarriers, so few interrupts); expedited ones, and
 *         memb's, are shown beside them without a goal.
 *   (12h) grace-period p50 with 1000 idle threads that used the domain,
 *         figure 7a's measurement (gp_with_threads_alt(), bench_update.c;
 *         normal and expedited alternate on the same threads):
 *         the cost of walking many readers; expedited should not be slower
 *         than normal.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_results.h"
#include "clock.h"
#include "srcu.h"

#define MAX_UPDATERS 4

/* The domains of (12e)/(12f): updater i on own[i]. */
static struct srcu_struct own[MAX_UPDATERS];

static unsigned long membarriers_now(void)
{
	struct srcu_stats st;

	/* Process-wide: any domain reports every domain's membarriers. */
	if (srcu_get_stats(&own[0], &st) != 0)
		return 0;
	return st.fence_membarriers;
}

/* ---- the cells: one value each, this round's ---- */

enum {
	TPUT1_S, TPUT1_M, P50_S, P50_M,
	GP2, GP4, MB2, MB4, T2_S, T4_S, T2_M, T4_M,
	MBOWN2, MBOWN4, TOWN2, TOWN4,
	RIDLE_S, RNORM_S, REXP_S, RIDLE_M, RBUSY_M,
	T1000_S, T1000_E, T1000_M,
	/* ratios, round by round */
	X_TPUT1, X_P50, X_T2, X_T4, X_TOWN2, X_TOWN4,
	RX_NORM, RX_EXP, RX_M, X_T1000, X_T1000_E,
	NCELLS
};

struct cell {
	const char *peer, *key, *unit;
	double v;
	bool set;
};

/* record() keeps the strings: the keys are literals. */
#define CELL(i, peer, key, unit) [i] = { peer, key, unit, 0, false }
#define SRCU "libsrcu"
#define EXP "libsrcu-exp"
#define MEMB "urcu-memb"

static struct cell cells[NCELLS] = {
	CELL(TPUT1_S, SRCU, "calls_per_s_1", "calls/s"),
	CELL(TPUT1_M, MEMB, "calls_per_s_1", "calls/s"),
	CELL(P50_S, SRCU, "idle_p50_us", "us"),
	CELL(P50_M, MEMB, "idle_p50_us", "us"),
	CELL(GP2, SRCU, "calls_per_gp_2", "calls"),
	CELL(GP4, SRCU, "calls_per_gp_4", "calls"),
	CELL(MB2, SRCU, "membarriers_per_call_2", "membarriers"),
	CELL(MB4, SRCU, "membarriers_per_call_4", "membarriers"),
	CELL(T2_S, SRCU, "calls_per_s_2", "calls/s"),
	CELL(T4_S, SRCU, "calls_per_s_4", "calls/s"),
	CELL(T2_M, MEMB, "calls_per_s_2", "calls/s"),
	CELL(T4_M, MEMB, "calls_per_s_4", "calls/s"),
	CELL(MBOWN2, SRCU, "membarriers_per_call_own_2", "membarriers"),
	CELL(MBOWN4, SRCU, "membarriers_per_call_own_4", "membarriers"),
	CELL(TOWN2, SRCU, "calls_per_s_own_2", "calls/s"),
	CELL(TOWN4, SRCU, "calls_per_s_own_4", "calls/s"),
	CELL(RIDLE_S, SRCU, "reader_idle_ns", "ns"),
	CELL(RNORM_S, SRCU, "reader_busy_ns_normal", "ns"),
	CELL(REXP_S, SRCU, "reader_busy_ns_exp", "ns"),
	CELL(RIDLE_M, MEMB, "reader_idle_ns", "ns"),
	CELL(RBUSY_M, MEMB, "reader_busy_ns", "ns"),
	CELL(T1000_S, SRCU, "p50_us_1000", "us"),
	CELL(T1000_E, EXP, "p50_us_1000", "us"),
	CELL(T1000_M, MEMB, "p50_us_1000", "us"),
	CELL(X_TPUT1, SRCU, "calls_per_s_1_vs_memb", "x"),
	CELL(X_P50, SRCU, "idle_p50_vs_memb", "x"),
	CELL(X_T2, SRCU, "calls_per_s_2_vs_memb", "x"),
	CELL(X_T4, SRCU, "calls_per_s_4_vs_memb", "x"),
	CELL(X_TOWN2, SRCU, "calls_per_s_own_2_vs_memb", "x"),
	CELL(X_TOWN4, SRCU, "calls_per_s_own_4_vs_memb", "x"),
	CELL(RX_NORM, SRCU, "reader_x_normal", "x"),
	CELL(RX_EXP, SRCU, "reader_x_exp", "x"),
	CELL(RX_M, MEMB, "reader_x", "x"),
	CELL(X_T1000, SRCU, "p50_us_1000_vs_memb", "x"),
	CELL(X_T1000_E, EXP, "p50_us_1000_vs_normal", "x"),
};

/* Each ratio cell: numerator / denominator, within the round. */
static const int ratio_of[][3] = {
	{ X_TPUT1, TPUT1_S, TPUT1_M }, { X_P50, P50_S, P50_M },
	{ X_T2, T2_S, T2_M }, { X_T4, T4_S, T4_M },
	{ X_TOWN2, TOWN2, T2_M }, { X_TOWN4, TOWN4, T4_M },
	{ RX_NORM, RNORM_S, RIDLE_S }, { RX_EXP, REXP_S, RIDLE_S }, { RX_M, RBUSY_M, RIDLE_M },
	{ X_T1000, T1000_S, T1000_M }, { X_T1000_E, T1000_E, T1000_S },
};

static void put(int c, double v)
{
	cells[c].v = v;
	cells[c].set = true;
}

/* ---- threads ---- */

/* A reader that did one section and then sleeps between its checks of
 * stop: it has used the domain, so a grace period must reach its CPU. */
struct sleeper {
	const struct peer *p;          /* its read side, or NULL: */
	struct srcu_struct *dom;       /* one section of this libsrcu domain */
	int stop, ready;
	pthread_t t;
};

static void *sleeper_main(void *arg)
{
	struct sleeper *s = arg;

	if (s->dom) {
		srcu_read_unlock(s->dom, srcu_read_lock(s->dom));
	} else {
		s->p->thread_online();
		s->p->reads(1);
	}
	flag_put(&s->ready, 1);
	while (!flag_get(&s->stop)) {
		if (!s->dom && s->p->blocking_begin)
			s->p->blocking_begin();
		usleep(1000);
		if (!s->dom && s->p->blocking_end)
			s->p->blocking_end();
	}
	if (!s->dom)
		s->p->thread_offline();
	return NULL;
}

static void sleeper_start(struct sleeper *s, const struct peer *p, struct srcu_struct *dom)
{
	*s = (struct sleeper){ .p = p, .dom = dom };
	pthread_create(&s->t, NULL, sleeper_main, s);
	while (!flag_get(&s->ready))
		usleep(100);
}

static void sleeper_stop(struct sleeper *s)
{
	flag_put(&s->stop, 1);
	pthread_join(s->t, NULL);
}

/* An updater: synchronize back to back until told to stop. */
struct updater {
	const struct peer *p;          /* p->synchronize, or NULL: */
	struct srcu_struct *dom;       /* synchronize_srcu() on this domain */
	int *stop;
	long calls;
	pthread_t t;
};

static void *updater_main(void *arg)
{
	struct updater *u = arg;

	while (!flag_get(u->stop)) {
		if (u->dom)
			synchronize_srcu(u->dom);
		else
			u->p->synchronize();
		u->calls++;
	}
	return NULL;
}

static void sleep_s(double secs)
{
	usleep((useconds_t)(secs * 1e6));
}

/* Grace periods completed on the domain(s) of updaters_window(p, n):
 * libsrcu's bench domain, own[0..n-1], or none counted (a peer without). */
static unsigned long gps_now(const struct peer *p, int n)
{
	unsigned long gps = 0;

	if (p == &peer_srcu)
		return srcu_peer_gps();
	for (int i = 0; !p && i < n; i++)
		gps += srcu_batches_completed(&own[i]);
	return gps;
}

/* What a window of n updaters measured. */
struct tput { double calls_per_s, calls_per_gp, membarriers_per_call; };

/* n updaters for secs: of peer p on its one domain, or (p NULL) updater i
 * on own[i]; each domain with one sleeping reader. */
static struct tput updaters_window(const struct peer *p, int n, double secs)
{
	struct updater u[MAX_UPDATERS];
	struct sleeper s[MAX_UPDATERS];
	int stop = 0, nsleep = p ? 1 : n;
	unsigned long gps, mbs;
	long calls = 0;
	double t0, t1;
	struct tput r = { 0, 0, 0 };

	for (int i = 0; i < nsleep; i++)
		sleeper_start(&s[i], p, p ? NULL : &own[i]);
	gps = gps_now(p, n);
	mbs = membarriers_now();
	t0 = clock_now_s();
	for (int i = 0; i < n; i++) {
		u[i] = (struct updater){ .p = p, .dom = p ? NULL : &own[i], .stop = &stop };
		pthread_create(&u[i].t, NULL, updater_main, &u[i]);
	}
	sleep_s(secs);
	flag_put(&stop, 1);
	for (int i = 0; i < n; i++) {
		pthread_join(u[i].t, NULL);
		calls += u[i].calls;
	}
	t1 = clock_now_s();
	mbs = membarriers_now() - mbs;
	gps = gps_now(p, n) - gps;
	for (int i = 0; i < nsleep; i++)
		sleeper_stop(&s[i]);
	r.calls_per_s = (double)calls / (t1 - t0);
	r.calls_per_gp = gps ? (double)calls / (double)gps : 0;
	r.membarriers_per_call = calls ? (double)mbs / (double)calls : 0;
	return r;
}

/* (12a) and (12b) for peer p, one sleeping reader: one updater's calls/s,
 * then synchronize's p50 with 200 us between calls. */
static void lone_updater(const struct peer *p, double secs, int tput_cell, int p50_cell)
{
	static double v[4000];
	struct timespec gap = { 0, 200000 };
	struct sleeper s;
	double start;
	int k;

	put(tput_cell, updaters_window(p, 1, secs).calls_per_s);
	sleeper_start(&s, p, NULL);
	start = clock_now_s();
	for (k = 0; k < 4000 && (k < 50 || clock_now_s() - start < secs); k++) {
		double t0 = clock_now_s();

		p->synchronize();
		v[k] = (clock_now_s() - t0) * 1e6;
		nanosleep(&gap, NULL);
	}
	sleeper_stop(&s);
	put(p50_cell, quantile(v, k, 0.5));
}

/* ---- (12g): a reader's pair under an updater ---- */

struct looper { const struct peer *p; int stop, ready; unsigned long pairs; pthread_t t; };

#define LOOP_CHUNK 2000

static void *looper_main(void *arg)
{
	struct looper *l = arg;

	l->p->thread_online();
	l->p->reads(LOOP_CHUNK);   /* first-use slow paths out of the windows */
	flag_put(&l->ready, 1);
	while (!flag_get(&l->stop)) {
		l->p->reads(LOOP_CHUNK);
		__atomic_store_n(&l->pairs, l->pairs + LOOP_CHUNK, __ATOMIC_RELAXED);
	}
	l->p->thread_offline();
	return NULL;
}

/* ns per pair of the looping reader over secs, while updater u (or none)
 * runs grace periods back to back. */
static double reader_window(struct looper *l, const struct peer *u, double secs)
{
	struct updater up = { .p = u };
	int stop = 0;
	unsigned long n0, n1;
	double t0, t1;

	if (u) {
		up.stop = &stop;
		pthread_create(&up.t, NULL, updater_main, &up);
		sleep_s(0.01);   /* the updater at full speed before the window */
	}
	n0 = __atomic_load_n(&l->pairs, __ATOMIC_RELAXED);
	t0 = clock_now_s();
	sleep_s(secs);
	n1 = __atomic_load_n(&l->pairs, __ATOMIC_RELAXED);
	t1 = clock_now_s();
	if (u) {
		flag_put(&stop, 1);
		pthread_join(up.t, NULL);
	}
	return n1 > n0 ? (t1 - t0) * 1e9 / (double)(n1 - n0) : 0;
}

/* The reader of peer p idle, then under p's normal updater, then (libsrcu)
 * under an expedited one. */
static void reader_rows(const struct peer *p, const struct peer *exp, double secs,
			int idle_cell, int busy_cell, int exp_cell)
{
	struct looper l = { .p = p };

	pthread_create(&l.t, NULL, looper_main, &l);
	while (!flag_get(&l.ready))
		usleep(100);
	put(idle_cell, reader_window(&l, NULL, secs));
	put(busy_cell, reader_window(&l, p, secs));
	if (exp)
		put(exp_cell, reader_window(&l, exp, secs));
	flag_put(&l.stop, 1);
	pthread_join(l.t, NULL);
}

/* ---- printing ---- */

static void print_cell(int c, int width)
{
	char buf[80];
	double v = c >= 0 ? cells[c].v : 0;

	if (c < 0)
		snprintf(buf, sizeof(buf), "-");
	else if (!cells[c].set)
		snprintf(buf, sizeof(buf), "n/a");
	else if (!strcmp(cells[c].unit, "x"))
		snprintf(buf, sizeof(buf), "%.2fx", v);
	else if (v < 10)
		snprintf(buf, sizeof(buf), "%.3f", v);
	else if (v < 1000)
		snprintf(buf, sizeof(buf), "%.1f", v);
	else
		snprintf(buf, sizeof(buf), "%.0f", v);
	printf(" %*s", width, buf);
}

/* A line of the table: libsrcu's cell, memb's, their ratio (-1: none),
 * and a goal on the median of cell goal (-1: none): ge, at least bound. */
struct row {
	const char *label;
	int srcu, memb, ratio, goal, ge;
	double bound;
	const char *goal_text;
};

static void print_row(const struct row *r)
{
	const char *mark = "";

	printf("%-48s", r->label);
	print_cell(r->srcu, 27);
	print_cell(r->memb, 27);
	print_cell(r->ratio, 20);
	if (r->goal >= 0) {
		const struct cell *g = &cells[r->goal];

		if (!g->set)
			mark = "n/a";
		else
			mark = (r->ge ? g->v >= r->bound : g->v <= r->bound) ? "ok" : "MISS";
	}
	printf("  %-18s %s\n", r->goal_text ? r->goal_text : "", mark);
}

static void record_cells(void)
{
	for (int c = 0; c < NCELLS; c++)
		if (cells[c].set)
			record("sharing", cells[c].peer, cells[c].key, cells[c].v, cells[c].unit);
}

static const struct row rows[] = {
	{ "(12a) 1 updater, reader asleep: calls/s", TPUT1_S, TPUT1_M, X_TPUT1, X_TPUT1, 1, 1.5,
	  "libsrcu >= 1.5x", },
	{ "(12b) idle, 200 us between calls: p50 us", P50_S, P50_M, X_P50, X_P50, 0, 1.0,
	  "libsrcu <= 1.0x", },
	{ "(12c) 2 updaters, one domain: calls/GP", GP2, -1, -1, -1, 0, 0, NULL, },
	{ "(12c) 4 updaters, one domain: calls/GP", GP4, -1, -1, -1, 0, 0, NULL, },
	{ "(12c) 2 updaters, one domain: membarriers/call", MB2, -1, -1, -1, 0, 0, NULL, },
	{ "(12c) 4 updaters, one domain: membarriers/call", MB4, -1, -1, -1, 0, 0, NULL, },
	{ "(12d) 2 updaters, one domain: calls/s", T2_S, T2_M, X_T2, X_T2, 1, 1.0,
	  "libsrcu >= 1.0x", },
	{ "(12d) 4 updaters, one domain: calls/s", T4_S, T4_M, X_T4, X_T4, 1, 1.0,
	  "libsrcu >= 1.0x", },
	{ "(12e) 2 updaters, own domains: membarriers/call", MBOWN2, -1, -1, -1, 0, 0, NULL, },
	{ "(12e) 4 updaters, own domains: membarriers/call", MBOWN4, -1, -1, -1, 0, 0, NULL, },
	{ "(12f) 2 updaters, own domains: calls/s (*)", TOWN2, T2_M, X_TOWN2, X_TOWN2, 1, 1.0,
	  "libsrcu >= 1.0x", },
	{ "(12f) 4 updaters, own domains: calls/s (*)", TOWN4, T4_M, X_TOWN4, X_TOWN4, 1, 1.0,
	  "libsrcu >= 1.0x", },
	{ "(12g) reader ns/pair, no updater", RIDLE_S, RIDLE_M, -1, -1, 0, 0, NULL, },
	{ "(12g) reader ns/pair, normal GPs back to back", RNORM_S, RBUSY_M, -1, -1, 0, 0, NULL, },
	{ "(12g) reader ns/pair, expedited GPs", REXP_S, -1, -1, -1, 0, 0, NULL, },
	{ "(12g) reader slowdown, normal GPs (busy/idle)", RX_NORM, RX_M, -1, RX_NORM, 0, 1.3,
	  "libsrcu <= 1.3x", },
	{ "(12g) reader slowdown, expedited GPs", RX_EXP, -1, -1, -1, 0, 0, NULL, },
	{ "(12h) 1000 idle threads: GP p50 us, normal", T1000_S, T1000_M, X_T1000, X_T1000, 0, 1.0,
	  "libsrcu <= 1.0x", },
	{ "(12h) 1000 idle threads: p50 us, expedited", T1000_E, -1, X_T1000_E, X_T1000_E, 0, 1.0,
	  "exp <= 1.0x normal", },
};

/* ---- the goals, round by round ---- */

void sharing_goals_held(void)
{
	printf("\n== figure 12's goals (issues 23 and 38), round by round: each ratio is taken"
	       " within a round ==\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		const struct cell *g;
		int n, held;

		if (r->goal < 0)
			continue;
		g = &cells[r->goal];
		held = rounds_held("sharing", g->peer, g->key, r->ge, r->bound, &n);
		if (n == 0)
			continue;   /* not measured (memb not built, or not run) */
		printf("%-48s %-18s held in %d of %d round%s%s\n", r->label,
		       r->goal_text ? r->goal_text : "", held, n, n == 1 ? "" : "s",
		       held < n ? "  MISS" : "");
	}
}

/* ---- the figure ---- */

void figure_sharing(const struct bench_run *run)
{
	/* libsrcu, then memb, once in each round of the run, whose rounds
	 * give the median and spread (srcu-bench --rounds). */
	double secs = run->quick ? 0.2 : 0.25;
	const struct peer *memb = NULL;

#ifdef HAVE_URCU
	memb = &peer_urcu_memb;
#endif
	for (int i = 0; i < MAX_UPDATERS; i++)
		init_srcu_struct(&own[i]);
	for (int c = 0; c < NCELLS; c++)
		cells[c].set = false;
	printf("\n(12) update-side sharing against urcu-memb, one process: libsrcu then memb,"
	       " %.2f s windows; ratios taken within the round; goals of issues 23"
	       " and 38 (informational)\n", secs);
	lone_updater(&peer_srcu, secs, TPUT1_S, P50_S);
	if (memb)
		lone_updater(memb, secs, TPUT1_M, P50_M);
	for (int n = 2; n <= 4; n += 2) {
		struct tput t = updaters_window(&peer_srcu, n, secs);

		put(n == 2 ? T2_S : T4_S, t.calls_per_s);
		put(n == 2 ? GP2 : GP4, t.calls_per_gp);
		put(n == 2 ? MB2 : MB4, t.membarriers_per_call);
		if (memb)
			put(n == 2 ? T2_M : T4_M, updaters_window(memb, n, secs).calls_per_s);
		t = updaters_window(NULL, n, secs);
		put(n == 2 ? TOWN2 : TOWN4, t.calls_per_s);
		put(n == 2 ? MBOWN2 : MBOWN4, t.membarriers_per_call);
	}
	reader_rows(&peer_srcu, &peer_srcu_exp, secs, RIDLE_S, RNORM_S, REXP_S);
	if (memb)
		reader_rows(memb, NULL, secs, RIDLE_M, RBUSY_M, -1);
	/* Normal and expedited alternate on one set of threads: a
	 * row each on threads of its own compared the noise of two
	 * thread sets (normal 13.8 us, expedited 26.6 us in one round,
	 * the same code path). */
	struct stat3 exp_us, normal_us = gp_with_threads_alt(&peer_srcu, &peer_srcu_exp,
							     1000, 0, run->quick, &exp_us);

	put(T1000_S, normal_us.med);
	put(T1000_E, exp_us.med);
	if (memb)
		put(T1000_M, gp_with_threads(memb, 1000, 0, run->quick).med);
	for (size_t i = 0; i < sizeof(ratio_of) / sizeof(ratio_of[0]); i++) {
		const struct cell *a = &cells[ratio_of[i][1]], *b = &cells[ratio_of[i][2]];

		if (a->set && b->set && b->v > 0)
			put(ratio_of[i][0], a->v / b->v);
	}
	printf("%-48s %27s %27s %20s  %s\n", "", "libsrcu", memb ? "urcu-memb" : "urcu-memb (not built)",
	       "libsrcu / memb", "goal");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		print_row(&rows[i]);
	printf("      (*) memb's column: its one domain with as many updaters ((12d)); each"
	       " updater-count row has a reader asleep per domain\n"
	       "      (12g): libsrcu's column is synchronize_srcu(), its expedited line"
	       " synchronize_srcu_expedited(); ratio column of (12h) expedited: exp / normal\n");
	if (!memb)
		printf("      urcu-memb not built: liburcu-dev was missing when the build was configured"
		       " (make bench installs it and reconfigures)\n");
	record_cells();
	for (int i = 0; i < MAX_UPDATERS; i++)
		bench_cleanup(&own[i]);
}
