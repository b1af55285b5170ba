/*
 * bench_plots.c: srcu-bench --plot DIR: one PNG per figure that ran
 * (figNN-<name>.png), drawn by gnuplot from the results store.
 *
 * Each figure is titled with its number and the question it answers; each
 * of its panels holds one unit only, says whether lower or higher is
 * better, and starts at zero or is logarithmic (when its values span more
 * than 20x), so that bar heights compare as the values do.  Error bars are
 * the spread recorded with a value (M_min, M_max): the min-max of every
 * repetition over the run's rounds.  The caption is srcu-bench's machine
 * line and the date.  A figure that failed or did not run gets no PNG,
 * and an old one of that name is removed.  Legends go below the panels,
 * where they cover nothing.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "bench_plots.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_results.h"

#define MAX_ROWS   24
#define MAX_COLS   16
#define MAX_ITEMS  6
#define MAX_PANELS 3

enum better { LOWER, HIGHER };
enum { BARS, LINES };

/* A series: its legend, the peer it reads ("*": one series per peer that
 * has a value in the panel, named after the peer) and its metric, where
 * "%s" stands for the x key.  With x along the peers, metric is the
 * metric itself. */
struct series { const char *label, *peer, *metric; };

/* An x position: its key (a metric's "%s", or "peer:metric" for a cell
 * of its own) and its label. */
struct xpos { const char *key, *label; };

struct panel {
	const char *fig;            /* the results' figure key */
	const char *ylabel;         /* the unit, said for a reader */
	enum better better;
	int style;                  /* BARS or LINES */
	struct xpos x[MAX_ITEMS];   /* none: x is the peers; LINES: numbers (log axis) */
	struct series s[MAX_ITEMS];
	const char *xlabel;
};

struct plot_figure {
	int n;
	const char *file, *title;
	struct panel p[MAX_PANELS];
};

#define ALL "*"

static const struct plot_figure plot_figures[] = {
	{ 1, "fig01-read-pair", "Figure 1: what does a read-side critical section cost?",
	  { { "read_pair", "ns per lock/unlock pair", LOWER, BARS, { { 0 } },
	      { { "1 thread", NULL, "ns_1thread" }, { "every core", NULL, "ns_allcores" } }, 0 },
	    { "instructions", "instructions per pair (callgrind)", LOWER, BARS, { { 0 } },
	      { { "instructions", NULL, "per_pair" } }, 0 } } },
	{ 2, "fig02-read-under-updates",
	  "Figure 2: what does a read pair cost while another thread runs grace periods?",
	  { { "read_pair_under_updates", "ns per pair, under updates", LOWER, BARS, { { 0 } },
	      { { "ns per pair", NULL, "ns" } }, 0 },
	    { "read_pair_under_updates", "times its idle cost (figure 1)", LOWER, BARS, { { 0 } },
	      { { "under updates / idle", NULL, "vs_idle" } }, 0 } } },
	{ 3, "fig03-gp-latency", "Figure 3: how long does a grace period take?",
	  { { "gp_latency", "us per synchronize", LOWER, BARS, { { 0 } },
	      { { "idle readers, p50", NULL, "idle_p50" }, { "idle readers, p99", NULL, "idle_p99" },
		{ "busy readers, p50", NULL, "busy_p50" }, { "busy readers, p99", NULL, "busy_p99" } },
	      0 } } },
	{ 4, "fig04-sync-throughput",
	  "Figure 4: how many synchronize calls a second, with 1, 2 and 4 updaters?",
	  { { "throughput", "synchronize calls/s, all updaters", HIGHER, BARS, { { 0 } },
	      { { "1 updater", NULL, "calls_per_s_1" }, { "2 updaters", NULL, "calls_per_s_2" },
		{ "4 updaters", NULL, "calls_per_s_4" } }, 0 },
	    { "throughput", "calls served per grace period", HIGHER, BARS, { { 0 } },
	      { { "1 updater", NULL, "calls_per_gp_1" }, { "2 updaters", NULL, "calls_per_gp_2" },
		{ "4 updaters", NULL, "calls_per_gp_4" } }, 0 } } },
	{ 5, "fig05-wakeup",
	  "Figure 5: how soon does synchronize return once a 10 ms reader leaves?",
	  { { "wakeup", "us after the reader left", LOWER, BARS, { { 0 } },
	      { { "p50", NULL, "p50" }, { "max", NULL, "max" } }, 0 } } },
	{ 6, "fig06-isolation",
	  "Figure 6: does a reader asleep in another domain delay synchronize?",
	  { { "isolation", "ms per synchronize", LOWER, BARS, { { 0 } },
	      { { "synchronize while another domain's reader sleeps", NULL, "sync_ms" } }, 0 } } },
	{ 7, "fig07-scaling", "Figure 7: how do grace periods scale with threads and domains?",
	  { { "scaling_threads", "grace-period p50, us", LOWER, LINES,
	      { { "1", "1" }, { "10", "10" }, { "100", "100" }, { "1000", "1000" } },
	      { { NULL, ALL, "p50_us_%s" } }, "idle threads that have used the domain" },
	    { "scaling_domains", "synchronize_srcu_expedited, us", LOWER, LINES,
	      { { "libsrcu:sync_exp_us_1", "1" }, { "libsrcu:sync_exp_us_100", "100" },
		{ "libsrcu:sync_exp_us", "1000" }, { "libsrcu:sync_exp_us_10000", "10000" } },
	      { { "libsrcu", NULL, NULL } }, "live libsrcu domains" },
	    { "scaling_domains", "init_srcu_struct, ns per domain", LOWER, LINES,
	      { { "libsrcu:init_ns_1", "1" }, { "libsrcu:init_ns_100", "100" },
		{ "libsrcu:init_ns", "1000" }, { "libsrcu:init_ns_10000", "10000" } },
	      { { "libsrcu", NULL, NULL } }, "live libsrcu domains" } } },
	{ 8, "fig08-call", "Figure 8: how fast, and in how much memory, does call_srcu() free beside call_rcu()?",
	  { { "call", "callbacks/s, no reader in the way", HIGHER, BARS, { { 0 } },
	      { { "callbacks/s", NULL, "callbacks_per_s" } }, 0 },
	    { "call", "objects waiting (peak) while a reader sleeps", LOWER, BARS, { { 0 } },
	      { { "peak objects waiting", NULL, "asleep_peak_objects" } }, 0 },
	    { "poll", "ns per call (libsrcu polled API)", LOWER, BARS,
	      { { "libsrcu:get_state_ns", "get_state" }, { "libsrcu:poll_state_ns", "poll_state" },
		{ "libsrcu:start_poll_ns", "start_poll" } },
	      { { "ns per call", NULL, NULL } }, 0 } } },
	{ 9, "fig09-machine", "Figure 9: what do membarrier and a futex wake-up cost here?",
	  { { "machine", "us per call", LOWER, BARS,
	      { { "membarrier:idle_us", "membarrier, idle CPUs" },
		{ "membarrier:one_running_us", "membarrier, 1 thread running" },
		{ "futex:round_trip_us", "futex wake-up round trip" } },
	      { { "us per call", NULL, NULL } }, 0 } } },
	{ 10, "fig10-lfht", "Figure 10: does liburcu's cds_lfht run as fast on a libsrcu domain as on urcu-memb?",
	  { { "lfht", "lookups/s, all threads", HIGHER, BARS,
	      { { "lookups_per_s_all", "read-only" }, { "lookups_per_s_mixed", "with an updater" } },
	      { { NULL, ALL, "%s" } }, 0 },
	    { "lfht", "updates/s, beside the lookups", HIGHER, BARS,
	      { { "updates_per_s_mixed", "updates, mixed" } }, { { NULL, ALL, "%s" } }, 0 },
	    { "lfht", "deletions/s in table B", HIGHER, BARS,
	      { { "b_deletions_per_s_a_asleep", "a reader of table A asleep" } },
	      { { NULL, ALL, "%s" } }, 0 } } },
	{ 11, "fig11-shared", "Figure 11: what does a process-shared domain cost?",
	  { { "shared", "ns per read pair", LOWER, BARS, { { 0 } },
	      { { "read pair", NULL, "read_pair_ns" } }, 0 },
	    { "shared", "instructions per pair (callgrind)", LOWER, BARS, { { 0 } },
	      { { "instructions", NULL, "instr_per_pair" } }, 0 },
	    { "shared", "grace period, us", LOWER, BARS, { { 0 } },
	      { { "p50", NULL, "gp_p50_us" }, { "p99", NULL, "gp_p99_us" } }, 0 } } },
	{ 12, "fig12-sharing", "Figure 12: what does update-side sharing buy against urcu-memb?",
	  { { "sharing", "synchronize calls/s, all updaters", HIGHER, BARS,
	      { { "1", "1 updater" }, { "2", "2 updaters" }, { "4", "4 updaters" } },
	      { { "libsrcu, one domain", "libsrcu", "calls_per_s_%s" },
		{ "libsrcu, a domain each", "libsrcu", "calls_per_s_own_%s" },
		{ "urcu-memb", "urcu-memb", "calls_per_s_%s" } }, 0 },
	    { "sharing", "ns per read pair", LOWER, BARS,
	      { { "libsrcu:reader_idle_ns", "libsrcu, no updater" },
		{ "libsrcu:reader_busy_ns_normal", "libsrcu, normal GPs beside" },
		{ "libsrcu:reader_busy_ns_exp", "libsrcu, expedited GPs beside" },
		{ "urcu-memb:reader_idle_ns", "urcu-memb, no updater" },
		{ "urcu-memb:reader_busy_ns", "urcu-memb, GPs beside" } },
	      { { "ns per pair", NULL, NULL } }, 0 },
	    { "sharing", "grace-period p50, us", LOWER, BARS,
	      { { "idle_p50_us", "1 idle reader" }, { "p50_us_1000", "1000 idle threads" } },
	      { { "libsrcu", "libsrcu", "%s" }, { "libsrcu, expedited", "libsrcu-exp", "%s" },
		{ "urcu-memb", "urcu-memb", "%s" } }, 0 } } },
};
#define NPLOTS (sizeof(plot_figures) / sizeof(plot_figures[0]))

/* A reader's name for a peer or a row of the results. */
static const char *peer_label(const char *peer)
{
	static const char *const names[][2] = {
		{ "libsrcu-static", "libsrcu (.a)" },
		{ "libsrcu-exp", "libsrcu, expedited" },
		{ "libsrcu-fast", "libsrcu _fast" },
		{ "libsrcu-updown", "libsrcu _fast up/down" },
		{ "libsrcu-down", "libsrcu down_read" },
		{ "libsrcu-gate", "srcu_gate" },
		{ "libsrcu-urcu", "libsrcu via srcu_urcu.h" },
		{ "libsrcu-own-domains", "libsrcu, a domain each" },
		{ "libsrcu-no-readers", "libsrcu, no readers" },
		{ "libsrcu-other", "libsrcu, threads read another domain" },
		{ "libsrcu-flavor", "libsrcu flavour" },
		{ "libsrcu-private", "libsrcu, private domain" },
		{ "libsrcu-shared", "libsrcu, process-shared" },
		{ "rwlock-pshared", "rwlock, process-shared" },
		{ "tls-counter", "tls-counter (floor)" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(peer, names[i][0]))
			return names[i][1];
	return peer;
}

/* ---- one panel's table ---- */

struct cell { double v, lo, hi; int has, spread; };

struct table {
	const char *xlabel[MAX_ROWS];
	const char *slabel[MAX_COLS];
	struct cell c[MAX_ROWS][MAX_COLS];
	int nx, ns;
};

static void get_cell(const char *fig, const char *peer, const char *metric, struct cell *c)
{
	char name[160];

	memset(c, 0, sizeof(*c));
	if (!peer || !metric || !recorded(fig, peer, metric))
		return;
	c->has = 1;
	c->v = c->lo = c->hi = lookup(fig, peer, metric);
	snprintf(name, sizeof(name), "%s_min", metric);
	if (recorded(fig, peer, name)) {
		c->lo = lookup(fig, peer, name);
		snprintf(name, sizeof(name), "%s_max", metric);
		c->hi = recorded(fig, peer, name) ? lookup(fig, peer, name) : c->v;
		c->spread = 1;
	}
}

/* The peers of figure fig in the order they were recorded. */
static int figure_peers(const char *fig, const char **peers)
{
	int n = 0;

	for (int i = 0; result_at(i); i++) {
		const struct result *r = result_at(i);
		int k;

		if (strcmp(r->figure, fig))
			continue;
		for (k = 0; k < n && strcmp(peers[k], r->peer); k++)
			;
		if (k == n && n < MAX_ROWS)
			peers[n++] = r->peer;
	}
	return n;
}

static void expand_metric(char *buf, size_t n, const char *tmpl, const char *key)
{
	if (strstr(tmpl, "%s")) {
		const char *p = strstr(tmpl, "%s");

		snprintf(buf, n, "%.*s%s%s", (int)(p - tmpl), tmpl, key, p + 2);
	} else {
		snprintf(buf, n, "%s", tmpl);
	}
}

/* Fills t from the panel; drops rows and series without any value. */
static void build_table(const struct panel *pn, struct table *t)
{
	const char *peers[MAX_ROWS];
	int np = figure_peers(pn->fig, peers);
	char metric[160];
	struct table full;

	memset(&full, 0, sizeof(full));
	if (!pn->x[0].key) {   /* x: the peers; series: the metrics */
		for (int p = 0; p < np; p++) {
			full.xlabel[full.nx] = peer_label(peers[p]);
			for (int s = 0; s < MAX_ITEMS && pn->s[s].label; s++)
				get_cell(pn->fig, peers[p], pn->s[s].metric, &full.c[full.nx][s]);
			full.nx++;
		}
		for (int s = 0; s < MAX_ITEMS && pn->s[s].label; s++)
			full.slabel[full.ns++] = pn->s[s].label;
	} else {               /* x: the keys; series: as listed, or each peer */
		for (int s = 0; s < MAX_ITEMS && (pn->s[s].label || pn->s[s].peer); s++) {
			const struct series *se = &pn->s[s];
			int each = se->peer && !strcmp(se->peer, ALL);

			for (int p = 0; p < (each ? np : 1) && full.ns < MAX_COLS; p++) {
				const char *peer = each ? peers[p] : se->peer;

				full.slabel[full.ns] = each ? peer_label(peer) : se->label;
				for (int x = 0; x < MAX_ITEMS && pn->x[x].key; x++) {
					const char *key = pn->x[x].key, *colon = strchr(key, ':');
					char pbuf[64];

					if (colon) {   /* a cell of its own: peer:metric */
						snprintf(pbuf, sizeof(pbuf), "%.*s", (int)(colon - key), key);
						get_cell(pn->fig, pbuf, colon + 1, &full.c[x][full.ns]);
						continue;
					}
					expand_metric(metric, sizeof(metric), se->metric, key);
					get_cell(pn->fig, peer, metric, &full.c[x][full.ns]);
				}
				full.ns++;
			}
		}
		for (int x = 0; x < MAX_ITEMS && pn->x[x].key; x++)
			full.xlabel[full.nx++] = pn->x[x].label;
	}
	/* Keep the rows and the series that have a value. */
	memset(t, 0, sizeof(*t));
	int keep_s[MAX_COLS], nks = 0;

	for (int s = 0; s < full.ns; s++) {
		int any = 0;

		for (int x = 0; x < full.nx; x++)
			any |= full.c[x][s].has;
		if (any)
			keep_s[nks++] = s;
	}
	for (int k = 0; k < nks; k++)
		t->slabel[k] = full.slabel[keep_s[k]];
	t->ns = nks;
	for (int x = 0; x < full.nx; x++) {
		int any = 0;

		for (int k = 0; k < nks; k++)
			any |= full.c[x][keep_s[k]].has;
		if (!any)
			continue;
		t->xlabel[t->nx] = full.xlabel[x];
		for (int k = 0; k < nks; k++)
			t->c[t->nx][k] = full.c[x][keep_s[k]];
		t->nx++;
	}
}

/* ---- gnuplot ---- */

/* A string for a gnuplot single-quoted literal (and a .dat's "..."). */
static const char *q(const char *s)
{
	static char buf[4][512];
	static int k;
	char *b = buf[k++ & 3];
	size_t n = 0;

	for (; *s && n + 4 < sizeof(buf[0]); s++)
		if (*s == '\'') {   /* a typographic apostrophe: no quoting needed */
			memcpy(b + n, "\xe2\x80\x99", 3);
			n += 3;
		} else if (*s != '"') {
			b[n++] = *s;
		}
	b[n] = 0;
	return b;
}

/* The power of ten at or below v (> 0), and the one at or above: a log
 * axis's ends (without libm).  The bottom is taken below a third of the
 * smallest value, so that no bar is left without a visible height. */
static double decade_below(double v)
{
	double d = 1;

	while (d > v)
		d /= 10;
	while (d * 10 <= v)
		d *= 10;
	return d;
}

static double decade_above(double v)
{
	double d = decade_below(v);

	return d < v ? d * 10 : d;
}

/* Are the panel's x labels slanted (too long side by side), needing room
 * below? */
static int rotated(const struct panel *pn, const struct table *t)
{
	size_t longest = 0;

	for (int x = 0; x < t->nx; x++)
		if (strlen(t->xlabel[x]) > longest)
			longest = strlen(t->xlabel[x]);
	return pn->style == BARS && (size_t)t->nx * longest > 40;
}

/* Writes the panel's .dat and its plot command; 0 if it has no value. */
static int write_panel(FILE *gp, const char *dir, const char *file, int k,
		       const struct panel *pn, const char *caption)
{
	struct table t;
	char path[4200];
	double vmin = INFINITY, vmax = 0, scale = 1;
	const char *scaled = "";
	int spread = 0, log;
	FILE *f;

	build_table(pn, &t);
	if (!t.nx || !t.ns)
		return 0;
	for (int x = 0; x < t.nx; x++)
		for (int s = 0; s < t.ns; s++) {
			const struct cell *c = &t.c[x][s];

			if (c->has && c->v > 0 && c->v < vmin)
				vmin = c->v;
			if (c->has && c->hi > vmax)
				vmax = c->hi;
		}
	/* Zero-based, unless the values span more than 50x: then a log axis
	 * with whole decades, where equal ratios look equal.  Large values
	 * in thousands or millions, after the smallest on a log axis. */
	log = vmin < INFINITY && vmax / vmin > 50;
	if ((log ? vmin : vmax) >= 1e6)
		scale = 1e6, scaled = "millions of ";
	else if ((log ? vmin : vmax) >= 1e4)
		scale = 1e3, scaled = "thousands of ";
	vmin = INFINITY;
	vmax = 0;
	snprintf(path, sizeof(path), "%s/%s-%c.dat", dir, file, 'a' + k);
	if (!(f = fopen(path, "w")))
		return 0;
	fprintf(f, "x");
	for (int s = 0; s < t.ns; s++)
		fprintf(f, " \"%s\" lo hi", q(t.slabel[s]));
	fprintf(f, "\n");
	for (int x = 0; x < t.nx; x++) {
		fprintf(f, "\"%s\"", q(t.xlabel[x]));
		for (int s = 0; s < t.ns; s++) {
			const struct cell *c = &t.c[x][s];

			if (!c->has) {
				fprintf(f, " NaN NaN NaN");
				continue;
			}
			fprintf(f, " %g %g %g", c->v / scale, c->lo / scale, c->hi / scale);
			spread |= c->spread;
			if (c->v > 0 && c->v / scale < vmin)
				vmin = c->v / scale;
			if (c->hi / scale > vmax)
				vmax = c->hi / scale;
		}
		fprintf(f, "\n");
	}
	fclose(f);
	fprintf(gp, "reset\nset datafile missing 'NaN'\nset border 3\nset xtics nomirror\n"
		"set ytics nomirror\nset grid ytics lc rgb '#dddddd'\n"
		"set ylabel \"%s%s\\n%s is better%s\" offset -1,0\nset format y '%%g'\n",
		scaled, q(pn->ylabel), pn->better == LOWER ? "lower" : "higher",
		log ? " (log scale)" : "");
	if (pn->xlabel)
		fprintf(gp, "set xlabel '%s'\n", q(pn->xlabel));
	if (caption)   /* the first panel's: at the top of the whole PNG */
		fprintf(gp, "set label 99 \"%s\" at screen 0.5,0.925 center font 'DejaVuSans,9' "
			"tc rgb '#444444'\n", q(caption));
	if (log)
		fprintf(gp, "set logscale y\nset yrange [%g:%g]\n",
			decade_below(vmin / 3), decade_above(vmax));
	else
		fprintf(gp, "set yrange [0:%g]\n", vmax > 0 ? vmax * 1.1 : 1);
	if (t.ns > 1)
		fprintf(gp, "set key outside below center horizontal maxrows %d\n",
			t.ns <= 4 ? 1 : t.ns > 6 ? 3 : 2);
	else
		fprintf(gp, "unset key\n");
	if (rotated(pn, &t))
		fprintf(gp, "set xtics rotate by 30 right\n");
	/* Bars: every group whole, the last one's too (autoscale stops at
	 * its centre and clips its right half). */
	if (pn->style != LINES)
		fprintf(gp, "set xrange [-0.6:%g]\n", t.nx - 0.4);
	fprintf(gp, "colors = '%s'\n", BENCH_COLORS);
	if (pn->style == LINES)
		fprintf(gp, "set logscale x\nset offsets graph 0.06,graph 0.06,0,0\n"
			"plot for [k=1:%d] '%s' using (real(stringcolumn(1))):(column(3*k-1))"
			":(column(3*k)):(column(3*k+1)):xtic(1) with yerrorlines lw 2 pt 7 "
			"lc rgb word(colors, k) title columnheader(3*k-1)\n", t.ns, path);
	else if (spread)
		fprintf(gp, "set style data histograms\nset style histogram errorbars gap 1 lw 1.5\n"
			"set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
			"plot for [k=1:%d] '%s' using (column(3*k-1)):(column(3*k))"
			":(column(3*k+1)):xtic(1) lc rgb word(colors, k) title columnheader(3*k-1)\n",
			t.ns, path);
	else
		fprintf(gp, "set style data histograms\nset style histogram clustered gap 1\n"
			"set style fill solid 0.85 border -1\nset boxwidth 0.9\n"
			"plot for [k=1:%d] '%s' using (column(3*k-1)):xtic(1) "
			"lc rgb word(colors, k) title columnheader(3*k-1)\n", t.ns, path);
	return 1;
}

/* The CDF of figure 3's idle synchronize latency: its data, and the
 * number of peers in it. */
static int write_cdf_data(const char *dir)
{
	char path[4200], *buf = NULL, *line, *save;
	size_t len = 0;
	int cdfs, blocks = 0;
	FILE *f, *mem = open_memstream(&buf, &len);

	if (!mem)
		return 0;
	cdfs = gp_latency_cdf(mem);
	fclose(mem);
	snprintf(path, sizeof(path), "%s/fig03-gp-latency-cdf.dat", dir);
	if (!(f = fopen(path, "w"))) {
		free(buf);
		return 0;
	}
	/* Each block's header names its peer: the reader's name instead. */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char peer[64];

		if (line[0] == '"' && sscanf(line, "\"%63[^\"]\"", peer) == 1)
			fprintf(f, "%s\"%s\" 0\n", blocks++ ? "\n\n" : "", q(peer_label(peer)));
		else
			fprintf(f, "%s\n", line);
	}
	fclose(f);
	free(buf);
	return cdfs;
}

/* Its panel, the second of figure 3. */
static void write_cdf_panel(FILE *gp, const char *dir, int cdfs)
{
	fprintf(gp, "reset\nset border 3\nset xtics nomirror\nset ytics nomirror\n"
		"set grid xtics ytics lc rgb '#dddddd'\n"
		"set xlabel \"us per synchronize, idle readers (log scale)\\nleft is better\"\n"
		"set logscale x\nset format x '%%g'\nset ylabel 'fraction of calls at most x'\n"
		"set yrange [0:1]\nset key outside below center horizontal maxcols 3 width -2\n"
		"colors = '%s'\n"
		"plot for [i=0:%d] '%s/fig03-gp-latency-cdf.dat' index i using 1:2 with linespoints "
		"lw 2 lc rgb word(colors, i + 1) pt i + 1 pn 8 title columnheader(1)\n",
		BENCH_COLORS, cdfs - 1, dir);
}

/* The figure's panels with a value; *slanted: whether one slants its x
 * labels. */
static int count_panels(const struct plot_figure *pf, int *slanted)
{
	int n = 0;

	*slanted = 0;
	for (int k = 0; k < MAX_PANELS && pf->p[k].fig; k++) {
		struct table t;

		build_table(&pf->p[k], &t);
		n += t.nx && t.ns;
		*slanted |= t.nx && t.ns && rotated(&pf->p[k], &t);
	}
	return n;
}

/* One figure's PNG: a multiplot of its panels, the title above and the
 * machine and date below. */
static int write_figure(FILE *gp, const char *dir, const struct plot_figure *pf,
			const char *caption)
{
	int slanted, npanels = count_panels(pf, &slanted), drawn = 0, width;
	int cdfs = pf->n == 3 ? write_cdf_data(dir) : 0;   /* figure 3's second panel */

	if (!npanels)
		return 0;
	npanels += cdfs > 0;
	width = npanels > 1 ? 560 * npanels : 900;
	fprintf(gp, "set terminal png size %d,640 font 'DejaVuSans,10' noenhanced\n"
		"set output '%s/%s.png'\n"
		"set multiplot layout 1,%d title '%s' font 'DejaVuSans,13' margins %.3f,0.98,%s,0.84 "
		"spacing 0.09,0\n", width, dir, pf->file, npanels, q(pf->title), 120.0 / width,
		slanted ? "0.27" : "0.17");
	for (int k = 0; k < MAX_PANELS && pf->p[k].fig; k++) {
		if (write_panel(gp, dir, pf->file, k, &pf->p[k], drawn ? NULL : caption))
			drawn++;
	}
	if (cdfs)
		write_cdf_panel(gp, dir, cdfs);
	fprintf(gp, "unset multiplot\nset output\n");
	return drawn > 0;
}

int write_plots(const char *dir)
{
	char path[4200], caption[512], date[32];
	time_t now = time(NULL);
	int charts = 0;
	FILE *gp;

	if (system("gnuplot --version >/dev/null 2>&1") != 0) {
		printf("note: --plot needs gnuplot (apt-get install gnuplot-nox)\n");
		return 0;
	}
	snprintf(path, sizeof(path), "mkdir -p '%s'", dir);
	if (system(path) != 0)
		return 0;
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	if (*loaded_run_date())   /* drawn from a recorded run: its date */
		snprintf(date, sizeof(date), "%.10s %.5s UTC", loaded_run_date(),
			 loaded_run_date() + 11);
	snprintf(caption, sizeof(caption), "%s\\n%s; bars: medians, whiskers: min-max of "
		 "every repetition", machine_line(), date);
	snprintf(path, sizeof(path), "%s/plots.gp", dir);
	if (!(gp = fopen(path, "w")))
		return 0;
	for (size_t i = 0; i < NPLOTS; i++) {
		const struct plot_figure *pf = &plot_figures[i];

		snprintf(path, sizeof(path), "%s/%s.png", dir, pf->file);
		unlink(path);   /* an old run's, which this one did not redo */
		if (figure_state(pf->n) != FIGURE_RAN)
			continue;
		charts += write_figure(gp, dir, pf, caption);
	}
	fclose(gp);
	snprintf(path, sizeof(path), "gnuplot '%s/plots.gp'", dir);
	if (charts && system(path) != 0)
		return 0;
	printf("plots: %d PNG%s in %s (figNN-*.png, one per figure that ran)\n", charts,
	       charts == 1 ? "" : "s", dir);
	return charts;
}
