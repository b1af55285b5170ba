/*
 * srcu-bench: libsrcu side by side with what users would pick instead,
 * in one process and one run, so that the ratios mean something even on
 * a noisy machine.  Each figure is the median of several repetitions
 * with its spread (min-max).
 *
 *   srcu-bench [--quick]
 *
 * Figures: (1) read-side pair cost, 1 thread and all cores; (2) the same
 * while another thread runs grace periods back to back; (3) grace-period
 * latency p50/p99 with idle and with busy readers; (4) synchronize calls/s
 * with 1, 2, 4 updaters on one domain and on separate domains; (5) wake-up
 * latency after a reader held its section 10 ms.  The last line is a
 * greppable SUMMARY.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "peers.h"
#include "srcu.h"

static const struct peer *const peers[] = {
	&peer_srcu,
#ifdef HAVE_URCU
	&peer_urcu_memb,
#endif
	&peer_floor, &peer_rwlock, &peer_naive,
};
#define NPEERS (sizeof(peers) / sizeof(peers[0]))

static int quick;
static int ncpu;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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
	t = now_s();
	j->p->reads(j->iters);
	j->ns_per_pair = (now_s() - t) * 1e9 / (double)j->iters;
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

static double srcu_pair_1t;   /* for the ratios */

static void figure_read_cost(void)
{
	printf("\n(1) read-side pair cost, empty section (ns; median [min-max]; ratio to libsrcu)\n");
	printf("%-16s %-28s %-28s\n", "peer", "1 thread", "all cores");
	for (size_t i = 0; i < NPEERS; i++) {
		struct stat3 one = read_cost_stats(peers[i], 1, 0);
		struct stat3 all = read_cost_stats(peers[i], ncpu, 0);

		if (i == 0)
			srcu_pair_1t = one.med;
		printf("%-16s %6.2f [%5.2f-%6.2f] %5.2fx  %6.2f [%5.2f-%6.2f] %5.2fx\n",
		       peers[i]->name, one.med, one.lo, one.hi, one.med / srcu_pair_1t,
		       all.med, all.lo, all.hi, all.med / srcu_pair_1t);
	}
}

static void figure_read_cost_under_updates(void)
{
	printf("\n(2) read-side pair cost, 1 reader, while another thread runs grace periods back to back\n");
	printf("%-16s %-28s %s\n", "peer", "ns", "vs idle");
	for (size_t i = 0; i < NPEERS; i++) {
		struct stat3 idle, busy;

		if (!peers[i]->synchronize)
			continue;
		idle = read_cost_stats(peers[i], 1, 0);
		busy = read_cost_stats(peers[i], 1, 1);
		printf("%-16s %6.2f [%5.2f-%6.2f]  %5.2fx\n", peers[i]->name,
		       busy.med, busy.lo, busy.hi, busy.med / idle.med);
	}
}

/* ---- figure 3: grace-period latency ---- */

struct reader_job { const struct peer *p; int stop, busy, ready; };

static void *background_reader(void *arg)
{
	struct reader_job *r = arg;

	r->p->thread_online();
	flag_put(&r->ready, 1);
	while (!flag_get(&r->stop)) {
		if (r->busy)
			r->p->reads(1000);
		else
			usleep(1000);
	}
	r->p->thread_offline();
	return NULL;
}

static void sync_latency(const struct peer *p, int busy, double *p50, double *p99)
{
	int n = quick ? 300 : 2000;
	double *v = malloc(sizeof(double) * (size_t)n);
	struct reader_job r = { p, 0, busy, 0 };
	pthread_t t;

	pthread_create(&t, NULL, background_reader, &r);
	while (!flag_get(&r.ready))
		usleep(100);
	p->reads(10);
	for (int i = 0; i < n; i++) {
		double t0 = now_s();
		p->synchronize();
		v[i] = (now_s() - t0) * 1e6;
	}
	flag_put(&r.stop, 1);
	pthread_join(t, NULL);
	*p50 = quantile(v, n, 0.5);
	*p99 = quantile(v, n, 0.99);
	free(v);
}

static const struct peer *const gp_peers[] = {
	&peer_srcu, &peer_srcu_exp,
#ifdef HAVE_URCU
	&peer_urcu_memb,
#endif
	&peer_rwlock, &peer_naive,
};
#define NGP (sizeof(gp_peers) / sizeof(gp_peers[0]))

static double srcu_exp_idle_p50, memb_idle_p50;

static void figure_gp_latency(void)
{
	printf("\n(3) grace-period latency (us), 1 reader thread idle or looping\n");
	printf("%-16s %10s %10s %10s %10s\n", "peer", "idle p50", "idle p99", "busy p50", "busy p99");
	for (size_t i = 0; i < NGP; i++) {
		double a50, a99, b50, b99;

		sync_latency(gp_peers[i], 0, &a50, &a99);
		sync_latency(gp_peers[i], 1, &b50, &b99);
		if (gp_peers[i] == &peer_srcu_exp)
			srcu_exp_idle_p50 = a50;
#ifdef HAVE_URCU
		if (gp_peers[i] == &peer_urcu_memb)
			memb_idle_p50 = a50;
#endif
		printf("%-16s %10.2f %10.2f %10.2f %10.2f\n", gp_peers[i]->name, a50, a99, b50, b99);
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

static double sync_throughput(const struct peer *p, int nupd)
{
	double secs = quick ? 0.3 : 1.0;
	struct tput_job j[4];
	pthread_t t[4];
	int stop = 0;
	long total = 0;

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
	return (double)total / secs;
}

static double srcu_tput1, srcu_tput4;

static void figure_throughput(void)
{
	static const int n[] = { 1, 2, 4 };

	printf("\n(4) synchronize calls/s (ratio to 1 updater), no readers\n");
	printf("%-22s %16s %16s %16s\n", "peer", "1 updater", "2 updaters", "4 updaters");
	for (size_t i = 0; i < NGP + 1; i++) {
		const struct peer *p = i < NGP ? gp_peers[i] : &peer_srcu;
		double base = 0;

		use_separate = i == NGP;
		printf("%-22s", use_separate ? "libsrcu, own domains" : p->name);
		for (int k = 0; k < 3; k++) {
			double r = sync_throughput(p, n[k]);

			if (k == 0)
				base = r;
			printf(" %9.0f %5.2fx", r, r / base);
			if (p == &peer_srcu && !use_separate && k == 0)
				srcu_tput1 = r;
			if (p == &peer_srcu && !use_separate && k == 2)
				srcu_tput4 = r;
		}
		printf("\n");
	}
	use_separate = 0;
}

/* ---- figure 5: wake-up latency ---- */

struct holder_job { const struct peer *p; int inside; double unlock_at; };

static void *hold_10ms(void *arg)
{
	struct holder_job *h = arg;
	int tok;

	h->p->thread_online();
	tok = h->p->lock();
	flag_put(&h->inside, 1);
	usleep(10000);
	h->unlock_at = now_s();
	h->p->unlock(tok);
	h->p->thread_offline();
	return NULL;
}

static double srcu_wake_p50;

static void figure_wakeup(void)
{
	int n = quick ? 10 : 40;

	printf("\n(5) wake-up latency (us): reader unlocks after 10 ms -> synchronize returns\n");
	printf("%-16s %10s %10s\n", "peer", "p50", "max");
	for (size_t i = 0; i < NGP; i++) {
		double v[64];

		for (int k = 0; k < n; k++) {
			struct holder_job h = { gp_peers[i], 0, 0 };
			pthread_t t;

			pthread_create(&t, NULL, hold_10ms, &h);
			while (!flag_get(&h.inside))
				usleep(50);
			usleep(1000);   /* the synchronize starts with the reader inside */
			gp_peers[i]->synchronize();
			v[k] = (now_s() - h.unlock_at) * 1e6;
			pthread_join(t, NULL);
		}
		double p50 = quantile(v, n, 0.5);
		if (gp_peers[i] == &peer_srcu)
			srcu_wake_p50 = p50;
		printf("%-16s %10.1f %10.1f\n", gp_peers[i]->name, p50, v[n - 1]);
	}
}

/* ---- machine ---- */

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
#ifndef HAVE_URCU
	printf("note: liburcu peers skipped: install liburcu-dev (apt-get install liburcu-dev) and rebuild\n");
#endif
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
		} else {
			fprintf(stderr, "usage: %s [--quick]\n", argv[0]);
			return 2;
		}
	}
	ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpu > 64)
		ncpu = 64;
	for (int i = 0; i < 4; i++)
		init_srcu_struct(&sep_domains[i]);
	print_machine();
	figure_read_cost();
	figure_read_cost_under_updates();
	figure_gp_latency();
	figure_throughput();
	figure_wakeup();
	printf("\nSUMMARY read_pair_ns=%.2f exp_idle_p50_us=%.2f memb_idle_p50_us=%.2f "
	       "tput4_over_tput1=%.2f wake_p50_us=%.1f\n", srcu_pair_1t, srcu_exp_idle_p50,
	       memb_idle_p50, srcu_tput4 / srcu_tput1, srcu_wake_p50);
	return 0;
}
