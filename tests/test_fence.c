/*
 * test_fence: the fence service's sharing rule (src/fence.c), white-box,
 * with the test-only srcu_torture objects.
 *
 * Bug caught: a caller served by the membarrier already in flight when it
 * asked (the busted flavour EARLYFENCE).  Such a membarrier may have
 * passed a reader thread before the caller's unlock sums, so it orders
 * nothing between the caller's sums; on x86 the reordering lasts
 * nanoseconds and no stress test sees it, so this test checks the rule
 * itself.  A hook holds one membarrier "in flight" (marked running, not
 * yet issued); a second caller asks meanwhile and must not return until a
 * membarrier that began after its call has ended.  The test then runs the
 * same scenario with EARLYFENCE and requires that it sees the violation:
 * proof that it can fail.
 *
 * The yield judge (fence.c, "Yield or sleep"), driven with made-up
 * windows.  Bugs caught: a judge that lets waiters yield while most
 * membarriers interrupt a thread (on a quiet machine, 4 updaters' calls/s
 * halve), one whose refusal ends at the first quiet window (the quiet
 * one that its own refusal makes), one that never lets them try again
 * (loaded, they lose about 2x), and a backoff that grows past its bound.
 *
 * Membarriers timed only when wanted (fence.c, TIMED_RUN).  A membarrier
 * made to look costly (the MEMBARRIER point's after-hook spins 3 ms) sets
 * the next paced grace period's gap while paced GPs ask for timing; after
 * a run of GPs that neither pace nor wait, the same membarrier, untimed,
 * sets none.  Bugs caught: timing never on (pacing never gets a gap: the
 * first half fails), timing always on (the second half's gap is 18 ms),
 * and a paced GP that took a gap from a sample older than the untimed run.
 * And a fork child starts with the yield judge cleared: one that fell back
 * to fences would otherwise keep its parent's refusal for good.
 *
 * Also: a caller whose membarrier runner does not come back (held here
 * for 20 ms) runs its own after its patience, instead of stalling every
 * domain; and many threads on many calls all return, and share
 * (membarriers run never exceed fences asked for).
 */
#include "check.h"
#include "../src/internal.h"

#include <sys/wait.h>

static int hold_first, in_flight, release_it;
static int returned_while_held;   /* the second caller, before the release */
static int begun;   /* membarriers begun (the hook's calls) */

static void at_point(enum srcu__torture_point p, void *arg)
{
	(void)arg;
	if (p != SRCU_TORTURE_POINT_FENCE_BEGUN)
		return;
	__atomic_fetch_add(&begun, 1, __ATOMIC_SEQ_CST);
	if (flag_get(&hold_first) && __atomic_exchange_n(&hold_first, 0, __ATOMIC_SEQ_CST)) {
		flag_set(&in_flight);
		flag_wait(&release_it);
	}
}

static void *fence_caller(void *arg)
{
	int *begun_at_return = arg;

	srcu__fence_heavy();
	*begun_at_return = __atomic_load_n(&begun, __ATOMIC_SEQ_CST);
	if (!flag_get(&release_it))
		flag_set(&returned_while_held);
	return NULL;
}

/* Returns whether the second caller was served by a membarrier that
 * began after its call. */
static bool second_caller_gets_its_own(void)
{
	int first_done = 0, second_done = 0, begun_at_call;
	unsigned long mbs, reqs, reqs_before;
	pthread_t a, b;

	in_flight = release_it = returned_while_held = 0;
	flag_set(&hold_first);
	a = spawn(fence_caller, &first_done);
	flag_wait(&in_flight);                 /* a membarrier is in flight */
	begun_at_call = __atomic_load_n(&begun, __ATOMIC_SEQ_CST);
	srcu__fence_stats(&mbs, &reqs_before);
	b = spawn(fence_caller, &second_done);
	do {                                   /* until b has read seq */
		sleep_us(100);
		srcu__fence_stats(&mbs, &reqs);
	} while (reqs == reqs_before);
	sleep_ms(20);                          /* b waits (or gives up, below) */
	flag_set(&release_it);
	join(a);
	join(b);
	return second_done > begun_at_call;
}

static struct srcu_struct paced_dom;
static int inflate, idler_ready, stop_idler;
static int64_t max_gap;
static long long inflate_ns;

static void inflating_hook(enum srcu__torture_point p, void *arg)
{
	if (p == SRCU_TORTURE_POINT_MEMBARRIER && arg && flag_get(&inflate)) {
		long long t = now_ns();

		while (now_ns() - t < inflate_ns)
			;
	} else if (p == SRCU_TORTURE_POINT_PACE) {
		int64_t u = *(int64_t *)arg, gap = u ? u - (int64_t)now_ns() : 0;

		if (gap > max_gap)
			max_gap = gap;
	}
}

/* A reader thread that has read paced_dom once, then waits: its record
 * makes each check's fence A a membarrier. */
static void *idler(void *arg)
{
	(void)arg;
	srcu_read_unlock(&paced_dom, srcu_read_lock(&paced_dom));
	flag_set(&idler_ready);
	flag_wait(&stop_idler);
	return NULL;
}

/* A section since the last GP makes the next GP a paced one. */
static void paced_sync(void)
{
	srcu_read_unlock(&paced_dom, srcu_read_lock(&paced_dom));
	synchronize_srcu(&paced_dom);
}

static void check_timing_wanted(void)
{
	pthread_t t;

	REQUIRE(init_srcu_struct(&paced_dom) == 0);
	t = spawn(idler, NULL);
	flag_wait(&idler_ready);
	inflate_ns = 3 * 1000 * 1000;
	srcu__torture_point = inflating_hook;
	for (int i = 0; i < 5; i++)   /* paced: timing asked for, the floor learned */
		paced_sync();
	flag_set(&inflate);
	paced_sync();                 /* its membarrier timed: 3 ms */
	__atomic_store_n(&inflate, 0, __ATOMIC_SEQ_CST);
	max_gap = 0;
	paced_sync();                 /* its gap follows the 3 ms */
	printf("test_fence: paced after a costly timed membarrier: gap %.3f ms\n", max_gap / 1e6);
	CHECK(max_gap > 5 * 1000 * 1000);
	/* No pacing, no waiter: past the run, membarriers go untimed. */
	for (int i = 0; i < 600; i++)
		synchronize_srcu(&paced_dom);
	srcu_read_unlock(&paced_dom, srcu_read_lock(&paced_dom));
	flag_set(&inflate);
	synchronize_srcu(&paced_dom);   /* unpaced (no section since the last), untimed */
	__atomic_store_n(&inflate, 0, __ATOMIC_SEQ_CST);
	max_gap = 0;
	synchronize_srcu(&paced_dom);   /* paced: no timed sample since the run ended */
	printf("test_fence: paced after an untimed one: gap %.3f ms\n", max_gap / 1e6);
	CHECK(max_gap < 2 * 1000 * 1000);
	srcu__torture_point = NULL;
	flag_set(&stop_idler);
	join(t);
	REQUIRE(cleanup_srcu_struct(&paced_dom) == 0);
}

static void check_fork_clears_judge(void)
{
	int status;
	pid_t pid;

	inflate_ns = 20 * 1000;       /* above the 1-us excess: "interrupting" */
	srcu__torture_point = inflating_hook;
	for (int i = 0; i < 16; i++)
		srcu__fence_heavy();      /* cheap ones: the floor */
	flag_set(&inflate);
	/* Until the judge refuses (it may already, from the hammer above):
	 * from allowing, at most two windows' membarriers, each timed (the
	 * ask) and interrupting (the hook). */
	for (int i = 0; i < 2 * SRCU__YIELD_WINDOW && srcu__fence_waiters_may_yield(false); i++)
		srcu__fence_heavy();
	__atomic_store_n(&inflate, 0, __ATOMIC_SEQ_CST);
	srcu__torture_point = NULL;
	CHECK(!srcu__fence_waiters_may_yield(false));   /* the judge refuses */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(srcu__fence_waiters_may_yield(false) ? 0 : 1);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void *hammer(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20000; i++)
		srcu__fence_heavy();
	return NULL;
}

/* One window of membarriers, `interrupting` of them interrupting someone. */
static void judge_window(struct srcu__yield_judge *j, int interrupting)
{
	for (int i = 0; i < SRCU__YIELD_WINDOW; i++)
		srcu__yield_judge_note(j, i < interrupting);
}

/* How many windows pass before the judge lets waiters yield again (it is
 * refusing now).  Quiet ones: while it refuses, waiters sleep and the
 * membarriers interrupt nobody, which must not end the refusal early. */
static int windows_refused(struct srcu__yield_judge *j)
{
	int n = 0;

	while (!srcu__yield_judge_allows(j) && n <= 2 * SRCU__YIELD_BACKOFF_MAX) {
		judge_window(j, 0);
		n++;
	}
	return n;
}

static void check_yield_judge(void)
{
	struct srcu__yield_judge j = { 0 };
	int expect = 2;

	CHECK(srcu__yield_judge_allows(&j));              /* yields first */
	judge_window(&j, SRCU__YIELD_WINDOW / 4);          /* a quarter: still */
	CHECK(srcu__yield_judge_allows(&j));
	for (int i = 0; i < SRCU__YIELD_WINDOW - 1; i++)   /* judged at a window's end */
		srcu__yield_judge_note(&j, true);
	CHECK(srcu__yield_judge_allows(&j));
	srcu__yield_judge_note(&j, true);
	CHECK(!srcu__yield_judge_allows(&j));
	/* Each failed try doubles the wait for the next, up to the bound. */
	for (int tries = 0; tries < 8; tries++) {
		CHECK_EQ(windows_refused(&j), expect);
		judge_window(&j, SRCU__YIELD_WINDOW);      /* the try fails */
		CHECK(!srcu__yield_judge_allows(&j));
		if (expect < SRCU__YIELD_BACKOFF_MAX)
			expect *= 2;
	}
	CHECK_EQ(windows_refused(&j), SRCU__YIELD_BACKOFF_MAX);
	/* A try that passes keeps the yields and resets the backoff. */
	judge_window(&j, 1);
	CHECK(srcu__yield_judge_allows(&j));
	judge_window(&j, SRCU__YIELD_WINDOW);
	CHECK_EQ(windows_refused(&j), 2);
}

int main(void)
{
	unsigned long mbs, reqs;
	pthread_t t[4];

	struct srcu_struct dom;

	watchdog(60);
	check_yield_judge();
	/* A domain's life links lifecycle.c, whose constructor picks the
	 * backend, out of the static library. */
	REQUIRE(init_srcu_struct(&dom) == 0);
	REQUIRE(cleanup_srcu_struct(&dom) == 0);
	if (strcmp(srcu_backend(), "membarrier") != 0) {
		printf("test_fence: SKIP (no membarrier: the fence is local)\n");
		return 77;
	}
	srcu__torture_point = at_point;
	srcu__fence_patience_ns = (int64_t)60 * 1000 * 1000 * 1000;   /* b waits for the held one */
	CHECK(second_caller_gets_its_own());
	srcu__torture_flavor = SRCU_TORTURE_EARLYFENCE;
	CHECK(!second_caller_gets_its_own());  /* the test sees the bug */
	srcu__torture_flavor = SRCU_TORTURE_CORRECT;
	/* A lock holder that does not come back for 20 ms: b gives up after
	 * its patience (here 5 ms) and runs a membarrier of its own. */
	srcu__fence_patience_ns = 5L * 1000 * 1000;
	CHECK(second_caller_gets_its_own());
	CHECK(flag_get(&returned_while_held));
	srcu__torture_point = NULL;

	for (int i = 0; i < 4; i++)
		t[i] = spawn(hammer, NULL);
	for (int i = 0; i < 4; i++)
		join(t[i]);
	srcu__fence_stats(&mbs, &reqs);
	CHECK(reqs >= 4 * 20000);
	CHECK(mbs <= reqs);
	printf("test_fence: %lu fences asked for, %lu membarriers run (%.2f per membarrier)\n",
	       reqs, mbs, mbs ? (double)reqs / (double)mbs : 0.0);
	check_timing_wanted();
	check_fork_clears_judge();
	return check_report("test_fence");
}
