/*
 * bench_plots.c: srcu-bench --plot DIR: one PNG per figure that ran
 * (figNN-<name>.png), drawn by gnuplot from the results store.
 *
 * Each figure is titled with its number and the question it answers; each
 * of its panels holds one unit only, says whether lower or higher is
 * better, and starts at zero or is logarithmic (when its values span more
 * than 50x), so that bar heights compare as the values do.  A bar on a
 * log axis does not: its height is not its value, and a 200x ratio looks
 * like 3 bars to 1, so there each bar carries its value.  A value that is
 * only a lower bound (the benchmark stopped there: figure 8's call_rcu)
 * gets an arrow up and a "≥" label that says why.  Error bars are the
 * spread recorded with a value (M_min, M_max): the min-max of every
 * repetition over the run's rounds.  The caption is srcu-bench's machine
 * line and the date, and says what the marks are (bars or points, and
 * whiskers where there are any).  A figure that failed or did not run
 * gets no PNG, and an old one of that name is removed.  Legends go below
 * the panels, where they cover nothing.
 *
 * DIR also keeps plots.gp, the gnuplot script that drew the PNGs: its
 * data is inline (datablocks), so that it redraws them alone and leaves
 * no data files beside them.
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
#include "bench_call.h"   /* CALL_CAP: where figure 8's producer stops */
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
	  "Figure 4: how many synchronize calls a second do 1, 2 and 4 updaters complete?",
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

/* The values that are only lower bounds at or above atleast: the
 * benchmark stopped there, and why says so on the bar.  Figure 8's
 * producer stops queueing at CALL_CAP objects (the text table's "+"). */
static const struct bound {
	const char *fig, *metric;
	double atleast;
	const char *why;
} bounds[] = {
	{ "call", "asleep_peak_objects", CALL_CAP, "producer stopped" },
};

/* The bound that metric's value v reaches, or NULL: v is the value. */
static const struct bound *lower_bound(const char *fig, const char *metric, double v)
{
	for (size_t i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
		if (!strcmp(fig, bounds[i].fig) && !strcmp(metric, bounds[i].metric) &&
		    v >= bounds[i].atleast)
			return &bounds[i];
	return NULL;
}

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

/* A value, its spread, and the bound it reaches if it is only a lower
 * bound (else NULL). */
struct cell { double v, lo, hi; int has, spread; const struct bound *atleast; };

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
	c->atleast = lower_bound(fig, metric, c->v);
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

/* A string for a gnuplot single-quoted literal (and a datablock's "..."). */
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
 * axis's ends (without libm). */
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

/* Where one panel's plot area lies, in pixels (write_figure's layout):
 * what a label's room above its bar is measured against. */
struct frame { double w, h; };

/* A label's size in the plot (8-point text in the 10-point terminal). */
#define LABEL_CHAR_PX 6.0    /* one character, wide */
#define LABEL_LINE_PX 20.0   /* a line with its gap below, tall */
#define ARROW_PX      36.0   /* a lower bound's arrow above its bar */
#define MIN_SLOT_PX   14.0   /* a bar's slot, wide, with an upright label */

/* A panel's y axis, and what its bars carry above them. */
struct axis {
	int log;
	double scale;          /* the values divided by it: 1, 1e3 or 1e6 */
	const char *scaled;    /* the unit said so: "thousands of " */
	double bottom, top;    /* scaled */
	int labels;            /* each bar its value: on a log axis */
	int upright;           /* those labels turned up: wider than a bar */
	int bound_upright;     /* a lower bound's label turned up */
};

/* The characters of UTF-8 s (a label's width). */
static size_t chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += (*s & 0xc0) != 0x80;
	return n;
}

/* A bar's value as its label says it: three figures (2.00, not 2), k or
 * M for large ones (the value itself, whatever the axis's unit). */
static void fmt_value(char *buf, size_t n, double v)
{
	const char *unit = "";
	double s = v;

	if (v >= 1e6)
		s = v / 1e6, unit = " M";
	else if (v >= 1e4)
		s = v / 1e3, unit = " k";
	if (s >= 100)
		snprintf(buf, n, "%.0f%s", s, unit);
	else if (*unit)
		snprintf(buf, n, "%.*f%s", s >= 10 ? 1 : 2, s, unit);
	else
		snprintf(buf, n, "%#.3g", s);
}

/* A cell's label above its bar: its value where the axis labels values,
 * none where it is a lower bound (its own label says "≥"). */
static void cell_label(const struct cell *c, const struct axis *a, char *buf, size_t n)
{
	*buf = 0;
	if (c->has && a->labels && !c->atleast)
		fmt_value(buf, n, c->v);
}

/* A lower bound's label: "at least", and why the benchmark stopped. */
static void bound_label(const struct cell *c, char *buf, size_t n)
{
	char v[32];

	fmt_value(v, sizeof(v), c->v);
	snprintf(buf, n, "\xe2\x89\xa5 %s (%s)", v, c->atleast->why);
}

/* Log or zero-based, and the unit: zero-based, unless the values span
 * more than 50x: then a log axis with whole decades, where equal ratios
 * look equal.  Large values in thousands or millions, after the smallest
 * on a log axis. */
static void axis_kind(const struct table *t, struct axis *a)
{
	double vmin = INFINITY, vmax = 0;

	for (int x = 0; x < t->nx; x++)
		for (int s = 0; s < t->ns; s++) {
			const struct cell *c = &t->c[x][s];

			if (c->has && c->v > 0 && c->v < vmin)
				vmin = c->v;
			if (c->has && c->hi > vmax)
				vmax = c->hi;
		}
	a->log = vmin < INFINITY && vmax / vmin > 50;
	a->scale = 1;
	a->scaled = "";
	if ((a->log ? vmin : vmax) >= 1e6)
		a->scale = 1e6, a->scaled = "millions of ";
	else if ((a->log ? vmin : vmax) >= 1e4)
		a->scale = 1e3, a->scaled = "thousands of ";
}

/* Which labels stand upright: a value's when the widest is wider than a
 * bar's slot (its neighbours' labels would run into it), a lower bound's
 * when it is wider than its group. */
static void label_layout(const struct panel *pn, const struct table *t, const struct frame *fr,
			 struct axis *a)
{
	double slot = fr->w / (t->nx * (t->ns + 1)), group = fr->w / t->nx;
	char buf[96];

	a->labels = a->log && pn->style == BARS;
	a->upright = a->bound_upright = 0;
	for (int x = 0; x < t->nx; x++)
		for (int s = 0; s < t->ns; s++) {
			const struct cell *c = &t->c[x][s];

			cell_label(c, a, buf, sizeof(buf));
			a->upright |= chars(buf) * LABEL_CHAR_PX > slot;
			if (c->atleast) {
				bound_label(c, buf, sizeof(buf));
				a->bound_upright |= chars(buf) * LABEL_CHAR_PX > group;
			}
		}
}

/* The room a cell's marks take above its whisker, in pixels. */
static double room_above(const struct panel *pn, const struct cell *c, const struct axis *a)
{
	char buf[96];
	double px = 0;

	cell_label(c, a, buf, sizeof(buf));
	if (*buf)
		px = a->upright ? chars(buf) * LABEL_CHAR_PX + 10 : LABEL_LINE_PX;
	if (c->atleast && pn->style == BARS) {
		bound_label(c, buf, sizeof(buf));
		px = ARROW_PX + (a->bound_upright ? chars(buf) * LABEL_CHAR_PX + 10
				 : LABEL_LINE_PX);
	}
	return px;
}

/* The top of a cell's whisker (or bar), scaled. */
static double cell_top(const struct cell *c, const struct axis *a)
{
	return (c->hi > c->v ? c->hi : c->v) / a->scale;
}

/* A log axis's bottom: below a third of the smallest bar, so that none is
 * left without a visible height, and below every whisker; for lines, below
 * the lowest point and whisker.  A whole decade. */
static double log_bottom(const struct panel *pn, const struct table *t, const struct axis *a)
{
	double lo = INFINITY;

	for (int x = 0; x < t->nx; x++)
		for (int s = 0; s < t->ns; s++) {
			const struct cell *c = &t->c[x][s];
			double v = c->v / a->scale, l = c->lo / a->scale;

			if (!c->has)
				continue;
			if (pn->style == BARS)
				v /= 3;
			if (v > 0 && v < lo)
				lo = v;
			if (l > 0 && l < lo)
				lo = l;
		}
	return decade_below(lo < INFINITY ? lo : 1);
}

/* The axis's ends: every whisker whole, and room above each for what it
 * carries (the fraction of the plot's height it leaves).  A log axis ends
 * at the first whole decade with that room. */
static void axis_range(const struct panel *pn, const struct table *t, const struct frame *fr,
		       struct axis *a)
{
	double hi = 0, need = 0;   /* need: the axis's length, decades if log */

	a->bottom = a->log ? log_bottom(pn, t, a) : 0;
	for (int x = 0; x < t->nx; x++)
		for (int s = 0; s < t->ns; s++) {
			const struct cell *c = &t->c[x][s];
			double h = cell_top(c, a), frac = 1 - room_above(pn, c, a) / fr->h;

			if (!c->has || h <= 0)
				continue;
			if (h > hi)
				hi = h;
			if (frac < 0.2)
				frac = 0.2;
			h = a->log ? log10(h / a->bottom) : h;
			if (h / frac > need)
				need = h / frac;
		}
	if (!a->log) {
		a->top = hi > 0 ? (need > hi * 1.1 ? need * 1.02 : hi * 1.1) : 1;
		return;
	}
	a->top = decade_above(hi > 0 ? hi : 1);
	while (log10(a->top / a->bottom) < need - 1e-6)
		a->top *= 10;
}

/* The panel's data, inline in the script: a datablock named after the
 * figure and the panel.  Per series four columns: the value, its spread
 * (lo, hi) and its label. */
static void write_block(FILE *gp, const char *name, const struct table *t,
			const struct axis *a, int *spread)
{
	char label[64];

	fprintf(gp, "%s << EOD\nx", name);
	for (int s = 0; s < t->ns; s++)
		fprintf(gp, " \"%s\" lo hi label", q(t->slabel[s]));
	fprintf(gp, "\n");
	*spread = 0;
	for (int x = 0; x < t->nx; x++) {
		fprintf(gp, "\"%s\"", q(t->xlabel[x]));
		for (int s = 0; s < t->ns; s++) {
			const struct cell *c = &t->c[x][s];

			if (!c->has) {
				fprintf(gp, " NaN NaN NaN \"\"");
				continue;
			}
			cell_label(c, a, label, sizeof(label));
			fprintf(gp, " %g %g %g \"%s\"", c->v / a->scale, c->lo / a->scale,
				c->hi / a->scale, label);
			*spread |= c->spread;
		}
		fprintf(gp, "\n");
	}
	fprintf(gp, "EOD\n");
}

/* A bar's x: its group's, moved to its place among the group's ns bars
 * (gnuplot's clustered histogram, gap 1). */
static double bar_x(int x, int s, int ns)
{
	return x + (s - (ns - 1) / 2.0) / (ns + 1);
}

/* Each lower bound: an arrow up from its whisker, "≥ value (why)" above
 * it. */
static void write_bounds(FILE *gp, const struct panel *pn, const struct table *t,
			 const struct frame *fr, const struct axis *a)
{
	char buf[96];

	if (pn->style != BARS)
		return;
	for (int x = 0; x < t->nx; x++)
		for (int s = 0; s < t->ns; s++) {
			const struct cell *c = &t->c[x][s];
			double bx = bar_x(x, s, t->ns);
			double top = cell_top(c, a);

			if (!c->atleast)
				continue;
			bound_label(c, buf, sizeof(buf));
			fprintf(gp, "set arrow from first %g, first %g rto graph 0,%.3f head filled "
				"size character 1,20 lw 1.5 lc rgb '#333333' front\n",
				bx, top, ARROW_PX / fr->h);
			fprintf(gp, "set label '%s' at first %g, first %g %s offset graph 0,%.3f "
				"font 'DejaVuSans,8' front\n", q(buf), bx, top,
				a->bound_upright ? "rotate by 90 left" : "center",
				(ARROW_PX + (a->bound_upright ? 4 : LABEL_LINE_PX / 2)) / fr->h);
		}
}

/* The plot command: bars (with whiskers where there is a spread) and
 * their labels, or lines. */
static void write_plot(FILE *gp, const struct panel *pn, const char *name, int ns,
		       const struct axis *a, int spread)
{
	fprintf(gp, "colors = '%s'\n", BENCH_COLORS);
	if (pn->style == LINES) {
		fprintf(gp, "set logscale x\nset offsets graph 0.06,graph 0.06,0,0\n"
			"plot for [k=1:%d] %s using (real(stringcolumn(1))):(column(4*k-2))"
			":(column(4*k-1)):(column(4*k)):xtic(1) with yerrorlines lw 2 pt 7 "
			"lc rgb word(colors, k) title columnheader(4*k-2)\n", ns, name);
		return;
	}
	fprintf(gp, "set style data histograms\nset style histogram %s\n"
		"set style fill solid 0.85 border -1\nset boxwidth 0.9\n",
		spread ? "errorbars gap 1 lw 1.5" : "clustered gap 1");
	if (spread)
		fprintf(gp, "plot for [k=1:%d] %s using (column(4*k-2)):(column(4*k-1))"
			":(column(4*k)):xtic(1) lc rgb word(colors, k) title columnheader(4*k-2)",
			ns, name);
	else
		fprintf(gp, "plot for [k=1:%d] %s using (column(4*k-2)):xtic(1) "
			"lc rgb word(colors, k) title columnheader(4*k-2)", ns, name);
	/* Each label above its bar's whisker (skip: the header is no row). */
	if (a->labels)
		fprintf(gp, ", \\\n  for [k=1:%d] %s skip 1 using ($0 + (k - (%d + 1) / 2.0) / %d.0)"
			":(column(4*k-2) > column(4*k) ? column(4*k-2) : column(4*k))"
			":(stringcolumn(4*k+1)) with labels %s font 'DejaVuSans,8' notitle",
			ns, name, ns, ns + 1,
			a->upright ? "rotate by 90 left offset 0,0.5" : "center offset 0,0.8");
	fprintf(gp, "\n");
}

/* Writes the panel's data and its plot command; 0 if it has no value. */
static int write_panel(FILE *gp, const char *file, int k, const struct panel *pn,
		       const struct frame *fr, const char *caption)
{
	struct table t;
	struct axis a;
	char name[96];
	int spread;

	build_table(pn, &t);
	if (!t.nx || !t.ns)
		return 0;
	axis_kind(&t, &a);
	label_layout(pn, &t, fr, &a);
	axis_range(pn, &t, fr, &a);
	snprintf(name, sizeof(name), "$%s_%c", file, 'a' + k);
	for (char *p = name; *p; p++)
		if (*p == '-')   /* a datablock's name: letters, digits, _ */
			*p = '_';
	fprintf(gp, "reset\n");
	write_block(gp, name, &t, &a, &spread);
	fprintf(gp, "set datafile missing 'NaN'\nset border 3\nset xtics nomirror\n"
		"set ytics nomirror\nset grid ytics lc rgb '#dddddd'\n"
		"set ylabel \"%s%s\\n%s is better%s\" offset -1,0\nset format y '%%.10g'\n",
		a.scaled, q(pn->ylabel), pn->better == LOWER ? "lower" : "higher",
		a.log ? " (log scale)" : "");
	if (pn->xlabel)
		fprintf(gp, "set xlabel '%s'\n", q(pn->xlabel));
	if (caption)   /* the first panel's: at the top of the whole PNG */
		fprintf(gp, "set label 99 \"%s\" at screen 0.5,0.925 center font 'DejaVuSans,9' "
			"tc rgb '#444444'\n", q(caption));
	if (a.log)
		fprintf(gp, "set logscale y\n");
	fprintf(gp, "set yrange [%g:%g]\n", a.bottom, a.top);
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
	write_bounds(gp, pn, &t, fr, &a);
	write_plot(gp, pn, name, t.ns, &a, spread);
	return 1;
}

/* The CDF of figure 3's idle synchronize latency, inline: its datablock,
 * and the number of peers in it (none: no datablock). */
static int write_cdf_data(FILE *gp)
{
	char *buf = NULL, *line, *save;
	size_t len = 0;
	int cdfs, blocks = 0;
	FILE *mem = open_memstream(&buf, &len);

	if (!mem)
		return 0;
	cdfs = gp_latency_cdf(mem);
	fclose(mem);
	if (cdfs > 0) {
		fprintf(gp, "$fig03_cdf << EOD\n");
		/* Each block's header names its peer: the reader's name instead. */
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char peer[64];

			if (line[0] == '"' && sscanf(line, "\"%63[^\"]\"", peer) == 1)
				fprintf(gp, "%s\"%s\" 0\n", blocks++ ? "\n\n" : "",
					q(peer_label(peer)));
			else
				fprintf(gp, "%s\n", line);
		}
		fprintf(gp, "EOD\n");
	}
	free(buf);
	return cdfs;
}

/* Its panel, the second of figure 3. */
static void write_cdf_panel(FILE *gp, int cdfs)
{
	fprintf(gp, "reset\nset border 3\nset xtics nomirror\nset ytics nomirror\n"
		"set grid xtics ytics lc rgb '#dddddd'\n"
		"set xlabel \"us per synchronize, idle readers (log scale)\\nleft is better\"\n"
		"set logscale x\nset format x '%%g'\nset ylabel 'fraction of calls at most x'\n"
		"set yrange [0:1]\nset key outside below center horizontal maxcols 3 width -2\n"
		"colors = '%s'\n"
		"plot for [i=0:%d] $fig03_cdf index i using 1:2 with linespoints "
		"lw 2 lc rgb word(colors, i + 1) pt i + 1 pn 8 title columnheader(1)\n",
		BENCH_COLORS, cdfs - 1);
}

/* What a figure's panels with a value hold: how many, whether one slants
 * its x labels, what its caption names (bars or points, whiskers), and
 * the width a panel needs for its bars' labels (pixels). */
struct contents { int n, slanted, bars, lines, spread; double label_w; };

/* The width a panel needs so that its bars' upright labels stand side by
 * side: a slot of MIN_SLOT_PX for each bar and each group's gap; 0 where
 * its bars carry no label. */
static double labels_width(const struct panel *pn, const struct table *t)
{
	struct axis a;

	axis_kind(t, &a);
	return a.log && pn->style == BARS ? t->nx * (t->ns + 1) * MIN_SLOT_PX : 0;
}

static void figure_contents(const struct plot_figure *pf, struct contents *fc)
{
	memset(fc, 0, sizeof(*fc));
	for (int k = 0; k < MAX_PANELS && pf->p[k].fig; k++) {
		struct table t;

		double lw;

		build_table(&pf->p[k], &t);
		if (!t.nx || !t.ns)
			continue;
		fc->n++;
		fc->slanted |= rotated(&pf->p[k], &t);
		fc->bars |= pf->p[k].style == BARS;
		fc->lines |= pf->p[k].style == LINES;
		lw = labels_width(&pf->p[k], &t);
		if (lw > fc->label_w)
			fc->label_w = lw;
		for (int x = 0; x < t.nx; x++)
			for (int s = 0; s < t.ns; s++)
				fc->spread |= t.c[x][s].spread;
	}
}

/* One figure's PNG: a multiplot of its panels, the title above and the
 * machine and date below it, with what the marks are: "bars" only where
 * there are bars. */
static int write_figure(FILE *gp, const char *dir, const struct plot_figure *pf,
			const char *head)
{
	struct contents fc;
	struct frame fr;
	char caption[640];
	int drawn = 0, width, cdfs;
	double left, bottom;

	figure_contents(pf, &fc);
	if (!fc.n)
		return 0;
	cdfs = pf->n == 3 ? write_cdf_data(gp) : 0;   /* figure 3's second panel */
	snprintf(caption, sizeof(caption), "%s; %s: medians%s", head,
		 fc.bars && fc.lines ? "bars and points" : fc.bars ? "bars" : "points",
		 fc.spread ? ", whiskers: min-max of every repetition" : "");
	fc.n += cdfs > 0;
	width = fc.n > 1 ? 560 * fc.n : 900;
	/* Wider, where a panel's labels would not stand side by side: the
	 * width whose panels are label_w wide (the layout below, solved). */
	if (fc.label_w * fc.n + 120 > (0.98 - 0.09 * (fc.n - 1)) * width)
		width = (int)((fc.label_w * fc.n + 120) / (0.98 - 0.09 * (fc.n - 1))) + 1;
	left = 120.0 / width;
	bottom = fc.slanted ? 0.27 : 0.17;
	fr.w = ((0.98 - left) - 0.09 * (fc.n - 1)) / fc.n * width;
	fr.h = (0.84 - bottom) * 640;
	fprintf(gp, "set terminal png size %d,640 font 'DejaVuSans,10' noenhanced\n"
		"set output '%s/%s.png'\n"
		"set multiplot layout 1,%d title '%s' font 'DejaVuSans,13' margins %.3f,0.98,%.2f,0.84 "
		"spacing 0.09,0\n", width, dir, pf->file, fc.n, q(pf->title), left, bottom);
	for (int k = 0; k < MAX_PANELS && pf->p[k].fig; k++) {
		if (write_panel(gp, pf->file, k, &pf->p[k], &fr, drawn ? NULL : caption))
			drawn++;
	}
	if (cdfs)
		write_cdf_panel(gp, cdfs);
	fprintf(gp, "unset multiplot\nset output\n");
	return drawn > 0;
}

/* Removes what an older srcu-bench left beside figure pf's PNG: its
 * panels' .dat files (their data is inline in plots.gp now). */
static void remove_old_data(const char *dir, const struct plot_figure *pf)
{
	char path[4200];

	for (int k = 0; k < MAX_PANELS; k++) {
		snprintf(path, sizeof(path), "%s/%s-%c.dat", dir, pf->file, 'a' + k);
		unlink(path);
	}
	if (pf->n == 3) {
		snprintf(path, sizeof(path), "%s/%s-cdf.dat", dir, pf->file);
		unlink(path);
	}
}

int write_plots(const char *dir)
{
	char path[4200], head[512], date[32];
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
	snprintf(head, sizeof(head), "%s\\n%s", machine_line(), date);
	/* plots.gp stays: it redraws the PNGs alone, its data inline. */
	snprintf(path, sizeof(path), "%s/plots.gp", dir);
	if (!(gp = fopen(path, "w")))
		return 0;
	for (size_t i = 0; i < NPLOTS; i++) {
		const struct plot_figure *pf = &plot_figures[i];

		snprintf(path, sizeof(path), "%s/%s.png", dir, pf->file);
		unlink(path);   /* an old run's, which this one did not redo */
		remove_old_data(dir, pf);
		if (figure_state(pf->n) != FIGURE_RAN)
			continue;
		charts += write_figure(gp, dir, pf, head);
	}
	fclose(gp);
	snprintf(path, sizeof(path), "gnuplot '%s/plots.gp'", dir);
	if (charts && system(path) != 0)
		return 0;
	printf("plots: %d PNG%s in %s (figNN-*.png, one per figure that ran)\n", charts,
	       charts == 1 ? "" : "s", dir);
	return charts;
}
