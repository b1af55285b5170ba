/*
 * bench_results.h: srcu-bench's results store and its writers (JSON,
 * CSV; bench_plots.c draws them).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_RESULTS_H
#define SRCU_BENCH_RESULTS_H

#include <stdio.h>

/* One measured value, and the round of the run that measured it.  A
 * metric M may come with M_min and M_max: its spread, drawn as error
 * bars. */
struct result { const char *figure, *peer, *metric, *unit; double value; int round; };

void record(const char *figure, const char *peer, const char *metric, double value,
	    const char *unit);
/* The rounds: srcu-bench runs its figures once per round (--rounds), and
 * what they record from now on is round k's (0 first). */
void set_round(int k);
/* After the last round: each value becomes the median of its rounds, with
 * the spread of every repetition of every round as M_min and M_max (a
 * round's own M_min/M_max where it recorded them, else its value).  A
 * value measured in one round only (the instruction counts) keeps its
 * value, and its spread is that round's, or the value itself. */
void merge_rounds(void);

/* After merge_rounds(): in how many of the rounds that recorded M the
 * value was >= bound (ge) or <= bound (!ge); the rounds that recorded it
 * into *rounds.  Before a merge (one round), the run's value. */
int rounds_held(const char *figure, const char *peer, const char *metric, int ge,
		double bound, int *rounds);

/* M's spread, as M_min and M_max (the names are copied). */
void record_spread(const char *figure, const char *peer, const char *metric, double lo,
		   double hi, const char *unit);
/* The value recorded, or 0. */
double lookup(const char *figure, const char *peer, const char *metric);
/* Was it recorded? */
int recorded(const char *figure, const char *peer, const char *metric);
/* Is r the M_min or M_max row of a recorded M?  r's spread (its M_min
 * and M_max) into lo and hi, if recorded: 1, else 0. */
int result_is_spread(const struct result *r);
int result_spread(const struct result *r, double *lo, double *hi);

/* A series' colour, by its number: 12 that a reader tells apart (the
 * default cycle of 8 gave two peers one colour). */
#define BENCH_COLORS "#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b " \
	"#e377c2 #7f7f7f #bcbd22 #17becf #000000 #ffd700"

/* Each figure's outcome (1 to BENCH_FIGURES): a failed one makes the run
 * exit non-zero, and the SUMMARY says "failed" or "not-run" for its
 * values instead of zeros. */
#define BENCH_FIGURES 12
enum figure_state { FIGURE_NOT_RUN, FIGURE_RAN, FIGURE_FAILED };
void figure_ran(int n);
/* Figure n failed: why (copied) is said on its FAILED line. */
void figure_failed(int n, const char *why);
/* Figure n could not run here (not a failure: a missing facility). */
void figure_skipped(int n);
enum figure_state figure_state(int n);
const char *figure_why(int n);

/* The header line, without its newline (print_machine() sets it; the
 * JSON keeps it, the plots' caption shows it), or a recorded run's
 * (srcu-bench --from). */
const char *machine_line(void);
void set_machine_line(const char *line);

void write_json(const char *path, int cpus, const char *backend, int quick, int rounds);
void write_csv(const char *path);
/* A recorded run read back (srcu-bench --from): 0, or -1.  Its date
 * (ISO 8601), or "" if none was loaded. */
int load_json(const char *path);
const char *loaded_run_date(void);
/* The i-th result recorded, in order, or NULL past the last (bench_plots.c). */
const struct result *result_at(int i);

#endif
