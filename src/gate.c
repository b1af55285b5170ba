/*
 * gate.c: srcu_gate, the slow paths (include/srcu_gate.h has the fast
 * ones).  Users are read-side sections of the gate's own domain; a reset
 * is "close; synchronize_srcu; fn; reopen".  Resets are serialised by
 * reset_lock, and a reset asked for while one runs waits for that one
 * instead of running its own (i915_handle_error's piggy-backing).  A
 * reset's fn and wedge hook run in the reset: a gate call there that would
 * wait for it aborts, as one from inside the gate does.
 *
 * The ordering argument (doc/gate.md): the close is an update made before
 * synchronize_srcu(), so every section either is waited for by that grace
 * period or sees the update, i.e. sees the gate closed (G in
 * srcu_gate_enter()) and leaves without touching what the reset guards.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <string.h>

#include "srcu_gate.h"

#define GATE_SHUT (SRCU_GATE__CLOSED | SRCU_GATE__SHUTDOWN)

/* Undo the init of g's domain, which no one has seen yet: nothing can be
 * inside it, so its cleanup cannot fail. */
static int init_failed(struct srcu_gate *g, int err)
{
	if (cleanup_srcu_struct(&g->srcu) != 0)
		srcu__report_fatal("srcu_gate_init(): the new gate's domain could not be "
				   "cleaned up");
	return err;
}

int srcu_gate_init(struct srcu_gate *g)
{
	int err;

	if (!g)
		return -EINVAL;
	memset(g, 0, sizeof(*g));
	err = init_srcu_struct(&g->srcu);
	if (err)
		return err;
	if (pthread_mutex_init(&g->reset_lock, NULL) != 0)
		return init_failed(g, -ENOMEM);
	if (pthread_cond_init(&g->reset_cond, NULL) != 0) {
		pthread_mutex_destroy(&g->reset_lock);
		return init_failed(g, -ENOMEM);
	}
	return 0;
}

int srcu_gate_destroy(struct srcu_gate *g)
{
	int err;

	if (!g)
		return -EINVAL;
	pthread_mutex_lock(&g->reset_lock);
	if (g->reset_running || g->piggy_backers ||
	    __atomic_load_n(&g->sleepers, __ATOMIC_SEQ_CST))
		err = -EBUSY;
	else
		err = cleanup_srcu_struct(&g->srcu);   /* -EBUSY with users inside */
	pthread_mutex_unlock(&g->reset_lock);
	if (err)
		return err;
	pthread_cond_destroy(&g->reset_cond);
	pthread_mutex_destroy(&g->reset_lock);
	return 0;
}

/* ---- calls that would wait for themselves ---- */

static void check_not_inside(struct srcu_gate *g, const char *who)
{
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];

	if (srcu__reader_self_inside(&g->srcu))
		srcu__report_fatal("%s() called by %s from inside gate %s: it would wait for "
			    "itself forever (leave the gate first)",
			    who, srcu__report_thread(t, sizeof(t)), srcu__report_name(&g->srcu, n, sizeof(n)));
}

/*
 * The resets this thread runs, innermost first: a frame lives from the
 * close to the reopen, so fn and the wedge hook run inside it.  Only this
 * thread reads or writes its list: no ordering.
 */
struct reset_frame {
	struct srcu_gate *g;
	struct reset_frame *outer;
};
static __thread struct reset_frame *resetting;

static bool resetting_here(const struct srcu_gate *g)
{
	for (const struct reset_frame *f = resetting; f; f = f->outer)
		if (f->g == g)
			return true;
	return false;
}

/* From the reset's own fn or wedge hook, a call that waits for the reset
 * (to end, or to reopen the gate) waits for itself. */
static void check_not_resetting(struct srcu_gate *g, const char *who)
{
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];

	if (resetting_here(g))
		srcu__report_fatal("%s() called by %s from the fn or wedge hook of a reset of "
			    "gate %s: it would wait for that reset, which waits for it, forever "
			    "(call it after the reset returns)",
			    who, srcu__report_thread(t, sizeof(t)), srcu__report_name(&g->srcu, n, sizeof(n)));
}

/* ---- entering ---- */

/* A deadline past the clock's range is none: waiting that long is waiting for ever. */
static int64_t deadline_after(int64_t timeout_ns)
{
	int64_t now;

	if (timeout_ns < 0)
		return -1;
	now = srcu__backend_now_ns();
	return timeout_ns > INT64_MAX - now ? -1 : now + timeout_ns;
}

/*
 * A sleep without a deadline still gives the futex one, NAP_NS away, and
 * sleeps again when it passes.  After a handler installed with SA_RESTART
 * the kernel restarts an interrupted FUTEX_WAIT that has no timeout, but
 * never one that has (it returns EINTR whenever a handler ran): so enter
 * reports -EINTR whatever flags the handler was installed with, as the
 * timed enter always did.
 */
#define NAP_NS (3600 * (int64_t)1000000000)

/* Sleep until the gate's state moves on from s: 0 (also when a nap
 * ends), -ETIMEDOUT, -EINTR. */
static int sleep_while_closed(struct srcu_gate *g, unsigned int s, int64_t deadline)
{
	int64_t until = deadline;
	int err;

	if (deadline >= 0 && srcu__backend_now_ns() >= deadline)
		return -ETIMEDOUT;
	if (deadline < 0)
		until = srcu__backend_now_ns() + NAP_NS;
	/* Seq-cst, then the futex re-checks the state: pairs with the
	 * reopen's seq-cst state store and sleeper load in wake_sleepers(),
	 * so either we see the new state or the reset sees us and wakes. */
	__atomic_fetch_add(&g->sleepers, 1, __ATOMIC_SEQ_CST);
	err = srcu__backend_futex_wait(&g->state, s, until, false);
	__atomic_fetch_sub(&g->sleepers, 1, __ATOMIC_SEQ_CST);
	return err == -ETIMEDOUT && deadline < 0 ? 0 : err;
}

/* Enter, sleeping (if may_sleep) while the gate is closed.  who: the
 * call, for the misuse report. */
static int enter_slow(struct srcu_gate *g, int64_t timeout_ns, int may_sleep, const char *who)
{
	int64_t deadline = deadline_after(timeout_ns);

	for (;;) {
		unsigned int s = __atomic_load_n(&g->state, __ATOMIC_ACQUIRE);
		int tag, err;

		if (s & SRCU_GATE__SHUTDOWN)
			return -ESHUTDOWN;
		if (!(s & SRCU_GATE__CLOSED)) {
			tag = srcu_read_lock(&g->srcu);
			/* G, as in srcu_gate_enter(). */
			if (!(__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) & GATE_SHUT))
				return tag;
			srcu_read_unlock(&g->srcu, tag);
			continue;
		}
		if (!may_sleep)
			return -EAGAIN;
		if (deadline < 0)   /* a timed wait ends, in -ETIMEDOUT */
			check_not_resetting(g, who);
		err = sleep_while_closed(g, s, deadline);
		if (err)
			return err;
	}
}

int srcu__gate_enter_slow(struct srcu_gate *g, int64_t timeout_ns, int may_sleep)
{
	return enter_slow(g, timeout_ns, may_sleep, "srcu_gate_enter");
}

int srcu_gate_enter_timeout(struct srcu_gate *g, int64_t timeout_ns)
{
	/* enters an open gate too */
	return enter_slow(g, timeout_ns, 1, "srcu_gate_enter_timeout");
}

int srcu_gate_tryenter(struct srcu_gate *g)
{
	return enter_slow(g, -1, 0, "srcu_gate_tryenter");
}

/* ---- resetting ---- */

static void wake_sleepers(struct srcu_gate *g)
{
	if (__atomic_load_n(&g->sleepers, __ATOMIC_SEQ_CST))
		srcu__backend_futex_wake(&g->state, INT_MAX, false);
}

/* Close: an update before the grace period that flushes the users (G). */
static void close_gate(struct srcu_gate *g, unsigned int bits)
{
	__atomic_fetch_or(&g->state, bits, __ATOMIC_SEQ_CST);
}

static void reopen_gate(struct srcu_gate *g)
{
	unsigned int s = __atomic_load_n(&g->state, __ATOMIC_RELAXED), open;

	/* Release (and seq-cst, for the sleepers' pairing): fn's writes
	 * before the open state, paired with the acquire in G.  A new
	 * generation changes the futex word for the sleepers.  A shutdown
	 * that came meanwhile keeps the gate closed. */
	do
		open = (s & SRCU_GATE__SHUTDOWN) ? s + SRCU_GATE__GEN
						 : (s + SRCU_GATE__GEN) & ~SRCU_GATE__CLOSED;
	while (!__atomic_compare_exchange_n(&g->state, &s, open, false,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	wake_sleepers(g);
}

/*
 * A reset that piggy-backs waits for the running one in a slot of its own
 * stack, on g->piggies; the running reset writes its result into every
 * slot before it wakes them.  One result word for all would be read after
 * the wake-up, when another reset may have ended since and overwritten it.
 */
struct srcu__gate_piggy {
	struct srcu__gate_piggy *next;
	int result;
	int done;
};

/* Wait for the reset running now; its result.  Caller holds reset_lock. */
static int piggy_back(struct srcu_gate *g)
{
	struct srcu__gate_piggy me = { g->piggies, 0, 0 };

	g->piggies = &me;
	/* Atomic only so that tests may watch it without the lock. */
	__atomic_fetch_add(&g->piggy_backers, 1, __ATOMIC_RELAXED);
	while (!me.done)
		pthread_cond_wait(&g->reset_cond, &g->reset_lock);
	__atomic_fetch_sub(&g->piggy_backers, 1, __ATOMIC_RELAXED);
	return me.result;
}

/* Give the waiting piggy-backers this reset's result.  Caller holds
 * reset_lock, so no slot's owner returns before the list is walked. */
static void hand_result(struct srcu_gate *g, int result)
{
	for (struct srcu__gate_piggy *p = g->piggies; p; p = p->next) {
		p->result = result;
		p->done = 1;
	}
	g->piggies = NULL;
}

int srcu_gate_reset_timeout(struct srcu_gate *g, int (*fn)(void *), void *arg,
			    int64_t timeout_ns, void (*wedge)(void *), void *wedge_arg)
{
	struct srcu__deadline dl = { deadline_after(timeout_ns), wedge, wedge_arg };
	struct reset_frame me;
	unsigned long seq;
	int result;

	if (!g || !fn)
		return -EINVAL;
	check_not_inside(g, "srcu_gate_reset");
	check_not_resetting(g, "srcu_gate_reset");
	pthread_mutex_lock(&g->reset_lock);
	if (__atomic_load_n(&g->state, __ATOMIC_RELAXED) & SRCU_GATE__SHUTDOWN) {
		pthread_mutex_unlock(&g->reset_lock);
		return -ESHUTDOWN;
	}
	if (g->reset_running) {
		result = piggy_back(g);
		pthread_mutex_unlock(&g->reset_lock);
		return result;
	}
	g->reset_running = 1;
	seq = ++g->reset_seq;
	pthread_mutex_unlock(&g->reset_lock);

	me.g = g;
	me.outer = resetting;
	resetting = &me;
	close_gate(g, SRCU_GATE__CLOSED);
	srcu__gp_synchronize_deadline(&g->srcu, wedge && dl.at_ns >= 0 ? &dl : NULL);
	result = fn(arg);
	resetting = me.outer;
	reopen_gate(g);

	pthread_mutex_lock(&g->reset_lock);
	hand_result(g, result);
	g->reset_done_seq = seq;
	g->reset_running = 0;
	pthread_cond_broadcast(&g->reset_cond);
	pthread_mutex_unlock(&g->reset_lock);
	return result;
}

int srcu_gate_reset(struct srcu_gate *g, int (*fn)(void *), void *arg)
{
	return srcu_gate_reset_timeout(g, fn, arg, -1, NULL, NULL);
}

int srcu_gate_shutdown(struct srcu_gate *g)
{
	if (!g)
		return -EINVAL;
	check_not_inside(g, "srcu_gate_shutdown");
	check_not_resetting(g, "srcu_gate_shutdown");
	pthread_mutex_lock(&g->reset_lock);
	close_gate(g, SRCU_GATE__CLOSED | SRCU_GATE__SHUTDOWN);
	wake_sleepers(g);             /* the state changed: they see SHUTDOWN */
	while (g->reset_running)      /* its fn may still run: let it end */
		pthread_cond_wait(&g->reset_cond, &g->reset_lock);
	pthread_mutex_unlock(&g->reset_lock);
	synchronize_srcu(&g->srcu);   /* every user that got in has left */
	return 0;
}
