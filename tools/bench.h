/*
 * bench.h: what srcu-bench's figures share: the run's options, the
 * statistics every table prints, and each
 * figure's run function (the table of figures is in srcu-bench.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_H
#define SRCU_BENCH_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "peers.h"

struct srcu_struct;
/* cleanup_srcu_struct() of a domain the figure has finished with: idle,
 * so a failure is a bug, reported before the process exits. */
void bench_cleanup(struct srcu_struct *sp);

/* The run's options, set once by srcu-bench's main before any figure. */
struct bench_run {
	int quick;               /* --quick: fewer, shorter repetitions */
	int ncpu;                /* online CPUs, at most 64 */
	int callgrind;           /* not --no-callgrind: count instructions */
	const char *self_path;   /* argv[0]: to run ourselves (.a row, callgrind) */
	int rounds;              /* --rounds: every figure runs once a round */
	int round;               /* the round running now, 0 first */
	int background_load;     /* --background-load: a CPU-bound process beside the run */
};

/* One figure: its number (--only, SRCU_BENCH_FAIL, FAILED lines, the
 * SUMMARY), a title for the reader of the table, and what runs it. */
struct bench_figure {
	int n;
	const char *title;
	void (*run)(const struct bench_run *run);
};

/* Each figure's run function, by its file. */
void figure_read_cost(const struct bench_run *run);                /* 1, bench_read.c */
void figure_read_cost_under_updates(const struct bench_run *run);  /* 2 */
void figure_gp_latency(const struct bench_run *run);               /* 3, bench_update.c */
void figure_throughput(const struct bench_run *run);               /* 4 */
void figure_wakeup(const struct bench_run *run);                   /* 5 */
void figure_isolation(const struct bench_run *run);                /* 6 */
void figure_scaling(const struct bench_run *run);                  /* 7 */
void figure_call(const struct bench_run *run);                     /* 8, bench_call.c */
/* 9, bench_machine.c: what this machine charges for the update side's
 * tools, so that figures 2 and 4 can be read. */
void figure_machine(const struct bench_run *run);
#ifdef HAVE_SRCU_URCU
/* 10, bench_lfht.c: liburcu's cds_lfht on the libsrcu flavour and on
 * urcu-memb (built when liburcu-dev is present). */
void figure_lfht(const struct bench_run *run);
#endif
void figure_shared(const struct bench_run *run);                   /* 11, bench_shared.c */
void figure_sharing(const struct bench_run *run);                  /* 12, bench_sharing.c */
/* After the rounds' merge: each of figure 12's goals and in how many
 * rounds it held (a claim must hold in every run, not in a good one). */
void sharing_goals_held(void);

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v; the value at quantile q. */
static inline double quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(int)(q * (n - 1) + 0.5)];
}

/* A figure's cell: median [min-max] of its repetitions. */
struct stat3 { double med, lo, hi; };

static inline struct stat3 summarize(double *v, int n)
{
	struct stat3 s;

	s.med = quantile(v, n, 0.5);
	s.lo = v[0];
	s.hi = v[n - 1];
	return s;
}

/* record() of s.med as M, and record_spread() of s.lo, s.hi as M_min and
 * M_max (bench_results.c). */
void record_stat(const char *figure, const char *peer, const char *metric, struct stat3 s,
		 const char *unit);

/* A stop or ready flag between a figure's threads. */
static inline int flag_get(int *f) { return __atomic_load_n(f, __ATOMIC_ACQUIRE); }
static inline void flag_put(int *f, int v) { __atomic_store_n(f, v, __ATOMIC_RELEASE); }

/* libsrcu's read pair, median ns (bench_read.c): --read-pair, which
 * srcu-bench-static answers for figure 1's "libsrcu (.a)" row. */
double read_pair_ns(int quick);

/* Figure 3's idle latency samples as gnuplot data, one block per peer
 * (for --plot's CDF); the number of blocks (bench_update.c). */
int gp_latency_cdf(FILE *f);
/* Figure 7a's measurement, which figure 12 reuses: grace-period p50 (us)
 * of peer p with nthreads idle threads alive that have used its domain
 * (other: that have used another libsrcu domain instead), with its spread
 * over chunks of the samples (bench_update.c). */
struct stat3 gp_with_threads(const struct peer *p, int nthreads, int other, int quick);
/* The same, alternating p's synchronize with alt's (another peer of the
 * same domain, e.g. libsrcu-exp) on one set of threads: p's p50 returned,
 * alt's in *alt_p50. */
struct stat3 gp_with_threads_alt(const struct peer *p, const struct peer *alt, int nthreads,
				 int other, int quick, struct stat3 *alt_p50);
/* The domains figures 4, 6 and 7 use: made at start-up, before any
 * figure, as they always were (bench_update.c). */
void bench_update_init(void);

/* Instructions per pair under callgrind (bench_instr.c): main's
 * --instr-child, and what figure 1 records before it runs (figure 11
 * records its own: bench_shared.c). */
int instr_child(const char *name);
void measure_instructions(const char *self_path);

/* The header line: which machine, which backend (bench_machine.c); it
 * keeps it as the results' machine_line(). */
void print_machine(const struct bench_run *run);

#endif
