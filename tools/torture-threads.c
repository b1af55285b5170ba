/*
 * torture-threads.c: srcu-torture's default mode, one process.  Objects
 * are published by pointer (srcu_assign_pointer()/srcu_dereference(), and
 * a quarter of the sections through torture-tso.c's store buffer).
 * Readers stretch their sections every way a user could (spin, yield,
 * sleep up to 10 ms, nest), overlap two sections, and hand a
 * srcu_down_read() section to another thread to end; torture-chaos.c runs
 * beside them.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srcu-torture.h"
#include "../src/torture.h"   /* the library's test-only hooks */

static struct srcu_struct *domains;
static struct reader_stats *rstats;
static __thread struct reader_stats *my_stats;   /* NULL: transient and chaos threads */

/* ---- the pointer flavour ---- */

static void ptr_publish(struct writer *w, unsigned int i)
{
	srcu_assign_pointer(w->head, &objs[i]);
}

static struct tobj *ptr_enter(struct writer *w, unsigned int *seed, int depth, int *idx,
			      unsigned long *b0)
{
	struct tobj *p;

	if (depth == 0 && rnd(seed) % 4 == 0) {   /* a buffered count: torture-tso.c */
		void *obj;

		*idx = tso_read_lock(w->dom, &obj, (void **)&w->head,
				     (long)(20000 + rnd(seed) % 280000));
		p = obj;
	} else {
		*idx = srcu_read_lock(w->dom);
		p = srcu_dereference(w->head, w->dom);
	}
	*b0 = srcu_batches_completed(w->dom);
	return p;
}

static void ptr_long_sleep(struct reader_stats *st, unsigned int *seed)
{
	(void)st;
	sleep_log_uniform(seed, 100 * 1000, 5 * MS);   /* .. 10 ms */
}

/* ---- overlapping sections ---- */

/* One of two overlapping sections: its object and where it began. */
struct overlap {
	struct writer *w;
	struct tobj *p;
	unsigned int gen0;
	unsigned long b0;
	int idx;
};

static void overlap_enter(struct overlap *o, unsigned int *seed)
{
	o->w = &writers[rnd(seed) % (unsigned int)nwriters];
	o->idx = srcu_read_lock(o->w->dom);
	o->b0 = srcu_batches_completed(o->w->dom);
	o->p = srcu_dereference(o->w->head, o->w->dom);
	o->gen0 = __atomic_load_n(&o->p->gen, __ATOMIC_RELAXED);
}

static void overlap_exit(struct overlap *o, const char *when, int64_t start)
{
	check_obj(my_stats, o->p, o->gen0, when);
	record_section(my_stats, o->p, srcu_batches_completed(o->w->dom) - o->b0, start);
	srcu_read_unlock(o->w->dom, o->idx);
}

/* a = lock(A); b = lock(B); unlock(a); ... unlock(b). */
static void overlapping_sections(unsigned int *seed)
{
	int64_t start = now_ns();
	int live_token = live_open(start);
	struct overlap a, b;

	overlap_enter(&a, seed);
	overlap_enter(&b, seed);
	check_obj(my_stats, a.p, a.gen0, "on entry (overlapping)");
	check_obj(my_stats, b.p, b.gen0, "on entry (overlapping)");
	stretch_section(my_stats, seed, 3);
	overlap_exit(&a, "before its overlapping unlock", start);
	stretch_section(my_stats, seed, 3);
	overlap_exit(&b, "after the overlapping unlock", start);
	live_close(live_token);
}

/* ---- srcu_down_read() sections that another thread ends ---- */

#define HANDOFF_MAX 64

struct handoff {
	struct writer *w;
	struct tobj *p;
	unsigned int gen0;
	int idx;
	unsigned long b0;
	int64_t start;
	int live_token;          /* the oracle's, from begin to end */
};

static struct handoff handoffs[HANDOFF_MAX];
static int handoff_count;
static bool handoff_closed;   /* every thread that hands off has ended */
static pthread_mutex_t handoff_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t handoff_cond = PTHREAD_COND_INITIALIZER;

static void end_handoff(struct handoff *h)
{
	check_obj(my_stats, h->p, h->gen0, "in a srcu_down_read() section ended by another thread");
	record_section(my_stats, h->p, srcu_batches_completed(h->w->dom) - h->b0, h->start);
	srcu_up_read(h->w->dom, h->idx);
	live_close(h->live_token);
}

static void down_read_handoff(unsigned int *seed)
{
	struct writer *w = &writers[rnd(seed) % (unsigned int)nwriters];
	struct handoff h = { .w = w, .start = now_ns() };

	h.live_token = live_open(h.start);
	h.idx = srcu_down_read(w->dom);
	h.b0 = srcu_batches_completed(w->dom);
	h.p = srcu_dereference(w->head, w->dom);
	h.gen0 = __atomic_load_n(&h.p->gen, __ATOMIC_RELAXED);
	check_obj(my_stats, h.p, h.gen0, "on entry (srcu_down_read)");
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

static void close_handoffs(void)
{
	pthread_mutex_lock(&handoff_lock);
	handoff_closed = true;
	pthread_cond_broadcast(&handoff_cond);
	pthread_mutex_unlock(&handoff_lock);
}

/* ---- readers ---- */

/* One complete, checked read-side section on a random writer's object
 * (chaos's churned and stormed threads run it too: chaos_start()). */
static void torture_read_once(unsigned int *seed)
{
	unsigned int r = rnd(seed) % 100;

	if (r < 82)
		torture_read_section(my_stats, seed, 0);
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

/* ---- failures, hangs and the report ---- */

static void thr_announce(unsigned long n, const char *msg)
{
	if (n == 0)
		fprintf(stderr, "srcu-torture: first failure after %.2f s: %s\n",
			run->first_failure_s, msg);
}

/* The hung threads cannot be joined, so the run ends here. */
static __attribute__((noreturn)) void end_hung(void)
{
	torture_report();
	fflush(NULL);
	_exit(1);
}

static void thr_live_hangs(void)
{
	end_hung();
}

static void thr_writer_hangs(int i, double secs)
{
	torture_fail("writer %d made no progress for %.0f s: a grace period hangs", i, secs);
	end_hung();
}

static void thr_chaos_hangs(double secs)
{
	torture_fail("the chaos thread made no progress for %.0f s: a grace period, fork or "
		     "cleanup hangs", secs);
	end_hung();
}

static void thr_sum(struct totals *t)
{
	stray_sum(t);
	sum_readers(t, rstats, cfg.readers);
}

/* The oracle's counters, read as they may still move (a hung run). */
static unsigned long lv(const unsigned long *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

static void thr_report_more(const struct totals *t)
{
	(void)t;
	printf("liveness: %lu grace-period waits judged, the longest %.1f ms, %lu failures "
	       "(bound: 3 x the longest section open meanwhile + %.1f s)", lv(&live.waits),
	       __atomic_load_n(&live.longest_wait_ns, __ATOMIC_RELAXED) / 1e6,
	       lv(&live.failures), cfg.liveness_margin_s);
	if (lv(&live.untracked))
		printf(", %lu sections or waits untracked (slots full)", lv(&live.untracked));
	printf("\n");
	if (live.load)
		printf("liveness load: %lu up/down sections handed across exiting threads "
		       "(%lu hand-overs held half done, %lu until a grace period slept on them), "
		       "%lu paced grace periods, %lu srcu_expedite_current() calls\n", lv(&live.pairs),
		       lv(&live.handovers_held), lv(&live.handovers_slept_on),
		       lv(&live.paced_gps), lv(&live.expedite_current));
	if (cfg.chaos)
		chain_report();
	if (cfg.chaos)
		printf("chaos: %lu domains churned, %lu threads churned, %lu forks, %lu signals "
		       "to updaters, %lu sections in signal handlers, ids exhausted after %lu "
		       "domains, exit inside a section %s\n",
		       chaos.domains_churned, chaos.threads_churned, chaos.forks, chaos.signals,
		       chaos.handler_sections, chaos.ids_exhausted_at,
		       chaos.exit_inside_reported ? "reported" : "not injected");
}

static void thr_json_more(FILE *f, const struct totals *t)
{
	(void)t;
	fprintf(f, "  \"liveness\": {\"waits\": %lu, \"longest_wait_us\": %.1f, "
		"\"failures\": %lu, \"margin_s\": %.3f, \"untracked\": %lu, \"pairs\": %lu, "
		"\"handovers_held\": %lu, \"handovers_slept_on\": %lu, \"paced_gps\": %lu, "
		"\"expedite_current\": %lu},\n",
		lv(&live.waits), __atomic_load_n(&live.longest_wait_ns, __ATOMIC_RELAXED) / 1e3,
		lv(&live.failures), cfg.liveness_margin_s, lv(&live.untracked), lv(&live.pairs),
		lv(&live.handovers_held), lv(&live.handovers_slept_on), lv(&live.paced_gps),
		lv(&live.expedite_current));
	fprintf(f, "  \"chaos\": {\"domains_churned\": %lu, \"threads_churned\": %lu, "
		"\"forks\": %lu, \"signals\": %lu, \"handler_sections\": %lu, "
		"\"ids_exhausted_at\": %lu, \"exit_inside_reported\": %s},\n",
		chaos.domains_churned, chaos.threads_churned, chaos.forks, chaos.signals,
		chaos.handler_sections, chaos.ids_exhausted_at,
		chaos.exit_inside_reported ? "true" : "false");
	if (cfg.chaos)
		chain_json(f);
}

/* A line for each concern: objects, sections, failures, the monitor, the
 * report. */
static const struct torture_ops thread_ops = {
	.publish = ptr_publish, .enter = ptr_enter,
	.stretch = { 30, 45, 55, 82, 86 }, .max_depth = 3, .long_sleep = ptr_long_sleep,
	.announce = thr_announce,
	.writer_hangs = thr_writer_hangs, .chaos_hangs = thr_chaos_hangs, .chaos_stall_factor = 1,
	.monitor_progress = true,
	.sum = thr_sum, .report_more = thr_report_more, .json_more = thr_json_more,
};

/* ---- the run ---- */

static struct srcu_struct **domains_init(void)
{
	struct srcu_struct **doms = calloc((size_t)cfg.domains, sizeof(*doms));

	domains = calloc((size_t)cfg.domains, sizeof(*domains));
	if (!domains || !doms) {
		fprintf(stderr, "srcu-torture: out of memory\n");
		exit(2);
	}
	for (int i = 0; i < cfg.domains; i++) {
		static char names[64][24];

		if (init_srcu_struct(&domains[i]) != 0) {
			fprintf(stderr, "srcu-torture: init_srcu_struct failed\n");
			exit(2);
		}
		if (i < 64) {
			snprintf(names[i], sizeof(names[i]), "torture-%d", i);
			srcu_set_name(&domains[i], names[i]);
		}
		doms[i] = &domains[i];
	}
	return doms;
}

static void domains_cleanup(void)
{
	for (int i = 0; i < cfg.domains; i++) {
		int err = cleanup_srcu_struct(&domains[i]);

		if (err)
			torture_fail("cleanup_srcu_struct() of idle domain torture-%d returned %d", i, err);
	}
	free(domains);
}

static void start(void)
{
	printf("srcu-torture: flavor %s, backend %s, %.0f s, %d readers, %d writers, "
	       "%d domains, expedited %.2f, seed %u, reader delay %d/1000, chaos %s\n",
	       cfg.flavor_name, srcu_backend(), cfg.duration_s, cfg.readers, cfg.writers,
	       cfg.domains, cfg.expedited_ratio, cfg.seed, cfg.reader_delay_permille,
	       cfg.chaos ? "on" : "off");
	run->start_ns = now_ns();
	run->torture_pid = (int)getpid();
	snprintf(run->backend, sizeof(run->backend), "%s", srcu_backend());
	snprintf(run->shape, sizeof(run->shape), "%d readers, %d writers, %d domains",
		 cfg.readers, cfg.writers, cfg.domains);
}

static pthread_t *reader_threads, releasers[2];

static void start_threads(void)
{
	int i;

	live_start(thr_live_hangs, cfg.chaos);   /* before any section */
	for (i = 0; i < nwriters; i++) {
		pthread_create(&writers[i].thread, NULL, torture_writer, &writers[i]);
		chaos_note_writer(writers[i].thread);
	}
	for (i = 0; i < cfg.readers; i++)
		pthread_create(&reader_threads[i], NULL, reader, (void *)(uintptr_t)i);
	for (i = 0; i < 2; i++)
		pthread_create(&releasers[i], NULL, releaser, (void *)(uintptr_t)(i + 1));
	if (cfg.chaos)
		chaos_start(torture_read_once);
}

/* Readers end before the handoffs close, which end before the writers
 * (a handed-off section may still hold up their grace periods). */
static void join_threads(void)
{
	int i;

	if (cfg.chaos)
		chaos_stop();
	live_stop_load();
	for (i = 0; i < cfg.readers; i++)
		pthread_join(reader_threads[i], NULL);
	close_handoffs();
	for (i = 0; i < 2; i++)
		pthread_join(releasers[i], NULL);
	for (i = 0; i < nwriters; i++)
		pthread_join(writers[i].thread, NULL);
}

int threads_main(void)
{
	struct srcu_struct **doms;
	int status;

	ops = &thread_ops;
	srcu__torture_flavor = cfg.flavor;
	tso_init();
	srcu__torture_reader_delay = cfg.reader_delay_permille ? torture_reader_delay : NULL;
	start();
	if (cfg.flavor == SRCU_TORTURE_PACEUNBOUNDED && strcmp(srcu_backend(), "membarrier")) {
		printf("SKIP: busted-paceunbounded: backend %s does not pace grace periods\n",
		       srcu_backend());
		return 0;
	}
	if (cfg.chaos)
		chaos_exhaust_ids();
	doms = domains_init();
	pipeline_setup(NULL, NULL);
	writers_init(doms, cfg.domains);
	free(doms);
	rstats = calloc((size_t)cfg.readers, sizeof(*rstats));
	reader_threads = calloc((size_t)cfg.readers, sizeof(*reader_threads));
	if (!rstats || !reader_threads)
		return 2;
	if (cfg.chaos)
		chain_setup();   /* its torture point, before any thread */
	start_threads();
	torture_monitor();
	torture_stop();
	join_threads();
	domains_cleanup();
	live_stop();
	status = torture_report();
	free(reader_threads);
	free(rstats);
	writers_free();
	return status;
}
