/*
 * test_kernel_api: the kernel's names of issue 24 that are not pointers:
 * the polled grace-period constants and helpers, a cookie held across the
 * counter's wrap, the read side's other spellings, smp_mb__after_*, and
 * the scoped sections (SRCU_GUARD, SRCU_SCOPED_GUARD, and <srcu_kernel.h>'s
 * guard()/scoped_guard()).  White-box for the wrap: it sets the domain's
 * gp_seq (src/layout.h) on an idle domain.
 *
 * Bugs caught, one per check group (each names its own):
 *  - SRCU_GET_STATE_COMPLETED judged by the counter like a real cookie
 *    (reads not done on a fresh domain, gp_seq 0, or half a wrap away);
 *  - a real cookie equal to SRCU_GET_STATE_COMPLETED (a snapshot with
 *    state bits), or get_completed/same_state not as the kernel's;
 *  - more than NUM_ACTIVE_SRCU_POLL_OLDSTATE distinct pending cookies, or
 *    the constant not tight;
 *  - a cookie misjudged across the numeric wrap of gp_seq, or (a plain
 *    ULONG_CMP_GE) one held 2^(BITS_PER_LONG-3) grace periods read as not
 *    done; the misjudged window not the one doc/api.md states;
 *  - an alias that does not enter or leave a section (unbalanced: the
 *    grace period after it would hang, the watchdog fires);
 *  - a guard that does not end its section at block end, break,
 *    continue, goto or return, or runs its block other than once.
 */
#include "check.h"
#include "../src/layout.h"   /* white-box: the private domain layout */
#include "srcu_kernel.h"

#include <limits.h>

static DEFINE_SRCU(dom);

#define BITS ((unsigned int)(sizeof(unsigned long) * CHAR_BIT))
#define GP   4ul   /* gp_seq per grace period: two state bits */

/* Put the idle domain's counter at v (and its requests with it, so that
 * nothing reads as asked for). */
static void set_seq(unsigned long v)
{
	struct srcu__domain *d = srcu__dom_area(&dom);

	__atomic_store_n(&d->gp_seq, v, __ATOMIC_SEQ_CST);
	__atomic_store_n(&d->gp_seq_needed, v, __ATOMIC_SEQ_CST);
	__atomic_store_n(&d->gp_exp_needed, v, __ATOMIC_SEQ_CST);
}

static unsigned long get_seq(void)
{
	return __atomic_load_n(&srcu__dom_area(&dom)->gp_seq, __ATOMIC_SEQ_CST);
}

/* Bug: the completed cookie compared with gp_seq like a real one. */
static void test_completed(void)
{
	static const unsigned long seqs[] = {
		0, 1, 2, 4, 8, ULONG_MAX - 3, ULONG_MAX, LONG_MAX, (unsigned long)LONG_MAX + 1,
		(unsigned long)LONG_MAX + 5, 0x1ul - GP, 0x1ul + GP,
	};
	unsigned long saved = get_seq();

	CHECK_EQ(get_completed_synchronize_srcu(), SRCU_GET_STATE_COMPLETED);
	CHECK(same_state_synchronize_srcu(get_completed_synchronize_srcu(),
					  SRCU_GET_STATE_COMPLETED));
	/* A fresh domain: gp_seq 0, which ULONG_CMP_GE(0, 1) calls before it. */
	CHECK_EQ(get_seq(), 0);
	CHECK(poll_state_synchronize_srcu(&dom, SRCU_GET_STATE_COMPLETED));
	for (unsigned int i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
		set_seq(seqs[i]);
		if (!poll_state_synchronize_srcu(&dom, get_completed_synchronize_srcu())) {
			fprintf(stderr, "completed cookie not done at gp_seq %#lx\n", seqs[i]);
			check_failures++;
		}
	}
	set_seq(saved);
}

/* Bug: a real cookie equal to the completed one, or same_state not plain
 * equality of the grace period named. */
static void test_real_cookies(void)
{
	unsigned long saved = get_seq();

	for (unsigned long v = 0; v < 64; v++) {   /* every state, idle or not */
		unsigned long c;

		set_seq(v);
		c = get_state_synchronize_srcu(&dom);
		CHECK(!same_state_synchronize_srcu(c, SRCU_GET_STATE_COMPLETED));
		CHECK_EQ(c & (GP - 1), 0);
	}
	set_seq(saved);
	{
		unsigned long a = get_state_synchronize_srcu(&dom);
		unsigned long b = get_state_synchronize_srcu(&dom);
		unsigned long c;

		CHECK(same_state_synchronize_srcu(a, b));   /* idle: the same next GP */
		synchronize_srcu(&dom);
		CHECK(poll_state_synchronize_srcu(&dom, a));
		c = get_state_synchronize_srcu(&dom);
		CHECK(!same_state_synchronize_srcu(a, c));
		synchronize_srcu(&dom);
		CHECK(poll_state_synchronize_srcu(&dom, c));
	}
}

/* Last, after every set_seq(): it starts the domain's worker, which
 * would run grace periods against a counter moved under it.  Bug: a
 * start_poll cookie equal to the completed one. */
static void test_start_poll(void)
{
	unsigned long c = start_poll_synchronize_srcu(&dom);

	CHECK(c != SRCU_GET_STATE_COMPLETED);
	CHECK_EQ(c & (GP - 1), 0);
	for (int i = 0; i < 10000 && !poll_state_synchronize_srcu(&dom, c); i++)
		sleep_ms(1);   /* the worker runs it */
	CHECK(poll_state_synchronize_srcu(&dom, c));
}

/* Bug: more distinct cookies pending at once than
 * NUM_ACTIVE_SRCU_POLL_OLDSTATE, or the constant not tight.  gp_seq is
 * walked through every state of 40 grace periods (idle, first scan,
 * second scan, ...), a cookie taken at each, and the cookies not done
 * counted at each step. */
static void test_num_active(void)
{
	enum { STEPS = 120 };
	unsigned long saved = get_seq(), cookies[STEPS];
	unsigned int most = 0;

	CHECK_EQ(NUM_ACTIVE_SRCU_POLL_OLDSTATE, 2);
	for (unsigned int i = 0; i < STEPS; i++) {
		unsigned long v = (i / 3) * GP + i % 3;   /* 4n, 4n+1, 4n+2 */
		unsigned long pending[STEPS];
		unsigned int npending = 0;

		set_seq(v);
		cookies[i] = get_state_synchronize_srcu(&dom);
		for (unsigned int j = 0; j <= i; j++) {
			bool seen = false;

			if (poll_state_synchronize_srcu(&dom, cookies[j]))
				continue;
			for (unsigned int k = 0; k < npending; k++)
				seen |= same_state_synchronize_srcu(pending[k], cookies[j]);
			if (!seen)
				pending[npending++] = cookies[j];
		}
		if (npending > most)
			most = npending;
	}
	CHECK_EQ(most, NUM_ACTIVE_SRCU_POLL_OLDSTATE);
	set_seq(saved);
}

/* Bug: a cookie misjudged across gp_seq's wrap.  First a real grace
 * period that takes gp_seq through ULONG_MAX to 0; then a cookie held
 * across n grace periods, for n around the two points doc/api.md names:
 * 2^(BITS_PER_LONG-3) (where a plain ULONG_CMP_GE would read it not
 * done) and 2^(BITS_PER_LONG-2) (the counter's period: not done when n
 * is 1 or 2 short of it, or 3 short with a grace period in its second
 * scan). */
static void test_wrap(void)
{
	unsigned long saved = get_seq(), c, half = 1ul << (BITS - 3), period = 1ul << (BITS - 2);
	static const struct { long n_off; int base; unsigned long state; bool done; } cases[] = {
		/* base 0: n = n_off; 1: n = half + n_off; 2: n = period + n_off */
		{ 0, 0, 0, true }, { 1, 0, 0, true }, { 1, 0, 1, true },
		{ -1, 1, 0, true }, { 0, 1, 0, true }, { 0, 1, 2, true }, { 1, 1, 0, true },
		{ -4, 2, 2, true }, { -3, 2, 0, true }, { -3, 2, 1, true },
		{ -3, 2, 2, false }, { -2, 2, 0, false }, { -2, 2, 2, false },
		{ -1, 2, 0, false }, { -1, 2, 2, false },
		{ 0, 2, 0, true }, { 0, 2, 1, true }, { 1, 2, 0, true },
		{ (long)(1ul << (BITS - 3)), 2, 0, true },   /* 1.5 periods */
	};

	/* The numeric wrap, with a real grace period. */
	set_seq(ULONG_MAX - 3);   /* idle, 2^(BITS-2) - 1 grace periods done */
	c = get_state_synchronize_srcu(&dom);
	CHECK_EQ(c, 0);           /* the end of the next: the counter wraps */
	CHECK(!poll_state_synchronize_srcu(&dom, c));
	synchronize_srcu(&dom);
	CHECK_EQ(get_seq(), 0);
	CHECK(poll_state_synchronize_srcu(&dom, c));
	CHECK_EQ(srcu_batches_completed(&dom), 0);   /* the count wrapped too */
	/* A cookie taken just past it, and the same GP polled from before. */
	c = get_state_synchronize_srcu(&dom);
	CHECK_EQ(c, GP);
	CHECK(!poll_state_synchronize_srcu(&dom, c));
	synchronize_srcu(&dom);
	CHECK(poll_state_synchronize_srcu(&dom, c));

	/* A cookie held long: c is done once gp_seq reaches c. */
	c = ULONG_MAX - 3 - 5 * GP;   /* a cookie whose GP ends just before the wrap */
	for (unsigned int i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned long base = cases[i].base == 0 ? 0 : cases[i].base == 1 ? half : period;
		unsigned long n = base + (unsigned long)cases[i].n_off;

		set_seq(c + n * GP + cases[i].state);
		if (poll_state_synchronize_srcu(&dom, c) != cases[i].done) {
			fprintf(stderr, "cookie %#lx after %#lx GPs (state %lu): %s, expected %s\n",
				c, n, cases[i].state, cases[i].done ? "not done" : "done",
				cases[i].done ? "done" : "not done");
			check_failures++;
		}
	}
	/* Before its GP ended: not done, also right at the guard band. */
	for (unsigned long back = 1; back <= 2 * GP; back++) {
		set_seq(c - back);
		CHECK(!poll_state_synchronize_srcu(&dom, c));
	}
	set_seq(saved);
	synchronize_srcu(&dom);   /* the domain still runs grace periods */
	CHECK_EQ(get_seq(), saved + GP);
}

/* Bug: an alias that does not enter or leave the section. */
static void test_aliases(void)
{
	int i1, i2;

	CHECK(!srcu_read_lock_held(&dom));
	i1 = srcu_read_lock_nmisafe(&dom);
	CHECK(srcu_read_lock_held(&dom));
	i2 = srcu_read_lock_notrace(&dom);
	smp_mb__after_srcu_read_lock();
	srcu_read_unlock_notrace(&dom, i2);
	CHECK(srcu_read_lock_held(&dom));
	srcu_read_unlock_nmisafe(&dom, i1);
	smp_mb__after_srcu_read_unlock();
	CHECK(!srcu_read_lock_held(&dom));
	/* Mixed with the plain names: one section, either spelling. */
	i1 = srcu_read_lock_nmisafe(&dom);
	srcu_read_unlock(&dom, i1);
	i1 = srcu_read_lock(&dom);
	srcu_read_unlock_notrace(&dom, i1);
	CHECK(!srcu_read_lock_held(&dom));
	synchronize_srcu(&dom);   /* hangs on a section left open */
}

/* Bug: a guard that ends its section late, early or never. */
static int scoped_return(int early)
{
	SRCU_SCOPED_GUARD(&dom) {
		if (!srcu_read_lock_held(&dom))
			return -1;
		if (early)
			return 1;   /* must end the section */
	}
	return srcu_read_lock_held(&dom) ? -2 : 0;
}

static int guard_return(void)
{
	SRCU_GUARD(&dom);
	return srcu_read_lock_held(&dom) ? 1 : -1;   /* ends it after */
}

static int kernel_guard_return(void)
{
	guard(srcu)(&dom);
	if (!srcu_read_lock_held(&dom))
		return -1;
	return 1;
}

static int kernel_scoped_return(void)
{
	scoped_guard(srcu, &dom)
		return srcu_read_lock_held(&dom) ? 1 : -1;
	return -2;
}

static void test_guards(void)
{
	int runs = 0;

	{
		SRCU_GUARD(&dom);
		CHECK(srcu_read_lock_held(&dom));
		{
			SRCU_GUARD(&dom);   /* two in a scope, two names */
			SRCU_GUARD(&dom);
			CHECK(srcu_read_lock_held(&dom));
		}
		CHECK(srcu_read_lock_held(&dom));
	}
	CHECK(!srcu_read_lock_held(&dom));

	SRCU_SCOPED_GUARD(&dom) {
		CHECK(srcu_read_lock_held(&dom));
		runs++;
	}
	CHECK_EQ(runs, 1);
	CHECK(!srcu_read_lock_held(&dom));

	/* break and continue leave the guard's own one-pass loop. */
	SRCU_SCOPED_GUARD(&dom) {
		runs++;
		if (runs)
			break;
		CHECK(0);
	}
	CHECK_EQ(runs, 2);
	CHECK(!srcu_read_lock_held(&dom));
	SRCU_SCOPED_GUARD(&dom) {
		runs++;
		if (runs)
			continue;
		CHECK(0);
	}
	CHECK_EQ(runs, 3);
	CHECK(!srcu_read_lock_held(&dom));
	/* Inside a loop: the section ends every iteration. */
	for (int i = 0; i < 3; i++) {
		SRCU_SCOPED_GUARD(&dom)
			runs++;
		CHECK(!srcu_read_lock_held(&dom));
	}
	CHECK_EQ(runs, 6);
	SRCU_SCOPED_GUARD(&dom) {
		goto out;
	}
out:
	CHECK(!srcu_read_lock_held(&dom));

	CHECK_EQ(scoped_return(1), 1);
	CHECK(!srcu_read_lock_held(&dom));
	CHECK_EQ(scoped_return(0), 0);
	CHECK_EQ(guard_return(), 1);
	CHECK(!srcu_read_lock_held(&dom));

	/* <srcu_kernel.h>'s spelling. */
	{
		guard(srcu)(&dom);
		CHECK(srcu_read_lock_held(&dom));
	}
	CHECK(!srcu_read_lock_held(&dom));
	scoped_guard(srcu, &dom) {
		CHECK(srcu_read_lock_held(&dom));
		runs++;
	}
	CHECK_EQ(runs, 7);
	CHECK(!srcu_read_lock_held(&dom));
	CHECK_EQ(kernel_guard_return(), 1);
	CHECK_EQ(kernel_scoped_return(), 1);
	CHECK(!srcu_read_lock_held(&dom));
	synchronize_srcu(&dom);   /* hangs on a section left open */
}

int main(void)
{
	watchdog(60);
	test_completed();
	test_real_cookies();
	test_num_active();
	test_wrap();
	test_aliases();
	test_guards();
	test_start_poll();
	return check_report("test_kernel_api");
}
