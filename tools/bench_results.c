/*
 * bench_results.c: srcu-bench's results store and its writers.
 *
 * SPDX-License-Identifier: MIT
 */
#include "bench_results.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

/* Every value of the run, each with the round that measured it: a round
 * appends, so that lookup() finds the latest, and merge_rounds() folds
 * them into one value each at the end. */
static struct result *results;
static int nresults, capacity;
static int round_now;   /* set_round(): the round that records now */
static struct result *rounds_kept;   /* merge_rounds(): the rounds' values */
static int nrounds_kept;

void record(const char *figure, const char *peer, const char *metric, double value,
	    const char *unit)
{
	if (nresults == capacity) {
		int n = capacity ? 2 * capacity : 1024;
		struct result *r = realloc(results, sizeof(*r) * (size_t)n);

		if (!r)
			return;   /* dropped: the run goes on */
		results = r;
		capacity = n;
	}
	results[nresults++] = (struct result){ figure, peer, metric, unit, value, round_now };
}

void set_round(int k)
{
	round_now = k;
}

void record_spread(const char *figure, const char *peer, const char *metric, double lo,
		   double hi, const char *unit)
{
	size_t n = strlen(metric) + 5;
	char *a = malloc(n), *b = malloc(n);   /* kept: the store holds pointers */

	if (!a || !b) {
		free(a);
		free(b);
		return;
	}
	snprintf(a, n, "%s_min", metric);
	snprintf(b, n, "%s_max", metric);
	record(figure, peer, a, lo, unit);
	record(figure, peer, b, hi, unit);
}

void record_stat(const char *figure, const char *peer, const char *metric, struct stat3 s,
		 const char *unit)
{
	record(figure, peer, metric, s.med, unit);
	record_spread(figure, peer, metric, s.lo, s.hi, unit);
}

/* The latest value of figure/peer/metric: this round's, or an earlier
 * round's where this one has not measured it (yet, or at all: the
 * instruction counts come from the first round only). */
static const struct result *find(const char *figure, const char *peer, const char *metric)
{
	for (int i = nresults - 1; i >= 0; i--)
		if (!strcmp(results[i].figure, figure) && !strcmp(results[i].peer, peer) &&
		    !strcmp(results[i].metric, metric))
			return &results[i];
	return NULL;
}

/* ---- merging the rounds ---- */

static int same_key(const struct result *r, const char *figure, const char *peer,
		    const char *metric)
{
	return !strcmp(r->figure, figure) && !strcmp(r->peer, peer) && !strcmp(r->metric, metric);
}

/* figure/peer/metric as round k of all[] recorded it, or NULL. */
static const struct result *in_round(const struct result *all, int n, const char *figure,
				     const char *peer, const char *metric, int k)
{
	for (int i = 0; i < n; i++)
		if (all[i].round == k && same_key(&all[i], figure, peer, metric))
			return &all[i];
	return NULL;
}

/* r's metric with suffix ("_min"), in buf. */
static const char *suffixed(char *buf, size_t len, const struct result *r, const char *suffix)
{
	snprintf(buf, len, "%s%s", r->metric, suffix);
	return buf;
}

/* If r's metric is M_min or M_max: M, in base[256], and 1. */
static int spread_base(const struct result *r, char base[256])
{
	size_t len = strlen(r->metric);

	if (len <= 4 || len - 4 >= 256 ||
	    (strcmp(r->metric + len - 4, "_min") && strcmp(r->metric + len - 4, "_max")))
		return 0;
	memcpy(base, r->metric, len - 4);
	base[len - 4] = 0;
	return 1;
}

/* Is r the M_min or M_max row of a metric M that its round recorded?
 * (It is folded into M's spread.) */
static int spread_row(const struct result *all, int n, const struct result *r)
{
	char base[256];

	return spread_base(r, base) && in_round(all, n, r->figure, r->peer, base, r->round);
}

static double least(double a, double b)
{
	return a < b ? a : b;
}

static double most(double a, double b)
{
	return a > b ? a : b;
}

/* The median of v[0..k): the mean of the middle two for an even k. */
static double median(double *v, int k)
{
	double hi = quantile(v, k, 0.5);   /* sorts v; the upper middle */

	return k % 2 ? hi : (v[k / 2 - 1] + hi) / 2;
}

/* all[first]'s key over every round: the median into the store, and the
 * spread of all their repetitions. */
static void merge_key(const struct result *all, int n, int first, double *v)
{
	const struct result *r = &all[first];
	double lo = r->value, hi = r->value;
	char name[256];
	int k = 0;

	for (int j = first; j < n; j++) {
		const struct result *s = &all[j], *a, *b;

		if (!same_key(s, r->figure, r->peer, r->metric))
			continue;
		v[k++] = s->value;
		a = in_round(all, n, r->figure, r->peer, suffixed(name, sizeof(name), r, "_min"),
			     s->round);
		b = in_round(all, n, r->figure, r->peer, suffixed(name, sizeof(name), r, "_max"),
			     s->round);
		lo = least(lo, least(s->value, a ? a->value : s->value));
		hi = most(hi, most(s->value, b ? b->value : s->value));
	}
	record(r->figure, r->peer, r->metric, median(v, k), r->unit);
	record_spread(r->figure, r->peer, r->metric, lo, hi, r->unit);
}

void merge_rounds(void)
{
	struct result *all = results;
	int n = nresults, last = 0;
	double *v;

	for (int i = 0; i < n; i++)
		if (all[i].round > last)
			last = all[i].round;
	if (last == 0 || !(v = malloc(sizeof(*v) * (size_t)n)))
		return;   /* one round: its values are the run's */
	results = NULL;
	nresults = capacity = 0;
	round_now = 0;
	for (int i = 0; i < n; i++)
		if (!spread_row(all, n, &all[i]) &&
		    !find(all[i].figure, all[i].peer, all[i].metric))
			merge_key(all, n, i, v);
	free(v);
	/* Kept, not freed: the rounds' M_min and M_max names were allocated
	 * (record_spread()), and nothing else points to them now. */
	rounds_kept = all;
	nrounds_kept = n;
}

int rounds_held(const char *figure, const char *peer, const char *metric, int ge,
		double bound, int *rounds)
{
	const struct result *all = rounds_kept;
	int held = 0;

	*rounds = 0;
	if (!all) {   /* one round: the run's own values */
		const struct result *r = find(figure, peer, metric);

		if (r) {
			*rounds = 1;
			held = ge ? r->value >= bound : r->value <= bound;
		}
		return held;
	}
	for (const struct result *r = all; r < all + nrounds_kept; r++) {
		if (strcmp(r->figure, figure) || strcmp(r->peer, peer) || strcmp(r->metric, metric))
			continue;
		++*rounds;
		held += ge ? r->value >= bound : r->value <= bound;
	}
	return held;
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

int result_is_spread(const struct result *r)
{
	char base[256];

	return spread_base(r, base) && find(r->figure, r->peer, base);
}

int result_spread(const struct result *r, double *lo, double *hi)
{
	char name[256];
	const struct result *a, *b;

	a = find(r->figure, r->peer, suffixed(name, sizeof(name), r, "_min"));
	b = find(r->figure, r->peer, suffixed(name, sizeof(name), r, "_max"));
	if (!a || !b)
		return 0;
	*lo = a->value;
	*hi = b->value;
	return 1;
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

/* ---- the machine line ---- */

static char machine[512] = "srcu-bench: machine not printed";

const char *machine_line(void)
{
	return machine;
}

void set_machine_line(const char *line)
{
	snprintf(machine, sizeof(machine), "%.*s", (int)sizeof(machine) - 1, line);
}

static const char *const state_name[] = { "not-run", "ran", "failed" };

/* s as a JSON string's contents: quotes and backslashes escaped, control
 * characters dropped. */
static void json_string(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
}

/* The JSON: the machine (with the header line the text output starts
 * with) and the date it was written (UTC, ISO 8601), each figure's
 * outcome, then one result a line.  A result M whose spread M_min and
 * M_max was recorded also carries them as "min" and "max" (the _min and
 * _max rows stay too).  scripts/docs-figures.sh reads it line by line:
 * keep one result a line. */
void write_json(const char *path, int cpus, const char *backend, int quick, int rounds)
{
	FILE *f = fopen(path, "w");
	char date[32];
	time_t now = time(NULL);

	if (!f) {
		perror(path);
		return;
	}
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	fprintf(f, "{\n  \"machine\": {\"cpus\": %d, \"backend\": \"%s\", \"quick\": %s, "
		"\"rounds\": %d},\n  \"machine_line\": \"", cpus, backend,
		quick ? "true" : "false", rounds);
	json_string(f, machine_line());
	fprintf(f, "\",\n  \"date\": \"%s\",\n  \"figures\": {", date);
	for (int n = 1; n <= BENCH_FIGURES; n++)
		fprintf(f, "\"%d\": \"%s\"%s", n, state_name[figures[n]],
			n < BENCH_FIGURES ? ", " : "},\n");
	fprintf(f, "  \"results\": [\n");
	for (int i = 0; i < nresults; i++) {
		const struct result *r = &results[i];
		double lo, hi;

		fprintf(f, "    {\"figure\": \"%s\", \"peer\": \"%s\", \"metric\": \"%s\", "
			"\"value\": %.9g, \"unit\": \"%s\"", r->figure, r->peer, r->metric,
			r->value, r->unit);
		if (result_spread(r, &lo, &hi))
			fprintf(f, ", \"min\": %.9g, \"max\": %.9g", lo, hi);
		fprintf(f, "}%s\n", i + 1 < nresults ? "," : "");
	}
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

/* ---- reading a recorded run back (srcu-bench --from FILE --plot DIR) ---- */

static char run_date[32];   /* the loaded run's date, or "" */

const char *loaded_run_date(void)
{
	return run_date;
}

/* The string value of "key": "..." in line, unescaped into out. */
static int json_field(const char *line, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	if (!(p = strstr(line, pat)))
		return 0;
	for (p += strlen(pat); *p && *p != '"' && n + 1 < len; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = 0;
	return 1;
}

/* The number after "key": in line. */
static int json_number(const char *line, const char *key, double *v)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	return (p = strstr(line, pat)) && sscanf(p + strlen(pat), "%lf", v) == 1;
}

/* Each result line, the figures' outcomes, the machine line and the date
 * of a JSON that write_json() wrote (one result a line), into the store:
 * 0, or -1 if it cannot be read. */
int load_json(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[1024], fig[64], peer[128], metric[128], unit[32];
	double v;

	if (!f) {
		perror(path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (json_field(line, "machine_line", line, sizeof(line))) {
			set_machine_line(line);
		} else if (json_field(line, "date", run_date, sizeof(run_date))) {
			continue;
		} else if (strstr(line, "\"figures\": {")) {
			for (int n = 1; n <= BENCH_FIGURES; n++) {
				char key[8], state[16];

				snprintf(key, sizeof(key), "%d", n);
				if (json_field(line, key, state, sizeof(state)) && !strcmp(state, "ran"))
					figure_ran(n);
			}
		} else if (json_field(line, "figure", fig, sizeof(fig)) &&
			   json_field(line, "peer", peer, sizeof(peer)) &&
			   json_field(line, "metric", metric, sizeof(metric)) &&
			   json_number(line, "value", &v)) {
			if (!json_field(line, "unit", unit, sizeof(unit)))
				unit[0] = 0;
			/* kept: the store holds pointers */
			record(strdup(fig), strdup(peer), strdup(metric), v, strdup(unit));
		}
	}
	fclose(f);
	return 0;
}
