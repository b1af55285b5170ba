/*
 * test_wait: a grace period that waits for a sleeping reader must sleep
 * too (futex), not burn a CPU or poll, and must be woken by the unlock
 * that ends the last reader it waits for.
 */
#include "check.h"
#include "../src/layout.h"   /* white-box: the private domain layout */

struct sleeper {
	struct srcu_struct *sp;
	long hold_ms;
	int inside, ending;
};

static void *sleep_inside(void *arg)
{
	struct sleeper *s = arg;
	int idx = srcu_read_lock(s->sp);

	flag_set(&s->inside);
	sleep_ms(s->hold_ms);
	flag_set(&s->ending);
	srcu_read_unlock(s->sp, idx);
	return NULL;
}

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Bugs caught: busy-waiting (CPU time near the 400 ms hold), polling with
 * timed sleeps (many sleeps and checks instead of one wake-up), and a
 * lost wake-up (the watchdog fires).
 */
static void check_waits_asleep(bool expedited)
{
	struct srcu_struct s;
	struct sleeper r = { .sp = &s, .hold_ms = 400 };
	unsigned long checks, sleeps;
	long long cpu;
	pthread_t t;

	REQUIRE(init_srcu_struct(&s) == 0);
	t = spawn(sleep_inside, &r);
	flag_wait(&r.inside);
	checks = srcu__dom_area(&s)->stat_checks;
	sleeps = srcu__dom_area(&s)->stat_sleeps;
	cpu = thread_cpu_ns();
	if (expedited)
		synchronize_srcu_expedited(&s);
	else
		synchronize_srcu(&s);
	cpu = thread_cpu_ns() - cpu;
	CHECK(flag_get(&r.ending));
	join(t);
	CHECK_LT(cpu, 60 * 1000000LL);            /* far below the 400 ms hold */
	CHECK_LT(srcu__dom_area(&s)->stat_sleeps - sleeps, 4);       /* slept, woke once (maybe a spurious one) */
	CHECK(srcu__dom_area(&s)->stat_sleeps - sleeps >= 1);
	CHECK_LT(srcu__dom_area(&s)->stat_checks - checks, 40);      /* no polling */
	CHECK_EQ(srcu__dom_area(&s)->stat_exp_gps, expedited ? 1 : 0);
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

/* Several readers leave one by one: each unlock of the waited-for index
 * may wake the grace period; the last one must.  Bug caught: a wake-up
 * lost when readers leave while the grace period re-checks. */
static void check_staggered_readers(void)
{
	enum { N = 8 };
	struct srcu_struct s;
	struct sleeper r[N];
	pthread_t t[N];
	int i;

	REQUIRE(init_srcu_struct(&s) == 0);
	for (i = 0; i < N; i++) {
		r[i] = (struct sleeper){ .sp = &s, .hold_ms = 20 + 15 * i };
		t[i] = spawn(sleep_inside, &r[i]);
	}
	for (i = 0; i < N; i++)
		flag_wait(&r[i].inside);
	for (int round = 0; round < 3; round++)
		synchronize_srcu(&s);
	for (i = 0; i < N; i++) {
		CHECK(flag_get(&r[i].ending));
		join(t[i]);
	}
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

int main(void)
{
	watchdog(60);
	check_waits_asleep(false);
	check_waits_asleep(true);
	check_staggered_readers();
	return check_report("test_wait");
}
