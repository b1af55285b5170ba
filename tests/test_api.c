/*
 * test_api: the API's contract, call by call: return values, static and
 * dynamic domains, srcu_batches_completed(), cleanup's -EBUSY cases, the
 * backend report, and the pointer macros.
 */
#include "check.h"
#include "../src/layout.h"   /* white-box: the private domain layout */

#include <linux/membarrier.h>
#include <sys/syscall.h>

DEFINE_SRCU(static_global);
DEFINE_STATIC_SRCU(static_local);

/* Bug caught: a static domain that needs an init call, or whose first
 * reader and first grace period disagree on its id. */
static void test_static_domains(void)
{
	int idx = srcu_read_lock(&static_global);

	srcu_read_unlock(&static_global, idx);
	synchronize_srcu(&static_global);
	CHECK_EQ(srcu_batches_completed(&static_global), 1);
	synchronize_srcu(&static_local);         /* first use is a grace period */
	idx = srcu_read_lock(&static_local);
	srcu_read_unlock(&static_local, idx);
	CHECK_EQ(srcu_batches_completed(&static_local), 1);
	CHECK_EQ(cleanup_srcu_struct(&static_local), 0);
}

/* Bug caught: error codes that are not negative errno, or a crash on
 * inputs the API can detect. */
static void test_bad_arguments(void)
{
	struct srcu_struct s;

	CHECK_EQ(init_srcu_struct(NULL), -EINVAL);
	CHECK_EQ(cleanup_srcu_struct(NULL), -EINVAL);
	CHECK_EQ(srcu_set_name(NULL, "x"), -EINVAL);
	REQUIRE(init_srcu_struct(&s) == 0);
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
	CHECK_EQ(cleanup_srcu_struct(&s), -EINVAL);   /* twice */
	REQUIRE(init_srcu_struct(&s) == 0);           /* reuse after cleanup */
	synchronize_srcu(&s);
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

/* Bug caught: a counter that skips, stalls or goes backwards. */
static void test_batches(void)
{
	struct srcu_struct s;
	unsigned long b;
	int i;

	REQUIRE(init_srcu_struct(&s) == 0);
	CHECK_EQ(srcu_batches_completed(&s), 0);
	for (i = 1; i <= 50; i++) {
		b = srcu_batches_completed(&s);
		if (i % 2)
			synchronize_srcu(&s);
		else
			synchronize_srcu_expedited(&s);
		/* An uncontended caller runs exactly one grace period. */
		CHECK_EQ(srcu_batches_completed(&s), b + 1);
	}
	CHECK_EQ(srcu__dom_area(&s)->stat_exp_gps, 25);
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

/* A section held open in another thread (check.h), and whether a
 * synchronize_srcu() started beside it has returned. */
struct holder {
	struct hold_arg hold;
	int done;
};

static void *run_synchronize(void *arg)
{
	struct holder *h = arg;

	synchronize_srcu(h->hold.sp);
	flag_set(&h->done);
	return NULL;
}

/* Bug caught: cleanup that frees a domain with readers inside or a grace
 * period running (the article leaks rather than corrupts; we also say so),
 * or that leaves the domain unusable after refusing. */
static void test_cleanup_busy(void)
{
	struct srcu_struct s;
	struct holder h = { .hold.sp = &s };
	pthread_t r, u;
	int idx;

	REQUIRE(init_srcu_struct(&s) == 0);
	idx = srcu_read_lock(&s);                         /* this thread */
	CHECK_EQ(cleanup_srcu_struct(&s), -EBUSY);
	srcu_read_unlock(&s, idx);

	r = spawn(hold_thread, &h.hold);                       /* another thread */
	flag_wait(&h.hold.inside);
	CHECK_EQ(cleanup_srcu_struct(&s), -EBUSY);
	u = spawn(run_synchronize, &h);                   /* GP in flight */
	while (__atomic_load_n(&srcu__dom_area(&s)->gp_lock, __ATOMIC_SEQ_CST) == 0)
		sleep_us(100);
	sleep_ms(20);
	CHECK(!flag_get(&h.done));
	CHECK_EQ(cleanup_srcu_struct(&s), -EBUSY);
	flag_set(&h.hold.release);
	join(r);
	join(u);
	CHECK(flag_get(&h.done));
	synchronize_srcu(&s);                             /* still usable */
	idx = srcu_read_lock(&s);
	srcu_read_unlock(&s, idx);
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

static int stop_cleanups;

static void *cleanup_loop(void *arg)
{
	struct holder *h = arg;

	while (!flag_get(&stop_cleanups))
		CHECK_EQ(cleanup_srcu_struct(h->hold.sp), -EBUSY);
	return NULL;
}

/* Bug caught: a refused cleanup that releases the grace-period lock
 * without waking a synchronize_srcu() that queued behind it (it would
 * then sleep forever: the watchdog fires). */
static void test_cleanup_races_synchronize(void)
{
	struct srcu_struct s;
	struct holder h = { .hold.sp = &s };
	pthread_t r, c, u;

	REQUIRE(init_srcu_struct(&s) == 0);
	r = spawn(hold_thread, &h.hold);
	flag_wait(&h.hold.inside);
	c = spawn(cleanup_loop, &h);
	sleep_ms(20);
	u = spawn(run_synchronize, &h);
	sleep_ms(100);
	flag_set(&stop_cleanups);
	join(c);
	flag_set(&h.hold.release);
	join(r);
	join(u);
	CHECK(flag_get(&h.done));
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

/* Bug caught: the wrong backend in use (a reader without fences against a
 * grace period without membarrier is unsafe on weak CPUs). */
static void test_backend(void)
{
	const char *want = getenv("SRCU_BACKEND");
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	bool have = cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED);

	if (want && strcmp(want, "fence") == 0)
		CHECK(strcmp(srcu_backend(), "fence") == 0);
	else
		CHECK(strcmp(srcu_backend(), have ? "membarrier" : "fence") == 0);
}

struct node { int value; };

/* Bug caught: macros that do not compile for plain pointers or NULL, or
 * that evaluate their arguments twice. */
static void test_pointer_macros(void)
{
	static struct node a = { 1 }, b = { 2 };
	struct node *head = &a, *p;
	struct srcu_struct s, *sp = &s;
	int idx, evaluated = 0;

	REQUIRE(init_srcu_struct(&s) == 0);
	idx = srcu_read_lock(&s);
	p = srcu_dereference(head, (evaluated++, sp));
	CHECK_EQ(p->value, 1);
	CHECK_EQ(evaluated, 1);
	srcu_read_unlock(&s, idx);
	srcu_assign_pointer(head, &b);
	synchronize_srcu(&s);
	idx = srcu_read_lock(&s);   /* legal in a checking build (SRCU_DEBUG) too */
	CHECK_EQ(srcu_dereference(head, &s)->value, 2);
	srcu_assign_pointer(head, NULL);
	CHECK(srcu_dereference(head, &s) == NULL);
	srcu_read_unlock(&s, idx);
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

/* Bug caught: nesting or overlap that miscounts in one thread. */
static void test_nest_and_overlap_counts(void)
{
	struct srcu_struct s;
	int i, idx[100], a, b;

	REQUIRE(init_srcu_struct(&s) == 0);
	for (i = 0; i < 100; i++)
		idx[i] = srcu_read_lock(&s);
	CHECK_EQ(cleanup_srcu_struct(&s), -EBUSY);
	for (i = 99; i >= 0; i--)
		srcu_read_unlock(&s, idx[i]);
	a = srcu_read_lock(&s);
	b = srcu_read_lock(&s);
	srcu_read_unlock(&s, a);                          /* overlap, not nest */
	CHECK_EQ(cleanup_srcu_struct(&s), -EBUSY);
	srcu_read_unlock(&s, b);
	CHECK_EQ(cleanup_srcu_struct(&s), 0);
}

static struct srcu_struct held_dom;
static int held_in_thread = -1;

static void *held_elsewhere(void *arg)
{
	(void)arg;
	held_in_thread = srcu_read_lock_held(&held_dom);
	return NULL;
}

/* Bug caught: srcu_read_lock_held() true outside a section (or in another
 * thread than the holder's), false inside, or crashing on a domain that is
 * NULL, never used or cleaned up. */
static void test_read_lock_held(void)
{
	DEFINE_STATIC_SRCU(never_used);
	struct srcu_struct other;
	int a, b;

	CHECK(!srcu_read_lock_held(NULL));
	CHECK(!srcu_read_lock_held(&never_used));
	REQUIRE(init_srcu_struct(&held_dom) == 0);
	REQUIRE(init_srcu_struct(&other) == 0);
	CHECK(!srcu_read_lock_held(&held_dom));
	a = srcu_read_lock(&held_dom);
	CHECK(srcu_read_lock_held(&held_dom));
	CHECK(!srcu_read_lock_held(&other));       /* another domain */
	join(spawn(held_elsewhere, NULL));
	CHECK_EQ(held_in_thread, 0);                /* another thread */
	b = srcu_read_lock(&held_dom);
	srcu_read_unlock(&held_dom, a);
	CHECK(srcu_read_lock_held(&held_dom));     /* b still open */
	srcu_read_unlock(&held_dom, b);
	CHECK(!srcu_read_lock_held(&held_dom));
	a = srcu_down_read(&held_dom);              /* belongs to no thread */
	CHECK(!srcu_read_lock_held(&held_dom));
	srcu_up_read(&held_dom, a);
	CHECK_EQ(cleanup_srcu_struct(&held_dom), 0);
	CHECK(!srcu_read_lock_held(&held_dom));     /* cleaned up */
	CHECK_EQ(cleanup_srcu_struct(&other), 0);
}

int main(void)
{
	watchdog(60);
	test_backend();
	test_static_domains();
	test_bad_arguments();
	test_batches();
	test_cleanup_busy();
	test_cleanup_races_synchronize();
	test_pointer_macros();
	test_nest_and_overlap_counts();
	test_read_lock_held();
	CHECK(strcmp(srcu_version(), SRCU_VERSION_STRING) == 0);
	CHECK(SRCU_VERSION_NUMBER >= 0x000100);
	return check_report("test_api");
}
