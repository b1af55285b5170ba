/*
 * torture-report.c: what srcu-torture says of a run, in both modes: the
 * totals, a progress line every 3 s, the report and its last line (PASS
 * or FAIL: <reason>), the JSON, and the monitor that fails a run whose
 * writers or chaos thread stop making progress.  The mode adds its own
 * statistics and lines through struct torture_ops.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>

#include "srcu-torture.h"

/* ---- totals ---- */

static void sum_writers(struct totals *t)
{
	for (int i = 0; i < nwriters; i++) {
		const struct wstats *w = &wstats[i];
		unsigned long n = __atomic_load_n(&w->gps, __ATOMIC_RELAXED);

		if (w->kind == WRITER_ASYNC)
			t->callbacks += n;
		else if (w->kind == WRITER_POLL)
			t->cookies += n;
		else
			t->gps += n;
		store_max(&t->max_gp_ns, __atomic_load_n(&w->max_gp_ns, __ATOMIC_RELAXED));
	}
}

static void sum_totals(struct totals *t)
{
	memset(t, 0, sizeof(*t));
	ops->sum(t);
	sum_writers(t);
}

/* ---- progress and the report ---- */

static unsigned long failures(void)
{
	return __atomic_load_n(&run->failures, __ATOMIC_SEQ_CST);
}

void progress_line(void)
{
	char more[64] = "";
	struct totals t;

	sum_totals(&t);
	if (ops->progress_more)
		ops->progress_more(more, sizeof(more));
	printf("srcu-torture: %6.1f s  gps %lu  reads %lu  pipe %lu/%lu/%lu+%s  failures %lu\n",
	       elapsed_s(), t.gps, t.reads, t.pipe[0], t.pipe[1],
	       t.reads - t.pipe[0] - t.pipe[1], more, failures());
	fflush(stdout);
}

static void print_hist(const char *name, const unsigned long *h)
{
	printf("%s:", name);
	for (int k = 0; k < HIST; k++)
		printf(" %lu", h[k]);
	printf("\n");
}

/* The reads and grace periods: with --processes, also the long sleeps,
 * the longest grace period and those the reader processes ran. */
static void print_rates(const struct totals *t, double secs)
{
	printf("\nsrcu-torture: flavor %s, backend %s, %.1f s, %s\n", cfg.flavor_name,
	       run->backend, secs, run->shape);
	printf("reads %lu (%.0f/s", t->reads, t->reads / secs);
	if (cfg.processes)
		printf(", %lu sleeping 10-30 ms", t->long_sleeps);
	printf("), grace periods %lu (%.0f/s), longest section %.1f ms", t->gps, t->gps / secs,
	       t->max_section_ns / 1e6);
	if (cfg.processes)
		printf(", longest grace period %.1f ms", t->max_gp_ns / 1e6);
	printf("\n");
	if (ops->report_rates)
		ops->report_rates();
	printf("call_srcu: %lu objects freed by callbacks (%d writers); polled: %lu objects "
	       "freed by cookies (%d writers)", t->callbacks, cfg.async_writers, t->cookies,
	       cfg.poll_writers);
	if (cfg.processes)
		printf("; %lu grace periods run by reader processes", t->reader_gps);
	printf("\n");
}

/* ---- the JSON ---- */

static void json_hist(FILE *f, const unsigned long *h)
{
	fprintf(f, "[");
	for (int k = 0; k < HIST; k++)
		fprintf(f, "%s%lu", k ? ", " : "", h[k]);
	fprintf(f, "]");
}

/* The last member, "result" (the PASS/FAIL line, escaped), and the end of
 * the object; closes f. */
static void json_close(FILE *f, const char *result)
{
	fprintf(f, "  \"result\": \"");
	for (const char *c = result; *c; c++)
		fputs(*c == '"' ? "\\\"" : *c == '\\' ? "\\\\" : (char[2]){ *c, 0 }, f);
	fprintf(f, "\"\n}\n");
	fclose(f);
}

static void json_rates(FILE *f, const struct totals *t, double secs)
{
	fprintf(f, "  \"reads\": %lu, \"grace_periods\": %lu, \"reads_per_s\": %.0f, "
		"\"grace_periods_per_s\": %.0f,\n", t->reads, t->gps, t->reads / secs, t->gps / secs);
	fprintf(f, "  \"max_section_us\": %.1f", t->max_section_ns / 1e3);
	if (cfg.processes)
		fprintf(f, ", \"max_grace_period_us\": %.1f", t->max_gp_ns / 1e3);
	fprintf(f, ",\n  \"call_srcu_callbacks\": %lu,\n  \"polled_cookies\": %lu,\n",
		t->callbacks, t->cookies);
	fprintf(f, "  \"reader_pipe\": ");
	json_hist(f, t->pipe);
	fprintf(f, ",\n  \"reader_batch\": ");
	json_hist(f, t->batch);
	fprintf(f, ",\n");
}

static void write_json(const struct totals *t, double secs, const char *result)
{
	FILE *f = fopen(cfg.json, "w");

	if (!f) {
		fprintf(stderr, "srcu-torture: cannot write %s: %s\n", cfg.json, strerror(errno));
		return;
	}
	fprintf(f, "{\n  \"flavor\": \"%s\", \"backend\": \"%s\",\n", cfg.flavor_name, run->backend);
	fprintf(f, "  \"duration_s\": %.3f, ", secs);
	if (cfg.processes)
		fprintf(f, "\"processes\": %d, ", cfg.processes);
	fprintf(f, "\"readers\": %d, \"writers\": %d, \"domains\": %d,\n", cfg.readers,
		cfg.writers, cfg.domains);
	fprintf(f, "  \"expedited_ratio\": %.3f, \"seed\": %u, \"reader_delay_permille\": %d,\n",
		cfg.expedited_ratio, cfg.seed, cfg.reader_delay_permille);
	json_rates(f, t, secs);
	ops->json_more(f, t);
	fprintf(f, "  \"failures\": %lu, \"first_failure_s\": %.3f,\n", failures(),
		failures() ? run->first_failure_s : -1.0);
	json_close(f, result);
}

/* The last line: PASS, or FAIL and the first failure's reason. */
static void result_line(char *result, size_t n)
{
	if (!failures()) {
		snprintf(result, n, "PASS");
		return;
	}
	printf("failures: %lu, the first after %.2f s\n", failures(), run->first_failure_s);
	snprintf(result, n, "FAIL: %s", run->first_failure[0] ? run->first_failure :
		 "(its text was lost: the process that found it was killed)");
}

int torture_report(void)
{
	double secs = elapsed_s();
	struct totals t;
	char result[300];

	sum_totals(&t);
	print_rates(&t, secs);
	print_hist("Reader Pipe ", t.pipe);
	print_hist("Reader Batch", t.batch);
	ops->report_more(&t);
	result_line(result, sizeof(result));
	if (cfg.json)
		write_json(&t, secs, result);
	printf("%s\n", result);
	return failures() ? 1 : 0;
}

/* ---- the monitor ---- */

static double since_s(const int64_t *ns)
{
	return (double)(now_ns() - __atomic_load_n(ns, __ATOMIC_RELAXED)) / 1e9;
}

/* Threads without progress for longer than --stall hang: the mode's hook
 * fails the run and ends it (hung threads cannot be joined). */
static void check_progress(void)
{
	double limit = cfg.stall_s * ops->chaos_stall_factor + ops->chaos_stall_extra_s;

	if (cfg.chaos && __atomic_load_n(&run->chaos_progress_ns, __ATOMIC_RELAXED) &&
	    since_s(&run->chaos_progress_ns) > limit)
		ops->chaos_hangs(since_s(&run->chaos_progress_ns));
	for (int i = 0; i < nwriters; i++)
		if (since_s(&wstats[i].last_progress_ns) > cfg.stall_s)
			ops->writer_hangs(i, since_s(&wstats[i].last_progress_ns));
}

/* Until the end of the run, or a stop (--stop-on-fail). */
void torture_monitor(void)
{
	int64_t end = run->start_ns + (int64_t)(cfg.duration_s * 1e9), next = run->start_ns;

	while (!stopping() && now_ns() < end) {
		sleep_ns(20 * MS);
		if (ops->tick)
			ops->tick();
		check_progress();
		if (ops->monitor_progress && now_ns() >= next) {
			progress_line();
			next += 3000 * MS;
		}
	}
}
