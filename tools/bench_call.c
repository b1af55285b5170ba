/*
 * bench_call.c: srcu-bench figure 8, deferred freeing.  call_srcu()
 * against liburcu's call_rcu() (urcu-memb): callbacks per second with no
 * reader in the way, and the memory that waits for a grace period while
 * a reader sleeps inside its section; and what the polled API costs.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "bench_call.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "bench_results.h"
#include "clock.h"
#include "srcu.h"
#ifdef HAVE_URCU
#include <urcu/urcu-memb.h>
#endif

/* Every object waiting for its callback, counted: peak x size = memory. */
static long outstanding, peak;


static void note_alloc(void)
{
	long o = __atomic_add_fetch(&outstanding, 1, __ATOMIC_RELAXED);

	if (o > __atomic_load_n(&peak, __ATOMIC_RELAXED))
		__atomic_store_n(&peak, o, __ATOMIC_RELAXED);
}

static void note_free(void)
{
	__atomic_sub_fetch(&outstanding, 1, __ATOMIC_RELAXED);
}

/* The shape both libraries need: a head, then payload. */
struct obj_srcu { struct srcu_head h; char payload[CALL_OBJ_BYTES - sizeof(struct srcu_head)]; };

static void free_srcu(struct srcu_head *h)
{
	free(h);
	note_free();
}

static DEFINE_SRCU(call_domain);

struct sleeper { int inside, stop; double secs; int (*lock)(void); void (*unlock)(int tok); };

static void *sleep_inside(void *arg)
{
	struct sleeper *s = arg;
	int tok = s->lock();

	__atomic_store_n(&s->inside, 1, __ATOMIC_SEQ_CST);
	usleep((useconds_t)(s->secs * 1e6));
	s->unlock(tok);
	return NULL;
}

static int srcu_lock(void) { return srcu_read_lock(&call_domain); }
static void srcu_unlock(int t) { srcu_read_unlock(&call_domain, t); }

/* What differs between the two libraries. */
struct flavor_ops {
	void (*queue_one)(void);        /* allocate an object, queue its free */
	void (*barrier)(void);          /* wait for every queued free */
	int (*lock)(void);              /* a read-side section, for the sleeper */
	void (*unlock)(int tok);
};

/* Queue objects for secs, or until cap objects wait; how many. */
static long produce(const struct flavor_ops *ops, double secs, long cap, int *capped)
{
	double t0 = clock_now_s();
	long n = 0;

	*capped = 0;
	while (clock_now_s() - t0 < secs) {
		for (int i = 0; i < 256; i++)
			ops->queue_one();
		n += 256;
		if (__atomic_load_n(&outstanding, __ATOMIC_RELAXED) >= cap) {
			*capped = 1;
			break;
		}
	}
	return n;
}

/* Store one run's figures: callbacks/s until the last one ran. */
static void keep(struct call_figures *f, int with_sleeper, long n, double secs, int capped)
{
	if (with_sleeper) {
		f->asleep_peak_objs = (double)peak;
		f->asleep_capped = capped;
	} else {
		f->rate = (double)n / secs;
		f->peak_objs = (double)peak;
	}
}

/* One run: with a reader asleep inside for secs, or none. */
static void run(const struct flavor_ops *ops, double secs, int with_sleeper,
		struct call_figures *f)
{
	struct sleeper s = { 0, 0, secs, ops->lock, ops->unlock };
	pthread_t t;
	double t0;
	int capped;
	long n;

	peak = outstanding = 0;
	if (with_sleeper) {
		pthread_create(&t, NULL, sleep_inside, &s);
		while (!__atomic_load_n(&s.inside, __ATOMIC_SEQ_CST))
			usleep(100);
	}
	t0 = clock_now_s();
	n = produce(ops, with_sleeper ? secs * 0.9 : secs, CALL_CAP, &capped);
	if (with_sleeper)
		pthread_join(t, NULL);
	ops->barrier();
	keep(f, with_sleeper, n, clock_now_s() - t0, capped);
}

/* The run without a sleeper in CALL_WINDOWS windows of secs / CALL_WINDOWS,
 * each produced and drained: rate median [min-max], the largest peak. */
#define CALL_WINDOWS 5

static void run_windows(const struct flavor_ops *ops, double secs, struct call_figures *f)
{
	double v[CALL_WINDOWS], peak_max = 0;
	struct stat3 s;

	for (int w = 0; w < CALL_WINDOWS; w++) {
		run(ops, secs / CALL_WINDOWS, 0, f);
		v[w] = f->rate;
		peak_max = f->peak_objs > peak_max ? f->peak_objs : peak_max;
	}
	s = summarize(v, CALL_WINDOWS);
	f->rate = s.med;
	f->rate_lo = s.lo;
	f->rate_hi = s.hi;
	f->peak_objs = peak_max;
}

static void *must_malloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	note_alloc();
	return p;
}

static void queue_srcu(void)
{
	struct obj_srcu *o = must_malloc(sizeof(*o));

	call_srcu(&call_domain, &o->h, free_srcu);
}

static void barrier_srcu(void) { srcu_barrier(&call_domain); }

static const struct flavor_ops srcu_ops = { queue_srcu, barrier_srcu, srcu_lock, srcu_unlock };

static double ns_per(void (*fn)(void), long n)
{
	double t0 = clock_now_s();

	for (long i = 0; i < n; i++)
		fn();
	return (clock_now_s() - t0) * 1e9 / (double)n;
}

static unsigned long cookie;
static void do_get_state(void) { cookie = get_state_synchronize_srcu(&call_domain); }
static void do_poll(void) { (void)poll_state_synchronize_srcu(&call_domain, cookie); }
static void do_start_poll(void) { cookie = start_poll_synchronize_srcu(&call_domain); }

/* ns_per() over n calls in CALL_WINDOWS windows: median [min-max]. */
static struct stat3 ns_windows(void (*fn)(void), long n)
{
	double v[CALL_WINDOWS];

	for (int w = 0; w < CALL_WINDOWS; w++)
		v[w] = ns_per(fn, n / CALL_WINDOWS);
	return summarize(v, CALL_WINDOWS);
}

void bench_call_srcu(double secs, struct call_figures *f)
{
	run_windows(&srcu_ops, secs, f);
	run(&srcu_ops, secs, 1, f);
	f->ns_get_state = ns_windows(do_get_state, 200000);
	f->ns_poll = ns_windows(do_poll, 1000000);
	f->ns_start_poll = ns_windows(do_start_poll, 20000);
	srcu_barrier(&call_domain);
}

#ifdef HAVE_URCU
struct obj_rcu { struct rcu_head h; char payload[CALL_OBJ_BYTES - sizeof(struct rcu_head)]; };

static void free_rcu(struct rcu_head *h)
{
	free(h);
	note_free();
}

static int rcu_lock(void) { urcu_memb_register_thread(); urcu_memb_read_lock(); return 0; }
static void rcu_unlock(int t) { (void)t; urcu_memb_read_unlock(); urcu_memb_unregister_thread(); }

static void queue_rcu(void)
{
	struct obj_rcu *o = must_malloc(sizeof(*o));

	urcu_memb_call_rcu(&o->h, free_rcu);
}

static void barrier_rcu(void) { urcu_memb_barrier(); }

static const struct flavor_ops rcu_ops = { queue_rcu, barrier_rcu, rcu_lock, rcu_unlock };

void bench_call_rcu(double secs, struct call_figures *f)
{
	urcu_memb_register_thread();   /* call_rcu() needs a registered caller */
	run_windows(&rcu_ops, secs, f);
	run(&rcu_ops, secs, 1, f);
	urcu_memb_unregister_thread();
}
#endif

/* ---- figure 8: deferred freeing ---- */

static void call_row(const char *name, const struct call_figures *f)
{
	printf("%-12s %12.0f %12.0f %14.0f%s %14.1f\n", name, f->rate, f->peak_objs,
	       f->asleep_peak_objs, f->asleep_capped ? "+" : " ",
	       f->asleep_peak_objs * CALL_OBJ_BYTES / 1e6);
	record("call", name, "callbacks_per_s", f->rate, "1/s");
	record_spread("call", name, "callbacks_per_s", f->rate_lo, f->rate_hi, "1/s");
	record("call", name, "asleep_peak_objects", f->asleep_peak_objs, "objects");
}

void figure_call(const struct bench_run *run)
{
	double secs = run->quick ? 1.0 : 5.0;
	struct call_figures s = { 0 };

	printf("\n(8) deferred free of %d-byte objects: callbacks/s with no reader in the way"
	       " (median of %d windows); objects waiting at most, then and while a reader"
	       " sleeps %.0f s inside (+: the producer stopped at %ld)\n", CALL_OBJ_BYTES,
	       CALL_WINDOWS, secs, CALL_CAP);
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
	printf("polled API (ns per call, median of %d windows): get_state %.1f, poll_state %.1f,"
	       " start_poll %.1f\n", CALL_WINDOWS, s.ns_get_state.med, s.ns_poll.med,
	       s.ns_start_poll.med);
	record_stat("poll", "libsrcu", "get_state_ns", s.ns_get_state, "ns");
	record_stat("poll", "libsrcu", "poll_state_ns", s.ns_poll, "ns");
	record_stat("poll", "libsrcu", "start_poll_ns", s.ns_start_poll, "ns");
}
