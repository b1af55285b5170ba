/*
 * test_fast_updown: srcu_down_read_fast()/srcu_up_read_fast() (and their
 * other names, srcu_read_lock_fast_updown()/srcu_read_unlock_fast_updown())
 * on DEFINE_SRCU_FAST_UPDOWN / init_srcu_struct_fast_updown() domains:
 * sections that end in another thread, counted without atomics in each
 * thread's own counters.
 *
 * Bugs caught, each by the named test:
 *  - an up in a thread new to the domain that the scans do not read (its
 *    slot left out of the reader set): the grace period never ends, the
 *    watchdog fires (handoff);
 *  - a grace period that ends while a section handed to another thread is
 *    open: the updater returns while the section is open (handoff,
 *    stress: a reader sees a freed object's poison);
 *  - thread exit that "ends" a down section whose up is still to come (the
 *    per-thread balancing of normal domains): the GP returns while it is
 *    open (down_thread_exits); or that reports an up-only thread's slot as
 *    a misuse, or leaves it unbalanced so GPs hang (up_thread_exits);
 *  - per-thread balance checks applied to the domain: a false "unlock
 *    without lock" abort in every test that hands a section over;
 *  - cleanup that leaves the slots unbalanced: the next domain bound to the
 *    same id reports the up thread's extra unlock (reuse_after_cleanup);
 *  - a fork child that ends the other threads' down sections: its up of
 *    one is reported as an extra up (fork_keeps_sections);
 *  - an extra up, or a section of another kind on the domain, or an up/down
 *    section on another kind of domain, not reported (misuse).
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"

#include <sys/syscall.h>

DEFINE_STATIC_SRCU_FAST_UPDOWN(ud_static);
DEFINE_SRCU_FAST_UPDOWN(ud_global);
static struct srcu_struct ud;

/* Starts a GP and checks it is still waiting after a while. */
static pthread_t sync_start(struct sync_arg *a)
{
	pthread_t t = spawn(sync_thread, a);

	flag_wait(&a->started);
	sleep_ms(100);
	CHECK(!flag_get(&a->done));   /* returned with a section open */
	return t;
}

/* ---- a section that another thread ends ---- */

struct handoff {
	struct srcu_struct *sp;
	struct srcu_ctr *scp;
	int go;
	int hold;   /* the up thread lives on until released */
};

static void *down_here(void *arg)
{
	struct handoff *h = arg;

	h->scp = srcu_down_read_fast(h->sp);
	return NULL;
}

/* A domain the up threads use first, so that their up of the handed
 * section runs inline (the thread has counters), where only its lock
 * word's NOTED bit says it must join the domain's reader set. */
DEFINE_STATIC_SRCU(other);

static void *up_here(void *arg)
{
	struct handoff *h = arg;

	srcu_read_unlock(&other, srcu_read_lock(&other));
	flag_wait(&h->go);
	srcu_up_read_fast(h->sp, h->scp);
	/* Alive until told: its exit would hand its unlock to the domain's
	 * shared counters and hide an up the scans did not read. */
	while (__atomic_load_n(&h->hold, __ATOMIC_SEQ_CST))
		sleep_ms(1);
	return NULL;
}

/* Down in this thread, up in a thread that never used the domain. */
static void test_handoff(struct srcu_struct *sp)
{
	struct handoff h = { sp, NULL, 0, 1 };
	struct sync_arg a = { sp, 0, 0 };
	pthread_t up, gp;

	h.scp = srcu_down_read_fast(sp);
	CHECK(h.scp != NULL);
	CHECK(srcu_read_lock_held(sp));      /* one open (anyone's) */
	up = spawn(up_here, &h);
	gp = sync_start(&a);
	flag_set(&h.go);
	join(gp);                            /* an unread up hangs here */
	CHECK(flag_get(&a.done));
	__atomic_store_n(&h.hold, 0, __ATOMIC_SEQ_CST);
	join(up);
	CHECK(!srcu_read_lock_held(sp));     /* no section open anywhere */
}

/* The kernel's other spelling, and sections on both indices. */
static void test_lock_spelling_across_flip(struct srcu_struct *sp)
{
	struct srcu_ctr *first = srcu_read_lock_fast_updown(sp), *second;
	struct handoff h = { sp, NULL, 1, 0 };
	struct sync_arg a = { sp, 0, 0 }, b = { sp, 0, 0 };
	pthread_t gp;

	gp = sync_start(&a);                 /* flips, waits on first's index */
	second = srcu_read_lock_fast_updown(sp);
	h.scp = first;
	join(spawn(up_here, &h));            /* first ends in another thread */
	join(gp);
	CHECK(flag_get(&a.done));
	gp = sync_start(&b);                 /* waits for second */
	srcu_read_unlock_fast_updown(sp, second);
	join(gp);
	CHECK(flag_get(&b.done));
}

/* The downing thread exits before the up: its open section must not be
 * ended with it. */
static void test_down_thread_exits(struct srcu_struct *sp)
{
	struct handoff h = { sp, NULL, 1, 0 };
	struct sync_arg a = { sp, 0, 0 };
	pthread_t gp;

	join(spawn(down_here, &h));          /* exits with the section open */
	gp = sync_start(&a);
	sleep_ms(50);
	CHECK(!flag_get(&a.done));
	srcu_up_read_fast(sp, h.scp);
	join(gp);
	CHECK(flag_get(&a.done));
}

/* The upping thread exits (its slot: more ups than downs); GPs after it
 * still end, and nothing is reported. */
static void test_up_thread_exits(struct srcu_struct *sp)
{
	for (int i = 0; i < 20; i++) {
		struct handoff h = { sp, srcu_down_read_fast(sp), 1, 0 };

		join(spawn(up_here, &h));
		synchronize_srcu(sp);
		synchronize_srcu_expedited(sp);
	}
}

/* ---- stress: a producer thread downs, a consumer ups, the updater frees */

#define QLEN 64
struct item {
	struct srcu_ctr *scp;
	int *obj;
};
static struct item queue[QLEN];
static unsigned int q_head, q_tail;   /* producer writes head, consumer tail */
static int *shared_obj;
static int stop, bad;
static struct srcu_struct *stress_sp;

static void *producer(void *arg)
{
	(void)arg;
	while (!flag_get(&stop)) {
		unsigned int h = __atomic_load_n(&q_head, __ATOMIC_RELAXED);

		if (h - __atomic_load_n(&q_tail, __ATOMIC_ACQUIRE) == QLEN) {
			sched_yield();
			continue;
		}
		queue[h % QLEN].scp = srcu_down_read_fast(stress_sp);
		queue[h % QLEN].obj = srcu_dereference(shared_obj, stress_sp);
		/* The hand-off: release, as any hand-over between threads. */
		__atomic_store_n(&q_head, h + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	for (;;) {
		unsigned int t = __atomic_load_n(&q_tail, __ATOMIC_RELAXED);

		if (t == __atomic_load_n(&q_head, __ATOMIC_ACQUIRE)) {
			if (flag_get(&stop))
				return NULL;
			sched_yield();
			continue;
		}
		sleep_us(20);   /* the section stays open a while in our hands */
		if (*queue[t % QLEN].obj != 42)
			__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
		srcu_up_read_fast(stress_sp, queue[t % QLEN].scp);
		__atomic_store_n(&q_tail, t + 1, __ATOMIC_RELEASE);
	}
}

static void test_stress(struct srcu_struct *sp)
{
	pthread_t p, c;
	long long end = now_ns() + 1500000000LL;
	int gps = 0;

	stress_sp = sp;
	q_head = q_tail = 0;
	stop = bad = 0;
	shared_obj = malloc(sizeof(int));
	*shared_obj = 42;
	p = spawn(producer, NULL);
	c = spawn(consumer, NULL);
	while (now_ns() < end) {
		int *fresh = malloc(sizeof(int)), *old;

		*fresh = 42;
		old = srcu_replace_pointer(shared_obj, fresh, 1);
		if (gps & 1)
			synchronize_srcu_expedited(sp);
		else
			synchronize_srcu(sp);
		*old = -1;           /* poison: a consumer still holding it sees it */
		free(old);
		gps++;
	}
	flag_set(&stop);
	join(p);
	join(c);
	CHECK_EQ(bad, 0);
	CHECK(gps > 10);
	synchronize_srcu(sp);
	free(shared_obj);
}

/* ---- cleanup, fork ---- */

/* A domain cleaned up after sections handed between threads, and a
 * normal domain bound to the same id next (lowest id first): this
 * thread's slot must be balanced again, or its first GP reports this
 * thread's extra unlock (the up of a section another thread began). */
static void test_reuse_after_cleanup(void)
{
	struct srcu_struct a, b;
	struct handoff h = { &a, NULL, 1, 0 };
	unsigned int word;
	int idx;

	REQUIRE(init_srcu_struct_fast_updown(&a) == 0);
	join(spawn(down_here, &h));
	srcu_up_read_fast(&a, h.scp);        /* this thread: one up, no down */
	word = a.slot_word;
	CHECK_EQ(cleanup_srcu_struct(&a), 0);
	REQUIRE(init_srcu_struct(&b) == 0);
	b.name = "reused";
	REQUIRE(b.slot_word == word);        /* the same id: lowest first */
	idx = srcu_read_lock(&b);
	CHECK(srcu_read_lock_held(&b));
	srcu_read_unlock(&b, idx);
	CHECK(!srcu_read_lock_held(&b));
	synchronize_srcu(&b);
	CHECK_EQ(cleanup_srcu_struct(&b), 0);
}

/* A section a thread began is handed to the forking thread; in the child
 * it is still open (the memory it protects is the child's copy) and ends
 * with the child's up: no report, and the child's GP then ends. */
static void test_fork_keeps_sections(struct srcu_struct *sp)
{
	struct handoff h = { sp, NULL, 1, 0 };
	int status;
	pid_t pid;

	join(spawn(down_here, &h));
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		srcu_up_read_fast(sp, h.scp);
		synchronize_srcu(sp);
		_exit(0);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	srcu_up_read_fast(sp, h.scp);        /* the parent's copy too */
	synchronize_srcu(sp);
}

/* ---- misuse ---- */

static struct srcu_struct plain;

static void extra_up(void)
{
	struct srcu_ctr *scp = srcu_down_read_fast(&ud);

	srcu_up_read_fast(&ud, scp);
	srcu_up_read_fast(&ud, scp);
	synchronize_srcu(&ud);
}

/* The kind is checked off the fast path: on the slow path and at a
 * thread's first count of a domain index (doc/kernel.md).  This thread
 * has counted on these ids, so each misuse runs in a fresh thread. */
static void (*fresh_fn)(void);

static void *fresh_body(void *arg)
{
	(void)arg;
	fresh_fn();
	return NULL;
}

static void in_fresh_thread(void (*fn)(void))
{
	fresh_fn = fn;
	join(spawn(fresh_body, NULL));
}

static void normal_on_updown_body(void)
{
	srcu_read_unlock(&ud_static, srcu_read_lock(&ud_static));
}

static void fast_on_updown_body(void)
{
	srcu_read_unlock_fast(&ud, srcu_read_lock_fast(&ud));
}

static void down_on_updown_body(void)
{
	srcu_up_read(&ud, srcu_down_read(&ud));
}

static void updown_on_plain_body(void)
{
	srcu_up_read_fast(&plain, srcu_down_read_fast(&plain));
}

static struct srcu_ctr *plain_scp;

static void up_on_plain_body(void)
{
	srcu_up_read_fast(&plain, plain_scp);
}

static void normal_on_updown(void) { in_fresh_thread(normal_on_updown_body); }
static void fast_on_updown(void) { in_fresh_thread(fast_on_updown_body); }
static void down_on_updown(void) { in_fresh_thread(down_on_updown_body); }
static void updown_on_plain(void) { in_fresh_thread(updown_on_plain_body); }

/* An up of a plain domain's fast section, in a thread new to it: the up's
 * slow path checks the kind. */
static void up_on_plain(void)
{
	plain_scp = srcu_read_lock_fast(&plain);
	in_fresh_thread(up_on_plain_body);
}

static void test_misuse(void)
{
	REQUIRE(init_srcu_struct_named(&plain, "plain") == 0);
	CHECK(dies_saying(extra_up, "srcu_up_read_fast()", "updown-test",
			  "more often than srcu_down_read_fast()", NULL));
	CHECK(dies_saying(normal_on_updown, "srcu_read_lock()", "ud_static",
			  "reader kind is fast up/down", "this section's is normal", NULL));
	CHECK(dies_saying(fast_on_updown, "srcu_read_lock_fast()", "updown-test",
			  "reader kind is fast up/down", NULL));
	CHECK(dies_saying(down_on_updown, "srcu_down_read()", "updown-test",
			  "reader kind is fast up/down", NULL));
	CHECK(dies_saying(updown_on_plain, "srcu_down_read_fast()", "plain",
			  "reader kind is normal", "this section's is fast up/down", NULL));
	CHECK(dies_saying(up_on_plain, "srcu_up_read_fast()", "plain",
			  "reader kind is normal", NULL));
	CHECK_EQ(cleanup_srcu_struct(&plain), 0);
}

/* Bug caught: a stall report on an up/down domain listed every thread
 * with a non-zero count, the thread that only ended another's section
 * (a negative count) among the holders, and never said that sections had
 * been handed over.  It lists the holder alone now, and the default
 * report says that one section was begun in one thread and ended in
 * another. */
static int hs_reports, hs_ended, hs_go;
static unsigned int hs_nthreads;
static int hs_tid;
static struct srcu_ctr *hs_scp;

static void hs_handler(const struct srcu_stall *s, void *arg)
{
	(void)arg;
	if (!flag_get(&hs_reports)) {
		hs_nthreads = s->nthreads;
		hs_tid = s->nthreads ? s->threads[0].tid : 0;
		flag_set(&hs_reports);
	}
}

static void *hs_ender(void *arg)
{
	srcu_up_read_fast(arg, hs_scp);   /* the main thread's section */
	flag_set(&hs_ended);
	flag_wait(&hs_go);                /* alive: its count stays negative */
	return NULL;
}

static void *hs_sync(void *arg)
{
	synchronize_srcu(arg);
	return NULL;
}

static unsigned int stalls_of(struct srcu_struct *sp)
{
	struct srcu_stats st;

	REQUIRE(srcu_get_stats(sp, &st) == 0);
	return st.stalls;
}

static void test_stall_lists_holders(void)
{
	struct srcu_struct d;
	struct srcu_ctr *mine;
	struct captured c;
	const char *text;
	pthread_t e, g;
	unsigned int n;

	REQUIRE(init_srcu_struct_fast_updown(&d) == 0);
	srcu_set_name(&d, "updown-stall");
	hs_scp = srcu_down_read_fast(&d);
	mine = srcu_down_read_fast(&d);   /* held: the GP stalls on it */
	e = spawn(hs_ender, &d);
	flag_wait(&hs_ended);
	REQUIRE(srcu_set_stall_timeout(&d, 50) == 0);
	srcu_set_stall_handler(hs_handler, NULL);
	g = spawn(hs_sync, &d);
	flag_wait(&hs_reports);
	CHECK_EQ(hs_nthreads, 1);
	CHECK_EQ(hs_tid, syscall(SYS_gettid));
	/* The default report of the next stall deadline. */
	capture_stderr_begin(&c);
	srcu_set_stall_handler(NULL, NULL);
	n = stalls_of(&d);
	/* Two more: the first may be one that read the old handler before
	 * the switch (it reached hs_handler, not stderr). */
	while (stalls_of(&d) < n + 2)
		sleep_ms(5);
	text = capture_stderr_end(&c);
	CHECK(strstr(text, "'updown-stall'") != NULL);
	CHECK(strstr(text, "1 section(s) handed over: begun in one thread, ended by another") != NULL);
	if (!strstr(text, "handed over"))
		fprintf(stderr, "the default report: %s\n", text);
	srcu_up_read_fast(&d, mine);
	join(g);
	flag_set(&hs_go);
	join(e);
	srcu_set_stall_timeout(&d, 0);
	CHECK_EQ(cleanup_srcu_struct(&d), 0);
}

int main(void)
{
	watchdog(100);
	REQUIRE(init_srcu_struct_fast_updown(&ud) == 0);
	srcu_set_name(&ud, "updown-test");
	test_handoff(&ud_static);            /* the static domain's first use */
	test_handoff(&ud);
	test_handoff(&ud_global);
	test_lock_spelling_across_flip(&ud);
	test_down_thread_exits(&ud);
	test_up_thread_exits(&ud);
	test_stress(&ud);
	test_reuse_after_cleanup();
	test_fork_keeps_sections(&ud);
	test_stall_lists_holders();
	test_misuse();
	CHECK_EQ(cleanup_srcu_struct(&ud), 0);
	return check_report("test_fast_updown");
}
