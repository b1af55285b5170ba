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
	pthread_barrier_t *start;
	double ns_per_pair;
};

static void *read_worker(void *arg)
{
	struct read_job *j = arg;
	double t;

	j->p->thread_online();
	j->p->reads(j->iters / 10);     /* warm up: first-use slow paths */
	pthread_barrier_wait(j->start);
	t = clock_now_s();
	j->p->reads(j->iters);
	j->ns_per_pair = (clock_now_s() - t) * 1e9 / (double)j->iters;
	j->p->thread_offline();
	return NULL;
}

/* Mean ns per pair over nthreads threads reading at once. */
static double read_cost(const struct peer *p, int nthreads, long iters)
{
	pthread_t t[64];
	struct read_job j[64];
	pthread_barrier_t start;
	double sum = 0;

	pthread_barrier_init(&start, NULL, (unsigned int)nthreads);
	for (int i = 0; i < nthreads; i++) {
		j[i] = (struct read_job){ p, iters, &start, 0 };
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

static long fitted_iters(const struct peer *p, int nthreads, long iters)
{
	double ns = read_cost(p, nthreads, iters / 100);
	long fit = ns > 0 ? (long)(REP_TARGET_S * 1e9 / ns) : iters;

	return fit < iters / 100 ? iters / 100 : fit < iters ? fit : iters;
}

/* Pair cost over the repetitions; with_updater: while another thread
 * runs grace periods back to back (figure 2). */
static struct stat3 read_cost_stats(const struct peer *p, int nthreads, int with_updater,
				    int quick)
{
	int reps = quick ? 3 : 7;
	long iters = quick ? 2000000 : 10000000;
	struct updater_job u = { p, 0, 0 };
	pthread_t ut;
	double v[16];

	if (with_updater)
		pthread_create(&ut, NULL, sync_loop, &u);
	iters = fitted_iters(p, nthreads, iters);
	for (int r = 0; r < reps; r++)
		v[r] = read_cost(p, nthreads, iters);
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

/* One row of figure 1; libsrcu's 1-thread median is the base. */
static void read_cost_row(const struct peer *p, const struct bench_run *run, double *base)
{
	struct stat3 one = read_cost_stats(p, 1, 0, run->quick);
	struct stat3 all = read_cost_stats(p, run->ncpu, 0, run->quick);
	double instr = lookup("instructions", p->name, "per_pair");

	if (p == &peer_srcu)
		*base = one.med;
	printf("%-16s %6.2f [%5.2f-%6.2f] %5.2fx  %6.2f [%5.2f-%6.2f] %5.2fx  ",
	       p->name, one.med, one.lo, one.hi, one.med / *base,
	       all.med, all.lo, all.hi, all.med / *base);
	if (instr > 0)
		printf("%5.1f\n", instr);
	else
		printf("    -\n");
	record_stat("read_pair", p->name, "ns_1thread", one, "ns");
	record_stat("read_pair", p->name, "ns_allcores", all, "ns");
}

void figure_read_cost(const struct bench_run *run)
{
	double base = 0, st;

	if (run->callgrind)   /* first: the table prints instructions per pair */
		measure_instructions(run->self_path);

	printf("\n(1) read-side pair cost, empty section (ns; median [min-max]; ratio to libsrcu;"
	       " instructions per pair)\n");
	printf("%-16s %-28s %-28s %s\n", "peer", "1 thread", "all cores", "instr");
	FOR_PEERS(p) {
		if (p == &peer_srcu_exp)
			continue;   /* the same read side as libsrcu */
		read_cost_row(p, run, &base);
		if (p == &peer_srcu)   /* its other read sides beside it */
			FOR_READ_VARIANTS(v)
				read_cost_row(v, run, &base);
	}
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
