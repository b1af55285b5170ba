/*
 * bench_results.c: srcu-bench's results store and its writers.
 *
 * SPDX-License-Identifier: MIT
 */
#include "bench_results.h"

#include <string.h>

/* record() drops what does not fit: figure 12 adds about 105 values. */
#define MAX_RESULTS 2048

static struct result results[MAX_RESULTS];
static int nresults;

void record(const char *figure, const char *peer, const char *metric, double value,
	    const char *unit)
{
	if (nresults < MAX_RESULTS)
		results[nresults++] = (struct result){ figure, peer, metric, unit, value };
}

static const struct result *find(const char *figure, const char *peer, const char *metric)
{
	for (int i = 0; i < nresults; i++)
		if (!strcmp(results[i].figure, figure) && !strcmp(results[i].peer, peer) &&
		    !strcmp(results[i].metric, metric))
			return &results[i];
	return NULL;
}

double lookup(const char *figure, const char *peer, const char *metric)
{
	const struct result *r = find(figure, peer, metric);

	return r ? r->value : 0;
}

int recorded(const char *figure, const char *peer, const char *metric)
{
	return find(figure, peer, metric) != NULL;
}

/* ---- figures' outcomes ---- */

static enum figure_state figures[BENCH_FIGURES + 1];
static char figure_whys[BENCH_FIGURES + 1][160];

static int figure_ok(int n)
{
	return n >= 1 && n <= BENCH_FIGURES;
}

void figure_ran(int n)
{
	if (figure_ok(n) && figures[n] != FIGURE_FAILED)
		figures[n] = FIGURE_RAN;
}

void figure_failed(int n, const char *why)
{
	if (!figure_ok(n))
		return;
	figures[n] = FIGURE_FAILED;
	snprintf(figure_whys[n], sizeof(figure_whys[n]), "%s", why);
}

void figure_skipped(int n)
{
	if (figure_ok(n) && figures[n] != FIGURE_FAILED)
		figures[n] = FIGURE_NOT_RUN;
}

enum figure_state figure_state(int n)
{
	return figure_ok(n) ? figures[n] : FIGURE_NOT_RUN;
}

const char *figure_why(int n)
{
	return figure_ok(n) ? figure_whys[n] : "";
}

static const char *const state_name[] = { "not-run", "ran", "failed" };

void write_json(const char *path, int cpus, const char *backend, int quick)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return;
	}
	fprintf(f, "{\n  \"machine\": {\"cpus\": %d, \"backend\": \"%s\", \"quick\": %s},\n"
		"  \"figures\": {", cpus, backend, quick ? "true" : "false");
	for (int n = 1; n <= BENCH_FIGURES; n++)
		fprintf(f, "\"%d\": \"%s\"%s", n, state_name[figures[n]],
			n < BENCH_FIGURES ? ", " : "},\n");
	fprintf(f, "  \"results\": [\n");
	for (int i = 0; i < nresults; i++)
		fprintf(f, "    {\"figure\": \"%s\", \"peer\": \"%s\", \"metric\": \"%s\", "
			"\"value\": %.6g, \"unit\": \"%s\"}%s\n", results[i].figure, results[i].peer,
			results[i].metric, results[i].value, results[i].unit,
			i + 1 < nresults ? "," : "");
	fprintf(f, "  ]\n}\n");
	fclose(f);
}

void write_csv(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return;
	}
	fprintf(f, "figure,peer,metric,value,unit\n");
	for (int i = 0; i < nresults; i++)
		fprintf(f, "%s,%s,%s,%.6g,%s\n", results[i].figure, results[i].peer,
			results[i].metric, results[i].value, results[i].unit);
	fclose(f);
}

const struct result *result_at(int i)
{
	return i >= 0 && i < nresults ? &results[i] : NULL;
}
