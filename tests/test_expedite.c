/*
 * test_expedite: srcu_expedite_current() and the pacing of normal grace
 * periods (doc/design.md, "Readers first").  White-box: linked with the
 * torture objects, whose PACE point lets the test choose the pacing gap.
 *
 * The bugs each case would catch:
 *   collapse     each call queuing a GP of its own (2+ expedited GPs), or
 *                a request that is lost when no GP runs (0);
 *   mid_gp       a request made while a GP runs that does not reach it
 *                (the GP that is waiting on a reader stays normal);
 *   idle_unpaced a normal GP of a domain whose readers did not run since
 *                its last GP waiting out a pacing gap (an idle domain's
 *                synchronize_srcu() must stay as fast as an expedited one);
 *   paced_cut    a paced GP that an expedite request does not wake (the
 *                caller would wait out the whole gap: here, for ever);
 *                the same for a synchronize_srcu_expedited() caller.
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#include "../src/torture.h"
#include "../src/internal.h"

static struct srcu_struct dom;

static unsigned long exp_gps(void)
{
	struct srcu_stats st;

	REQUIRE(srcu_get_stats(&dom, &st) == 0);
	return st.gps_expedited;
}

static void test_collapse(void)
{
	unsigned long before = exp_gps();

	for (int i = 0; i < 1000; i++)
		srcu_expedite_current(&dom);
	synchronize_srcu(&dom);   /* the next GP to start: expedited */
	synchronize_srcu(&dom);   /* the one after: normal again */
	CHECK_EQ(exp_gps() - before, 1);
}

/* A reader that idles: its record makes every check need membarrier
 * (another thread may read). */
static int stop_idler, idler_ready;

static void *idler(void *arg)
{
	(void)arg;
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	flag_set(&idler_ready);
	flag_wait(&stop_idler);
	return NULL;
}

static void *sync_expedited(void *arg)
{
	(void)arg;
	synchronize_srcu_expedited(&dom);
	return NULL;
}

static void test_mid_gp(void)
{
	unsigned long before = exp_gps(), done = srcu_batches_completed(&dom);
	struct hold_arg held = { .sp = &dom };   /* a section held until told */
	struct sync_arg a = { .sp = &dom };
	pthread_t h, u;

	h = spawn(hold_thread, &held);
	flag_wait(&held.inside);
	u = spawn(sync_thread, &a);
	sleep_ms(50);                 /* the GP runs, waiting for the holder */
	CHECK(!flag_get(&a.done));
	srcu_expedite_current(&dom);
	flag_set(&held.release);
	join(u);
	join(h);
	CHECK_EQ(srcu_batches_completed(&dom) - done, 1);
	CHECK_EQ(exp_gps() - before, 1);
}

/* The PACE hook: a gap that never ends, while armed; counts the asks. */
static int pace_forever, pace_asks;

static void pace_hook(enum srcu__torture_point p, void *arg)
{
	if (p != SRCU_TORTURE_POINT_PACE || !flag_get(&pace_forever))
		return;
	__atomic_fetch_add(&pace_asks, 1, __ATOMIC_SEQ_CST);
	*(int64_t *)arg = INT64_MAX;
}

static void test_idle_unpaced(void)
{
	synchronize_srcu(&dom);   /* no section since the last GP: unpaced */
	synchronize_srcu(&dom);
	flag_set(&pace_forever);
	synchronize_srcu(&dom);   /* would wait for ever if paced */
	CHECK_EQ(__atomic_load_n(&pace_asks, __ATOMIC_SEQ_CST), 0);
	pace_forever = 0;
}

/* Readers ran since the last GP: the next normal GP is paced, and waits
 * (the hook's gap is endless) until cut short by way of cut(). */
static void paced_then_cut(void (*cut)(void), const char *what)
{
	unsigned long before = exp_gps();
	struct sync_arg a = { .sp = &dom };
	pthread_t u;

	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	synchronize_srcu(&dom);   /* its first check sees the section */
	pace_asks = 0;
	/* Past the bound a paced GP goes on unpaced: lift it, so that only
	 * the cut can end this one. */
	srcu__fence_pace_max_ns = (int64_t)600 * 1000 * 1000 * 1000;
	flag_set(&pace_forever);
	u = spawn(sync_thread, &a);
	while (!__atomic_load_n(&pace_asks, __ATOMIC_SEQ_CST))
		sleep_us(100);
	sleep_ms(20);
	if (flag_get(&a.done))
		fprintf(stderr, "%s: the paced GP did not wait\n", what);
	CHECK(!flag_get(&a.done));
	cut();
	join(u);   /* hangs (the watchdog fails the test) if not cut */
	pace_forever = 0;
	srcu__fence_pace_max_ns = 1000 * 1000;
	CHECK(exp_gps() - before >= 1);
}

static void cut_by_expedite_current(void)
{
	srcu_expedite_current(&dom);
}

static void cut_by_expedited_caller(void)
{
	join(spawn(sync_expedited, NULL));
}

int main(void)
{
	pthread_t i;

	watchdog(60);
	REQUIRE(init_srcu_struct(&dom) == 0);
	test_collapse();
	i = spawn(idler, NULL);
	flag_wait(&idler_ready);
	test_mid_gp();
	if (strcmp(srcu_backend(), "membarrier") == 0) {
		srcu__torture_point = pace_hook;
		test_idle_unpaced();
		paced_then_cut(cut_by_expedite_current, "srcu_expedite_current");
		paced_then_cut(cut_by_expedited_caller, "synchronize_srcu_expedited");
		srcu__torture_point = NULL;
	} else {
		printf("backend %s: no membarrier to pace, pacing cases skipped\n", srcu_backend());
	}
	flag_set(&stop_idler);
	join(i);
	CHECK(cleanup_srcu_struct(&dom) == 0);
	return check_report("test_expedite");
}
