/*
 * srcu-torture: prove the grace-period guarantee by trying hard to break
 * it, in the manner of the kernel's rcutorture.
 *
 * Writers publish objects with srcu_assign_pointer(), retire the previous
 * one (pipeline age 1) and, after each synchronize_srcu*(), age every
 * retired object by one; at age PIPE_LEN an object is poisoned and reused
 * (never freed, so a stale access reads poison instead of faulting).
 * Readers enter a section, dereference a writer's object and check it
 * while they stretch the section every way a user could (spin, yield,
 * sleep up to 10 ms, nest, overlap, hand a srcu_down_read() section to
 * another thread).  Inside a section an object's age can be at most 1 and
 * at most one grace period can complete: anything else is a failure.
 *
 *   srcu-torture [--duration S] [--readers N] [--writers N] [--domains N]
 *                [--async-writers N] [--poll-writers N]
 *                [--expedited-ratio R] [--seed X] [--flavor F] [--json FILE]
 *                [--reader-delay PERMILLE] [--stop-on-fail] [--no-chaos]
 *                [--stall S] [--signal-storm] [--fork-storm] [--processes N]
 *
 * Writers: --writers call synchronize_srcu*(); --async-writers (default 1)
 * retire through call_srcu(), whose callback poisons; --poll-writers
 * (default 1) keep cookies from start_poll/get_state_synchronize_srcu()
 * and poison once poll_state_synchronize_srcu() says so.
 *
 * Chaos (on unless --no-chaos, see torture-chaos.c) adds, with
 * --signal-storm, read-side sections in signal handlers every ~20 us on
 * the writers and on short-lived reader threads (their first section and
 * their exit under fire), and with --fork-storm a fork() every few ms
 * whose child must finish the callbacks it inherited exactly once.
 *
 * --processes N (torture-procs.c) runs a process-shared domain instead:
 * N reader processes of --readers threads (default 2) each, objects in a
 * shared mapping, and, unless --no-chaos, a reader process SIGKILLed every
 * 100-500 ms; --stall (default 5 there) bounds the wait for grace periods
 * after each kill.  --signal-storm and --fork-storm do not apply there.
 *
 * Flavours: srcu (the library as built), busted-nosync, busted-onescan,
 * busted-nofence, busted-cbnowait, busted-earlypoll (deliberately broken
 * grace periods, callbacks and cookies: the test of the test), and with
 * --processes busted-discardlive (live processes taken for dead).  Exit
 * status 0 only without failure; the last line is PASS or FAIL: <reason>.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>

#include "clock.h"
#include "srcu-torture.h"
#include "../src/torture.h"   /* the library's test-only hooks */

#define HIST         (PIPE_LEN + 1)

struct torture_config cfg = {
	.duration_s = 60, .readers = 0, .writers = 4, .domains = 2,
	.async_writers = 1, .poll_writers = 1,
	.expedited_ratio = 0.25, .seed = 1, .flavor = SRCU_TORTURE_CORRECT,
	.flavor_name = "srcu", .reader_delay_permille = 20, .chaos = true,
	.stall_s = 30,
};
struct writer *writers;
static int nwriters;   /* all kinds */
struct srcu_struct *domains;

static int stop;
static unsigned long failures;
static char first_failure[256];
static double first_failure_s = -1;
static long start_ns;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

/* Statistics, summed from per-reader counters when reported. */
struct reader_stats {
	unsigned long reads, pipe[HIST], batch[HIST];
	long max_section_ns;
};
static struct reader_stats *rstats;
static __thread struct reader_stats *my_stats;
static struct reader_stats stray_stats;   /* transient and chaos threads */
static pthread_mutex_t stray_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- small helpers ---- */

long now_ns(void)
{
	return clock_now_ns();
}

void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000L, ns % 1000000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

bool stopping(void)
{
	return __atomic_load_n(&stop, __ATOMIC_ACQUIRE);
}

static double elapsed_s(void)
{
	return (double)(now_ns() - start_ns) / 1e9;
}

void torture_fail(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&fail_lock);
	if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) == 0) {
		va_start(ap, fmt);
		vsnprintf(first_failure, sizeof(first_failure), fmt, ap);
		va_end(ap);
		first_failure_s = elapsed_s();
		fprintf(stderr, "srcu-torture: first failure after %.2f s: %s\n",
			first_failure_s, first_failure);
	}
	pthread_mutex_unlock(&fail_lock);
	if (cfg.stop_on_fail)
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
}

unsigned long torture_failures(void)
{
	return __atomic_load_n(&failures, __ATOMIC_RELAXED);
}

static unsigned long failures_so_far(void)
{
	unsigned long n;

	pthread_mutex_lock(&fail_lock);
	n = failures;
	pthread_mutex_unlock(&fail_lock);
	return n;
}

/* ---- the reader's checks ---- */

static void check_obj(const struct tobj *p, const char *when)
{
	unsigned int magic = __atomic_load_n(&p->magic, __ATOMIC_RELAXED);
	unsigned int age = __atomic_load_n(&p->age, __ATOMIC_RELAXED);

	if (magic != MAGIC_LIVE)
		torture_fail("a reader found its object poisoned (magic %#x) %s", magic, when);
	else if (age > 1)
		torture_fail("a reader found its object at pipeline age %u %s: a grace "
			     "period ended while the reader was inside", age, when);
}

/* Statistics have one writer; the monitor reads them as it runs. */
static void bump(unsigned long *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

/* Record the end of a section that reached p: its age ("Reader Pipe")
 * and the grace periods completed while inside ("Reader Batch"). */
static void record_section(const struct tobj *p, unsigned long batches, long start)
{
	struct reader_stats *st = my_stats;
	unsigned int age = __atomic_load_n(&p->age, __ATOMIC_RELAXED);
	long len = now_ns() - start;

	if (batches > 1)
		torture_fail("%lu grace periods completed inside one read-side section", batches);
	if (!st) {
		pthread_mutex_lock(&stray_lock);
		st = &stray_stats;
	}
	bump(&st->reads);
	bump(&st->pipe[age < HIST ? age : HIST - 1]);
	bump(&st->batch[batches < HIST ? batches : HIST - 1]);
	if (len > st->max_section_ns)
		__atomic_store_n(&st->max_section_ns, len, __ATOMIC_RELAXED);
	if (st == &stray_stats)
		pthread_mutex_unlock(&stray_lock);
}

/* ---- stretching a section ---- */

static void sleep_log_uniform(unsigned int *seed, long min_ns, long max_ns)
{
	long ns = min_ns;

	/* Doubling with probability 1/2 each time: short sleeps are common,
	 * long ones still happen. */
	while (ns < max_ns && rnd(seed) % 2)
		ns *= 2;
	sleep_ns(ns + (long)(rnd(seed) % (unsigned int)ns));
}

static void read_section(unsigned int *seed, int depth);

static void extend_section(unsigned int *seed, int depth)
{
	unsigned int r = rnd(seed) % 100;

	if (r < 30)
		return;                                         /* nothing */
	if (r < 45) {
		for (volatile unsigned int i = rnd(seed) % 4000; i; i--)
			;                                       /* spin */
		return;
	}
	if (r < 55) {
		sched_yield();
		return;
	}
	if (r < 82) {
		sleep_log_uniform(seed, 1000, 100 * 1000);      /* 1 us .. 200 us */
		return;
	}
	if (r < 86) {
		sleep_log_uniform(seed, 100 * 1000, 5 * 1000 * 1000); /* .. 10 ms */
		return;
	}
	if (depth < 3)
		read_section(seed, depth + 1);   /* nested: same or another domain */
}

/* lock, dereference, check, stretch, check, unlock. */
static void read_section(unsigned int *seed, int depth)
{
	struct writer *w = &writers[rnd(seed) % (unsigned int)nwriters];
	long start = now_ns();
	unsigned long b0;
	struct tobj *p;
	int idx;

	if (depth == 0 && rnd(seed) % 4 == 0) {   /* a buffered count: torture-tso.c */
		void *obj;

		idx = tso_read_lock(w->dom, &obj, (void **)&w->head,
				    (long)(20000 + rnd(seed) % 280000));
		p = obj;
	} else {
		idx = srcu_read_lock(w->dom);
		p = srcu_dereference(w->head, w->dom);
	}
	b0 = srcu_batches_completed(w->dom);

	check_obj(p, "on entry");
	extend_section(seed, depth);
	check_obj(p, "after stretching its section");
	record_section(p, srcu_batches_completed(w->dom) - b0, start);
	srcu_read_unlock(w->dom, idx);
}

/* a = lock(A); b = lock(B); unlock(a); ... unlock(b). */
static void overlapping_sections(unsigned int *seed)
{
	struct writer *wa = &writers[rnd(seed) % (unsigned int)nwriters];
	struct writer *wb = &writers[rnd(seed) % (unsigned int)nwriters];
	long start = now_ns();
	int a = srcu_read_lock(wa->dom);
	unsigned long ba = srcu_batches_completed(wa->dom);
	struct tobj *p = srcu_dereference(wa->head, wa->dom);
	int b = srcu_read_lock(wb->dom);
	unsigned long bb = srcu_batches_completed(wb->dom);
	struct tobj *q = srcu_dereference(wb->head, wb->dom);

	check_obj(p, "on entry (overlapping)");
	check_obj(q, "on entry (overlapping)");
	extend_section(seed, 3);
	check_obj(p, "before its overlapping unlock");
	record_section(p, srcu_batches_completed(wa->dom) - ba, start);
	srcu_read_unlock(wa->dom, a);
	extend_section(seed, 3);
	check_obj(q, "after the overlapping unlock");
	record_section(q, srcu_batches_completed(wb->dom) - bb, start);
	srcu_read_unlock(wb->dom, b);
}

/* ---- srcu_down_read() sections that another thread ends ---- */

#define HANDOFF_MAX 64

struct handoff {
	struct writer *w;
	struct tobj *p;
	int idx;
	unsigned long b0;
	long start;
};

static struct handoff handoffs[HANDOFF_MAX];
static int handoff_count;
static bool handoff_closed;   /* every thread that hands off has ended */
static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_cond = PTHREAD_COND_INITIALIZER;

static void end_handoff(struct handoff *h)
{
	check_obj(h->p, "in a srcu_down_read() section ended by another thread");
	record_section(h->p, srcu_batches_completed(h->w->dom) - h->b0, h->start);
	srcu_up_read(h->w->dom, h->idx);
}

static void down_read_handoff(unsigned int *seed)
{
	struct writer *w = &writers[rnd(seed) % (unsigned int)nwriters];
	struct handoff h = { .w = w, .start = now_ns() };

	h.idx = srcu_down_read(w->dom);
	h.b0 = srcu_batches_completed(w->dom);
	h.p = srcu_dereference(w->head, w->dom);
	check_obj(h.p, "on entry (srcu_down_read)");
	pthread_mutex_lock(&handoff_lock);
	if (handoff_count < HANDOFF_MAX) {
		handoffs[handoff_count++] = h;
		pthread_cond_signal(&handoff_cond);
		pthread_mutex_unlock(&handoff_lock);
		return;
	}
	pthread_mutex_unlock(&handoff_lock);
	end_handoff(&h);   /* queue full: end it here */
}

static void *releaser(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	pthread_mutex_lock(&handoff_lock);
	for (;;) {
		while (!handoff_count && !handoff_closed)
			pthread_cond_wait(&handoff_cond, &handoff_lock);
		if (!handoff_count)
			break;
		struct handoff h = handoffs[--handoff_count];

		pthread_mutex_unlock(&handoff_lock);
		if (rnd(&seed) % 4 == 0)
			sleep_log_uniform(&seed, 1000, 500 * 1000);
		end_handoff(&h);
		pthread_mutex_lock(&handoff_lock);
	}
	pthread_mutex_unlock(&handoff_lock);
	return NULL;
}

void torture_read_once(unsigned int *seed)
{
	unsigned int r = rnd(seed) % 100;

	if (r < 82)
		read_section(seed, 0);
	else if (r < 94)
		overlapping_sections(seed);
	else
		down_read_handoff(seed);
}

static void *reader(void *arg)
{
	unsigned int seed = cfg.seed * 2654435761u + (unsigned int)(uintptr_t)arg * 40503u + 1;

	my_stats = &rstats[(uintptr_t)arg];
	while (!stopping())
		torture_read_once(&seed);
	return NULL;
}

/* The test-only delay between a reader's index load and its count. */
static void reader_delay(void)
{
	static __thread unsigned int seed;

	if (!seed)
		seed = (unsigned int)now_ns() | 1;
	if (rnd(&seed) % 1000 < (unsigned int)cfg.reader_delay_permille)
		sleep_log_uniform(&seed, 1000, 2 * 1000 * 1000);
}

/* ---- writers ---- */

static struct tobj *pool_get(struct writer *w)
{
	struct tobj *o = w->free;

	if (!o) {
		torture_fail("writer %d: object pool exhausted", w->index);
		__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	w->free = o->next;
	return o;
}

/* After a grace period: age the retired objects, poison and reuse the
 * ones at the end of the pipeline. */
static void age_retired(struct writer *w)
{
	struct tobj **pp = &w->retired;

	while (*pp) {
		struct tobj *o = *pp;
		unsigned int age = o->age + 1;

		__atomic_store_n(&o->age, age, __ATOMIC_RELAXED);
		if (age >= PIPE_LEN) {
			__atomic_store_n(&o->magic, MAGIC_POISON, __ATOMIC_RELAXED);
			*pp = o->next;
			o->next = w->free;
			w->free = o;
		} else {
			pp = &o->next;
		}
	}
}

static void note_progress(struct writer *w)
{
	__atomic_store_n(&w->gps, w->gps + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&w->last_progress_ns, now_ns(), __ATOMIC_RELAXED);
}

/* Publish fresh in place of the current object; return the old one. */
static struct tobj *replace_head(struct writer *w, struct tobj *fresh)
{
	struct tobj *old = w->head;

	__atomic_store_n(&fresh->age, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&fresh->magic, MAGIC_LIVE, __ATOMIC_RELAXED);
	srcu_assign_pointer(w->head, fresh);
	__atomic_store_n(&old->age, 1, __ATOMIC_RELAXED);
	return old;
}

/* A grace period has ended since o was replaced: no reader may still see
 * it.  Age it past what a reader tolerates, then poison it. */
static void retire_done(struct tobj *o)
{
	__atomic_store_n(&o->age, PIPE_LEN, __ATOMIC_RELAXED);
	__atomic_store_n(&o->magic, MAGIC_POISON, __ATOMIC_RELAXED);
}

/* call_srcu() callback: poison, hand back to the writer. */
static void async_done(struct srcu_head *h)
{
	struct tobj *o = (struct tobj *)((char *)h - offsetof(struct tobj, rh));
	struct writer *w = o->owner;

	if (__atomic_load_n(&o->magic, __ATOMIC_RELAXED) == MAGIC_POISON)
		torture_fail("a call_srcu() callback ran twice (its object was already poisoned)");
	retire_done(o);
	o->next = __atomic_load_n(&w->recycled, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&w->recycled, &o->next, o, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	note_progress(w);
}

/* Retires through call_srcu(): the callback poisons. */
static void *async_writer(struct writer *w)
{
	while (!stopping()) {
		struct tobj *fresh = w->free;

		if (!fresh) {   /* everything in flight: take what came back */
			w->free = __atomic_exchange_n(&w->recycled, NULL, __ATOMIC_ACQUIRE);
			if (!w->free)
				sleep_ns(20 * 1000);
			continue;
		}
		w->free = fresh->next;
		call_srcu(w->dom, &replace_head(w, fresh)->rh, async_done);
	}
	srcu_barrier(w->dom);
	return NULL;
}

/* Retires with a cookie, poisons once poll_state_synchronize_srcu()
 * says its grace period ended; some cookies come from
 * get_state_synchronize_srcu(), which starts nothing, and are driven by
 * an occasional synchronize_srcu(). */
static void *poll_writer(struct writer *w)
{
	unsigned int seed = cfg.seed * 31u + (unsigned int)w->index * 7u + 3;

	while (!stopping()) {
		struct tobj **pp = &w->retired, *fresh, *old;

		while (*pp) {   /* free what is done */
			struct tobj *o = *pp;

			if (poll_state_synchronize_srcu(w->dom, o->cookie)) {
				retire_done(o);
				*pp = o->next;
				o->next = w->free;
				w->free = o;
				note_progress(w);
			} else {
				pp = &o->next;
			}
		}
		fresh = w->free;
		if (!fresh) {
			if (rnd(&seed) % 4 == 0)
				synchronize_srcu(w->dom);   /* for get_state's cookies */
			else
				sleep_ns(10 * 1000);
			continue;
		}
		w->free = fresh->next;
		old = replace_head(w, fresh);
		old->cookie = rnd(&seed) % 3 ? start_poll_synchronize_srcu(w->dom)
					     : get_state_synchronize_srcu(w->dom);
		old->next = w->retired;
		w->retired = old;
	}
	synchronize_srcu(w->dom);   /* every GP it asked for has ended */
	return NULL;
}

static void *writer(void *arg)
{
	struct writer *w = arg;
	unsigned int seed = cfg.seed * 7919u + (unsigned int)w->index * 104729u + 1;
	unsigned int exp_cut = (unsigned int)(cfg.expedited_ratio * 1000);

	if (w->kind == WRITER_ASYNC)
		return async_writer(w);
	if (w->kind == WRITER_POLL)
		return poll_writer(w);
	while (!stopping()) {
		struct tobj *fresh = pool_get(w), *old;

		if (!fresh)
			break;
		old = replace_head(w, fresh);
		old->next = w->retired;
		w->retired = old;
		if (rnd(&seed) % 1000 < exp_cut)
			synchronize_srcu_expedited(w->dom);
		else
			synchronize_srcu(w->dom);
		age_retired(w);
		note_progress(w);
		if (rnd(&seed) % 8 == 0)
			sleep_ns(1000 + rnd(&seed) % 50000);
	}
	return NULL;
}

static void writers_init(void)
{
	int i, j;

	domains = calloc((size_t)cfg.domains, sizeof(*domains));
	nwriters = cfg.writers + cfg.async_writers + cfg.poll_writers;
	writers = calloc((size_t)nwriters, sizeof(*writers));
	if (!domains || !writers) {
		fprintf(stderr, "srcu-torture: out of memory\n");
		exit(2);
	}
	for (i = 0; i < cfg.domains; i++) {
		static char names[64][24];

		if (init_srcu_struct(&domains[i]) != 0) {
			fprintf(stderr, "srcu-torture: init_srcu_struct failed\n");
			exit(2);
		}
		if (i < 64) {
			snprintf(names[i], sizeof(names[i]), "torture-%d", i);
			srcu_set_name(&domains[i], names[i]);
		}
	}
	for (i = 0; i < nwriters; i++) {
		struct writer *w = &writers[i];

		w->index = i;
		w->kind = i < cfg.writers ? WRITER_SYNC :
			  i < cfg.writers + cfg.async_writers ? WRITER_ASYNC : WRITER_POLL;
		w->dom = &domains[i % cfg.domains];   /* writers > domains: shared GPs */
		for (j = 0; j < PIPE_LEN + 2; j++)
			w->pool[j].owner = w;
		for (j = 1; j < PIPE_LEN + 2; j++) {
			w->pool[j].next = w->free;
			w->free = &w->pool[j];
		}
		w->pool[0].magic = MAGIC_LIVE;
		w->head = &w->pool[0];
		w->last_progress_ns = now_ns();
	}
}

/* ---- totals and the report ---- */

struct totals {
	unsigned long reads, gps, pipe[HIST], batch[HIST];
	unsigned long callbacks, cookies;   /* objects freed by call_srcu, by polling */
	long max_section_ns;
};

static void sum_stats(struct totals *t)
{
	int i, k;

	memset(t, 0, sizeof(*t));
	pthread_mutex_lock(&stray_lock);
	for (i = -1; i < cfg.readers; i++) {
		const struct reader_stats *s = i < 0 ? &stray_stats : &rstats[i];

		t->reads += __atomic_load_n(&s->reads, __ATOMIC_RELAXED);
		for (k = 0; k < HIST; k++) {
			t->pipe[k] += __atomic_load_n(&s->pipe[k], __ATOMIC_RELAXED);
			t->batch[k] += __atomic_load_n(&s->batch[k], __ATOMIC_RELAXED);
		}
		long m = __atomic_load_n(&s->max_section_ns, __ATOMIC_RELAXED);
		if (m > t->max_section_ns)
			t->max_section_ns = m;
	}
	pthread_mutex_unlock(&stray_lock);
	for (i = 0; i < nwriters; i++) {
		unsigned long n = __atomic_load_n(&writers[i].gps, __ATOMIC_RELAXED);

		if (writers[i].kind == WRITER_ASYNC)
			t->callbacks += n;
		else if (writers[i].kind == WRITER_POLL)
			t->cookies += n;
		else
			t->gps += n;
	}
}

static void print_hist(FILE *f, const char *name, const unsigned long *h)
{
	fprintf(f, "%s:", name);
	for (int k = 0; k < HIST; k++)
		fprintf(f, " %lu", h[k]);
	fprintf(f, "\n");
}

static void progress_line(void)
{
	struct totals t;

	sum_stats(&t);
	printf("srcu-torture: %6.1f s  gps %lu  reads %lu  pipe %lu/%lu/%lu+  failures %lu\n",
	       elapsed_s(), t.gps, t.reads, t.pipe[0], t.pipe[1],
	       t.reads - t.pipe[0] - t.pipe[1], failures_so_far());
	fflush(stdout);
}

/* A histogram of PIPE_LEN + 1 counts as a JSON array. */
void torture_json_hist(FILE *f, const unsigned long *h)
{
	fprintf(f, "[");
	for (int k = 0; k < PIPE_LEN + 1; k++)
		fprintf(f, "%s%lu", k ? ", " : "", h[k]);
	fprintf(f, "]");
}

/* The last member, "result" (the PASS/FAIL line, escaped), and the end of
 * the object; closes f. */
void torture_json_close(FILE *f, const char *result)
{
	fprintf(f, "  \"result\": \"");
	for (const char *c = result; *c; c++)
		fputs(*c == '"' ? "\\\"" : *c == '\\' ? "\\\\" : (char[2]){ *c, 0 }, f);
	fprintf(f, "\"\n}\n");
	fclose(f);
}

static void write_json(const struct totals *t, double secs, const char *result)
{
	FILE *f = fopen(cfg.json, "w");

	if (!f) {
		fprintf(stderr, "srcu-torture: cannot write %s: %s\n", cfg.json, strerror(errno));
		return;
	}
	fprintf(f, "{\n  \"flavor\": \"%s\", \"backend\": \"%s\",\n", cfg.flavor_name, srcu_backend());
	fprintf(f, "  \"duration_s\": %.3f, \"readers\": %d, \"writers\": %d, \"domains\": %d,\n",
		secs, cfg.readers, cfg.writers, cfg.domains);
	fprintf(f, "  \"expedited_ratio\": %.3f, \"seed\": %u, \"reader_delay_permille\": %d,\n",
		cfg.expedited_ratio, cfg.seed, cfg.reader_delay_permille);
	fprintf(f, "  \"reads\": %lu, \"grace_periods\": %lu, \"reads_per_s\": %.0f, "
		"\"grace_periods_per_s\": %.0f,\n", t->reads, t->gps, t->reads / secs, t->gps / secs);
	fprintf(f, "  \"max_section_us\": %.1f,\n", t->max_section_ns / 1e3);
	fprintf(f, "  \"call_srcu_callbacks\": %lu,\n  \"polled_cookies\": %lu,\n",
		t->callbacks, t->cookies);
	fprintf(f, "  \"reader_pipe\": ");
	torture_json_hist(f, t->pipe);
	fprintf(f, ",\n  \"reader_batch\": ");
	torture_json_hist(f, t->batch);
	fprintf(f, ",\n  \"chaos\": {\"domains_churned\": %lu, \"threads_churned\": %lu, "
		"\"forks\": %lu, \"signals\": %lu, \"handler_sections\": %lu, "
		"\"ids_exhausted_at\": %lu, \"exit_inside_reported\": %s},\n",
		chaos.domains_churned, chaos.threads_churned, chaos.forks, chaos.signals,
		chaos.handler_sections, chaos.ids_exhausted_at,
		chaos.exit_inside_reported ? "true" : "false");
	fprintf(f, "  \"failures\": %lu, \"first_failure_s\": %.3f,\n", failures, first_failure_s);
	torture_json_close(f, result);
}

static int report(void)
{
	double secs = elapsed_s();
	struct totals t;
	char result[300];

	sum_stats(&t);
	printf("\nsrcu-torture: flavor %s, backend %s, %.1f s, %d readers, %d writers, %d domains\n",
	       cfg.flavor_name, srcu_backend(), secs, cfg.readers, cfg.writers, cfg.domains);
	printf("reads %lu (%.0f/s), grace periods %lu (%.0f/s), longest section %.1f ms\n",
	       t.reads, t.reads / secs, t.gps, t.gps / secs, t.max_section_ns / 1e6);
	printf("call_srcu: %lu objects freed by callbacks (%d writers); polled: %lu objects "
	       "freed by cookies (%d writers)\n", t.callbacks, cfg.async_writers, t.cookies,
	       cfg.poll_writers);
	print_hist(stdout, "Reader Pipe ", t.pipe);
	print_hist(stdout, "Reader Batch", t.batch);
	if (cfg.chaos)
		printf("chaos: %lu domains churned, %lu threads churned, %lu forks, %lu signals "
		       "to updaters, %lu sections in signal handlers, ids exhausted after %lu "
		       "domains, exit inside a section %s\n",
		       chaos.domains_churned, chaos.threads_churned, chaos.forks, chaos.signals,
		       chaos.handler_sections, chaos.ids_exhausted_at,
		       chaos.exit_inside_reported ? "reported" : "not injected");
	if (failures) {
		printf("failures: %lu, the first after %.2f s\n", failures, first_failure_s);
		snprintf(result, sizeof(result), "FAIL: %s", first_failure);
	} else {
		snprintf(result, sizeof(result), "PASS");
	}
	if (cfg.json)
		write_json(&t, secs, result);
	printf("%s\n", result);
	return failures ? 1 : 0;
}

/* ---- the monitor ---- */

/* A thread whose last progress was at *last_ns, longer than --stall ago,
 * fails the run; the hung threads cannot be joined, so it ends here. */
static void fail_if_stalled(const long *last_ns, const char *who, const char *what)
{
	double secs = (double)(now_ns() - __atomic_load_n(last_ns, __ATOMIC_RELAXED)) / 1e9;

	if (secs <= cfg.stall_s)
		return;
	torture_fail("%s made no progress for %.0f s: %s hangs", who, secs, what);
	report();
	fflush(NULL);
	_exit(1);
}

static void check_progress(void)
{
	char who[32];

	if (cfg.chaos && __atomic_load_n(&chaos.last_progress_ns, __ATOMIC_RELAXED))
		fail_if_stalled(&chaos.last_progress_ns, "the chaos thread",
				"a grace period, fork or cleanup");
	for (int i = 0; i < nwriters; i++) {
		snprintf(who, sizeof(who), "writer %d", i);
		fail_if_stalled(&writers[i].last_progress_ns, who, "a grace period");
	}
}

static void monitor(void)
{
	long end = start_ns + (long)(cfg.duration_s * 1e9), next = start_ns;

	while (!stopping() && now_ns() < end) {
		sleep_ns(20 * 1000 * 1000);
		check_progress();
		if (now_ns() >= next) {
			progress_line();
			next += 3L * 1000 * 1000 * 1000;
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
}

/* ---- options ---- */

static const struct { const char *name; int flavor; } flavors[] = {
	{ "srcu", SRCU_TORTURE_CORRECT },
	{ "busted-nosync", SRCU_TORTURE_NOSYNC },
	{ "busted-onescan", SRCU_TORTURE_ONESCAN },
	{ "busted-nofence", SRCU_TORTURE_NOFENCE },
	{ "busted-cbnowait", SRCU_TORTURE_CBNOWAIT },
	{ "busted-earlypoll", SRCU_TORTURE_EARLYPOLL },
	{ "busted-earlyfence", SRCU_TORTURE_EARLYFENCE },
	{ "busted-discardlive", SRCU_TORTURE_DISCARDLIVE },   /* --processes only */
};

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: srcu-torture [--duration S] [--readers N] [--writers N] [--domains N]\n"
		"                    [--async-writers N] [--poll-writers N]\n"
		"                    [--expedited-ratio R] [--seed X] [--flavor F] [--json FILE]\n"
		"                    [--reader-delay PERMILLE] [--stop-on-fail] [--no-chaos] [--stall S]\n"
		"                    [--signal-storm] [--fork-storm] [--processes N]\n"
		"flavors: srcu busted-nosync busted-onescan busted-nofence busted-cbnowait\n"
		"         busted-earlypoll busted-earlyfence busted-discardlive (--processes)\n");
	exit(status);
}

static void parse_flavor(const char *s)
{
	for (size_t i = 0; i < sizeof(flavors) / sizeof(flavors[0]); i++)
		if (!strcmp(s, flavors[i].name)) {
			cfg.flavor = flavors[i].flavor;
			cfg.flavor_name = flavors[i].name;
			return;
		}
	fprintf(stderr, "srcu-torture: unknown flavor '%s'\n", s);
	usage(2);
}

static void parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, 0, 'd' },
		{ "readers", required_argument, 0, 'r' },
		{ "writers", required_argument, 0, 'w' },
		{ "domains", required_argument, 0, 'D' },
		{ "async-writers", required_argument, 0, 'A' },
		{ "poll-writers", required_argument, 0, 'P' },
		{ "expedited-ratio", required_argument, 0, 'e' },
		{ "seed", required_argument, 0, 's' },
		{ "flavor", required_argument, 0, 'f' },
		{ "json", required_argument, 0, 'j' },
		{ "reader-delay", required_argument, 0, 'R' },
		{ "stop-on-fail", no_argument, 0, 'S' },
		{ "no-chaos", no_argument, 0, 'C' },
		{ "stall", required_argument, 0, 'T' },
		{ "signal-storm", no_argument, 0, 'G' },
		{ "fork-storm", no_argument, 0, 'F' },
		{ "processes", required_argument, 0, 'p' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	bool stall_set = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': cfg.duration_s = atof(optarg); break;
		case 'r': cfg.readers = atoi(optarg); break;
		case 'w': cfg.writers = atoi(optarg); break;
		case 'D': cfg.domains = atoi(optarg); break;
		case 'A': cfg.async_writers = atoi(optarg); break;
		case 'P': cfg.poll_writers = atoi(optarg); break;
		case 'e': cfg.expedited_ratio = atof(optarg); break;
		case 's': cfg.seed = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'f': parse_flavor(optarg); break;
		case 'j': cfg.json = optarg; break;
		case 'R': cfg.reader_delay_permille = atoi(optarg); break;
		case 'S': cfg.stop_on_fail = true; break;
		case 'C': cfg.chaos = false; break;
		case 'G': cfg.signal_storm = true; break;
		case 'F': cfg.fork_storm = true; break;
		case 'T': cfg.stall_s = atof(optarg); stall_set = true; break;
		case 'p': cfg.processes = atoi(optarg); break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (cfg.processes < 0 || cfg.processes > P_MAX_PROCS ||
	    (cfg.processes && (cfg.readers > P_MAX_THREADS ||
			       cfg.writers + cfg.async_writers + cfg.poll_writers > P_MAX_WRITERS))) {
		fprintf(stderr, "srcu-torture: --processes takes 1..%d processes of up to %d "
			"readers, and up to %d writers in all\n", P_MAX_PROCS, P_MAX_THREADS,
			P_MAX_WRITERS);
		usage(2);
	}
	if (cfg.flavor == SRCU_TORTURE_DISCARDLIVE && !cfg.processes) {
		fprintf(stderr, "srcu-torture: busted-discardlive breaks shared domains only: "
			"it needs --processes\n");
		usage(2);
	}
	if (cfg.processes) {
		/* Threads per reader process; and a kill's grace periods are
		 * due within a second (doc/shared.md): 5 s is a hang. */
		if (!cfg.readers)
			cfg.readers = 2;
		if (!stall_set)
			cfg.stall_s = 5;
	}
	if (!cfg.readers) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		cfg.readers = n > 1 ? (int)(2 * n) : 2;
	}
	if (cfg.writers < 1 || cfg.domains < 1 || cfg.readers < 1 || cfg.duration_s <= 0 ||
	    cfg.async_writers < 0 || cfg.poll_writers < 0 ||
	    cfg.expedited_ratio < 0 || cfg.expedited_ratio > 1 ||
	    cfg.reader_delay_permille < 0 || cfg.reader_delay_permille > 1000)
		usage(2);
	if (cfg.domains > cfg.writers)
		cfg.domains = cfg.writers;   /* a domain without a writer tests nothing */
	if (!cfg.seed)
		cfg.seed = 1;
}

int main(int argc, char **argv)
{
	pthread_t *rt, rel[2];
	int i;

	parse_options(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (cfg.processes)
		return procs_main();
	srcu__torture_flavor = cfg.flavor;
	tso_init();
	srcu__torture_reader_delay = cfg.reader_delay_permille ? reader_delay : NULL;
	printf("srcu-torture: flavor %s, backend %s, %.0f s, %d readers, %d writers, "
	       "%d domains, expedited %.2f, seed %u, reader delay %d/1000, chaos %s\n",
	       cfg.flavor_name, srcu_backend(), cfg.duration_s, cfg.readers, cfg.writers,
	       cfg.domains, cfg.expedited_ratio, cfg.seed, cfg.reader_delay_permille,
	       cfg.chaos ? "on" : "off");
	start_ns = now_ns();
	if (cfg.chaos)
		chaos_exhaust_ids();
	writers_init();
	rstats = calloc((size_t)cfg.readers, sizeof(*rstats));
	rt = calloc((size_t)cfg.readers, sizeof(*rt));
	if (!rstats || !rt)
		return 2;
	for (i = 0; i < nwriters; i++) {
		pthread_create(&writers[i].thread, NULL, writer, &writers[i]);
		chaos_note_writer(writers[i].thread);
	}
	for (i = 0; i < cfg.readers; i++)
		pthread_create(&rt[i], NULL, reader, (void *)(uintptr_t)i);
	for (i = 0; i < 2; i++)
		pthread_create(&rel[i], NULL, releaser, (void *)(uintptr_t)(i + 1));
	if (cfg.chaos)
		chaos_start();
	monitor();
	if (cfg.chaos)
		chaos_stop();
	for (i = 0; i < cfg.readers; i++)
		pthread_join(rt[i], NULL);
	pthread_mutex_lock(&handoff_lock);
	handoff_closed = true;
	pthread_cond_broadcast(&handoff_cond);
	pthread_mutex_unlock(&handoff_lock);
	for (i = 0; i < 2; i++)
		pthread_join(rel[i], NULL);
	for (i = 0; i < nwriters; i++)
		pthread_join(writers[i].thread, NULL);
	for (i = 0; i < cfg.domains; i++) {
		int err = cleanup_srcu_struct(&domains[i]);

		if (err)
			torture_fail("cleanup_srcu_struct() of idle domain torture-%d returned %d", i, err);
	}
	i = report();
	free(rt);
	free(rstats);
	free(writers);
	free(domains);
	return i;
}
