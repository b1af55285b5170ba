/*
 * bench_update.c: srcu-bench's grace-period figures: (3) latency p50/p99
 * with an idle and with a busy reader; (4) synchronize calls/s with 1, 2,
 * 4 updaters on one domain and on separate domains; (5) wake-up latency
 * after a reader held its section 10 ms; (6) isolation: synchronize on
 * one domain while a reader of another sleeps; (7) scaling with the
 * threads that used a domain and with the number of domains.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_results.h"
#include "clock.h"
#include "srcu.h"

/* ---- figure 3: grace-period latency ---- */

struct reader_job { const struct peer *p; int stop, busy, ready; };

void bench_cleanup(struct srcu_struct *sp)
{
	int err = cleanup_srcu_struct(sp);

	if (err) {
		fprintf(stderr, "srcu-bench: cleanup_srcu_struct() of an idle domain: %d\n", err);
		exit(1);
	}
}

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
static double idle_samples[BENCH_MAX_PEERS][MAX_SAMPLES];
static int idle_nsamples[BENCH_MAX_PEERS];

static int peer_index(const struct peer *p)
{
	for (size_t i = 0; i < all_npeers; i++)
		if (all_peers[i] == p)
			return (int)i;
	return 0;
}

/* The spread of a quantile: its value in each of CHUNKS consecutive runs
 * of samples (a burst of slow grace periods, such as pacing makes with a
 * busy reader, moves some chunks and not others), and over all of them.
 * Sorts a copy of each chunk; v keeps its order. */
#define CHUNKS 5

static struct stat3 quantile_spread(const double *v, int k, double q)
{
	double *c = malloc(sizeof(double) * (size_t)k);
	struct stat3 s;
	int len = k / CHUNKS;

	if (!c)
		abort();
	memcpy(c, v, sizeof(double) * (size_t)k);
	s.med = s.lo = s.hi = quantile(c, k, q);
	for (int i = 0; len > 0 && i < CHUNKS; i++) {
		double x;

		memcpy(c, v + i * len, sizeof(double) * (size_t)len);
		x = quantile(c, len, q);
		s.lo = x < s.lo ? x : s.lo;
		s.hi = x > s.hi ? x : s.hi;
	}
	free(c);
	return s;
}

/* p50 and p99 of synchronize, within a time budget (urcu-bp polls). */
static void sync_latency(const struct peer *p, int busy, struct stat3 *p50, struct stat3 *p99,
			 int quick)
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
	*p50 = quantile_spread(v, k, 0.5);
	*p99 = quantile_spread(v, k, 0.99);
	if (!busy) {
		memcpy(idle_samples[peer_index(p)], v, sizeof(double) * (size_t)k);
		idle_nsamples[peer_index(p)] = k;
	}
	free(v);
}

void figure_gp_latency(const struct bench_run *run)
{
	printf("\n(3) grace-period latency (us), 1 reader thread idle or looping\n");
	printf("%-16s %10s %10s %10s %10s\n", "peer", "idle p50", "idle p99", "busy p50", "busy p99");
	FOR_PEERS(p) {
		struct stat3 a50, a99, b50, b99;

		if (!p->synchronize)
			continue;
		sync_latency(p, 0, &a50, &a99, run->quick);
		sync_latency(p, 1, &b50, &b99, run->quick);
		printf("%-16s %10.2f %10.2f %10.2f %10.2f\n", p->name, a50.med, a99.med, b50.med,
		       b99.med);
		record_stat("gp_latency", p->name, "idle_p50", a50, "us");
		record_stat("gp_latency", p->name, "idle_p99", a99, "us");
		record_stat("gp_latency", p->name, "busy_p50", b50, "us");
		record_stat("gp_latency", p->name, "busy_p99", b99, "us");
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
		/* read by sync_throughput() at each window's end */
		__atomic_store_n(&j->calls, j->calls + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Calls per GP of the last sync_throughput() run on libsrcu's domain(s). */
static struct stat3 last_calls_per_gp;

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

/* Calls of the updaters so far. */
static long calls_now(const struct tput_job *j, int nupd)
{
	long total = 0;

	for (int i = 0; i < nupd; i++)
		total += __atomic_load_n(&j[i].calls, __ATOMIC_RELAXED);
	return total;
}

/* synchronize calls/s of nupd updaters on p, in TPUT_WINDOWS windows:
 * median [min-max] of the windows' rates; calls per grace period, the
 * same way, in last_calls_per_gp. */
#define TPUT_WINDOWS 5

static struct stat3 sync_throughput(const struct peer *p, int nupd, int quick)
{
	double secs = (quick ? 0.3 : 1.0) / TPUT_WINDOWS, rate[TPUT_WINDOWS], per_gp[TPUT_WINDOWS];
	double t0;
	struct tput_job j[4];
	pthread_t t[4];
	int stop = 0;
	long before;
	unsigned long gps_before;

	for (int i = 0; i < nupd; i++) {
		j[i] = (struct tput_job){ p, i, &stop, 0 };
		pthread_create(&t[i], NULL, tput_worker, &j[i]);
	}
	before = calls_now(j, nupd);
	gps_before = gps_now();
	t0 = clock_now_s();
	for (int w = 0; w < TPUT_WINDOWS; w++) {
		double t1;
		long now;
		unsigned long gps;

		usleep((useconds_t)(secs * 1e6));
		now = calls_now(j, nupd);
		gps = gps_now();
		t1 = clock_now_s();
		rate[w] = (double)(now - before) / (t1 - t0);
		per_gp[w] = gps > gps_before ? (double)(now - before) / (double)(gps - gps_before) : 0;
		before = now;
		gps_before = gps;
		t0 = t1;
	}
	flag_put(&stop, 1);
	for (int i = 0; i < nupd; i++)
		pthread_join(t[i], NULL);
	last_calls_per_gp = summarize(per_gp, TPUT_WINDOWS);
	return summarize(rate, TPUT_WINDOWS);
}

/* A row of figure 4, with one idle reader thread running unless lone;
 * with separate domains, one idle reader per domain. */
static void throughput_row(const struct peer *p, const char *label, int lone, int quick)
{
	struct reader_job r = { p, 0, 0, 0 };
	struct sep_reader sr[4];
	pthread_t t, st[4];
	static const int n[] = { 1, 2, 4 };
	static const char *const metric[] = { "calls_per_s_1", "calls_per_s_2", "calls_per_s_4" };
	double base = 0;
	struct stat3 shared[3];
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
		struct stat3 r = sync_throughput(p, n[k], quick);

		if (k == 0)
			base = r.med;
		shared[k] = last_calls_per_gp;
		printf(" %9.0f %5.2fx", r.med, r.med / base);
		record_stat("throughput", label, metric[k], r, "calls/s");
	}
	if (is_srcu) {   /* how many calls each grace period served */
		static const char *const per_gp[] = { "calls_per_gp_1", "calls_per_gp_2",
						      "calls_per_gp_4" };

		printf("   calls/GP %.2f %.2f %.2f", shared[0].med, shared[1].med, shared[2].med);
		for (int k = 0; k < 3; k++)
			record_stat("throughput", label, per_gp[k], shared[k], "calls");
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

void figure_throughput(const struct bench_run *run)
{
	printf("\n(4) synchronize calls/s (ratio to 1 updater), one reader thread idle"
	       " between its sections;\n    own-domains: updater i on domain i, each"
	       " domain with an idle reader of its own\n");
	printf("%-22s %16s %16s %16s\n", "peer", "1 updater", "2 updaters", "4 updaters");
	FOR_PEERS(p)
		if (p->synchronize)
			throughput_row(p, p->name, 0, run->quick);
	use_separate = 1;
	throughput_row(&peer_srcu, "libsrcu-own-domains", 0, run->quick);
	use_separate = 0;
	/* No thread other than the updaters has ever read: local fences only
	 * (doc/design.md, "The lone updater").  Valid only because srcu-bench's
	 * main thread never runs a read-side section itself. */
	throughput_row(&peer_srcu, "libsrcu-no-readers", 1, run->quick);
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

void figure_wakeup(const struct bench_run *run)
{
	int n = run->quick ? 10 : 40;

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
		/* n repetitions of the whole experiment (a fresh reader, a fresh
		 * section, one synchronize): p50 is their median, its spread
		 * their min-max, as figure 1's (v is sorted). */
		record_spread("wakeup", p->name, "p50", v[0], v[n - 1], "us");
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
void figure_isolation(const struct bench_run *run)
{
	static const struct peer srcu_b = {
		"libsrcu", "", 1, nothing6, nothing6, NULL, srcu_b_lock, srcu_b_unlock,
		NULL, NULL, NULL,
	};
	long hold_us = run->quick ? 300000 : 1000000;

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

/* Grace-period p50 with nthreads idle threads that have used the domain;
 * figure 12's (12h) too (bench.h). */
struct stat3 gp_with_threads(const struct peer *p, int nthreads, int other, int quick)
{
	return gp_with_threads_alt(p, NULL, nthreads, other, quick, NULL);
}

struct stat3 gp_with_threads_alt(const struct peer *p, const struct peer *alt, int nthreads,
				 int other, int quick, struct stat3 *alt_p50)
{
	pthread_barrier_t used, done;
	pthread_t *t = calloc((size_t)nthreads, sizeof(*t));
	struct idle_thread it = { p, other, &used, &done };
	pthread_attr_t attr;
	double v[200], w[200];
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
		if (!alt)
			continue;
		t0 = clock_now_s();
		alt->synchronize();   /* the same threads, alternately */
		w[k] = (clock_now_s() - t0) * 1e6;
	}
	p->thread_offline();
	pthread_barrier_wait(&done);
	for (k = 0; k < nthreads; k++)
		pthread_join(t[k], NULL);
	pthread_barrier_destroy(&used);
	pthread_barrier_destroy(&done);
	pthread_attr_destroy(&attr);
	free(t);
	if (alt)
		*alt_p50 = quantile_spread(w, n, 0.5);
	return quantile_spread(v, n, 0.5);
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

/* init, first read, synchronize and cleanup of n domains at once.  The
 * memory a first read touches is new only in the run's first round: the
 * ids, and their pages, are reused lowest first, so a later round's reads
 * touch nothing new (it printed 0 B and made the median 0). */
static void domains_row(int n, int first_round)
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
		bench_cleanup(&d[i]);
	clean_ns = (clock_now_s() - t0) * 1e9 / n;
	free(d);
	printf("%8d domains: init %7.0f ns, cleanup %7.0f ns each; synchronize_exp %7.2f us;"
	       " memory %5zu B/domain", n, init_ns, clean_ns, sync_us, sizeof(struct srcu_struct));
	if (first_round)
		printf(" + %4.1f B/(thread, domain) touched (RSS +%ld KiB)\n",
		       (double)(rss1 - rss0) * 1024 / n, rss1 - rss0);
	else
		printf(" (touched: the first round's)\n");
	record("scaling_domains", "libsrcu", n == 1 ? "init_ns_1" : n == 100 ? "init_ns_100" :
	       n == 10000 ? "init_ns_10000" : "init_ns", init_ns, "ns");
	record("scaling_domains", "libsrcu", n == 1 ? "sync_exp_us_1" : n == 100 ? "sync_exp_us_100" :
	       n == 10000 ? "sync_exp_us_10000" : "sync_exp_us", sync_us, "us");
	if (first_round)
		record("scaling_domains", "libsrcu", n == 1 ? "touched_b_1" : n == 100 ? "touched_b_100" :
		       n == 1000 ? "touched_b_1000" : n == 10000 ? "touched_b_10000" : "touched_b",
		       (double)(rss1 - rss0) * 1024 / n, "B/(thread, domain)");
}

/* A cell of (7a): its p50, printed and recorded with its spread. */
static void threads_cell(const char *peer, const char *metric, struct stat3 s)
{
	printf(" %9.2f", s.med);
	record_stat("scaling_threads", peer, metric, s, "us");
}

void figure_scaling(const struct bench_run *run)
{
	static const int threads[] = { 1, 10, 100, 1000 };
	static const char *const tmetric[] = { "p50_us_1", "p50_us_10", "p50_us_100", "p50_us_1000" };
	int nthr = run->quick ? 3 : 4;

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
		for (int k = 0; k < nthr; k++)
			threads_cell(p->name, tmetric[k], gp_with_threads(p, threads[k], 0, run->quick));
		printf("\n");
	}
	/* The same threads, but they read another domain: a domain's scan
	 * costs what its own readers cost. */
	printf("%-16s", "libsrcu-other");
	for (int k = 0; k < nthr; k++)
		threads_cell("libsrcu-other", tmetric[k],
			     gp_with_threads(&peer_srcu, threads[k], 1, run->quick));
	printf("   (the threads read another domain)\n");
	printf("\n(7b) libsrcu with N live domains\n");
	domains_row(1, run->round == 0);
	domains_row(100, run->round == 0);
	if (!run->quick)
		domains_row(1000, run->round == 0);
	domains_row(10000, run->round == 0);
}

void bench_update_init(void)
{
	for (int i = 0; i < 4; i++)
		init_srcu_struct(&sep_domains[i]);
	init_srcu_struct(&dom_a);
	init_srcu_struct(&dom_b);
}

int gp_latency_cdf(FILE *f)
{
	int cdfs = 0;

	for (size_t p = 0; p < all_npeers; p++) {
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
	return cdfs;
}
