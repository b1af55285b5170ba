/*
 * test_fast_readers: srcu_read_lock_fast()/srcu_read_unlock_fast() (the
 * kernel's fast readers): grace periods wait for their sections, the
 * unlock balances the right index's count, and they mix and nest with
 * srcu_read_lock() sections in one thread.
 *
 * Bugs caught: an unlock_fast that counts on the other index (the grace
 * period waiting for the section's index never ends: the watchdog fires;
 * or one that waits for the other index returns while the reader is
 * inside), on the lock counter or another domain's slot (never balances),
 * a lock_fast that counts nothing (synchronize returns with the reader
 * inside), srcu_read_lock_held() blind to fast sections.
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"

static struct srcu_struct dom;
DEFINE_STATIC_SRCU(static_dom);
DEFINE_STATIC_SRCU_FAST(fast_static);
DEFINE_SRCU_FAST(fast_global);
static struct srcu_struct fast_dyn;

/* A reader sleeping inside a fast section: the updater waits for it. */
static void test_waits_for_sleeper(struct srcu_struct *sp)
{
	struct sync_arg a = { sp, 0, 0 };
	struct srcu_ctr *scp = srcu_read_lock_fast(sp);
	pthread_t t;

	CHECK(scp != NULL);
	t = spawn(sync_thread, &a);
	flag_wait(&a.started);
	sleep_ms(150);
	CHECK(!flag_get(&a.done));           /* returned with us inside */
	srcu_read_unlock_fast(sp, scp);
	join(t);
	CHECK(flag_get(&a.done));
}

/* Sections on both indices: the first taken before a grace period flips
 * the index, the second after.  Ending the first must let that grace
 * period finish while the second is still open (its unlock counted on the
 * first's index, not the current one), and a second grace period must
 * then wait for the second section (its own index). */
static void test_sections_across_flip(struct srcu_struct *sp)
{
	struct sync_arg a = { sp, 0, 0 }, b = { sp, 0, 0 };
	struct srcu_ctr *first = srcu_read_lock_fast(sp), *second;
	pthread_t t, u;

	t = spawn(sync_thread, &a);
	flag_wait(&a.started);
	sleep_ms(100);                       /* the GP flips, then waits on first's index */
	CHECK(!flag_get(&a.done));
	second = srcu_read_lock_fast(sp);    /* on the new index */
	srcu_read_unlock_fast(sp, first);
	join(t);                             /* a wrong-index unlock hangs here */
	CHECK(flag_get(&a.done));
	CHECK(srcu_read_lock_held(sp));      /* second still open */
	u = spawn(sync_thread, &b);
	flag_wait(&b.started);
	sleep_ms(150);
	CHECK(!flag_get(&b.done));           /* waits for second */
	srcu_read_unlock_fast(sp, second);
	join(u);
	CHECK(flag_get(&b.done));
	CHECK(!srcu_read_lock_held(sp));
}

/* Fast and normal sections mixed and nested in one thread, balanced in
 * any order; srcu_read_lock_held() sees the fast ones. */
static void test_mix_and_nest(struct srcu_struct *sp)
{
	struct srcu_ctr *a, *c;
	int b;

	CHECK(!srcu_read_lock_held(sp));
	a = srcu_read_lock_fast(sp);
	CHECK(srcu_read_lock_held(sp));
	b = srcu_read_lock(sp);
	c = srcu_read_lock_fast(sp);
	srcu_read_unlock(sp, b);             /* overlapping, not nested */
	CHECK(srcu_read_lock_held(sp));
	srcu_read_unlock_fast(sp, c);
	CHECK(srcu_read_lock_held(sp));
	srcu_read_unlock_fast(sp, a);
	CHECK(!srcu_read_lock_held(sp));
	synchronize_srcu(sp);                /* balanced: returns */

	/* Deep nesting of fast sections. */
	struct srcu_ctr *stack[64];
	for (int i = 0; i < 64; i++)
		stack[i] = srcu_read_lock_fast(sp);
	CHECK(srcu_read_lock_held(sp));
	for (int i = 63; i >= 0; i--)
		srcu_read_unlock_fast(sp, stack[i]);
	CHECK(!srcu_read_lock_held(sp));
	synchronize_srcu(sp);
}

/* A thread whose very first section is a fast one (the slow path counts
 * it), in a domain used before, and in a static domain never used. */
struct first_arg {
	struct srcu_struct *sp;
	int inside, release, held;
};

static void *first_section(void *arg)
{
	struct first_arg *f = arg;
	struct srcu_ctr *scp = srcu_read_lock_fast(f->sp);

	__atomic_store_n(&f->held, srcu_read_lock_held(f->sp), __ATOMIC_SEQ_CST);
	flag_set(&f->inside);
	flag_wait(&f->release);
	srcu_read_unlock_fast(f->sp, scp);
	return NULL;
}

static void test_first_section(struct srcu_struct *sp)
{
	struct first_arg f = { sp, 0, 0, 0 };
	struct sync_arg a = { sp, 0, 0 };
	pthread_t r = spawn(first_section, &f), t;

	flag_wait(&f.inside);
	CHECK(__atomic_load_n(&f.held, __ATOMIC_SEQ_CST));
	t = spawn(sync_thread, &a);
	flag_wait(&a.started);
	sleep_ms(100);
	CHECK(!flag_get(&a.done));
	flag_set(&f.release);
	join(r);
	join(t);
	CHECK(flag_get(&a.done));
}

/* Readers looping on fast sections while the updater replaces and
 * poisons an object after each grace period. */
struct obj { int alive; };
static struct obj *gp_obj;
static int stop, bad;

static void *loop_reader(void *arg)
{
	struct srcu_struct *sp = arg;

	while (!flag_get(&stop)) {
		struct srcu_ctr *scp = srcu_read_lock_fast(sp);
		struct obj *p = srcu_dereference(gp_obj, sp);

		if (p && __atomic_load_n(&p->alive, __ATOMIC_RELAXED) != 1)
			__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
		srcu_read_unlock_fast(sp, scp);
	}
	return NULL;
}

static void test_replace_loop(struct srcu_struct *sp)
{
	pthread_t r[2];
	long long end = now_ns() + 500000000LL;

	for (int i = 0; i < 2; i++)
		r[i] = spawn(loop_reader, sp);
	while (now_ns() < end) {
		struct obj *n = malloc(sizeof(*n)), *old;

		REQUIRE(n);
		n->alive = 1;
		old = srcu_replace_pointer(gp_obj, n, 1);
		synchronize_srcu(sp);
		if (old) {
			__atomic_store_n(&old->alive, 0, __ATOMIC_RELAXED);
			free(old);
		}
	}
	flag_set(&stop);
	for (int i = 0; i < 2; i++)
		join(r[i]);
	CHECK(!flag_get(&bad));
	free(gp_obj);
	gp_obj = NULL;
}

/* Domains fixed to fast readers: fast sections work and are waited
 * for; a srcu_read_lock() section aborts naming the domain and both
 * kinds, whether the slow path counts it (a static domain's first use,
 * the fence backend) or the inline path (the check is then made when
 * the thread's first lock of the index notes it; a thread that noted
 * both indices with fast sections is not checked again: doc/kernel.md). */
static void normal_on_fast_static(void)
{
	int idx = srcu_read_lock(&fast_static);   /* the static domain's first use */

	srcu_read_unlock(&fast_static, idx);
}

/* A bound domain, in a thread with counters (it used dom): the first
 * lock of the index is counted inline and checked when noted. */
static void normal_on_fast_dyn(void)
{
	int idx = srcu_read_lock(&fast_dyn);

	srcu_read_unlock(&fast_dyn, idx);
}

/* An unlock in another thread counts in that thread's own slot (the
 * counter is a word number, not an address): the grace period's scan
 * reports the unlock without its lock. */
static struct srcu_ctr *foreign_scp;

static void *unlock_foreign(void *arg)
{
	(void)arg;
	srcu_read_unlock_fast(&dom, foreign_scp);
	return NULL;
}

static void unlock_in_other_thread(void)
{
	int idx = srcu_read_lock(&dom);   /* the other thread has counters */

	srcu_read_unlock(&dom, idx);
	foreign_scp = srcu_read_lock_fast(&dom);
	join(spawn(unlock_foreign, NULL));
	synchronize_srcu_expedited(&dom);
}

#ifdef SRCU_DEBUG
/* The checking build checks every section's kind.  Bug caught: a thread
 * whose fast sections had noted both of a fast domain's indices took
 * srcu_read_lock() sections of it unchecked (the same program aborted
 * later, when a new thread made the call). */
static void normal_on_fast_noted(void)
{
	struct sync_arg a = { &fast_dyn, 0, 0 };
	struct srcu_ctr *first = srcu_read_lock_fast(&fast_dyn), *second;
	pthread_t t = spawn(sync_thread, &a);
	int idx;

	/* A section on the other index too, once the GP has flipped: both
	 * indices are noted. */
	for (;;) {
		second = srcu_read_lock_fast(&fast_dyn);
		if ((srcu__ctr_word(second) & 1) != (srcu__ctr_word(first) & 1))
			break;
		srcu_read_unlock_fast(&fast_dyn, second);
		sleep_us(100);
	}
	srcu_read_unlock_fast(&fast_dyn, first);
	srcu_read_unlock_fast(&fast_dyn, second);
	join(t);
	idx = srcu_read_lock(&fast_dyn);   /* on a noted index */
	srcu_read_unlock(&fast_dyn, idx);
}
#endif

static void test_fast_kind(void)
{
	CHECK(dies_saying(unlock_in_other_thread, "without a matching", "fast-test", NULL));
	REQUIRE(init_srcu_struct_fast(&fast_dyn) == 0);
	srcu_set_name(&fast_dyn, "fast_dyn");
	CHECK(dies_saying(normal_on_fast_static, "srcu_read_lock()", "fast_static",
			  "reader kind is fast", "this section's is normal", NULL));
	CHECK(dies_saying(normal_on_fast_dyn, "srcu_read_lock()", "fast_dyn",
			  "reader kind is fast", NULL));
#ifdef SRCU_DEBUG
	CHECK(dies_saying(normal_on_fast_noted, "srcu_read_lock()", "fast_dyn",
			  "reader kind is fast", "this section's is normal", NULL));
#endif
	test_waits_for_sleeper(&fast_static);
	test_waits_for_sleeper(&fast_global);
	test_sections_across_flip(&fast_dyn);
	test_first_section(&fast_dyn);
	CHECK_EQ(cleanup_srcu_struct(&fast_dyn), 0);
	/* Re-initialized plainly, the domain takes both kinds again. */
	REQUIRE(init_srcu_struct(&fast_dyn) == 0);
	test_mix_and_nest(&fast_dyn);
	CHECK_EQ(cleanup_srcu_struct(&fast_dyn), 0);
}

int main(void)
{
	watchdog(100);
	REQUIRE(init_srcu_struct_named(&dom, "fast-test") == 0);
	test_first_section(&static_dom);     /* the static domain's first use */
	test_waits_for_sleeper(&dom);
	test_waits_for_sleeper(&static_dom);
	test_sections_across_flip(&dom);
	test_mix_and_nest(&dom);
	test_first_section(&dom);
	test_replace_loop(&dom);
	test_fast_kind();
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
	return check_report("test_fast_readers");
}
