/*
 * test_stall: stall warnings name the threads that hold a grace period up,
 * back off, can be turned off; cross-domain deadlocks are reported instead
 * of hanging.  Each test says the bug it would catch.  Only lower bounds
 * on time are asserted (a report can be late, never early).
 */
#include "check.h"

#define MAX_REPORTS 16

struct seen {
	int n;
	double waited[MAX_REPORTS];
	unsigned int report[MAX_REPORTS];
	int found_reader[MAX_REPORTS];   /* the holder's tid and name listed */
	char domain[64];
};

static int reader_tid;

static void record_stall(const struct srcu_stall *s, void *arg)
{
	struct seen *w = arg;
	int i = w->n;

	if (i >= MAX_REPORTS)
		return;
	w->waited[i] = s->waited_s;
	w->report[i] = s->report;
	for (unsigned int k = 0; k < s->nthreads && k < 16; k++)
		if (s->threads[k].tid == reader_tid && !strcmp(s->threads[k].name, "sleepy-reader"))
			w->found_reader[i] = 1;
	snprintf(w->domain, sizeof(w->domain), "%s", s->domain);
	__atomic_store_n(&w->n, i + 1, __ATOMIC_SEQ_CST);
}

struct holder { struct srcu_struct *d; long hold_ms; int inside; };

static void *sleepy_reader(void *arg)
{
	struct holder *h = arg;
	int idx;

	pthread_setname_np(pthread_self(), "sleepy-reader");
	__atomic_store_n(&reader_tid, (int)gettid(), __ATOMIC_SEQ_CST);
	idx = srcu_read_lock(h->d);
	flag_set(&h->inside);
	sleep_ms(h->hold_ms);
	srcu_read_unlock(h->d, idx);
	return NULL;
}

static void stall_for(struct srcu_struct *d, long hold_ms)
{
	struct holder h = { d, hold_ms, 0 };
	pthread_t t = spawn(sleepy_reader, &h);

	flag_wait(&h.inside);
	synchronize_srcu(d);
	join(t);
}

/* A domain named name with stall timeout ms, stalled for hold_ms, the
 * reports recorded in *w. */
static void stall_recorded(struct srcu_struct *d, const char *name, unsigned int ms,
			   long hold_ms, struct seen *w)
{
	memset(w, 0, sizeof(*w));
	REQUIRE(init_srcu_struct_named(d, name) == 0);
	REQUIRE(srcu_set_stall_timeout(d, ms) == 0);
	srcu_set_stall_handler(record_stall, w);
	stall_for(d, hold_ms);
	srcu_set_stall_handler(NULL, NULL);
}

/* Bugs caught: no report, a report that does not name the holder or the
 * domain, reports without backoff (report k comes at T * (2^k - 1) at the
 * earliest, so a fixed interval shows up as report 3 before 7T). */
static void test_reports_and_backoff(void)
{
	struct srcu_struct d;
	struct srcu_stats st;
	struct seen w;

	stall_recorded(&d, "stall-dom", 40, 400, &w);
	CHECK(w.n >= 1);
	/* Bug caught: the name came with quotes ("'stall-dom'"). */
	CHECK(strcmp(w.domain, "stall-dom") == 0);
	for (int i = 0; i < w.n; i++) {
		double t = 0.040 * ((1 << (i + 1)) - 1);

		CHECK_EQ(w.report[i], (unsigned int)(i + 1));
		CHECK(w.waited[i] >= t - 0.001);
	}
	CHECK(w.found_reader[0]);
	REQUIRE(srcu_get_stats(&d, &st) == 0);
	CHECK_EQ(st.stalls, (unsigned int)w.n);
	REQUIRE(cleanup_srcu_struct(&d) == 0);
}

/* Bug caught: a timeout of 0 not disabling reports. */
static void test_disabled(void)
{
	struct srcu_struct d;
	struct seen w;

	stall_recorded(&d, "quiet-dom", 0, 200, &w);
	CHECK_EQ(w.n, 0);
	REQUIRE(cleanup_srcu_struct(&d) == 0);
}

/* Bug caught: the default handler saying nothing useful on stderr. */
static void test_default_handler(void)
{
	struct srcu_struct d;
	struct captured c;
	const char *out;

	REQUIRE(init_srcu_struct_named(&d, "loud-dom") == 0);
	REQUIRE(srcu_set_stall_timeout(&d, 30) == 0);
	capture_stderr_begin(&c);
	stall_for(&d, 150);
	out = capture_stderr_end(&c);
	CHECK(strstr(out, "stalled") != NULL);
	CHECK(strstr(out, "'loud-dom'") != NULL);
	CHECK(strstr(out, "sleepy-reader") != NULL);
	REQUIRE(cleanup_srcu_struct(&d) == 0);
}

/* Bug caught: the A/B deadlock hanging forever (dies_saying's child
 * alarm would then kill it with SIGALRM, not SIGABRT). */
static struct srcu_struct dom_a, dom_b;
static int both_inside;

/* Inside mine, once both threads are inside, synchronize on other. */
struct cross { struct srcu_struct *mine, *other; };

static void *inside_one_sync_other(void *arg)
{
	struct cross *c = arg;
	int idx = srcu_read_lock(c->mine);

	__atomic_fetch_add(&both_inside, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&both_inside, __ATOMIC_SEQ_CST) < 2)
		sleep_us(100);
	synchronize_srcu(c->other);
	srcu_read_unlock(c->mine, idx);
	return NULL;
}

static void ab_deadlock(void)
{
	struct cross ab = { &dom_a, &dom_b }, ba = { &dom_b, &dom_a };
	pthread_t t1, t2;

	both_inside = 0;
	srcu_set_deadlock_detection(true);
	REQUIRE(init_srcu_struct_named(&dom_a, "dom-A") == 0);
	REQUIRE(init_srcu_struct_named(&dom_b, "dom-B") == 0);
	t1 = spawn(inside_one_sync_other, &ab);
	t2 = spawn(inside_one_sync_other, &ba);
	join(t1);
	join(t2);
}

/* Bug caught: detection crying deadlock where there is none: a reader of
 * A that synchronizes on B while B's reader merely sleeps. */
static void *sleep_in_b(void *arg)
{
	int idx = srcu_read_lock(&dom_b);

	(void)arg;
	flag_set(&both_inside);
	sleep_ms(400);
	srcu_read_unlock(&dom_b, idx);
	return NULL;
}

static void test_no_false_deadlock(void)
{
	pthread_t t;
	int idx;

	srcu_set_deadlock_detection(true);
	REQUIRE(init_srcu_struct_named(&dom_a, "dom-A") == 0);
	REQUIRE(init_srcu_struct_named(&dom_b, "dom-B") == 0);
	both_inside = 0;
	t = spawn(sleep_in_b, NULL);
	flag_wait(&both_inside);
	idx = srcu_read_lock(&dom_a);
	synchronize_srcu(&dom_b);   /* waits 400 ms, no cycle */
	srcu_read_unlock(&dom_a, idx);
	join(t);
	srcu_set_deadlock_detection(false);
	REQUIRE(cleanup_srcu_struct(&dom_a) == 0);
	REQUIRE(cleanup_srcu_struct(&dom_b) == 0);
}

int main(void)
{
	watchdog(120);
	test_reports_and_backoff();
	test_disabled();
	test_default_handler();
	test_no_false_deadlock();
	CHECK(dies_saying(ab_deadlock, "deadlock between SRCU domains", "'dom-A'", "'dom-B'",
			  NULL));
	return check_report("test_stall");
}
