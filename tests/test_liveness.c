/*
 * test_liveness: every grace period ends (doc/design.md, "Liveness").
 * Safety tests catch a grace period that ends too early; these catch one
 * that never ends, or that waits on something other than its readers.
 *
 * Built twice from this file: test_liveness against libsrcu.so (the
 * natural races, as a user's program meets them) and test_liveness_hooks
 * against the torture objects (LIVENESS_HOOKS: the test-only points hold a
 * thread inside a window that is otherwise nanoseconds wide, so each case
 * is decided in every run).  Each runs under both backends.
 *
 * The bugs each case would catch:
 *   handover_churn     (both builds) an exiting thread's hand-over of its
 *                      up/down imbalance that wakes nobody: a check that
 *                      overlapped it counted an ended section as open and
 *                      sleeps until its stall timer (a stall is reported);
 *   handover_down_exits, handover_up_exits  (hooks) the same, decided: the
 *                      exiting thread is held between the hand-over's two
 *                      counts until the GP sleeps, in each direction of
 *                      imbalance; without the wake-up the GP sleeps on;
 *   pace_read_once     (hooks, membarrier) a paced GP that re-reads the
 *                      process's pacing gap after each sleep: while other
 *                      domains' membarriers keep moving the gap (the hook
 *                      moves it at every read), it never ends;
 *   pace_served        (hooks, membarrier) a paced GP that a membarrier
 *                      run meanwhile by another domain does not serve: it
 *                      waits out a gap that the readers have already paid;
 *   cleanup_unpaced    (hooks, membarrier) a GP's pacing left on after it
 *                      ended: cleanup_srcu_struct()'s reader checks pace;
 *   verdict_sleeps     (hooks) an update-side call that busy-waits while
 *                      cleanup holds the domain closed (its CPU time).
 * An argument runs the case it names alone.
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#ifdef LIVENESS_HOOKS
#include "../src/torture.h"
#include "../src/internal.h"
#endif

/* The case named on the command line, or every case. */
static const char *only;

static bool want(const char *name)
{
	return !only || strcmp(only, name) == 0;
}

/* ---- up/down sections handed over by exiting threads ---- */

static struct srcu_struct ud;

struct pass {
	struct srcu_ctr *scp;
	int begun, ended, exit_down, exit_up;
};

static void *down_thread(void *arg)
{
	struct pass *p = arg;

	p->scp = srcu_down_read_fast(&ud);
	flag_set(&p->begun);
	flag_wait(&p->exit_down);
	return NULL;   /* exits with the section open here: hand-over (+1) */
}

static void *up_thread(void *arg)
{
	struct pass *p = arg;

	flag_wait(&p->begun);
	srcu_up_read_fast(&ud, p->scp);
	flag_set(&p->ended);
	flag_wait(&p->exit_up);
	return NULL;   /* exits having ended another's section: hand-over (-1) */
}

/* Sections begun in one new thread and ended in another, both exiting,
 * in either order, while an updater runs grace periods: each GP that
 * overlaps a hand-over must still end.  A GP that sleeps on an ended
 * section is woken only by its stall timer, which reports it. */
static void *churn_updater(void *arg)
{
	int *stop = arg;

	while (!flag_get(stop))
		synchronize_srcu(&ud);
	return NULL;
}

static void test_handover_churn(void)
{
	int stop = 0;
	struct srcu_stats st;
	pthread_t u;
	long long end = now_ns() + 1500LL * 1000000;
	unsigned int rounds = 0;

	REQUIRE(srcu_set_stall_timeout(&ud, 3000) == 0);
	REQUIRE(srcu_get_stats(&ud, &st) == 0);
	unsigned int stalls = st.stalls;
	u = spawn(churn_updater, &stop);
	while (now_ns() < end || rounds < 50) {
		struct pass p = { 0 };
		pthread_t d = spawn(down_thread, &p), up = spawn(up_thread, &p);

		flag_wait(&p.ended);
		flag_set(&p.exit_down);   /* both exit at once, either first */
		flag_set(&p.exit_up);
		join(d);
		join(up);
		rounds++;
	}
	flag_set(&stop);
	join(u);
	REQUIRE(srcu_get_stats(&ud, &st) == 0);
	if (st.stalls != stalls)
		fprintf(stderr, "handover_churn: %u grace period(s) slept past the stall "
			"timeout on ended sections (%u rounds)\n", st.stalls - stalls, rounds);
	CHECK_EQ(st.stalls - stalls, 0);
	REQUIRE(srcu_set_stall_timeout(&ud, SRCU_STALL_DEFAULT_MS) == 0);
}

#ifdef LIVENESS_HOOKS
/* Wait up to s seconds for f: whether it came. */
static bool flag_within(int *f, int s)
{
	long long end = now_ns() + (long long)s * 1000000000LL * test_timeout_scale();

	while (!flag_get(f) && now_ns() < end)
		sleep_us(200);
	return flag_get(f);
}

/* ---- the hooks ---- */

enum pace_mode { PACE_REAL, PACE_MOVING, PACE_FOREVER };
static int hold_handover, handover_mid, handover_go, gp_sleeping;
static int pace_mode, pace_asks, hold_closed, closed_held;

static void hook(enum srcu__torture_point p, void *arg)
{
	switch (p) {
	case SRCU_TORTURE_POINT_HANDOVER:
		if (!flag_get(&hold_handover))
			return;
		flag_set(&handover_mid);
		flag_wait(&handover_go);
		return;
	case SRCU_TORTURE_POINT_GP_SLEEP:
		flag_set(&gp_sleeping);
		return;
	case SRCU_TORTURE_POINT_PACE:
		if (__atomic_load_n(&pace_mode, __ATOMIC_SEQ_CST) == PACE_REAL)
			return;
		__atomic_fetch_add(&pace_asks, 1, __ATOMIC_SEQ_CST);
		/* MOVING: what other domains' membarriers do to the gap,
		 * here at every read; FOREVER: a gap that never ends. */
		*(int64_t *)arg = pace_mode == PACE_MOVING ? now_ns() + 5 * 1000 * 1000 : INT64_MAX;
		return;
	case SRCU_TORTURE_POINT_CLEANUP_CLOSED:
		if (!flag_get(&hold_closed))
			return;
		flag_set(&closed_held);
		sleep_ms(400);
		return;
	default:
		return;
	}
}

/* A GP starts while the exiting thread `exiting` is held between its
 * hand-over's two counts, and goes to sleep on the sections it saw open;
 * then the hand-over completes.  The GP must end. */
static void gp_across_handover(pthread_t exiting, const char *what)
{
	struct sync_arg a = { .sp = &ud };
	pthread_t u;

	flag_wait(&handover_mid);
	gp_sleeping = 0;
	u = spawn(sync_thread, &a);
	if (!flag_within(&gp_sleeping, 10))
		fprintf(stderr, "%s: the GP did not sleep on the half-moved counts\n", what);
	flag_set(&handover_go);
	join(exiting);
	if (!flag_within(&a.done, 10))
		fprintf(stderr, "%s: the GP still sleeps 10 s after the hand-over completed "
			"(nobody woke it)\n", what);
	CHECK(flag_get(&a.done));
	if (flag_get(&a.done))
		join(u);
	hold_handover = handover_mid = handover_go = 0;
}

/* Down in D, up in U; U exits first (unheld), then D exits, held. */
static void test_handover_down_exits(void)
{
	struct pass p = { 0 };
	pthread_t d = spawn(down_thread, &p), up = spawn(up_thread, &p);

	flag_set(&p.exit_up);
	join(up);
	flag_set(&hold_handover);
	flag_set(&p.exit_down);   /* D exits; its hand-over of +1 is held */
	gp_across_handover(d, "handover_down_exits");
}

/* Down in D (kept alive), up in U, which exits held. */
static void test_handover_up_exits(void)
{
	struct pass pd = { 0 }, pu;
	pthread_t d, up;

	d = spawn(down_thread, &pd);
	flag_wait(&pd.begun);
	pu = pd;   /* U ends D's section, then exits at once */
	pu.exit_up = 1;
	flag_set(&hold_handover);
	up = spawn(up_thread, &pu);
	gp_across_handover(up, "handover_up_exits");
	flag_set(&pd.exit_down);
	join(d);   /* D's +1 and U's -1 now both in the shared counters */
}

/* ---- pacing ---- */

static struct srcu_struct dom, other;
static int stop_idler, idler_ready;

/* A thread that has read both domains and idles: every check of either
 * needs a membarrier (another thread may read). */
static void *idler(void *arg)
{
	(void)arg;
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	srcu_read_unlock(&other, srcu_read_lock(&other));
	flag_set(&idler_ready);
	flag_wait(&stop_idler);
	return NULL;
}

/* Readers ran since dom's last GP: its next normal GP is paced. */
static void make_next_gp_paced(void)
{
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	synchronize_srcu(&dom);   /* its first check sees the section */
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
}

static void set_pace(enum pace_mode m)
{
	__atomic_store_n(&pace_asks, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&pace_mode, m, __ATOMIC_SEQ_CST);
}

static void test_pace_read_once(void)
{
	struct sync_arg a = { .sp = &dom };
	pthread_t u;

	make_next_gp_paced();
	set_pace(PACE_MOVING);
	u = spawn(sync_thread, &a);
	if (!flag_within(&a.done, 10))
		fprintf(stderr, "pace_read_once: a paced GP still waits after 10 s and %d reads "
			"of a gap that other membarriers keep moving\n",
			__atomic_load_n(&pace_asks, __ATOMIC_SEQ_CST));
	CHECK(flag_get(&a.done));
	set_pace(PACE_REAL);
	if (flag_get(&a.done))
		join(u);
}

static void test_pace_served(void)
{
	struct sync_arg a = { .sp = &dom };
	pthread_t u;

	make_next_gp_paced();
	srcu__fence_pace_max_ns = (int64_t)600 * 1000 * 1000 * 1000;   /* no bound */
	set_pace(PACE_FOREVER);
	u = spawn(sync_thread, &a);
	while (!__atomic_load_n(&pace_asks, __ATOMIC_SEQ_CST))
		sleep_us(100);
	sleep_ms(20);
	CHECK(!flag_get(&a.done));   /* pacing waits: the case below means something */
	synchronize_srcu_expedited(&other);   /* another domain's membarrier */
	if (!flag_within(&a.done, 10))
		fprintf(stderr, "pace_served: another domain's membarrier did not serve "
			"the paced GP's fence\n");
	CHECK(flag_get(&a.done));
	if (!flag_get(&a.done))
		synchronize_srcu_expedited(&dom);   /* cut it, as the test ends */
	join(u);
	set_pace(PACE_REAL);
	srcu__fence_pace_max_ns = 1000 * 1000;
}

/* Runs cleanup_srcu_struct(&dom) and records its result. */
static int cleanup_done, cleanup_result;

static void *cleanup_thread(void *arg)
{
	(void)arg;
	cleanup_result = cleanup_srcu_struct(&dom);
	flag_set(&cleanup_done);
	return NULL;
}

static void test_cleanup_unpaced(void)
{
	pthread_t c;

	make_next_gp_paced();
	synchronize_srcu(&dom);   /* paced */
	srcu__fence_pace_max_ns = (int64_t)600 * 1000 * 1000 * 1000;
	set_pace(PACE_FOREVER);
	c = spawn(cleanup_thread, NULL);
	if (!flag_within(&cleanup_done, 10))
		fprintf(stderr, "cleanup_unpaced: cleanup_srcu_struct() waits on a pacing "
			"gap (%d asks) after the last GP ended\n",
			__atomic_load_n(&pace_asks, __ATOMIC_SEQ_CST));
	CHECK(flag_get(&cleanup_done));
	CHECK_EQ(__atomic_load_n(&pace_asks, __ATOMIC_SEQ_CST), 0);
	if (flag_get(&cleanup_done)) {
		join(c);
		CHECK_EQ(cleanup_result, 0);
	}
	set_pace(PACE_REAL);
	srcu__fence_pace_max_ns = 1000 * 1000;
}

/* ---- cleanup's verdict ---- */

static struct srcu_struct dv;
static int sync_cpu_ms;

static void *timed_sync(void *arg)
{
	struct timespec a, b;

	(void)arg;
	flag_wait(&closed_held);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	synchronize_srcu(&dv);   /* waits for the verdict, then the reader */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	sync_cpu_ms = (int)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
	return NULL;
}

/* Cleanup holds dv closed for 400 ms (the hook) and then fails (a section
 * is open); a synchronize_srcu() that arrived meanwhile waits for the
 * verdict.  Asleep, it uses next to no CPU; spinning, about 400 ms of it.
 * A bound on CPU time, not on wall time: a loaded machine only lowers a
 * spinner's share, so the case can miss a spinner, never fail a sleeper. */
static void test_verdict_sleeps(void)
{
	pthread_t s;
	int idx;

	REQUIRE(init_srcu_struct(&dv) == 0);
	idx = srcu_read_lock(&dv);
	s = spawn(timed_sync, NULL);
	flag_set(&hold_closed);
	CHECK_EQ(cleanup_srcu_struct(&dv), -EBUSY);
	hold_closed = 0;
	srcu_read_unlock(&dv, idx);
	join(s);
	if (sync_cpu_ms >= 200)
		fprintf(stderr, "verdict_sleeps: the caller spent %d ms of CPU waiting for "
			"cleanup's verdict\n", sync_cpu_ms);
	CHECK_LT(sync_cpu_ms, 200);
	CHECK_EQ(cleanup_srcu_struct(&dv), 0);
}

static void hook_cases(void)
{
	pthread_t i;

	srcu__torture_point = hook;
	REQUIRE(srcu_set_stall_timeout(&ud, 0) == 0);   /* no stall timer to rescue it */
	if (want("handover_down_exits"))
		test_handover_down_exits();
	if (want("handover_up_exits"))
		test_handover_up_exits();
	REQUIRE(srcu_set_stall_timeout(&ud, SRCU_STALL_DEFAULT_MS) == 0);
	if (want("verdict_sleeps"))
		test_verdict_sleeps();
	REQUIRE(init_srcu_struct(&dom) == 0);
	REQUIRE(init_srcu_struct(&other) == 0);
	i = spawn(idler, NULL);
	flag_wait(&idler_ready);
	if (strcmp(srcu_backend(), "membarrier") == 0) {
		if (want("pace_read_once"))
			test_pace_read_once();
		if (want("pace_served"))
			test_pace_served();
		if (want("cleanup_unpaced"))
			test_cleanup_unpaced();
		else
			CHECK_EQ(cleanup_srcu_struct(&dom), 0);
	} else {
		printf("backend %s: no membarrier to pace, pacing cases skipped\n", srcu_backend());
		CHECK_EQ(cleanup_srcu_struct(&dom), 0);
	}
	flag_set(&stop_idler);
	join(i);
	CHECK_EQ(cleanup_srcu_struct(&other), 0);
	srcu__torture_point = NULL;
}
#endif

int main(int argc, char **argv)
{
	only = argc > 1 ? argv[1] : NULL;
	watchdog(100);
	REQUIRE(init_srcu_struct_fast_updown(&ud) == 0);
	if (want("handover_churn"))
		test_handover_churn();
#ifdef LIVENESS_HOOKS
	hook_cases();
#endif
	CHECK_EQ(cleanup_srcu_struct(&ud), 0);
#ifdef LIVENESS_HOOKS
	return check_report("test_liveness_hooks");
#else
	return check_report("test_liveness");
#endif
}
