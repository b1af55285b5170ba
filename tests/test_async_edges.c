/*
 * test_async_edges: call_srcu() and srcu_barrier() at their edges (issue
 * 35): the backlog limit met by callbacks of two domains that feed each
 * other, or inside the caller's own srcu_down_read() section, and a fork()
 * from a signal handler of a thread waiting in srcu_barrier().  Each test
 * says the bug it would catch; a hang is caught by the watchdog.
 */
#include "check.h"

#include <sys/syscall.h>
#include <sys/wait.h>

/* ThreadSanitizer's runtime is not fork-safe while other threads run
 * (test_async.c): the fork test runs in the other suites only. */
#if defined(__SANITIZE_THREAD__)
#define FORK_WITH_THREADS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define FORK_WITH_THREADS 0
#endif
#endif
#ifndef FORK_WITH_THREADS
#define FORK_WITH_THREADS 1
#endif

static struct srcu_stats stats_of(struct srcu_struct *sp)
{
	struct srcu_stats st;

	REQUIRE(srcu_get_stats(sp, &st) == 0);
	return st;
}

/* ---- two domains whose callbacks feed each other ---- */

/* Bug caught: a callback of A that calls call_srcu(&B) at B's limit
 * waited for room in B, and B's callback did the same on A: room is made
 * only when a worker finishes its batch, so neither did (a deadlock, every
 * run).  No thread that runs callbacks waits for room now. */
#define HOP_OBJS 400
#define HOPS 4

static struct srcu_struct dom_a, dom_b;
struct hop {
	struct srcu_head rh;
	int left;             /* hops still to make */
};
static struct hop hops[HOP_OBJS];
static int hops_done;

static void hop_cb(struct srcu_head *h)
{
	struct hop *o = (struct hop *)h;

	if (o->left-- == 0) {
		__atomic_fetch_add(&hops_done, 1, __ATOMIC_SEQ_CST);
		return;
	}
	call_srcu(o->left & 1 ? &dom_b : &dom_a, &o->rh, hop_cb);
}

static void test_domains_feed_each_other(void)
{
	struct srcu_stats a, b;

	REQUIRE(init_srcu_struct_named(&dom_a, "feed-a") == 0);
	REQUIRE(init_srcu_struct_named(&dom_b, "feed-b") == 0);
	REQUIRE(srcu_set_backlog_limit(&dom_a, 4) == 0);
	REQUIRE(srcu_set_backlog_limit(&dom_b, 4) == 0);
	for (int i = 0; i < HOP_OBJS; i++) {
		hops[i].left = HOPS;
		call_srcu(&dom_a, &hops[i].rh, hop_cb);   /* waits at A's limit */
	}
	while (__atomic_load_n(&hops_done, __ATOMIC_SEQ_CST) < HOP_OBJS)
		sleep_ms(1);
	srcu_barrier(&dom_a);
	srcu_barrier(&dom_b);
	a = stats_of(&dom_a);
	b = stats_of(&dom_b);
	CHECK_EQ(a.callbacks_invoked + b.callbacks_invoked,
		 (unsigned long)HOP_OBJS * (HOPS + 1));
	/* The program's thread waited at A's limit; the callbacks never did,
	 * and went past the limits instead. */
	CHECK(a.backlog_blocked > 0);
	CHECK(a.backlog_overruns + b.backlog_overruns > 0);
	CHECK_EQ(cleanup_srcu_struct(&dom_a), 0);
	CHECK_EQ(cleanup_srcu_struct(&dom_b), 0);
}

/* ---- at the limit inside the caller's own down/up section ---- */

/* Bug caught: call_srcu() at the limit inside the caller's own
 * srcu_down_read() (or srcu_down_read_fast()) section waited for room,
 * which needs a grace period that waits for that section: a deadlock on
 * every run (the exemption saw only srcu_read_lock() sections). */
#define CALLS 6

static struct srcu_struct ud;
static struct srcu_head ud_heads[CALLS];
static int ud_runs;

static void ud_cb(struct srcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&ud_runs, 1, __ATOMIC_SEQ_CST);
}

static void check_past_limit_in_section(const char *kind)
{
	struct srcu_stats st = stats_of(&ud);

	CHECK_EQ(ud_runs, CALLS);
	if (st.backlog_overruns == 0)
		fprintf(stderr, "%s: no overrun counted at the limit\n", kind);
	CHECK(st.backlog_overruns > 0);
	CHECK_EQ(st.backlog_blocked, 0ul);
	CHECK_EQ(cleanup_srcu_struct(&ud), 0);
}

static void test_limit_in_down_read(void)
{
	int idx;

	REQUIRE(init_srcu_struct_named(&ud, "down-read") == 0);
	REQUIRE(srcu_set_backlog_limit(&ud, 2) == 0);
	ud_runs = 0;
	idx = srcu_down_read(&ud);
	for (int i = 0; i < CALLS; i++)
		call_srcu(&ud, &ud_heads[i], ud_cb);
	srcu_up_read(&ud, idx);
	srcu_barrier(&ud);
	check_past_limit_in_section("srcu_down_read");
}

static void test_limit_in_down_read_fast(void)
{
	struct srcu_ctr *scp;

	REQUIRE(init_srcu_struct_fast_updown(&ud) == 0);
	REQUIRE(srcu_set_backlog_limit(&ud, 2) == 0);
	ud_runs = 0;
	scp = srcu_down_read_fast(&ud);
	for (int i = 0; i < CALLS; i++)
		call_srcu(&ud, &ud_heads[i], ud_cb);
	srcu_up_read_fast(&ud, scp);
	srcu_barrier(&ud);
	check_past_limit_in_section("srcu_down_read_fast");
}

/* ---- fork() from a signal handler of a thread in srcu_barrier() ---- */

/* Bug caught: the child dropped every srcu_barrier() entry, taking their
 * waiters for the parent's other threads; the forking thread was the
 * waiter, and its barrier never returned in the child. */
#define FORK_CBS 3

static struct srcu_struct fdom;
static struct srcu_head fork_heads[FORK_CBS];
static int fork_runs, waiter_tid;
static pid_t parent_pid, child_pid;

static void fork_cb(struct srcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&fork_runs, 1, __ATOMIC_SEQ_CST);
}

static void fork_in_handler(int sig)
{
	pid_t p = fork();

	(void)sig;
	if (p == 0)
		alarm(30 * test_timeout_scale());   /* the child's watchdog */
	else
		__atomic_store_n(&child_pid, p, __ATOMIC_SEQ_CST);
}

static void *barrier_waiter(void *arg)
{
	(void)arg;
	__atomic_store_n(&waiter_tid, (int)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	srcu_barrier(&fdom);
	if (getpid() != parent_pid)   /* the child's copy of this thread */
		_exit(__atomic_load_n(&fork_runs, __ATOMIC_SEQ_CST) == FORK_CBS ? 0 : 1);
	return NULL;
}

static void test_fork_in_barrier_handler(void)
{
	struct hold_arg held = { .sp = &fdom };   /* holds the callbacks' GP */
	pthread_t reader, waiter;
	int status;

	REQUIRE(init_srcu_struct_named(&fdom, "fork-barrier") == 0);
	parent_pid = getpid();
	signal(SIGUSR1, fork_in_handler);
	reader = spawn(hold_thread, &held);
	flag_wait(&held.inside);
	for (int i = 0; i < FORK_CBS; i++)
		call_srcu(&fdom, &fork_heads[i], fork_cb);
	waiter = spawn(barrier_waiter, NULL);
	/* Its entry queued (the backlog counts it), then the thread asleep. */
	while (stats_of(&fdom).backlog < FORK_CBS + 1 || !waiter_tid ||
	       thread_state(waiter_tid) != 'S')
		sleep_ms(1);
	pthread_kill(waiter, SIGUSR1);
	while (!__atomic_load_n(&child_pid, __ATOMIC_SEQ_CST))
		sleep_ms(1);
	REQUIRE(waitpid(child_pid, &status, 0) == child_pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "fork child's srcu_barrier(): status %#x (2: it never "
			"returned)\n", status);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	flag_set(&held.release);
	join(reader);
	join(waiter);
	CHECK_EQ(fork_runs, FORK_CBS);
	signal(SIGUSR1, SIG_DFL);
	CHECK_EQ(cleanup_srcu_struct(&fdom), 0);
}

/* Each test by name (all when none is given): on a build that hangs in
 * one, the others still show. */
static const struct { const char *name; void (*fn)(void); bool fork; } tests[] = {
	{ "feed", test_domains_feed_each_other, false },
	{ "down_read", test_limit_in_down_read, false },
	{ "down_read_fast", test_limit_in_down_read_fast, false },
	{ "fork_barrier", test_fork_in_barrier_handler, true },
};

int main(int argc, char **argv)
{
	watchdog(60);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if ((argc < 2 || !strcmp(argv[1], tests[i].name)) &&
		    (FORK_WITH_THREADS || !tests[i].fork))
			tests[i].fn();
	return check_report("test_async_edges");
}
