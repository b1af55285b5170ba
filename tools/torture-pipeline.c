/*
 * torture-pipeline.c: srcu-torture's one pipeline, for both modes.
 *
 * Writers publish objects, retire the previous one (pipeline age 1) and,
 * after each synchronize_srcu*(), age every retired object by one; at age
 * PIPE_LEN an object is poisoned and reused (never freed, so a stale
 * access reads poison instead of faulting).  Async writers retire through
 * call_srcu(), whose callback poisons; poll writers keep cookies and
 * poison once poll_state_synchronize_srcu() says so.  Readers enter a
 * section, find a writer's object and check it while they stretch the
 * section.  Inside a section an object's age can be at most 1, it cannot
 * be reused, and at most one grace period can complete: anything else is
 * a failure.  How an object is published and found (by pointer, by index
 * in a shared mapping) is the mode's: struct torture_ops.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "srcu-torture.h"

static struct torture_run private_run;
struct torture_run *run = &private_run;
const struct torture_ops *ops;
struct writer *writers;
int nwriters;
struct wstats *wstats;
struct tobj *objs;
unsigned int nobjs;

/* call_srcu() heads stay in the writers' process (a fork copies them, and
 * its worker runs the callbacks): heads[i] is objs[i]'s. */
static struct srcu_head *heads;
static struct tobj *own_objs;
static struct wstats *own_wstats;

/* Sections of threads without counters of their own. */
static struct reader_stats stray_stats;
static pthread_mutex_t stray_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- small helpers ---- */

int64_t now_ns(void)
{
	return clock_now_ns();
}

void sleep_ns(int64_t ns)
{
	clock_sleep_ns(ns);
}

void sleep_log_uniform(unsigned int *seed, int64_t min_ns, int64_t max_ns)
{
	int64_t ns = min_ns;

	while (ns < max_ns && rnd(seed) % 2)
		ns *= 2;
	sleep_ns(ns + (int64_t)(rnd(seed) % (unsigned int)ns));
}

double elapsed_s(void)
{
	return (double)(now_ns() - run->start_ns) / 1e9;
}

bool stopping(void)
{
	return __atomic_load_n(&run->stop, __ATOMIC_ACQUIRE);
}

void torture_stop(void)
{
	__atomic_store_n(&run->stop, 1, __ATOMIC_RELEASE);
}

/* Lock-free: any process of the run may fail it. */
void torture_fail(const char *fmt, ...)
{
	unsigned long n = __atomic_fetch_add(&run->failures, 1, __ATOMIC_SEQ_CST);
	char msg[sizeof(run->first_failure)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n == 0) {
		run->first_failure_s = elapsed_s();
		memcpy(run->first_failure, msg, sizeof(msg));
	}
	ops->announce(n, msg);
	if (cfg.stop_on_fail)
		torture_stop();
}

__thread int torture_in_handler;

void torture_reader_delay(void)
{
	static __thread unsigned int seed;

	/* Not in a signal handler: a storm's timer fires every 20 us, and a
	 * handler that sleeps longer runs again as it returns, for ever,
	 * while the thread it interrupted holds its section open (a
	 * torture.storms run hung so on a loaded machine). */
	if (torture_in_handler)
		return;
	if (!seed)
		seed = (unsigned int)now_ns() | 1;
	if (rnd(&seed) % 1000 < (unsigned int)cfg.reader_delay_permille)
		sleep_log_uniform(&seed, 1000, 2 * MS);
}

/* ---- objects ---- */

static unsigned int obj_get(struct writer *w)
{
	unsigned int i = w->free;

	if (i != OBJ_NIL)
		w->free = objs[i].next;
	return i;
}

static void obj_put(unsigned int *list, unsigned int i)
{
	objs[i].next = *list;
	*list = i;
}

/* Publish fresh in place of the current object; return the old one. */
static unsigned int replace_head(struct writer *w, unsigned int fresh)
{
	struct tobj *f = &objs[fresh];
	unsigned int old = w->cur;

	__atomic_store_n(&f->age, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&f->gen, f->gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&f->magic, MAGIC_LIVE, __ATOMIC_RELAXED);
	ops->publish(w, fresh);
	w->cur = fresh;
	__atomic_store_n(&objs[old].age, 1, __ATOMIC_RELAXED);
	return old;
}

/* Walk w's retired list: the objects done() says are done go back to
 * its free list. */
static void free_retired(struct writer *w, bool (*done)(struct writer *w, struct tobj *o))
{
	unsigned int *pp = &w->retired;

	while (*pp != OBJ_NIL) {
		unsigned int i = *pp;
		struct tobj *o = &objs[i];

		if (done(w, o)) {
			*pp = o->next;
			obj_put(&w->free, i);
		} else {
			pp = &o->next;
		}
	}
}

/* After a grace period: one more for every retired object; poisoned and
 * reused at the end of the pipeline. */
static bool age_one(struct writer *w, struct tobj *o)
{
	unsigned int age = o->age + 1;

	(void)w;
	__atomic_store_n(&o->age, age, __ATOMIC_RELAXED);
	if (age < PIPE_LEN)
		return false;
	__atomic_store_n(&o->magic, MAGIC_POISON, __ATOMIC_RELAXED);
	return true;
}

/* A grace period has ended since o was replaced: no reader may still see
 * it.  Age it past what a reader tolerates, then poison it. */
static void retire_done(struct tobj *o)
{
	__atomic_store_n(&o->age, PIPE_LEN, __ATOMIC_RELAXED);
	__atomic_store_n(&o->magic, MAGIC_POISON, __ATOMIC_RELAXED);
}

static void note_progress(struct writer *w, int64_t gp_ns)
{
	bump(&w->st->gps);
	__atomic_store_n(&w->st->last_progress_ns, now_ns(), __ATOMIC_RELAXED);
	store_max(&w->st->max_gp_ns, gp_ns);
}

/* ---- writers ---- */

/* call_srcu() callback: poison, hand back to the writer. */
static void async_done(struct srcu_head *h)
{
	unsigned int i = (unsigned int)(h - heads);
	struct writer *w = &writers[i / PER_WRITER];
	struct tobj *o = &objs[i];

	/* A fork child inherits the callbacks pending at its fork: shared
	 * objects must not be freed there too (they would be freed twice). */
	if (ops->objects_shared && getpid() != run->torture_pid) {
		torture_fail("a call_srcu() callback queued by the torture process ran in process "
			     "%d, forked with it pending", (int)getpid());
		return;
	}
	if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) == MAGIC_POISON)
		torture_fail("a call_srcu() callback ran twice (its object was already poisoned)");
	retire_done(o);
	o->next = __atomic_load_n(&w->recycled, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&w->recycled, &o->next, i, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	note_progress(w, 0);
}

/* Retires through call_srcu(): the callback poisons. */
static void async_writer(struct writer *w)
{
	int waited = -1;   /* the oracle's: every object in flight since */

	while (!stopping()) {
		unsigned int fresh = obj_get(w);

		if (fresh == OBJ_NIL) {   /* everything in flight: take what came back */
			w->free = __atomic_exchange_n(&w->recycled, OBJ_NIL, __ATOMIC_ACQUIRE);
			if (w->free == OBJ_NIL) {
				if (waited < 0)
					waited = live_gp_begin("callbacks awaited by async writer",
							       w->index);
				sleep_ns(20 * 1000);
			}
			continue;
		}
		live_gp_end(waited);
		waited = -1;
		call_srcu(w->dom, &heads[replace_head(w, fresh)], async_done);
	}
	live_gp_end(waited);
	waited = live_gp_begin("srcu_barrier() by async writer", w->index);
	srcu_barrier(w->dom);
	live_gp_end(waited);
}

/* Poison and reuse a retired object once its cookie says done. */
static bool cookie_done(struct writer *w, struct tobj *o)
{
	if (!poll_state_synchronize_srcu(w->dom, o->cookie))
		return false;
	retire_done(o);
	note_progress(w, 0);
	return true;
}

/* Retires with a cookie, poisons once poll_state_synchronize_srcu()
 * says its grace period ended; some cookies come from
 * get_state_synchronize_srcu(), which starts nothing, and are driven by
 * an occasional synchronize_srcu(). */
static void poll_writer(struct writer *w)
{
	unsigned int seed = cfg.seed * 31u + (unsigned int)w->index * 7u + 3;
	int t;

	while (!stopping()) {
		unsigned int fresh, old;

		free_retired(w, cookie_done);
		fresh = obj_get(w);
		if (fresh == OBJ_NIL) {
			if (rnd(&seed) % 4 == 0) {
				int t = live_gp_begin("synchronize_srcu() by poll writer", w->index);

				synchronize_srcu(w->dom);   /* for get_state's cookies */
				live_gp_end(t);
			} else
				sleep_ns(10 * 1000);
			continue;
		}
		old = replace_head(w, fresh);
		objs[old].cookie = rnd(&seed) % 3 ? start_poll_synchronize_srcu(w->dom)
						  : get_state_synchronize_srcu(w->dom);
		obj_put(&w->retired, old);
	}
	t = live_gp_begin("synchronize_srcu() by poll writer", w->index);
	synchronize_srcu(w->dom);   /* every GP it asked for has ended */
	live_gp_end(t);
}

static void sync_writer(struct writer *w)
{
	unsigned int seed = cfg.seed * 7919u + (unsigned int)w->index * 104729u + 1;
	unsigned int exp_cut = (unsigned int)(cfg.expedited_ratio * 1000);

	while (!stopping()) {
		unsigned int fresh = obj_get(w);
		long t0;
		int t;

		if (fresh == OBJ_NIL) {
			torture_fail("writer %d: object pool exhausted", w->index);
			torture_stop();
			break;
		}
		obj_put(&w->retired, replace_head(w, fresh));
		t0 = now_ns();
		if (rnd(&seed) % 1000 < exp_cut) {
			t = live_gp_begin("synchronize_srcu_expedited() by writer", w->index);
			synchronize_srcu_expedited(w->dom);
		} else {
			t = live_gp_begin("synchronize_srcu() by writer", w->index);
			synchronize_srcu(w->dom);
		}
		live_gp_end(t);
		note_progress(w, now_ns() - t0);
		free_retired(w, age_one);
		if (rnd(&seed) % 8 == 0)
			sleep_ns(1000 + rnd(&seed) % 50000);
	}
}

void *torture_writer(void *arg)
{
	struct writer *w = arg;

	if (w->kind == WRITER_ASYNC)
		async_writer(w);
	else if (w->kind == WRITER_POLL)
		poll_writer(w);
	else
		sync_writer(w);
	return NULL;
}

/* Objects and writer statistics where the mode puts them; NULL: in this
 * process's own memory. */
void pipeline_setup(struct tobj *o, struct wstats *ws)
{
	nwriters = cfg.writers + cfg.async_writers + cfg.poll_writers;
	nobjs = (unsigned int)nwriters * PER_WRITER;
	own_objs = o ? NULL : calloc(nobjs, sizeof(*objs));
	own_wstats = ws ? NULL : calloc((size_t)nwriters, sizeof(*wstats));
	objs = o ? o : own_objs;
	wstats = ws ? ws : own_wstats;
}

/* Writer i: its objects are objs[i * PER_WRITER ...], the first one
 * published, the others free. */
static void writer_init(int i, struct srcu_struct *dom)
{
	struct writer *w = &writers[i];
	unsigned int first = (unsigned int)i * PER_WRITER;

	w->index = i;
	w->kind = i < cfg.writers ? WRITER_SYNC :
		  i < cfg.writers + cfg.async_writers ? WRITER_ASYNC : WRITER_POLL;
	w->dom = dom;
	w->st = &wstats[i];
	w->free = w->retired = w->recycled = OBJ_NIL;
	for (unsigned int j = first + 1; j < first + PER_WRITER; j++)
		obj_put(&w->free, j);
	objs[first].magic = MAGIC_LIVE;
	objs[first].gen = 1;
	w->cur = first;
	ops->publish(w, first);
	w->st->kind = (int)w->kind;
	w->st->last_progress_ns = now_ns();
}

/* Writers spread over the domains (writers > domains: shared GPs). */
void writers_init(struct srcu_struct *const *doms, int ndoms)
{
	writers = calloc((size_t)nwriters, sizeof(*writers));
	heads = calloc(nobjs, sizeof(*heads));
	if (!writers || !heads || !objs || !wstats) {
		fprintf(stderr, "srcu-torture: out of memory\n");
		exit(2);
	}
	for (int i = 0; i < nwriters; i++)
		writer_init(i, doms[i % ndoms]);
}

void writers_free(void)
{
	free(writers);
	free(heads);
	free(own_objs);
	free(own_wstats);
}

/* ---- the reader's checks ---- */

void check_obj(struct reader_stats *st, const struct tobj *p, unsigned int gen0,
	       const char *when)
{
	unsigned int magic = __atomic_load_n(&p->magic, __ATOMIC_RELAXED);
	unsigned int age = __atomic_load_n(&p->age, __ATOMIC_RELAXED);
	unsigned int gen = __atomic_load_n(&p->gen, __ATOMIC_RELAXED);

	if (magic != MAGIC_LIVE) {
		if (st)
			bump(&st->poisoned);
		torture_fail("a reader found its object poisoned (magic %#x) %s", magic, when);
	} else if (age > 1) {
		if (st)
			bump(&st->aged);
		torture_fail("a reader found its object at pipeline age %u %s: a grace period "
			     "ended while the reader was inside", age, when);
	} else if (gen != gen0) {
		if (st)
			bump(&st->recycled);
		torture_fail("a reader found its object reused (generation %u, was %u) %s", gen,
			     gen0, when);
	}
}

static void record(struct reader_stats *st, unsigned int age, unsigned long batches, long len)
{
	bump(&st->reads);
	bump(&st->pipe[age < HIST ? age : HIST - 1]);
	bump(&st->batch[batches < HIST ? batches : HIST - 1]);
	if (len > st->max_section_ns)
		__atomic_store_n(&st->max_section_ns, len, __ATOMIC_RELAXED);
}

/* Record the end of a section that reached p: its age ("Reader Pipe")
 * and the grace periods completed while inside ("Reader Batch"). */
void record_section(struct reader_stats *st, const struct tobj *p, unsigned long batches,
		    int64_t start)
{
	unsigned int age = __atomic_load_n(&p->age, __ATOMIC_RELAXED);
	int64_t len = now_ns() - start;

	if (batches > 1)
		torture_fail("%lu grace periods completed inside one read-side section", batches);
	if (st) {
		record(st, age, batches, len);
		return;
	}
	pthread_mutex_lock(&stray_lock);
	record(&stray_stats, age, batches, len);
	pthread_mutex_unlock(&stray_lock);
}

void stray_sum(struct totals *t)
{
	pthread_mutex_lock(&stray_lock);
	sum_readers(t, &stray_stats, 1);
	pthread_mutex_unlock(&stray_lock);
}

/* ---- a section ---- */

void stretch_section(struct reader_stats *st, unsigned int *seed, int depth)
{
	const unsigned char *cut = ops->stretch;
	unsigned int r = rnd(seed) % 100;

	if (r < cut[0])
		return;                                         /* nothing */
	if (r < cut[1]) {
		for (volatile unsigned int i = rnd(seed) % 4000; i; i--)
			;                                       /* spin */
		return;
	}
	if (r < cut[2])
		sched_yield();
	else if (r < cut[3])
		sleep_log_uniform(seed, 1000, 100 * 1000);      /* 1 us .. 200 us */
	else if (r < cut[4])
		ops->long_sleep(st, seed);
	else if (depth < ops->max_depth)
		torture_read_section(st, seed, depth + 1);      /* nested: same or another domain */
}

static void note_inside(struct reader_stats *st, int depth, int inside)
{
	if (st && depth == 0)
		__atomic_store_n(&st->inside, inside, __ATOMIC_RELAXED);
}

/* lock, find the object, check, stretch, check, unlock. */
void torture_read_section(struct reader_stats *st, unsigned int *seed, int depth)
{
	struct writer *w = &writers[rnd(seed) % (unsigned int)nwriters];
	int64_t start = now_ns();
	int live_token = depth ? -1 : live_open(start);   /* nested: within this one */
	unsigned long b0;
	struct tobj *p;
	int idx;

	p = ops->enter(w, seed, depth, &idx, &b0);
	note_inside(st, depth, 1);
	if (p) {
		unsigned int gen0 = __atomic_load_n(&p->gen, __ATOMIC_RELAXED);

		check_obj(st, p, gen0, "on entry");
		stretch_section(st, seed, depth);
		check_obj(st, p, gen0, "after stretching its section");
		record_section(st, p, srcu_batches_completed(w->dom) - b0, start);
	}
	note_inside(st, depth, 0);
	srcu_read_unlock(w->dom, idx);
	live_close(live_token);
}
