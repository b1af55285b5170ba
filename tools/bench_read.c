/*
 * bench_read.c: srcu-bench's figures 1 and 2, the read-side pair: its
 * cost with 1 thread and with all cores (and instructions per pair, from
 * callgrind), then the same pair while another thread runs grace periods
 * back to back.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_results.h"
#include "clock.h"

/* A peer that this build lacks is a row that says why, in every table. */
static void missing_peer_rows(void)
{
#ifndef HAVE_URCU
	printf("%-16s not built: liburcu-dev was missing when the build was configured "
	       "(make bench installs it and reconfigures)\n", "urcu-*");
#endif
#ifndef HAVE_CK
	printf("%-16s not built: libck-dev was missing when the build was configured "
	       "(make bench installs it and reconfigures)\n", "ck_epoch");
#endif
}

struct read_job {
	const struct peer *p;
	long iters;
	int cpu_time;   /* the thread's CPU time, not the wall clock's */
	pthread_barrier_t *start;
	double ns_per_pair;
};

static double job_clock(const struct read_job *j)
{
	return j->cpu_time ? clock_thread_cpu_s() : clock_now_s();
}

static void *read_worker(void *arg)
{
	struct read_job *j = arg;
	double t;

	j->p->thread_online();
	j->p->reads(j->iters / 10);     /* warm up: first-use slow paths */
	pthread_barrier_wait(j->start);
	t = job_clock(j);
	j->p->reads(j->iters);
	j->ns_per_pair = (job_clock(j) - t) * 1e9 / (double)j->iters;
	j->p->thread_offline();
	return NULL;
}

/* Mean ns per pair over nthreads threads reading at once; cpu_time: in
 * each thread's CPU time (figure 1: an idle pair's cost is its CPU's,
 * which a CPU-bound program beside it does not change, where the wall
 * clock counts the time that program held the CPU), else in wall time
 * (figure 2: a pair's cost under updates is mostly the updater's
 * interrupts, which the thread's CPU time may not count). */
static double read_cost(const struct peer *p, int nthreads, long iters, int cpu_time)
{
	pthread_t t[64];
	struct read_job j[64];
	pthread_barrier_t start;
	double sum = 0;

	pthread_barrier_init(&start, NULL, (unsigned int)nthreads);
	for (int i = 0; i < nthreads; i++) {
		j[i] = (struct read_job){ p, iters, cpu_time, &start, 0 };
		pthread_create(&t[i], NULL, read_worker, &j[i]);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(t[i], NULL);
		sum += j[i].ns_per_pair;
	}
	pthread_barrier_destroy(&start);
	return sum / nthreads;
}

struct updater_job { const struct peer *p; int stop; long calls; };

static void *sync_loop(void *arg)
{
	struct updater_job *u = arg;

	while (!flag_get(&u->stop)) {
		u->p->synchronize();
		u->calls++;
	}
	return NULL;
}

/* A repetition's length: as many pairs as fit REP_TARGET_S, at most
 * iters.  A pilot of iters / 100 pairs measures the cost: under updates a
 * rwlock's pair costs 100x its idle cost, and 10 M of them took 12 s a
 * repetition (figure 2 took 44 to 120 s a round, most of it rwlock's). */
#define REP_TARGET_S 0.25

/* A cost's repetitions, and the most pairs one of them runs. */
static int read_reps(int quick) { return quick ? 3 : 7; }
static long read_iters(int quick) { return quick ? 2000000 : 10000000; }

static long fitted_iters(const struct peer *p, int nthreads, long iters)
{
	double ns = read_cost(p, nthreads, iters / 100, 0);
	long fit = ns > 0 ? (long)(REP_TARGET_S * 1e9 / ns) : iters;

	return fit < iters / 100 ? iters / 100 : fit < iters ? fit : iters;
}

/* Pair cost over the repetitions; with_updater: while another thread
 * runs grace periods back to back (figure 2). */
static struct stat3 read_cost_stats(const struct peer *p, int nthreads, int with_updater,
				    int quick)
{
	int reps = read_reps(quick);
	long iters = read_iters(quick);
	struct updater_job u = { p, 0, 0 };
	pthread_t ut;
	double v[16];

	if (with_updater)
		pthread_create(&ut, NULL, sync_loop, &u);
	iters = fitted_iters(p, nthreads, iters);
	for (int r = 0; r < reps; r++)
		v[r] = read_cost(p, nthreads, iters, !with_updater);
	if (with_updater) {
		flag_put(&u.stop, 1);
		pthread_join(ut, NULL);
	}
	return summarize(v, reps);
}

/* libsrcu's pair linked from libsrcu.a, measured by srcu-bench-static. */
static double static_pair_ns(const char *self_path, int quick)
{
	char cmd[4200], *slash;
	double ns = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s", self_path);
	slash = strrchr(cmd, '/');
	if (!slash)
		return 0;
	snprintf(slash + 1, sizeof(cmd) - (size_t)(slash + 1 - cmd), "srcu-bench-static --read-pair%s",
		 quick ? " --quick" : "");
	f = popen(cmd, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%lf", &ns) != 1)
		ns = 0;
	pclose(f);
	return ns;
}

/* Figure 1's rows: libsrcu, its other read sides beside it, then the
 * peers (libsrcu-exp has libsrcu's read side). */
#define FIG1_ROWS (2 * BENCH_MAX_PEERS)
#define FIG1_REPS 16

struct fig1_row {
	const struct peer *p;
	long iters_one, iters_all;
	double one[FIG1_REPS], all[FIG1_REPS];
};

static int fig1_rows(struct fig1_row *rows)
{
	int n = 0;

	FOR_PEERS(p) {
		if (p == &peer_srcu_exp || n == FIG1_ROWS)
			continue;
		rows[n++].p = p;
		if (p == &peer_srcu)
			FOR_READ_VARIANTS(v)
				if (n < FIG1_ROWS)
					rows[n++].p = v;
	}
	return n;
}

/* One row of figure 1; libsrcu's 1-thread median is the base. */
static void fig1_print_row(struct fig1_row *row, int reps, double *base)
{
	struct stat3 one = summarize(row->one, reps);   /* sorts them */
	struct stat3 all = summarize(row->all, reps);
	double instr = lookup("instructions", row->p->name, "per_pair");

	if (row->p == &peer_srcu)
		*base = one.med;
	printf("%-16s %6.2f [%5.2f-%6.2f] %5.2fx  %6.2f [%5.2f-%6.2f] %5.2fx  ",
	       row->p->name, one.med, one.lo, one.hi, one.med / *base,
	       all.med, all.lo, all.hi, all.med / *base);
	if (instr > 0)
		printf("%5.1f\n", instr);
	else
		printf("    -\n");
	record_stat("read_pair", row->p->name, "ns_1thread", one, "ns");
	record_stat("read_pair", row->p->name, "ns_allcores", all, "ns");
}

/* Every row's repetitions interleaved: repetition r of every peer, then
 * r + 1 of every peer.  A shared machine's slow minutes (a sibling
 * hyperthread busy, the host's own load) then fall on every peer alike,
 * not on the few measured while they lasted: in one loaded run of
 * 2026-12-07 with each peer's repetitions back to back, the first two
 * rows of a round ran at 2.0 ns and the rest at their usual cost, making
 * libsrcu's pair 1.66x urcu-memb's for that run (doc/runs/2026-12-07-claims.txt). */
static void fig1_measure(struct fig1_row *rows, int n, int ncpu, int quick)
{
	int reps = read_reps(quick);
	long iters = read_iters(quick);

	for (int i = 0; i < n; i++) {
		rows[i].iters_one = fitted_iters(rows[i].p, 1, iters);
		rows[i].iters_all = fitted_iters(rows[i].p, ncpu, iters);
	}
	for (int r = 0; r < reps; r++)
		for (int i = 0; i < n; i++) {
			rows[i].one[r] = read_cost(rows[i].p, 1, rows[i].iters_one, 1);
			rows[i].all[r] = read_cost(rows[i].p, ncpu, rows[i].iters_all, 1);
		}
}

void figure_read_cost(const struct bench_run *run)
{
	static struct fig1_row rows[FIG1_ROWS];
	double base = 0, st;
	int n;

	if (run->callgrind)   /* first: the table prints instructions per pair */
		measure_instructions(run->self_path);

	printf("\n(1) read-side pair cost, empty section (ns of the reading thread's CPU time;"
	       " median [min-max]; ratio to libsrcu; instructions per pair;"
	       " the peers' repetitions interleaved)\n");
	printf("%-16s %-28s %-28s %s\n", "peer", "1 thread", "all cores", "instr");
	n = fig1_rows(rows);
	fig1_measure(rows, n, run->ncpu, run->quick);
	for (int i = 0; i < n; i++)
		fig1_print_row(&rows[i], read_reps(run->quick), &base);
	st = static_pair_ns(run->self_path, run->quick);
	if (st > 0) {
		printf("%-16s %6.2f                 %5.2fx  (1 thread, linked from libsrcu.a)\n",
		       "libsrcu (.a)", st, st / base);
		record("read_pair", "libsrcu-static", "ns_1thread", st, "ns");
	}
	missing_peer_rows();
}

void figure_read_cost_under_updates(const struct bench_run *run)
{
	printf("\n(2) read-side pair cost, 1 reader, while another thread runs grace periods back to back\n");
	printf("%-16s %-28s %s\n", "peer", "ns", "vs idle");
	FOR_PEERS(p) {
		struct stat3 busy;
		double idle = lookup("read_pair", p->name, "ns_1thread");

		if (!p->synchronize || p == &peer_srcu_exp || !idle)
			continue;
		busy = read_cost_stats(p, 1, 1, run->quick);
		printf("%-16s %6.2f [%5.2f-%6.2f]  %5.2fx\n", p->name,
		       busy.med, busy.lo, busy.hi, busy.med / idle);
		record_stat("read_pair_under_updates", p->name, "ns", busy, "ns");
		record("read_pair_under_updates", p->name, "vs_idle", busy.med / idle, "x");
	}
}

double read_pair_ns(int quick)
{
	return read_cost_stats(&peer_srcu, 1, 0, quick).med;
}
