/*
 * test_threads: no registration, lazily created per-thread state, thread
 * exit (also inside a read section), and scale: 10,000 live domains used
 * by 200 threads.
 */
#include "check.h"

#define NDOMAINS 10000
#define NTHREADS 200

static struct srcu_struct *doms;
static int ended_right;

static void *touch_domains(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	/* A reader that was never registered, using 50 random domains
	 * (nested 2 deep) and exiting. */
	for (int i = 0; i < 50; i++) {
		struct srcu_struct *a = &doms[rand_r(&seed) % NDOMAINS];
		struct srcu_struct *b = &doms[rand_r(&seed) % NDOMAINS];
		int ia = srcu_read_lock(a), ib = srcu_read_lock(b);

		if (i % 10 == 0)
			sched_yield();
		srcu_read_unlock(b, ib);
		srcu_read_unlock(a, ia);
	}
	return NULL;
}

/* Bugs caught: per-thread state that must be registered, that breaks past
 * some number of threads or domains, or that an exiting thread leaves
 * unbalanced (cleanup would then say -EBUSY). */
static void test_scale(void)
{
	pthread_t t[NTHREADS];
	int i;

	doms = calloc(NDOMAINS, sizeof(*doms));
	REQUIRE(doms);
	for (i = 0; i < NDOMAINS; i++)
		REQUIRE(init_srcu_struct(&doms[i]) == 0);
	for (i = 0; i < NTHREADS; i++)
		t[i] = spawn(touch_domains, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < 20; i++)         /* grace periods while they run */
		synchronize_srcu(&doms[i * 97 % NDOMAINS]);
	for (i = 0; i < NTHREADS; i++)
		join(t[i]);
	for (i = 0; i < NDOMAINS; i++)
		if (cleanup_srcu_struct(&doms[i]) != 0)
			ended_right++;
	CHECK_EQ(ended_right, 0);
	free(doms);
}

/* Bug caught: state of exited threads that is not reused (memory growing
 * with every thread ever created) or reused with stale counts. */
static struct srcu_struct reuse;

static void *one_section(void *arg)
{
	int idx = srcu_read_lock(&reuse);

	(void)arg;
	srcu_read_unlock(&reuse, idx);
	return NULL;
}

static void test_sequential_threads(void)
{
	REQUIRE(init_srcu_struct(&reuse) == 0);
	for (int i = 0; i < 2000; i++) {
		join(spawn(one_section, NULL));
		if (i % 100 == 0)
			synchronize_srcu(&reuse);
	}
	synchronize_srcu(&reuse);
	CHECK_EQ(cleanup_srcu_struct(&reuse), 0);
}

static struct srcu_struct leaky;
static int leaked_inside;

static void *exit_inside(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "leaker");
	srcu_read_lock(&leaky);
	srcu_read_lock(&leaky);
	flag_set(&leaked_inside);
	sleep_ms(100);     /* let a grace period start waiting for us */
	return NULL;       /* exits holding two sections */
}

/* Bugs caught: a thread exiting inside a section that hangs every later
 * grace period, goes unreported, or corrupts the domain's counts. */
static void test_exit_inside_section(void)
{
	struct captured cap;
	const char *out;
	pthread_t t;
	int idx;

	REQUIRE(init_srcu_struct(&leaky) == 0);
	srcu_set_name(&leaky, "leaky-domain");
	capture_stderr_begin(&cap);
	t = spawn(exit_inside, NULL);
	flag_wait(&leaked_inside);
	synchronize_srcu(&leaky);        /* must be woken by the thread's exit */
	join(t);
	out = capture_stderr_end(&cap);
	CHECK(strstr(out, "exited inside 2 read-side critical section") != NULL);
	CHECK(strstr(out, "'leaky-domain'") != NULL);
	CHECK(strstr(out, "(leaker)") != NULL);
	idx = srcu_read_lock(&leaky);    /* the domain still works */
	srcu_read_unlock(&leaky, idx);
	synchronize_srcu(&leaky);
	CHECK_EQ(cleanup_srcu_struct(&leaky), 0);
}

int main(void)
{
	watchdog(100);
	test_exit_inside_section();
	test_sequential_threads();
	test_scale();
	return check_report("test_threads");
}
