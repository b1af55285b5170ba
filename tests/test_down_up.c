/*
 * test_down_up: srcu_down_read() sections may end in another thread with
 * srcu_up_read(), mix with srcu_read_lock() sections, and wake a grace
 * period that sleeps waiting for them.
 */
#include "check.h"
#include "../src/layout.h"   /* white-box: the private domain layout */

static struct srcu_struct dom;
static int handed_idx, handed, ending, returned;

static void *downer(void *arg)
{
	(void)arg;
	handed_idx = srcu_down_read(&dom);
	flag_set(&handed);   /* hand the section to another thread */
	return NULL;         /* and exit: no report, it is not ours any more */
}

static unsigned long sleeps_before;

/* Ends the section only once the grace period sleeps on it (not after a
 * fixed time, which a loaded machine may spend before the GP even
 * starts): the wake-up below is then the only way the GP can end. */
static void *upper(void *arg)
{
	(void)arg;
	flag_wait(&handed);
	while (__atomic_load_n(&srcu__dom_area(&dom)->stat_sleeps, __ATOMIC_RELAXED) == sleeps_before &&
	       !flag_get(&returned))   /* a GP that ignored the section */
		sleep_ms(1);
	sleep_ms(20);
	flag_set(&ending);
	srcu_up_read(&dom, handed_idx);
	return NULL;
}

/* Bugs caught: a grace period that ignores down_read sections, one that
 * is not woken by srcu_up_read(), or down/up counted per thread (the
 * exiting downer would then "end" the section early). */
static void test_cross_thread(void)
{
	pthread_t d, u;

	REQUIRE(init_srcu_struct(&dom) == 0);
	sleeps_before = srcu__dom_area(&dom)->stat_sleeps;
	d = spawn(downer, NULL);
	u = spawn(upper, NULL);
	flag_wait(&handed);
	join(d);
	synchronize_srcu(&dom);   /* sleeps until srcu_up_read() wakes it */
	flag_set(&returned);
	CHECK(flag_get(&ending));
	join(u);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
}

/* Bug caught: the two kinds of section interfering in one domain. */
static void test_mixed(void)
{
	int a, b, c;

	REQUIRE(init_srcu_struct(&dom) == 0);
	a = srcu_read_lock(&dom);
	b = srcu_down_read(&dom);
	srcu_read_unlock(&dom, a);
	CHECK_EQ(cleanup_srcu_struct(&dom), -EBUSY);
	c = srcu_read_lock(&dom);
	srcu_up_read(&dom, b);
	srcu_read_unlock(&dom, c);
	synchronize_srcu(&dom);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
}

static struct srcu_struct busy;
static int busy_stop;

static void *down_up_loop(void *arg)
{
	long n = 0;

	(void)arg;
	while (!flag_get(&busy_stop) || n < 100000) {
		int idx = srcu_down_read(&busy);

		srcu_up_read(&busy, idx);
		n++;
	}
	return NULL;
}

/*
 * Bug caught: srcu_up_read()'s check for a missing srcu_down_read()
 * reading the lock count before the unlock count.  Sections of other
 * threads that start and end between the two loads then make a correct
 * up_read look unmatched, and it aborts.  (srcu-torture found this.)
 */
static void test_concurrent_down_up(void)
{
	pthread_t t[4];
	int i;

	REQUIRE(init_srcu_struct(&busy) == 0);
	for (i = 0; i < 4; i++)
		t[i] = spawn(down_up_loop, NULL);
	for (i = 0; i < 20; i++)
		synchronize_srcu(&busy);
	flag_set(&busy_stop);
	for (i = 0; i < 4; i++)
		join(t[i]);
	CHECK_EQ(cleanup_srcu_struct(&busy), 0);
}

int main(void)
{
	watchdog(60);
	test_cross_thread();
	test_mixed();
	test_concurrent_down_up();
	return check_report("test_down_up");
}
