/*
 * test_down_up: srcu_down_read() sections may end in another thread with
 * srcu_up_read(), mix with srcu_read_lock() sections, and wake a grace
 * period that sleeps waiting for them.
 */
#include "check.h"

static struct srcu_struct dom;
static int handed_idx, handed, ending;

static void *downer(void *arg)
{
	(void)arg;
	handed_idx = srcu_down_read(&dom);
	flag_set(&handed);   /* hand the section to another thread */
	return NULL;         /* and exit: no report, it is not ours any more */
}

static void *upper(void *arg)
{
	(void)arg;
	flag_wait(&handed);
	sleep_ms(200);
	flag_set(&ending);
	srcu_up_read(&dom, handed_idx);
	return NULL;
}

/* Bugs caught: a grace period that ignores down_read sections, one that
 * is not woken by srcu_up_read(), or down/up counted per thread (the
 * exiting downer would then "end" the section early). */
static void test_cross_thread(void)
{
	unsigned long sleeps;
	pthread_t d, u;

	REQUIRE(init_srcu_struct(&dom) == 0);
	d = spawn(downer, NULL);
	u = spawn(upper, NULL);
	flag_wait(&handed);
	join(d);
	sleeps = dom.stat_sleeps;
	synchronize_srcu(&dom);
	CHECK(flag_get(&ending));
	CHECK(dom.stat_sleeps > sleeps);          /* slept and was woken */
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

int main(void)
{
	watchdog(60);
	test_cross_thread();
	test_mixed();
	return check_report("test_down_up");
}
