/*
 * bench_results.c: srcu-bench's results store and its writers.
 *
 * SPDX-License-Identifier: MIT
 */
#include "bench_results.h"

#include <math.h>
#include <string.h>

/* record() drops what does not fit: figure 12 adds about 105 values. */
#define MAX_RESULTS 2048
#define MAX_KEYS    32

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

/* ---- one chart per (figure, unit) ---- */

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/* A spread record (M_min, M_max), drawn with M rather than as a series. */
static int is_spread(const char *metric)
{
	return ends_with(metric, "_min") || ends_with(metric, "_max");
}

/* Add s to the set keys (by content) unless there; its count. */
static int add_key(const char **keys, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(keys[i], s))
			return n;
	if (n < MAX_KEYS)
		keys[n++] = s;
	return n;
}

/* M's spread, or (v, v) without one. */
static void spread(const char *figure, const char *peer, const char *metric, double v,
		   double *lo, double *hi)
{
	char name[128];
	const struct result *r;

	snprintf(name, sizeof(name), "%s_min", metric);
	r = find(figure, peer, name);
	*lo = r ? r->value : v;
	snprintf(name, sizeof(name), "%s_max", metric);
	r = find(figure, peer, name);
	*hi = r ? r->value : v;
}

/* The .dat of one chart: a header row, then per peer value lo hi for each
 * metric ("NaN" where the peer has none).  Returns the largest/smallest
 * positive value ratio, to choose a log scale. */
static double write_chart_data(FILE *f, const char *figure, const char *unit,
			       const char **peers, int np, const char **metrics, int nm)
{
	double vmin = INFINITY, vmax = 0;

	fprintf(f, "peer");
	for (int m = 0; m < nm; m++)
		fprintf(f, " \"%s\" lo hi", metrics[m]);
	fprintf(f, "\n");
	for (int p = 0; p < np; p++) {
		fprintf(f, "\"%s\"", peers[p]);
		for (int m = 0; m < nm; m++) {
			const struct result *r = find(figure, peers[p], metrics[m]);
			double lo, hi;

			if (!r || strcmp(r->unit, unit)) {
				fprintf(f, " NaN NaN NaN");
				continue;
			}
			spread(figure, peers[p], metrics[m], r->value, &lo, &hi);
			fprintf(f, " %g %g %g", r->value, lo, hi);
			if (r->value > 0 && r->value < vmin)
				vmin = r->value;
			if (r->value > vmax)
				vmax = r->value;
		}
		fprintf(f, "\n");
	}
	return vmin < INFINITY && vmin > 0 ? vmax / vmin : 1;
}

static int write_chart(const char *dir, FILE *gp, const char *figure, const char *unit, int n)
{
	const char *peers[MAX_KEYS], *metrics[MAX_KEYS];
	int np = 0, nm = 0;
	char path[4200];
	double range;
	FILE *f;

	for (int i = 0; i < nresults; i++)
		if (!strcmp(results[i].figure, figure) && !strcmp(results[i].unit, unit) &&
		    !is_spread(results[i].metric)) {
			np = add_key(peers, np, results[i].peer);
			nm = add_key(metrics, nm, results[i].metric);
		}
	snprintf(path, sizeof(path), "%s/%s-%d.dat", dir, figure, n);
	if (!np || !(f = fopen(path, "w")))
		return 0;
	range = write_chart_data(f, figure, unit, peers, np, metrics, nm);
	fclose(f);
	fprintf(gp, "reset\nset terminal png size 1100,600 noenhanced\n"
		"set output '%s/%s-%d.png'\nset title '%s (%s)'\nset ylabel '%s'\n"
		"set style data histograms\nset style histogram errorbars gap 2 lw 1\n"
		"set style fill pattern border -1\nset xtics rotate by -30\nset key top left\n"
		"set datafile missing 'NaN'\n%s",
		dir, figure, n, figure, unit, unit, range > 30 ? "set logscale y\n" : "");
	fprintf(gp, "colors = '%s'\nplot for [k=1:%d] '%s' using "
		"(column(3*k-1)):(column(3*k)):(column(3*k+1)):xtic(1) "
		"title columnheader(3*k-1) lc rgb word(colors, k) fs pattern 1+k%%8\n",
		BENCH_COLORS, nm, path);
	return 1;
}

int write_figure_plots(const char *dir, FILE *gp)
{
	const char *figures[MAX_KEYS], *units[MAX_KEYS];
	int nf = 0, charts = 0;

	for (int i = 0; i < nresults; i++)
		nf = add_key(figures, nf, results[i].figure);
	for (int fi = 0; fi < nf; fi++) {
		int nu = 0;

		for (int i = 0; i < nresults; i++)
			if (!strcmp(results[i].figure, figures[fi]))
				nu = add_key(units, nu, results[i].unit);
		for (int u = 0; u < nu; u++)
			charts += write_chart(dir, gp, figures[fi], units[u], u + 1);
	}
	return charts;
}
