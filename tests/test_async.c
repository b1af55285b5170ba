/*
 * test_async: call_srcu() and srcu_barrier() with a bounded backlog, the
 * polled grace-period API (also across the counter's wrap), names and
 * srcu_get_stats().  Each test says the bug it would catch.
 */
#include "check.h"
#include "../src/layout.h"   /* white-box: the private domain layout */

#include <sys/wait.h>

/* ThreadSanitizer's runtime is not fork-safe while other threads run (a
 * child of a fork made mid-batch or from the worker hung in it once under
 * ctest's load): the fork-mid-batch tests run in the other suites only. */
#if defined(__SANITIZE_THREAD__)
#define FORK_MID_BATCH 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FORK_MID_BATCH 0
#endif
#endif
#ifndef FORK_MID_BATCH
#define FORK_MID_BATCH 1
#endif

struct obj {
	struct srcu_head rh;
	int magic;            /* LIVE until its callback ran */
	int *freed_while_read;
};

#define LIVE 0x11FE
#define DEAD 0xDEAD

static struct srcu_struct dom;
static int callbacks_run;

static void obj_free(struct srcu_head *h)
{
	struct obj *o = (struct obj *)h;

	o->magic = DEAD;
	__atomic_fetch_add(&callbacks_run, 1, __ATOMIC_SEQ_CST);
}

/* Bug caught: a callback run before the readers that could see the
 * object have left (call_srcu() not waiting for a GP). */
struct holder { struct obj *o; int inside, release, saw_dead; };

static void *hold_reader(void *arg)
{
	struct holder *h = arg;
	int idx = srcu_read_lock(&dom);

	flag_set(&h->inside);
	flag_wait(&h->release);
	if (__atomic_load_n(&h->o->magic, __ATOMIC_SEQ_CST) != LIVE)
		h->saw_dead = 1;
	srcu_read_unlock(&dom, idx);
	return NULL;
}

static void test_callback_waits_for_readers(void)
{
	struct obj o = { { 0 }, LIVE, 0 };
	struct holder h = { &o, 0, 0, 0 };
	pthread_t t = spawn(hold_reader, &h);

	flag_wait(&h.inside);
	call_srcu(&dom, &o.rh, obj_free);
	sleep_ms(50);                      /* the worker has had every chance */
	CHECK_EQ(o.magic, LIVE);
	flag_set(&h.release);
	join(t);
	srcu_barrier(&dom);
	CHECK_EQ(o.magic, DEAD);
	CHECK_EQ(h.saw_dead, 0);
}

/* Bug caught: srcu_barrier() returning before earlier callbacks ran, or
 * callbacks run out of order. */
static int order_next, order_bad;

struct ordered { struct srcu_head rh; int seq; };

static void ordered_cb(struct srcu_head *h)
{
	struct ordered *o = (struct ordered *)h;

	if (o->seq != order_next)
		order_bad++;
	order_next = o->seq + 1;
}

static void test_barrier_and_order(void)
{
	enum { N = 5000 };
	struct ordered *v = calloc(N, sizeof(*v));

	REQUIRE(v);
	order_next = 0;
	for (int i = 0; i < N; i++) {
		v[i].seq = i;
		call_srcu(&dom, &v[i].rh, ordered_cb);
	}
	srcu_barrier(&dom);
	CHECK_EQ(order_next, N);
	CHECK_EQ(order_bad, 0);
	free(v);
}

/* Bug caught: an unbounded backlog.  With a reader asleep inside, the
 * callbacks cannot run, so a caller must block once the limit is reached
 * instead of queueing more. */
struct flood { int done; };
static struct obj *flood_objs;

static void *flood_caller(void *arg)
{
	struct flood *f = arg;

	for (int i = 0; i < 200; i++)
		call_srcu(&dom, &flood_objs[i].rh, obj_free);
	flag_set(&f->done);
	return NULL;
}

static void test_backpressure(void)
{
	struct obj o = { { 0 }, LIVE, 0 };
	struct holder h = { &o, 0, 0, 0 };
	struct flood f = { 0 };
	struct srcu_stats st;
	pthread_t r, c;

	flood_objs = calloc(200, sizeof(*flood_objs));
	REQUIRE(flood_objs);
	REQUIRE(srcu_set_backlog_limit(&dom, 50) == 0);
	r = spawn(hold_reader, &h);
	flag_wait(&h.inside);
	c = spawn(flood_caller, &f);
	/* Until the flood has blocked (a loaded machine may take a while
	 * to run it at all): then it must stay blocked, not queue. */
	for (int i = 0; i < 10000; i++) {
		REQUIRE(srcu_get_stats(&dom, &st) == 0);
		if (st.backlog_blocked >= 1)
			break;
		sleep_ms(1);
	}
	CHECK(st.backlog_blocked >= 1);
	sleep_ms(100);
	CHECK(!flag_get(&f.done));                 /* blocked, not queueing */
	REQUIRE(srcu_get_stats(&dom, &st) == 0);
	CHECK(st.backlog <= 50);
	/* A thread inside a read-side section must not block (it would wait
	 * for itself): its call goes past the limit. */
	{
		struct obj extra = { { 0 }, LIVE, 0 };
		int idx = srcu_read_lock(&dom);

		call_srcu(&dom, &extra.rh, obj_free);
		srcu_read_unlock(&dom, idx);
		REQUIRE(srcu_get_stats(&dom, &st) == 0);
		CHECK_EQ(st.backlog_overruns, 1ul);
		flag_set(&h.release);
		join(r);
		join(c);
		srcu_barrier(&dom);
		CHECK_EQ(extra.magic, DEAD);
	}
	CHECK(flag_get(&f.done));
	for (int i = 0; i < 200; i++)
		CHECK_EQ(flood_objs[i].magic, DEAD);
	REQUIRE(srcu_set_backlog_limit(&dom, 0) == 0);
	free(flood_objs);
}

/* Bug caught: cleanup_srcu_struct() freeing a domain with callbacks still
 * pending (their memory would be used after the domain died). */
static void test_cleanup_busy(void)
{
	struct srcu_struct d;
	struct obj o = { { 0 }, LIVE, 0 };
	int idx;

	REQUIRE(init_srcu_struct_named(&d, "cleanup-busy") == 0);
	idx = srcu_read_lock(&d);
	call_srcu(&d, &o.rh, obj_free);   /* cannot run: we are inside */
	CHECK_EQ(cleanup_srcu_struct(&d), -EBUSY);
	srcu_read_unlock(&d, idx);
	srcu_barrier(&d);
	CHECK_EQ(o.magic, DEAD);
	CHECK_EQ(cleanup_srcu_struct(&d), 0);
}

/* Bug caught: a callback that queues another callback deadlocking the
 * worker on its own backlog. */
static struct srcu_struct chain_dom;
static struct obj chain[30];
static int chain_next;

static void chain_cb(struct srcu_head *h)
{
	int n = __atomic_load_n(&chain_next, __ATOMIC_SEQ_CST);

	(void)h;
	if (n < 30) {
		__atomic_store_n(&chain_next, n + 1, __ATOMIC_SEQ_CST);
		call_srcu(&chain_dom, &chain[n].rh, chain_cb);
	}
}

static void test_callback_queues_callback(void)
{
	REQUIRE(init_srcu_struct(&chain_dom) == 0);
	REQUIRE(srcu_set_backlog_limit(&chain_dom, 1) == 0);
	chain_next = 1;
	call_srcu(&chain_dom, &chain[0].rh, chain_cb);
	while (__atomic_load_n(&chain_next, __ATOMIC_SEQ_CST) < 30)
		sleep_ms(1);
	srcu_barrier(&chain_dom);
	srcu_barrier(&chain_dom);   /* the last one queued by the callback */
	CHECK_EQ(__atomic_load_n(&chain_next, __ATOMIC_SEQ_CST), 30);
	CHECK_EQ(cleanup_srcu_struct(&chain_dom), 0);
}

/* Bug caught: callbacks lost in a fork child (no worker there), or a
 * child hanging on the parent's worker state. */
static void test_fork(void)
{
	struct obj o = { { 0 }, LIVE, 0 };
	pid_t pid;
	int status;

	call_srcu(&dom, &o.rh, obj_free);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct obj c = { { 0 }, LIVE, 0 };

		call_srcu(&dom, &c.rh, obj_free);
		srcu_barrier(&dom);
		_exit(c.magic == DEAD && o.magic == DEAD ? 0 : 1);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	srcu_barrier(&dom);
	CHECK_EQ(o.magic, DEAD);
}

/* Bug caught: a cookie reported done before a full GP after it, or never
 * done; and (near the wrap) a comparison that is not wrap-safe. */
static void check_polling(struct srcu_struct *d)
{
	unsigned long c0 = get_state_synchronize_srcu(d), c1;
	int tries = 0;

	CHECK(!poll_state_synchronize_srcu(d, c0));
	synchronize_srcu(d);
	CHECK(poll_state_synchronize_srcu(d, c0));
	/* start_poll makes the GP happen with nobody calling synchronize,
	 * (check_poll_waits_for_reader: but not while a reader is inside). */
	c1 = start_poll_synchronize_srcu(d);
	while (!poll_state_synchronize_srcu(d, c1) && tries++ < 5000)
		sleep_us(200);
	CHECK(poll_state_synchronize_srcu(d, c1));
	CHECK(poll_state_synchronize_srcu(d, c0));   /* old cookies stay done */
}

/* Bugs caught: a cookie done while a reader from before its call is still
 * inside; start_poll blocking (or aborting) inside a section. */
static void check_poll_waits_for_reader(struct srcu_struct *d)
{
	struct hold_arg p = { d, 0, 0 };
	pthread_t t = spawn(hold_thread, &p);
	unsigned long c;

	flag_wait(&p.inside);
	{	/* never blocks, even inside a section of the same domain */
		int idx = srcu_read_lock(d);

		c = start_poll_synchronize_srcu(d);
		srcu_read_unlock(d, idx);
	}
	sleep_ms(30);
	CHECK(!poll_state_synchronize_srcu(d, c));
	flag_set(&p.release);
	join(t);
	for (int i = 0; i < 5000 && !poll_state_synchronize_srcu(d, c); i++)
		sleep_us(200);
	CHECK(poll_state_synchronize_srcu(d, c));
}

/* ---- fork while the worker is part-way through a batch ---- */

#define BATCH 50

struct counted {
	struct srcu_head rh;
	int runs;                     /* times its callback ran (this process) */
};

static struct counted batch_objs[BATCH];
static int batch_started;

static void counted_slow(struct srcu_head *h)
{
	struct counted *c = (struct counted *)h;

	__atomic_fetch_add(&batch_started, 1, __ATOMIC_SEQ_CST);
	c->runs++;
	sleep_ms(2);                  /* widens the window for the fork */
}

/* In the child: the callbacks that had run in the parent must not run
 * again; the ones not yet started run once; only the one running at the
 * fork (its thread is gone mid-call) may be left unrun. */
static int child_after_batch_fork(void)
{
	int twice = 0, never = 0;

	alarm(20);
	srcu_barrier(&dom);
	for (int i = 0; i < BATCH; i++) {
		twice += batch_objs[i].runs > 1;
		never += batch_objs[i].runs == 0;
	}
	if (twice)
		fprintf(stderr, "child: %d callbacks ran twice\n", twice);
	if (never > 1)
		fprintf(stderr, "child: %d callbacks never ran\n", never);
	return twice ? 1 : never > 1 ? 2 : 0;
}

/*
 * Bug caught: the worker runs a taken batch without its lock, and the
 * child's fork handler put the whole batch back on the queue, callbacks
 * already run included: the child ran them again (a double free when
 * they free), in 552 of 574 children of the reviewer's loop.
 */
static void test_fork_mid_batch(void)
{
	for (int round = 0; round < 5; round++) {
		int status;
		pid_t pid;

		memset(batch_objs, 0, sizeof(batch_objs));
		__atomic_store_n(&batch_started, 0, __ATOMIC_SEQ_CST);
		for (int i = 0; i < BATCH; i++)
			call_srcu(&dom, &batch_objs[i].rh, counted_slow);
		while (__atomic_load_n(&batch_started, __ATOMIC_SEQ_CST) < 5 + round * 5)
			sleep_us(100);
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0)
			_exit(child_after_batch_fork());
		REQUIRE(waitpid(pid, &status, 0) == pid);
		CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
		srcu_barrier(&dom);
		for (int i = 0; i < BATCH; i++)
			CHECK_EQ(batch_objs[i].runs, 1);
	}
}

/* ---- a callback that forks ---- */

static struct counted cbfork_objs[4];
static struct srcu_head cbfork_done;
static int in_cb_child;
static pid_t cb_child;

static void cbfork_child_done(struct srcu_head *h)
{
	(void)h;
	_exit(0);   /* the child's queue held nothing run before */
}

static void cbfork_run(struct srcu_head *h)
{
	struct counted *c = (struct counted *)h;

	if (++c->runs > 1)
		_exit(1);   /* ran twice (in the child) */
	if (c == &cbfork_objs[1] && !in_cb_child) {
		pid_t pid = fork();

		if (pid == 0) {
			alarm(20);         /* a hang in the child fails it */
			in_cb_child = 1;   /* this worker goes on in the child */
			/* Last in the child's queue: after whatever of the
			 * batch the fork handler might (wrongly) requeue.
			 * Queued here, not by a later callback, which the
			 * parent may not have queued yet at the fork. */
			call_srcu(&dom, &cbfork_done, cbfork_child_done);
		} else {
			cb_child = pid;
		}
	}
}

/*
 * Bug caught (the review after the fix): a callback that calls fork()
 * continues, in the child, as the child's worker, part-way through its
 * batch; the fork handler also put the rest of that batch on the child's
 * queue, so it ran twice there.
 */
static void test_callback_forks(void)
{
	int status;

	memset(cbfork_objs, 0, sizeof(cbfork_objs));
	for (int i = 0; i < 4; i++)
		call_srcu(&dom, &cbfork_objs[i].rh, cbfork_run);
	srcu_barrier(&dom);
	REQUIRE(cb_child > 0);
	REQUIRE(waitpid(cb_child, &status, 0) == cb_child);
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	for (int i = 0; i < 4; i++)
		CHECK_EQ(cbfork_objs[i].runs, 1);
}

/*
 * Bug caught: the child inherited the parent's "worker waits for a GP"
 * flag, and its cleanup_srcu_struct() spun at 100% CPU forever waiting
 * for a worker that does not exist there.
 */
static void test_fork_while_worker_polls(void)
{
	struct srcu_struct d;
	struct hold_arg p = { &d, 0, 0 };
	pthread_t t;
	pid_t pid;
	int status, i;

	REQUIRE(init_srcu_struct_named(&d, "fork-poll") == 0);
	t = spawn(hold_thread, &p);
	flag_wait(&p.inside);
	(void)start_poll_synchronize_srcu(&d);   /* the worker waits for p */
	sleep_ms(20);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(20);                           /* the hang, as a failure */
		/* The cookie pending at the fork is the child's too: -EBUSY
		 * until the child's worker has run its GP, as in a parent. */
		while ((status = cleanup_srcu_struct(&d)) == -EBUSY)
			sleep_us(200);
		_exit(status == 0 ? 0 : 1);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	flag_set(&p.release);
	join(t);
	for (i = 0; i < 5000 && cleanup_srcu_struct(&d) != 0; i++)
		sleep_us(200);
	CHECK(i < 5000);   /* the parent's request ran; cleaned up */
}

/*
 * Bug caught: a cleanup_srcu_struct() that failed with -EBUSY (a reader
 * inside) had stopped the worker before it saw a start_poll request: the
 * cookie never completed unless someone else synchronized (200 of 200).
 */
static void test_poll_survives_busy_cleanup(void)
{
	struct srcu_struct d;
	struct hold_arg p = { &d, 0, 0 };
	unsigned long c;
	pthread_t t;
	int i;

	REQUIRE(init_srcu_struct_named(&d, "poll-busy") == 0);
	for (int round = 0; round < 20; round++) {
		p.inside = p.release = 0;
		t = spawn(hold_thread, &p);
		flag_wait(&p.inside);
		c = start_poll_synchronize_srcu(&d);
		CHECK_EQ(cleanup_srcu_struct(&d), -EBUSY);
		flag_set(&p.release);
		join(t);
		for (i = 0; i < 10000 && !poll_state_synchronize_srcu(&d, c); i++)
			sleep_us(200);
		CHECK(poll_state_synchronize_srcu(&d, c));
	}
	for (i = 0; i < 5000 && cleanup_srcu_struct(&d) != 0; i++)
		sleep_us(200);
	CHECK(i < 5000);
}

static void test_polling_and_wrap(void)
{
	struct srcu_struct d;

	REQUIRE(init_srcu_struct_named(&d, "poll") == 0);
	check_polling(&d);
	check_poll_waits_for_reader(&d);
	REQUIRE(cleanup_srcu_struct(&d) == 0);

	/* As the kernel's tests do: start the counter a few GPs before it
	 * wraps (private fields, set before first use), then cross it. */
	REQUIRE(init_srcu_struct_named(&d, "poll-wrap") == 0);
	srcu__dom_area(&d)->gp_seq = srcu__dom_area(&d)->gp_seq_needed =
		srcu__dom_area(&d)->gp_exp_needed = 0ul - 4 * 3;
	for (int i = 0; i < 6; i++)
		check_polling(&d);
	CHECK(srcu__dom_area(&d)->gp_seq < 100);   /* it did wrap, cookies and all */
	check_poll_waits_for_reader(&d);
	REQUIRE(cleanup_srcu_struct(&d) == 0);
}

static int idle_reader_go, idle_reader_stop;

/* Reads d once, then idles outside any section until told to stop: a
 * thread in d's reader set, so d's grace periods ask for membarriers. */
static void *idle_reader(void *arg)
{
	struct srcu_struct *d = arg;

	srcu_read_unlock(d, srcu_read_lock(d));
	flag_set(&idle_reader_go);
	flag_wait(&idle_reader_stop);
	return NULL;
}

/* Bug caught: fence-service figures that do not count the membarriers a
 * grace period asked for, or count more membarriers than requests. */
static void check_fence_stats(struct srcu_struct *d)
{
	struct srcu_stats before, after;
	pthread_t t = spawn(idle_reader, d);

	flag_wait(&idle_reader_go);
	REQUIRE(srcu_get_stats(d, &before) == 0);
	synchronize_srcu(d);
	REQUIRE(srcu_get_stats(d, &after) == 0);
	if (strcmp(srcu_backend(), "membarrier") == 0) {
		CHECK(after.fence_requests > before.fence_requests);
		CHECK(after.fence_membarriers > before.fence_membarriers);
	} else {
		CHECK_EQ(after.fence_requests, 0ul);   /* plain fences: no service */
	}
	CHECK(after.fence_membarriers <= after.fence_requests);
	flag_set(&idle_reader_stop);
	join(t);
}

/* Bug caught: statistics that do not count what happened. */
static void test_stats(void)
{
	struct srcu_struct d;
	struct srcu_stats st;
	struct obj o[3];

	REQUIRE(init_srcu_struct_named(&d, "stats") == 0);
	REQUIRE(srcu_get_stats(&d, &st) == 0);
	CHECK_EQ(st.gps, 0ul);
	CHECK_EQ(st.callbacks_queued, 0ul);
	synchronize_srcu(&d);
	synchronize_srcu_expedited(&d);
	for (int i = 0; i < 3; i++)
		call_srcu(&d, &o[i].rh, obj_free);
	srcu_barrier(&d);
	{
		int idx = srcu_read_lock(&d);

		srcu_read_unlock(&d, idx);
	}
	REQUIRE(srcu_get_stats(&d, &st) == 0);
	CHECK(st.gps >= 3);               /* 2 calls + at least 1 for callbacks */
	CHECK(st.gps_expedited >= 1);
	CHECK(st.gp_mean_us > 0 && st.gp_max_us >= st.gp_mean_us);
	CHECK_EQ(st.callbacks_queued, 3ul);
	CHECK_EQ(st.callbacks_invoked, 3ul);
	CHECK_EQ(st.backlog, 0ul);
	CHECK(st.reader_threads >= 1);
	check_fence_stats(&d);
	CHECK_EQ(srcu_get_stats(NULL, &st), -EINVAL);
	REQUIRE(cleanup_srcu_struct(&d) == 0);
}

/* Bug caught: misuse that would hang, reported instead. */
static struct srcu_struct misuse_dom;

static void barrier_inside_section(void)
{
	struct obj o = { { 0 }, LIVE, 0 };
	int idx;

	REQUIRE(init_srcu_struct_named(&misuse_dom, "async-misuse") == 0);
	call_srcu(&misuse_dom, &o.rh, obj_free);
	idx = srcu_read_lock(&misuse_dom);
	srcu_barrier(&misuse_dom);
	srcu_read_unlock(&misuse_dom, idx);
}

static void call_null_func(void)
{
	struct obj o;

	REQUIRE(init_srcu_struct_named(&misuse_dom, "async-misuse") == 0);
	call_srcu(&misuse_dom, &o.rh, NULL);
}

int main(void)
{
	watchdog(120);
	REQUIRE(init_srcu_struct_named(&dom, "async") == 0);
	test_callback_waits_for_readers();
	test_barrier_and_order();
	test_backpressure();
	test_cleanup_busy();
	test_callback_queues_callback();
	test_fork();
	test_polling_and_wrap();
	if (FORK_MID_BATCH) {
		test_fork_mid_batch();
		test_callback_forks();
		test_fork_while_worker_polls();
	}
	test_poll_survives_busy_cleanup();
	test_stats();
	CHECK(dies_saying(barrier_inside_section, "srcu_barrier()", "'async-misuse'",
			  "wait for itself", NULL));
	CHECK(dies_saying(call_null_func, "call_srcu()", "NULL callback", NULL));
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
	return check_report("test_async");
}
