/*
 * srcu-bench: libsrcu side by side with what users would pick instead,
 * in one process and one run, so that the ratios mean something even on
 * a noisy machine.  Each figure is the median of several repetitions
 * with its spread (min-max).
 *
 *   srcu-bench [--quick] [--json FILE] [--csv FILE] [--plot DIR] [--no-callgrind]
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
 * and a PTHREAD_PROCESS_SHARED rwlock, with two processes.  Every
 * figure is also a row of --json/--csv; --plot draws a PNG per figure and
 * unit (min-max error bars) and the latency CDF, with gnuplot.
 * The last line is a greppable SUMMARY: a value, or "failed" or
 * "not-run" for a figure that failed or did not run ("n/a": a peer not
 * built), then failed= and not_run=, lists of figures or "none".  A
 * failed figure also gets a FAILED line, and the run exits 1.
 * SRCU_BENCH_FAIL=LIST (figure numbers, as --only) makes those figures
 * fail at their start: for the test of that reporting (bench_check).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "peers.h"
#include "bench_call.h"
#include "bench_machine.h"
#ifdef HAVE_SRCU_URCU
#include "bench_lfht.h"
#endif
#include "bench_results.h"
#include "bench_shared.h"
#include "srcu.h"

/* Every peer, in the order of the tables. */
static const struct peer *const all_peers[] = {
	&peer_srcu, &peer_srcu_exp,
#ifdef HAVE_SRCU_URCU
	&peer_srcu_urcu,
#endif
#ifdef HAVE_URCU
	&peer_urcu_memb, &peer_urcu_mb, &peer_urcu_qsbr, &peer_urcu_bp,
#endif
#ifdef HAVE_CK
	&peer_ck_epoch,
#endif
	&peer_rwlock, &peer_naive, &peer_floor,
};
#define NALL (sizeof(all_peers) / sizeof(all_peers[0]))
#define FOR_PEERS(p) \
	for (const struct peer *const *p##_it = all_peers, *p; \
	     p##_it < all_peers + NALL && ((p = *p##_it), 1); p##_it++)

static int quick;
static void missing_peer_rows(void);
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
static int ncpu;
static const char *self_path;


static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sorts v; the value at quantile q. */
static double quantile(double *v, int n, double q)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[(int)(q * (n - 1) + 0.5)];
}

struct stat3 { double med, lo, hi; };

static struct stat3 summarize(double *v, int n)
{
	struct stat3 s;

	s.med = quantile(v, n, 0.5);
	s.lo = v[0];
	s.hi = v[n - 1];
	return s;
}

static int flag_get(int *f) { return __atomic_load_n(f, __ATOMIC_ACQUIRE); }
static void flag_put(int *f, int v) { __atomic_store_n(f, v, __ATOMIC_RELEASE); }

/* ---- figure 1 and 2: read-side pair cost ---- */

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

static struct stat3 read_cost_stats(const struct peer *p, int nthreads, int with_updater)
{
	int reps = quick ? 3 : 7;
	long iters = quick ? 2000000 : 10000000;
	struct updater_job u = { p, 0, 0 };
	pthread_t ut;
	double v[16];

	if (with_updater)
		pthread_create(&ut, NULL, sync_loop, &u);
	for (int r = 0; r < reps; r++)
		v[r] = read_cost(p, nthreads, iters);
	if (with_updater) {
		flag_put(&u.stop, 1);
		pthread_join(ut, NULL);
	}
	return summarize(v, reps);
}

/* libsrcu's pair linked from libsrcu.a, measured by srcu-bench-static. */
static double static_pair_ns(void)
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

static void figure_read_cost(void)
{
	double base = 0, st;

	printf("\n(1) read-side pair cost, empty section (ns; median [min-max]; ratio to libsrcu;"
	       " instructions per pair)\n");
	printf("%-16s %-28s %-28s %s\n", "peer", "1 thread", "all cores", "instr");
	FOR_PEERS(p) {
		struct stat3 one, all;
		double instr;

		if (p == &peer_srcu_exp)
			continue;   /* the same read side as libsrcu */
		one = read_cost_stats(p, 1, 0);
		all = read_cost_stats(p, ncpu, 0);
		if (p == &peer_srcu)
			base = one.med;
		instr = lookup("instructions", p->name, "per_pair");
		printf("%-16s %6.2f [%5.2f-%6.2f] %5.2fx  %6.2f [%5.2f-%6.2f] %5.2fx  ",
		       p->name, one.med, one.lo, one.hi, one.med / base,
		       all.med, all.lo, all.hi, all.med / base);
		if (instr > 0)
			printf("%5.1f\n", instr);
		else
			printf("    -\n");
		record("read_pair", p->name, "ns_1thread", one.med, "ns");
		record("read_pair", p->name, "ns_1thread_min", one.lo, "ns");
		record("read_pair", p->name, "ns_1thread_max", one.hi, "ns");
		record("read_pair", p->name, "ns_allcores", all.med, "ns");
	}
	st = static_pair_ns();
	if (st > 0) {
		printf("%-16s %6.2f                 %5.2fx  (1 thread, linked from libsrcu.a)\n",
		       "libsrcu (.a)", st, st / base);
		record("read_pair", "libsrcu-static", "ns_1thread", st, "ns");
	}
	missing_peer_rows();
}

static void figure_read_cost_under_updates(void)
{
	printf("\n(2) read-side pair cost, 1 reader, while another thread runs grace periods back to back\n");
	printf("%-16s %-28s %s\n", "peer", "ns", "vs idle");
	FOR_PEERS(p) {
		struct stat3 busy;
		double idle = lookup("read_pair", p->name, "ns_1thread");

		if (!p->synchronize || p == &peer_srcu_exp || !idle)
			continue;
		busy = read_cost_stats(p, 1, 1);
		printf("%-16s %6.2f [%5.2f-%6.2f]  %5.2fx\n", p->name,
		       busy.med, busy.lo, busy.hi, busy.med / idle);
		record("read_pair_under_updates", p->name, "ns", busy.med, "ns");
		record("read_pair_under_updates", p->name, "vs_idle", busy.med / idle, "x");
	}
}

/* ---- figure 3: grace-period latency ---- */

struct reader_job { const struct peer *p; int stop, busy, ready; };

static void *background_reader(void *arg)
{
	struct reader_job *r = arg;

	r->p->thread_online();
	r->p->reads(1);   /* a reader that has read: libsrcu now knows the thread */
	flag_put(&r->ready, 1);
	while (!flag_get(&r->stop)) {
		if (r->busy) {
			r->p->reads(1000);
			continue;
		}
		if (r->p->blocking_begin)
			r->p->blocking_begin();
		usleep(1000);
		if (r->p->blocking_end)
			r->p->blocking_end();
	}
	r->p->thread_offline();
	return NULL;
}

/* Samples of the last idle run per peer, for the --plot CDF. */
#define MAX_SAMPLES 2000
static double idle_samples[NALL][MAX_SAMPLES];
static int idle_nsamples[NALL];

static int peer_index(const struct peer *p)
{
	for (size_t i = 0; i < NALL; i++)
		if (all_peers[i] == p)
			return (int)i;
	return 0;
}

/* p50 and p99 of synchronize, within a time budget (urcu-bp polls). */
static void sync_latency(const struct peer *p, int busy, double *p50, double *p99)
{
	int n = quick ? 300 : MAX_SAMPLES, k;
	double budget = quick ? 0.3 : 1.5, start;
	double *v = malloc(sizeof(double) * (size_t)n);
	struct reader_job r = { p, 0, busy, 0 };
	pthread_t t;

	pthread_create(&t, NULL, background_reader, &r);
	while (!flag_get(&r.ready))
		usleep(100);
	p->thread_online();
	start = clock_now_s();
	for (k = 0; k < n && (k < 20 || clock_now_s() - start < budget); k++) {
		double t0 = clock_now_s();
		p->synchronize();
		v[k] = (clock_now_s() - t0) * 1e6;
	}
	p->thread_offline();
	flag_put(&r.stop, 1);
	pthread_join(t, NULL);
	*p50 = quantile(v, k, 0.5);
	*p99 = quantile(v, k, 0.99);
	if (!busy) {
		memcpy(idle_samples[peer_index(p)], v, sizeof(double) * (size_t)k);
		idle_nsamples[peer_index(p)] = k;
	}
	free(v);
}

static void figure_gp_latency(void)
{
	printf("\n(3) grace-period latency (us), 1 reader thread idle or looping\n");
	printf("%-16s %10s %10s %10s %10s\n", "peer", "idle p50", "idle p99", "busy p50", "busy p99");
	FOR_PEERS(p) {
		double a50, a99, b50, b99;

		if (!p->synchronize)
			continue;
		sync_latency(p, 0, &a50, &a99);
		sync_latency(p, 1, &b50, &b99);
		printf("%-16s %10.2f %10.2f %10.2f %10.2f\n", p->name, a50, a99, b50, b99);
		record("gp_latency", p->name, "idle_p50", a50, "us");
		record("gp_latency", p->name, "idle_p99", a99, "us");
		record("gp_latency", p->name, "busy_p50", b50, "us");
		record("gp_latency", p->name, "busy_p99", b99, "us");
	}
}

/* ---- figure 4: update throughput ---- */

static struct srcu_struct sep_domains[4];
static int use_separate;

struct tput_job { const struct peer *p; int id; int *stop; long calls; };

static void *tput_worker(void *arg)
{
	struct tput_job *j = arg;

	while (!flag_get(j->stop)) {
		if (use_separate)
			synchronize_srcu(&sep_domains[j->id]);
		else
			j->p->synchronize();
		j->calls++;
	}
	return NULL;
}

/* Calls per GP of the last sync_throughput() run on libsrcu's domain(s). */
static double last_calls_per_gp;

/* Grace periods completed so far on the domain(s) the updaters use. */
static unsigned long gps_now(void)
{
	unsigned long gps = 0;

	if (!use_separate)
		return srcu_peer_gps();
	for (int i = 0; i < 4; i++)
		gps += srcu_batches_completed(&sep_domains[i]);
	return gps;
}

/* An idle reader of one separate domain: one section, then sleeps. */
struct sep_reader { int id; int stop, ready; };

static void *sep_reader_main(void *arg)
{
	struct sep_reader *r = arg;

	srcu_read_unlock(&sep_domains[r->id], srcu_read_lock(&sep_domains[r->id]));
	flag_put(&r->ready, 1);
	while (!flag_get(&r->stop))
		usleep(1000);
	return NULL;
}

static double sync_throughput(const struct peer *p, int nupd)
{
	double secs = quick ? 0.3 : 1.0;
	struct tput_job j[4];
	pthread_t t[4];
	int stop = 0;
	long total = 0;
	unsigned long gps = gps_now();

	for (int i = 0; i < nupd; i++) {
		j[i] = (struct tput_job){ p, i, &stop, 0 };
		pthread_create(&t[i], NULL, tput_worker, &j[i]);
	}
	usleep((useconds_t)(secs * 1e6));
	flag_put(&stop, 1);
	for (int i = 0; i < nupd; i++) {
		pthread_join(t[i], NULL);
		total += j[i].calls;
	}
	gps = gps_now() - gps;
	last_calls_per_gp = gps ? (double)total / (double)gps : 0;
	return (double)total / secs;
}

/* A row of figure 4, with one idle reader thread running unless lone;
 * with separate domains, one idle reader per domain. */
static void throughput_row(const struct peer *p, const char *label, int lone)
{
	struct reader_job r = { p, 0, 0, 0 };
	struct sep_reader sr[4];
	pthread_t t, st[4];
	static const int n[] = { 1, 2, 4 };
	static const char *const metric[] = { "calls_per_s_1", "calls_per_s_2", "calls_per_s_4" };
	double base = 0, shared[3] = { 0, 0, 0 };
	int is_srcu = p == &peer_srcu || p == &peer_srcu_exp || lone;

	if (!lone && !use_separate) {
		pthread_create(&t, NULL, background_reader, &r);
		while (!flag_get(&r.ready))
			usleep(100);
	}
	for (int i = 0; use_separate && i < 4; i++) {
		sr[i] = (struct sep_reader){ i, 0, 0 };
		pthread_create(&st[i], NULL, sep_reader_main, &sr[i]);
		while (!flag_get(&sr[i].ready))
			usleep(100);
	}
	printf("%-22s", label);
	for (int k = 0; k < 3; k++) {
		double r = sync_throughput(p, n[k]);

		if (k == 0)
			base = r;
		shared[k] = last_calls_per_gp;
		printf(" %9.0f %5.2fx", r, r / base);
		record("throughput", label, metric[k], r, "calls/s");
	}
	if (is_srcu) {   /* how many calls each grace period served */
		printf("   calls/GP %.2f %.2f %.2f", shared[0], shared[1], shared[2]);
		record("throughput", label, "calls_per_gp_1", shared[0], "calls");
		record("throughput", label, "calls_per_gp_2", shared[1], "calls");
		record("throughput", label, "calls_per_gp_4", shared[2], "calls");
	}
	printf("\n");
	if (!lone && !use_separate) {
		flag_put(&r.stop, 1);
		pthread_join(t, NULL);
	}
	for (int i = 0; use_separate && i < 4; i++) {
		flag_put(&sr[i].stop, 1);
		pthread_join(st[i], NULL);
	}
}

static void figure_throughput(void)
{
	printf("\n(4) synchronize calls/s (ratio to 1 updater), one reader thread idle"
	       " between its sections;\n    own-domains: updater i on domain i, each"
	       " domain with an idle reader of its own\n");
	printf("%-22s %16s %16s %16s\n", "peer", "1 updater", "2 updaters", "4 updaters");
	FOR_PEERS(p)
		if (p->synchronize)
			throughput_row(p, p->name, 0);
	use_separate = 1;
	throughput_row(&peer_srcu, "libsrcu-own-domains", 0);
	use_separate = 0;
	/* No thread other than the updaters has ever read: local fences only
	 * (doc/design.md, "The lone updater").  Valid only because srcu-bench's
	 * main thread never runs a read-side section itself. */
	throughput_row(&peer_srcu, "libsrcu-no-readers", 1);
}

/* ---- figure 5: wake-up latency ---- */

struct holder_job { const struct peer *p; int inside; double unlock_at; long hold_us; };

static void *hold_section(void *arg)
{
	struct holder_job *h = arg;
	int tok;

	h->p->thread_online();
	tok = h->p->lock();
	flag_put(&h->inside, 1);
	usleep((useconds_t)h->hold_us);
	h->unlock_at = clock_now_s();
	h->p->unlock(tok);
	h->p->thread_offline();
	return NULL;
}

static void figure_wakeup(void)
{
	int n = quick ? 10 : 40;

	printf("\n(5) wake-up latency (us): reader unlocks after 10 ms -> synchronize returns\n");
	printf("%-16s %10s %10s\n", "peer", "p50", "max");
	FOR_PEERS(p) {
		double v[64];

		if (!p->synchronize || !p->sleepable)
			continue;
		for (int k = 0; k < n; k++) {
			struct holder_job h = { p, 0, 0, 10000 };
			pthread_t t;

			pthread_create(&t, NULL, hold_section, &h);
			while (!flag_get(&h.inside))
				usleep(50);
			usleep(1000);   /* the synchronize starts with the reader inside */
			p->synchronize();
			v[k] = (clock_now_s() - h.unlock_at) * 1e6;
			pthread_join(t, NULL);
		}
		double p50 = quantile(v, n, 0.5);
		printf("%-16s %10.1f %10.1f\n", p->name, p50, v[n - 1]);
		record("wakeup", p->name, "p50", p50, "us");
		record("wakeup", p->name, "max", v[n - 1], "us");
	}
	printf("(urcu-qsbr is left out: its readers may not sleep)\n");
}

/* ---- figure 6: isolation ---- */

static struct srcu_struct dom_a, dom_b;

static int srcu_b_lock(void) { return srcu_read_lock(&dom_b); }
static void srcu_b_unlock(int idx) { srcu_read_unlock(&dom_b, idx); }
static void nothing6(void) { }

/* A reader of "domain B" sleeps hold_us inside; how long does an updater
 * of "domain A" wait?  libsrcu has two domains; the others have one. */
static void figure_isolation(void)
{
	static const struct peer srcu_b = {
		"libsrcu", "", 1, nothing6, nothing6, NULL, srcu_b_lock, srcu_b_unlock,
		NULL, NULL, NULL,
	};
	long hold_us = quick ? 300000 : 1000000;

	printf("\n(6) isolation: synchronize on domain A while a reader of domain B sleeps %.1f s"
	       " inside (ms)\n", hold_us / 1e6);
	printf("%-16s %12s  %s\n", "peer", "first call", "");
	FOR_PEERS(p) {
		struct holder_job h = { p == &peer_srcu ? &srcu_b : p, 0, 0, hold_us };
		pthread_t t;
		double t0, ms;

		if (!p->synchronize || !p->sleepable || p == &peer_srcu_exp)
			continue;
		pthread_create(&t, NULL, hold_section, &h);
		while (!flag_get(&h.inside))
			usleep(50);
		t0 = clock_now_s();
		if (p == &peer_srcu)
			synchronize_srcu(&dom_a);
		else
			p->synchronize();
		ms = (clock_now_s() - t0) * 1e3;
		pthread_join(t, NULL);
		printf("%-16s %12.3f  %s\n", p->name, ms,
		       p == &peer_srcu ? "(A and B are separate domains)"
				       : "(one domain for all: waits for B's reader)");
		record("isolation", p->name, "sync_ms", ms, "ms");
	}
}

/* ---- figure 7: scaling ---- */

/* other: the thread reads another libsrcu domain, never p's. */
struct idle_thread { const struct peer *p; int other; pthread_barrier_t *used, *done; };

static void *use_then_wait(void *arg)
{
	struct idle_thread *it = arg;

	it->p->thread_online();
	if (it->other)                   /* this thread has used another domain */
		srcu_read_unlock(&dom_b, srcu_read_lock(&dom_b));
	else
		it->p->reads(1);         /* this thread has used the domain */
	pthread_barrier_wait(it->used);
	pthread_barrier_wait(it->done);  /* stay alive, outside any section */
	it->p->thread_offline();
	return NULL;
}

/* Grace-period p50 with nthreads idle threads that have used the domain. */
static double gp_with_threads(const struct peer *p, int nthreads, int other)
{
	pthread_barrier_t used, done;
	pthread_t *t = calloc((size_t)nthreads, sizeof(*t));
	struct idle_thread it = { p, other, &used, &done };
	pthread_attr_t attr;
	double v[200];
	int k, n = quick ? 50 : 200;

	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	pthread_barrier_init(&used, NULL, (unsigned int)nthreads + 1);
	pthread_barrier_init(&done, NULL, (unsigned int)nthreads + 1);
	for (k = 0; k < nthreads; k++)
		pthread_create(&t[k], &attr, use_then_wait, &it);
	pthread_barrier_wait(&used);
	p->thread_online();
	for (k = 0; k < n; k++) {
		double t0 = clock_now_s();
		p->synchronize();
		v[k] = (clock_now_s() - t0) * 1e6;
	}
	p->thread_offline();
	pthread_barrier_wait(&done);
	for (k = 0; k < nthreads; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&used);
	pthread_barrier_destroy(&done);
	pthread_attr_destroy(&attr);
	free(t);
	return quantile(v, n, 0.5);
}

static long rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f && fscanf(f, "%ld %ld", &pages, &rss) != 2)
		rss = 0;
	if (f)
		fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

/* init, first read, synchronize and cleanup of n domains at once. */
static void domains_row(int n)
{
	struct srcu_struct *d = calloc((size_t)n, sizeof(*d));
	double t0, init_ns, clean_ns, sync_us;
	long rss0, rss1;
	int i, idx;

	t0 = clock_now_s();
	for (i = 0; i < n; i++)
		init_srcu_struct(&d[i]);
	init_ns = (clock_now_s() - t0) * 1e9 / n;
	rss0 = rss_kib();   /* the domains themselves are counted as 216 B each */
	for (i = 0; i < n; i++) {               /* this thread reads each once */
		idx = srcu_read_lock(&d[i]);
		srcu_read_unlock(&d[i], idx);
	}
	rss1 = rss_kib();
	t0 = clock_now_s();
	for (i = 0; i < 20; i++)
		synchronize_srcu_expedited(&d[n - 1]);
	sync_us = (clock_now_s() - t0) * 1e6 / 20;
	t0 = clock_now_s();
	for (i = 0; i < n; i++)
		cleanup_srcu_struct(&d[i]);
	clean_ns = (clock_now_s() - t0) * 1e9 / n;
	free(d);
	printf("%8d domains: init %7.0f ns, cleanup %7.0f ns each; synchronize_exp %7.2f us;"
	       " memory %5zu B/domain + %4.1f B/(thread, domain) touched (RSS +%ld KiB)\n",
	       n, init_ns, clean_ns, sync_us, sizeof(struct srcu_struct),
	       (double)(rss1 - rss0) * 1024 / n, rss1 - rss0);
	record("scaling_domains", "libsrcu", n == 1 ? "init_ns_1" : n == 100 ? "init_ns_100" :
	       n == 10000 ? "init_ns_10000" : "init_ns", init_ns, "ns");
	record("scaling_domains", "libsrcu", n == 1 ? "sync_exp_us_1" : n == 100 ? "sync_exp_us_100" :
	       n == 10000 ? "sync_exp_us_10000" : "sync_exp_us", sync_us, "us");
}

static void figure_scaling(void)
{
	static const int threads[] = { 1, 10, 100, 1000 };
	static const char *const tmetric[] = { "p50_us_1", "p50_us_10", "p50_us_100", "p50_us_1000" };
	int nthr = quick ? 3 : 4;

	printf("\n(7a) grace-period p50 (us) with N idle threads that have used the domain\n");
	printf("%-16s", "peer");
	for (int k = 0; k < nthr; k++)
		printf(" %9d", threads[k]);
	printf("\n");
	FOR_PEERS(p) {
		if (p != &peer_srcu && p != &peer_srcu_exp
#ifdef HAVE_URCU
		    && p != &peer_urcu_memb
#endif
		    )
			continue;
		printf("%-16s", p->name);
		for (int k = 0; k < nthr; k++) {
			double us = gp_with_threads(p, threads[k], 0);

			printf(" %9.2f", us);
			record("scaling_threads", p->name, tmetric[k], us, "us");
		}
		printf("\n");
	}
	/* The same threads, but they read another domain: a domain's scan
	 * costs what its own readers cost. */
	printf("%-16s", "libsrcu-other");
	for (int k = 0; k < nthr; k++) {
		double us = gp_with_threads(&peer_srcu, threads[k], 1);

		printf(" %9.2f", us);
		record("scaling_threads", "libsrcu-other", tmetric[k], us, "us");
	}
	printf("   (the threads read another domain)\n");
	printf("\n(7b) libsrcu with N live domains\n");
	domains_row(1);
	domains_row(100);
	if (!quick)
		domains_row(1000);
	domains_row(10000);
}

/* ---- instructions per pair (callgrind) ---- */

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif

#define INSTR_PAIRS 100000

/* In the child, under callgrind: collect only the peer's INSTR_PAIRS pairs
 * (figure 11's rows: "fig11:" and the row's name). */
static int instr_child(const char *name)
{
	if (!strncmp(name, "fig11:", 6)) {
		if (shared_instr_prepare(name + 6) != 0)
			return 2;
#ifdef HAVE_CALLGRIND
		CALLGRIND_TOGGLE_COLLECT;
		shared_instr_reads(INSTR_PAIRS);
		CALLGRIND_TOGGLE_COLLECT;
#endif
		return 0;
	}
	FOR_PEERS(p) {
		if (strcmp(p->name, name))
			continue;
		p->thread_online();
		p->reads(1000);
#ifdef HAVE_CALLGRIND
		CALLGRIND_TOGGLE_COLLECT;
		p->reads(INSTR_PAIRS);
		CALLGRIND_TOGGLE_COLLECT;
#endif
		p->thread_offline();
		return 0;
	}
	return 2;
}

/* Can we count instructions?  Says why not, once. */
static int callgrind_usable(void)
{
	static int said;
	int ok = 1;

#ifndef HAVE_CALLGRIND
	if (!said)
		printf("note: instructions per pair need valgrind (apt-get install valgrind) at build time\n");
	ok = 0;
#else
	if (system("valgrind --version >/dev/null 2>&1") != 0) {
		if (!said)
			printf("note: instructions per pair skipped: install valgrind (apt-get install valgrind)\n");
		ok = 0;
	}
#endif
	said = 1;
	return ok;
}

/* Run ourselves under callgrind with --instr-child name: Ir per pair, or
 * 0 if that failed. */
static double callgrind_per_pair(const char *name)
{
	char out[] = "/tmp/srcu-bench-cg-XXXXXX", cmd[8600], line[512];
	int fd = mkstemp(out);
	double ir = 0;
	FILE *f;

	if (fd < 0)
		return 0;
	close(fd);
	snprintf(cmd, sizeof(cmd), "valgrind --tool=callgrind --collect-atstart=no "
		 "--callgrind-out-file=%s '%s' --instr-child '%s' >/dev/null 2>&1",
		 out, self_path, name);
	if (system(cmd) == 0 && (f = fopen(out, "r"))) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "totals:", 7) || !strncmp(line, "summary:", 8))
				ir = atof(strchr(line, ':') + 1);
		fclose(f);
	}
	unlink(out);
	return ir / INSTR_PAIRS;
}

/* Run ourselves under callgrind for each peer; record Ir / pair. */
static void measure_instructions(void)
{
	if (!callgrind_usable())
		return;
	FOR_PEERS(p) {
		double ir;

		if (p == &peer_srcu_exp)
			continue;
		ir = callgrind_per_pair(p->name);
		if (ir > 0)
			record("instructions", p->name, "per_pair", ir, "instructions");
	}
}

/* The same for figure 11's rows (its own read loops). */
static void measure_shared_instructions(void)
{
	char name[64];

	if (!callgrind_usable())
		return;
	for (int r = 0; r < SHARED_NROWS; r++) {
		double ir;

		snprintf(name, sizeof(name), "fig11:%s", shared_row_name[r]);
		ir = callgrind_per_pair(name);
		if (ir > 0)
			record("shared", shared_row_name[r], "instr_per_pair", ir, "instructions");
	}
}

/* ---- output files ---- */

/* The idle grace-period latency CDF per peer (each its own colour and
 * dash pattern), then one chart per figure (bench_results.c). */
static void write_plots(const char *dir)
{
	char path[4200], cmd[8600];
	int charts, cdfs = 0;
	FILE *f, *gp;

	if (system("gnuplot --version >/dev/null 2>&1") != 0) {
		printf("note: --plot needs gnuplot (apt-get install gnuplot-nox)\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", dir);
	if (system(cmd) != 0)
		return;
	snprintf(path, sizeof(path), "%s/gp_latency_cdf.dat", dir);
	if (!(f = fopen(path, "w")))
		return;
	for (size_t p = 0; p < NALL; p++) {
		int n = idle_nsamples[p];

		if (!n)
			continue;   /* figure 3 not run, or not for this peer */
		fprintf(f, "\"%s\" 0\n", all_peers[p]->name);   /* columnheader(1) */
		qsort(idle_samples[p], (size_t)n, sizeof(double), cmp_double);
		for (int k = 0; k < n; k++)
			fprintf(f, "%g %g\n", idle_samples[p][k], (double)(k + 1) / n);
		fprintf(f, "\n\n");
		cdfs++;
	}
	fclose(f);
	snprintf(path, sizeof(path), "%s/plots.gp", dir);
	if (!(gp = fopen(path, "w")))
		return;
	if (cdfs)
		fprintf(gp, "set terminal png size 1100,600 noenhanced\n"
			"set output '%s/gp_latency_cdf.png'\n"
			"set title 'synchronize latency, idle reader (CDF)'\nset xlabel 'us'\n"
			"set logscale x\nset ylabel 'fraction of calls'\nset key bottom right\n"
			"colors = '%s'\n"
			"plot for [i=0:%d] '%s/gp_latency_cdf.dat' index i using 1:2 with linespoints "
			"lw 2 lc rgb word(colors, i + 1) pt i + 1 pn 8 title columnheader(1)\n",
			dir, BENCH_COLORS, cdfs - 1, dir);
	charts = (cdfs > 0) + write_figure_plots(dir, gp);
	fclose(gp);
	snprintf(cmd, sizeof(cmd), "gnuplot '%s/plots.gp'", dir);
	if (system(cmd) == 0)
		printf("plots: %d charts in %s (one per figure and unit, and the latency CDF)\n",
		       charts, dir);
}

/* ---- machine ---- */

/* ---- figure 8: deferred freeing ---- */

static void call_row(const char *name, const struct call_figures *f)
{
	printf("%-12s %12.0f %12.0f %14.0f%s %14.1f\n", name, f->rate, f->peak_objs,
	       f->asleep_peak_objs, f->asleep_capped ? "+" : " ",
	       f->asleep_peak_objs * CALL_OBJ_BYTES / 1e6);
	record("call", name, "callbacks_per_s", f->rate, "1/s");
	record("call", name, "asleep_peak_objects", f->asleep_peak_objs, "objects");
}

static void figure_call(void)
{
	double secs = quick ? 1.0 : 5.0;
	struct call_figures s = { 0 };

	printf("\n(8) deferred free of %d-byte objects: callbacks/s with no reader in the way;"
	       " objects waiting at most, then and while a reader sleeps %.0f s inside"
	       " (+: the producer stopped at %ld)\n", CALL_OBJ_BYTES, secs, CALL_CAP);
	printf("%-12s %12s %12s %15s %14s\n", "peer", "callbacks/s", "peak", "peak, asleep",
	       "MB, asleep");
	bench_call_srcu(secs, &s);
	call_row("call_srcu", &s);
#ifdef HAVE_URCU
	{
		struct call_figures r = { 0 };

		bench_call_rcu(secs, &r);
		call_row("call_rcu", &r);
	}
#endif
	printf("polled API (ns per call): get_state %.1f, poll_state %.1f, start_poll %.1f\n",
	       s.ns_get_state, s.ns_poll, s.ns_start_poll);
	record("poll", "libsrcu", "get_state_ns", s.ns_get_state, "ns");
	record("poll", "libsrcu", "poll_state_ns", s.ns_poll, "ns");
	record("poll", "libsrcu", "start_poll_ns", s.ns_start_poll, "ns");
}

static void print_machine(void)
{
	char line[256], model[256] = "unknown";
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0) {
			char *c = strchr(line, ':');
			snprintf(model, sizeof(model), "%s", c ? c + 2 : line);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	uname(&u);
	printf("srcu-bench: %s, %d CPUs, Linux %s, libsrcu backend %s%s\n", model, ncpu,
	       u.release, srcu_backend(), quick ? ", --quick" : "");
}

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

/* A run whose own relations fail says so: its figures are noise. */
static void sanity_warnings(void)
{
	double floor_ns = lookup("read_pair", "tls-counter", "ns_1thread");
	double srcu_ns = lookup("read_pair", "libsrcu", "ns_1thread");

	if (floor_ns > 0 && srcu_ns > 0 && floor_ns > srcu_ns)
		printf("warning: the floor (tls-counter, %.2f ns) came out slower than libsrcu "
		       "(%.2f ns): a busy machine, or a CPU on which the floor's ++ then -- of one "
		       "word (a dependency chain) costs more than libsrcu's two counters; it is "
		       "no floor in this run\n", floor_ns, srcu_ns);
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

/* The SUMMARY's ratio of two results, where both were measured. */
static void record_derived(void)
{
	double t1 = lookup("throughput", "libsrcu", "calls_per_s_1");

	if (t1 > 0 && recorded("throughput", "libsrcu", "calls_per_s_4"))
		record("throughput", "libsrcu", "calls_per_s_4_over_1",
		       lookup("throughput", "libsrcu", "calls_per_s_4") / t1, "x");
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

int main(int argc, char **argv)
{
	const char *json = NULL, *csv = NULL, *plot = NULL;
	int callgrind = 1, read_pair_only = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);   /* each line as it is measured, piped too */
	self_path = argv[0];
	for (;;) {
		static const struct option opts[] = {
			{ "quick", no_argument, 0, 'q' },
			{ "json", required_argument, 0, 'j' },
			{ "csv", required_argument, 0, 'c' },
			{ "plot", required_argument, 0, 'p' },
			{ "only", required_argument, 0, 'o' },
			{ "no-callgrind", no_argument, 0, 'n' },
			{ "read-pair", no_argument, 0, 'r' },      /* for the .a row */
			{ "instr-child", required_argument, 0, 'i' },   /* for callgrind */
			{ "help", no_argument, 0, 'h' },
			{ 0, 0, 0, 0 },
		};
		int c = getopt_long(argc, argv, "", opts, NULL);

		if (c == -1)
			break;
		switch (c) {
		case 'q': quick = 1; break;
		case 'j': json = optarg; break;
		case 'c': csv = optarg; break;
		case 'p': plot = optarg; break;
		case 'o': only = optarg; break;
		case 'n': callgrind = 0; break;
		case 'r': read_pair_only = 1; break;
		case 'i': return instr_child(optarg);
		default:
			fprintf(stderr, "usage: %s [--quick] [--only FIGURES] [--json FILE] [--csv FILE]"
				" [--plot DIR] [--no-callgrind]\n", argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", argv[0], argv[optind]);
		return 2;
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > 64)
		ncpu = 64;
	if (read_pair_only) {   /* for srcu-bench's "libsrcu (.a)" row */
		printf("%.3f\n", read_cost_stats(&peer_srcu, 1, 0).med);
		return 0;
	}
	for (int i = 0; i < 4; i++)
		init_srcu_struct(&sep_domains[i]);
	init_srcu_struct(&dom_a);
	init_srcu_struct(&dom_b);
	print_machine();
	if (begin_figure(1)) {
		if (callgrind)
			measure_instructions();
		figure_read_cost();
	}
	if (begin_figure(2))
		figure_read_cost_under_updates();
	if (begin_figure(3))
		figure_gp_latency();
	if (begin_figure(4))
		figure_throughput();
	if (begin_figure(5))
		figure_wakeup();
	if (begin_figure(6))
		figure_isolation();
	if (begin_figure(7))
		figure_scaling();
	if (begin_figure(8))
		figure_call();
	if (begin_figure(9))
		figure_machine(quick);
#ifdef HAVE_SRCU_URCU
	if (begin_figure(10))
		figure_lfht(quick, ncpu);
#endif
	if (begin_figure(11)) {
		if (callgrind)
			measure_shared_instructions();
		figure_shared(quick);
	}
	sanity_warnings();
	record_derived();
	if (json)
		write_json(json, ncpu, srcu_backend(), quick);
	if (csv)
		write_csv(csv);
	if (plot)
		write_plots(plot);
	print_summary();
	return failures() ? 1 : 0;
}
