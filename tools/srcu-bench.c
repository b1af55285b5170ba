/*
 * srcu-bench: libsrcu side by side with what users would pick instead,
 * in one process and one run, so that the ratios mean something even on
 * a noisy machine.  Each value is the median of the run's rounds, with
 * the spread (min-max) of every repetition in them.
 *
 *   srcu-bench [--quick] [--only FIGURES] [--rounds N] [--json FILE] [--csv FILE]
 *              [--plot DIR] [--no-callgrind] [--background-load]
 *   srcu-bench --from RUN.json --plot DIR   (a recorded run's plots)
 *
 * Figures: (1) read-side pair cost, 1 thread and all cores, with
 * instructions per pair from callgrind; (2) the same while another thread
 * runs grace periods back to back; (3) grace-period latency p50/p99 with
 * idle and with busy readers; (4) synchronize calls/s with 1, 2, 4
 * updaters on one domain and on separate domains; (5) wake-up latency
 * after a reader held its section 10 ms; (6) isolation: synchronize on
 * one domain while a reader of another sleeps; (7) scaling with the
 * threads that used a domain and with the number of domains; (8)
 * call_srcu() against call_rcu(); (9) what membarrier and a futex
 * wake-up cost on this machine, which bounds (2) and (4); (10) liburcu's
 * cds_lfht on the libsrcu flavour (srcu_urcu.h) and on urcu-memb; (11)
 * read pair and grace period of a process-shared domain, a private one
 * and a PTHREAD_PROCESS_SHARED rwlock, with two processes; (12) update-side
 * sharing against urcu-memb: grace periods and membarriers shared between
 * updaters, and what a reader pays for them.  The run repeats every figure
 * in rounds (--rounds N: 3 by default, 1 with --quick); each value is
 * the median of its rounds, its spread the min-max of every repetition
 * (merge_rounds()); each figure prints its table every round, and the
 * merged values follow the last round, before the warnings and the
 * SUMMARY.  Every
 * figure is also a row of --json/--csv; --plot draws a PNG per figure
 * that ran (bench_plots.c), with gnuplot.
 * The last line is a greppable SUMMARY: a value, or "failed" or
 * "not-run" for a figure that failed or did not run ("n/a": a peer not
 * built), then failed= and not_run=, lists of figures or "none".  A
 * failed figure also gets a FAILED line, and the run exits 1.
 * --background-load runs the whole measurement with one CPU-bound process
 * beside it (a forked child that spins until the run ends): the condition
 * of a shared machine, in which a waiting strategy that spins or yields
 * loses its CPU to the other process.  The header line says so.
 * SRCU_BENCH_FAIL=LIST (figure numbers, as --only) makes those figures
 * fail at their start: for the test of that reporting (bench_check).
 *
 * This file is the run: its options, the table of figures and the loop
 * over it, the output files and the SUMMARY.  The figures are in files
 * of their own (bench.h lists them): bench_read.c (1, 2), bench_update.c
 * (3 to 7), bench_call.c (8), bench_machine.c (9), bench_lfht.c (10),
 * bench_shared.c (11), bench_sharing.c (12); bench_callgrind.c counts
 * instructions for 1 (bench_instr.c) and 11.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "clock.h"
#include "bench_plots.h"
#include "bench_results.h"
#include "srcu.h"

/* The run's rounds without --rounds (1 with --quick): each value is the
 * median of its rounds, its spread their min-max (merge_rounds()). */
#define ROUNDS_DEFAULT 3

/* The figures, in the order they run: figure 2 divides by figure 1's
 * results.  Figure 10 needs the libsrcu flavour of liburcu: without it,
 * its values say "not-run", as for a figure left out by --only. */
static const struct bench_figure figures[] = {
	{ 1, "read-side pair cost", figure_read_cost },
	{ 2, "read-side pair cost under updates", figure_read_cost_under_updates },
	{ 3, "grace-period latency", figure_gp_latency },
	{ 4, "synchronize throughput", figure_throughput },
	{ 5, "wake-up latency", figure_wakeup },
	{ 6, "isolation between domains", figure_isolation },
	{ 7, "scaling with threads and domains", figure_scaling },
	{ 8, "deferred freeing", figure_call },
	{ 9, "the machine's system calls", figure_machine },
#ifdef HAVE_SRCU_URCU
	{ 10, "cds_lfht on the libsrcu flavour", figure_lfht },
#endif
	{ 11, "a process-shared domain", figure_shared },
	{ 12, "update-side sharing", figure_sharing },
};
#define NFIGURES (sizeof(figures) / sizeof(figures[0]))

static const char *only;   /* --only: figure numbers to run, e.g. "1,4" */

/* Is n in the comma-separated list p ("1,4,10")? */
static int listed(const char *p, int n)
{
	if (!p)
		return 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p)
			return 0;
		if (v == n)
			return 1;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Is figure n selected?  All are, without --only. */
static int wanted(int n)
{
	return !only || listed(only, n);
}

/* Figure n is selected and starts now (its outcome "ran" unless it says
 * otherwise), or fails at once if SRCU_BENCH_FAIL names it. */
static int begin_figure(int n)
{
	if (!wanted(n))
		return 0;
	if (listed(getenv("SRCU_BENCH_FAIL"), n)) {
		printf("\n(%d) fails: SRCU_BENCH_FAIL names it\n", n);
		figure_failed(n, "injected by SRCU_BENCH_FAIL");
		return 0;
	}
	figure_ran(n);
	return 1;
}

/* The SUMMARY's ratio of two results, where both were measured. */
static void record_derived(void)
{
	double t1 = lookup("throughput", "libsrcu", "calls_per_s_1");

	if (t1 > 0 && recorded("throughput", "libsrcu", "calls_per_s_4"))
		record("throughput", "libsrcu", "calls_per_s_4_over_1",
		       lookup("throughput", "libsrcu", "calls_per_s_4") / t1, "x");
}

/* Round k of the run: every selected figure, in order, then the ratio
 * derived from them (taken within the round, as the figures take
 * theirs).  Only the first round counts instructions: callgrind's counts
 * do not vary, and it is the slowest part of a round. */
static void run_round(const struct bench_run *run, int k)
{
	struct bench_run r = *run;
	double t0 = clock_now_s();

	set_round(k);
	r.round = k;
	if (k > 0)
		r.callgrind = 0;
	if (run->rounds > 1)
		printf("\n== round %d of %d ==\n", k + 1, run->rounds);
	for (size_t i = 0; i < NFIGURES; i++) {
		double t = clock_now_s();

		if (!begin_figure(figures[i].n))
			continue;
		figures[i].run(&r);
		printf("      figure %d took %.1f s\n", figures[i].n, clock_now_s() - t);
	}
	record_derived();
	if (run->rounds > 1)
		printf("\n== round %d of %d took %.0f s ==\n", k + 1, run->rounds, clock_now_s() - t0);
}

/* After several rounds, what --json records: each value's median over the
 * rounds and the spread of all their repetitions, one a line (the
 * figures' tables above are each round's). */
static void print_merged(int rounds)
{
	const struct result *r;
	double lo, hi;

	printf("\n== the run: median [min-max] over its %d rounds, every repetition counted"
	       " (the values --json records and the docs quote) ==\n", rounds);
	for (int i = 0; (r = result_at(i)); i++) {
		if (result_is_spread(r))
			continue;   /* shown with its metric */
		printf("%-24s %-22s %-30s %12.6g", r->figure, r->peer, r->metric, r->value);
		if (result_spread(r, &lo, &hi))
			printf(" [%.6g-%.6g]", lo, hi);
		printf(" %s\n", r->unit);
	}
}

/* A run whose own relations fail says so: its figures are noise. */
static void sanity_warnings(void)
{
	double floor_ns = lookup("read_pair", "tls-counter", "ns_1thread");
	double srcu_ns = lookup("read_pair", "libsrcu", "ns_1thread");

	/* The floor makes the counts libsrcu's pair makes, and nothing else:
	 * equal within the noise, never 20% dearer but on a busy machine. */
	if (floor_ns > 0 && srcu_ns > 0 && floor_ns > 1.2 * srcu_ns)
		printf("warning: the floor (tls-counter, %.2f ns) came out more than 20%% slower "
		       "than libsrcu's pair (%.2f ns), which makes the same two counts and more: "
		       "a busy machine; compare this run's read figures with care\n",
		       floor_ns, srcu_ns);
	FOR_PEERS(p) {
		double med = lookup("read_pair", p->name, "ns_1thread");
		double lo = lookup("read_pair", p->name, "ns_1thread_min");
		double hi = lookup("read_pair", p->name, "ns_1thread_max");

		if (med > 0 && (hi - lo) / med > 0.20)
			printf("warning: %s's read pair spread %.0f%% of its median (%.2f-%.2f ns): "
			       "compare its ratio with care\n", p->name, 100 * (hi - lo) / med, lo, hi);
	}
}

/* ---- the SUMMARY ---- */

/* A SUMMARY value: the figure that makes it, and where it is recorded. */
struct summary_field {
	const char *key, *fmt;
	int figure;
	const char *fig, *peer, *metric;
};

static const struct summary_field summary_fields[] = {
	{ "read_pair_ns", "%.2f", 1, "read_pair", "libsrcu", "ns_1thread" },
	{ "memb_read_pair_ns", "%.2f", 1, "read_pair", "urcu-memb", "ns_1thread" },
	{ "floor_ns", "%.2f", 1, "read_pair", "tls-counter", "ns_1thread" },
	{ "read_under_updates_x", "%.2f", 2, "read_pair_under_updates", "libsrcu", "vs_idle" },
	{ "exp_idle_p50_us", "%.2f", 3, "gp_latency", "libsrcu-exp", "idle_p50" },
	{ "memb_idle_p50_us", "%.2f", 3, "gp_latency", "urcu-memb", "idle_p50" },
	{ "tput4_over_tput1", "%.2f", 4, "throughput", "libsrcu", "calls_per_s_4_over_1" },
	{ "wake_p50_us", "%.1f", 5, "wakeup", "libsrcu", "p50" },
	{ "isolation_ms", "%.3f", 6, "isolation", "libsrcu", "sync_ms" },
	{ "shared_read_x", "%.2f", 11, "shared", "libsrcu-shared", "read_pair_vs_private" },
	{ "calls_per_gp_4", "%.2f", 12, "sharing", "libsrcu", "calls_per_gp_4" },
	{ "sharing_reader_x", "%.2f", 12, "sharing", "libsrcu", "reader_x_normal" },
};
#define NSUMMARY (sizeof(summary_fields) / sizeof(summary_fields[0]))

/* " key=" and the figure's value, or what became of the figure. */
static void print_field(const struct summary_field *f)
{
	enum figure_state st = figure_state(f->figure);

	printf(" %s=", f->key);
	if (st == FIGURE_FAILED)
		printf("failed");
	else if (st == FIGURE_NOT_RUN)
		printf("not-run");
	else if (!recorded(f->fig, f->peer, f->metric))
		printf("n/a");   /* a peer this build lacks */
	else
		printf(f->fmt, lookup(f->fig, f->peer, f->metric));
}

/* " name=" and the figures in state st, or "none". */
static void print_figures(const char *name, enum figure_state st)
{
	int any = 0;

	printf(" %s=", name);
	for (int n = 1; n <= BENCH_FIGURES; n++)
		if (figure_state(n) == st)
			printf("%s%d", any++ ? "," : "", n);
	if (!any)
		printf("none");
}

static int failures(void)
{
	int k = 0;

	for (int n = 1; n <= BENCH_FIGURES; n++)
		k += figure_state(n) == FIGURE_FAILED;
	return k;
}

/* A FAILED line for each failed figure, then the SUMMARY. */
static void print_summary(void)
{
	if (failures())
		printf("\n");
	for (int n = 1; n <= BENCH_FIGURES; n++)
		if (figure_state(n) == FIGURE_FAILED)
			printf("FAILED: figure %d: %s\n", n, figure_why(n));
	printf("\nSUMMARY");
	for (size_t i = 0; i < NSUMMARY; i++)
		print_field(&summary_fields[i]);
	print_figures("failed", FIGURE_FAILED);
	print_figures("not_run", FIGURE_NOT_RUN);
	printf("\n");
}

/* What the command line asks for: the figures' options and the outputs. */
struct options {
	struct bench_run run;
	const char *json, *csv, *plot, *from;
	int read_pair_only;
};

/* --background-load: a child process that spins until the run ends (it
 * dies with its parent, killed or not).  A process, not a thread: it is
 * not one that membarrier interrupts, only a competitor for the CPUs. */
static pid_t background_start(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(0);   /* the parent is already gone */
		for (volatile unsigned long spin = 0;; spin++)
			;
	}
	if (pid < 0)
		perror("srcu-bench: --background-load: fork");
	return pid;
}

static void background_stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Parses argv into o: -1 to run, or the status to exit with. */
static int parse_options(int argc, char **argv, struct options *o)
{
	for (;;) {
		static const struct option opts[] = {
			{ "quick", no_argument, 0, 'q' },
			{ "json", required_argument, 0, 'j' },
			{ "csv", required_argument, 0, 'c' },
			{ "plot", required_argument, 0, 'p' },
			{ "from", required_argument, 0, 'F' },
			{ "only", required_argument, 0, 'o' },
			{ "rounds", required_argument, 0, 'R' },
			{ "no-callgrind", no_argument, 0, 'n' },
			{ "background-load", no_argument, 0, 'b' },
			{ "read-pair", no_argument, 0, 'r' },      /* for the .a row */
			{ "instr-child", required_argument, 0, 'i' },   /* for callgrind */
			{ "help", no_argument, 0, 'h' },
			{ 0, 0, 0, 0 },
		};
		int c = getopt_long(argc, argv, "", opts, NULL);

		if (c == -1)
			break;
		switch (c) {
		case 'q': o->run.quick = 1; break;
		case 'j': o->json = optarg; break;
		case 'c': o->csv = optarg; break;
		case 'p': o->plot = optarg; break;
		case 'F': o->from = optarg; break;
		case 'o': only = optarg; break;
		case 'R':
			o->run.rounds = atoi(optarg);
			if (o->run.rounds < 1) {
				fprintf(stderr, "%s: --rounds wants a positive count\n", argv[0]);
				return 2;
			}
			break;
		case 'n': o->run.callgrind = 0; break;
		case 'b': o->run.background_load = 1; break;
		case 'r': o->read_pair_only = 1; break;
		case 'i': return instr_child(optarg);
		default:
			fprintf(stderr, "usage: %s [--quick] [--only FIGURES] [--rounds N] [--json FILE]"
				" [--csv FILE] [--plot DIR] [--from FILE] [--no-callgrind]"
				" [--background-load]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", argv[0], argv[optind]);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct options o = { .run = { .callgrind = 1, .self_path = argv[0] } };
	int status;

	setvbuf(stdout, NULL, _IOLBF, 0);   /* each line as it is measured, piped too */
	if ((status = parse_options(argc, argv, &o)) >= 0)
		return status;
	if (!o.run.rounds)
		o.run.rounds = o.run.quick ? 1 : ROUNDS_DEFAULT;
	o.run.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (o.run.ncpu > 64)
		o.run.ncpu = 64;
	if (o.read_pair_only) {   /* for srcu-bench's "libsrcu (.a)" row */
		printf("%.3f\n", read_pair_ns(o.run.quick));
		return 0;
	}
	if (o.from) {   /* draw a recorded run's plots; measure nothing */
		if (!o.plot) {
			fprintf(stderr, "%s: --from FILE draws FILE's plots: give --plot DIR\n", argv[0]);
			return 2;
		}
		if (load_json(o.from) != 0)
			return 1;
		write_plots(o.plot);
		return 0;
	}
	bench_update_init();
	print_machine(&o.run);
	pid_t load = o.run.background_load ? background_start() : 0;
	for (int k = 0; k < o.run.rounds; k++)
		run_round(&o.run, k);
	background_stop(load);
	merge_rounds();
	if (o.run.rounds > 1)
		print_merged(o.run.rounds);
	if (figure_state(12) == FIGURE_RAN)
		sharing_goals_held();
	sanity_warnings();
	if (o.json)
		write_json(o.json, o.run.ncpu, srcu_backend(), o.run.quick, o.run.rounds);
	if (o.csv)
		write_csv(o.csv);
	if (o.plot)
		write_plots(o.plot);
	print_summary();
	return failures() ? 1 : 0;
}
