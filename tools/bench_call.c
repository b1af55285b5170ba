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
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "srcu.h"
#ifdef HAVE_URCU
#include <urcu/urcu-memb.h>
#endif

/* Every object waiting for its callback, counted: peak x size = memory. */
static long outstanding, peak;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

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

struct sleeper { int inside, stop; double secs; int (*lock)(void); void (*unlock)(int); };

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

/* Queue objects for secs, or until cap objects wait; how many. */
static long produce_srcu(double secs, long cap, int *capped)
{
	double t0 = now_s(), t;
	long n = 0;

	*capped = 0;
	while ((t = now_s()) - t0 < secs) {
		for (int i = 0; i < 256; i++) {
			struct obj_srcu *o = malloc(sizeof(*o));

			if (!o)
				abort();
			note_alloc();
			call_srcu(&call_domain, &o->h, free_srcu);
			n++;
		}
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

static void start_sleeper(struct sleeper *s, pthread_t *t)
{
	pthread_create(t, NULL, sleep_inside, s);
	while (!__atomic_load_n(&s->inside, __ATOMIC_SEQ_CST))
		usleep(100);
}

/* One run: with a reader asleep inside for secs, or none. */
static void run_srcu(double secs, int with_sleeper, struct call_figures *f)
{
	struct sleeper s = { 0, 0, secs, srcu_lock, srcu_unlock };
	pthread_t t;
	double t0;
	int capped;
	long n;

	peak = outstanding = 0;
	if (with_sleeper)
		start_sleeper(&s, &t);
	t0 = now_s();
	n = produce_srcu(with_sleeper ? secs * 0.9 : secs, CALL_CAP, &capped);
	if (with_sleeper)
		pthread_join(t, NULL);
	srcu_barrier(&call_domain);
	keep(f, with_sleeper, n, now_s() - t0, capped);
}

static double ns_per(void (*fn)(void), long n)
{
	double t0 = now_s();

	for (long i = 0; i < n; i++)
		fn();
	return (now_s() - t0) * 1e9 / (double)n;
}

static unsigned long cookie;
static void do_get_state(void) { cookie = get_state_synchronize_srcu(&call_domain); }
static void do_poll(void) { (void)poll_state_synchronize_srcu(&call_domain, cookie); }
static void do_start_poll(void) { cookie = start_poll_synchronize_srcu(&call_domain); }

void bench_call_srcu(double secs, struct call_figures *f)
{
	run_srcu(secs, 0, f);
	run_srcu(secs, 1, f);
	f->ns_get_state = ns_per(do_get_state, 200000);
	f->ns_poll = ns_per(do_poll, 1000000);
	f->ns_start_poll = ns_per(do_start_poll, 20000);
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

static long produce_rcu(double secs, long cap, int *capped)
{
	double t0 = now_s(), t;
	long n = 0;

	*capped = 0;
	while ((t = now_s()) - t0 < secs) {
		for (int i = 0; i < 256; i++) {
			struct obj_rcu *o = malloc(sizeof(*o));

			if (!o)
				abort();
			note_alloc();
			urcu_memb_call_rcu(&o->h, free_rcu);
			n++;
		}
		if (__atomic_load_n(&outstanding, __ATOMIC_RELAXED) >= cap) {
			*capped = 1;
			break;
		}
	}
	return n;
}

static void run_rcu(double secs, int with_sleeper, struct call_figures *f)
{
	struct sleeper s = { 0, 0, secs, rcu_lock, rcu_unlock };
	pthread_t t;
	double t0;
	int capped;
	long n;

	peak = outstanding = 0;
	if (with_sleeper)
		start_sleeper(&s, &t);
	t0 = now_s();
	n = produce_rcu(with_sleeper ? secs * 0.9 : secs, CALL_CAP, &capped);
	if (with_sleeper)
		pthread_join(t, NULL);
	urcu_memb_barrier();
	keep(f, with_sleeper, n, now_s() - t0, capped);
}

void bench_call_rcu(double secs, struct call_figures *f)
{
	urcu_memb_register_thread();   /* call_rcu() needs a registered caller */
	run_rcu(secs, 0, f);
	run_rcu(secs, 1, f);
	urcu_memb_unregister_thread();
}
#endif
