/*
 * srcu_gate.h: a read-optimised gate that a rare reset can close.
 *
 * The i915 "reset backoff" pattern and the SRCU article's "nomoresrcu"
 * teardown as one primitive.  Users enter and exit the gate as cheaply as
 * an SRCU read-side section plus one load, and may sleep inside.  A reset
 * closes the gate, waits (synchronize_srcu) until no user is inside, runs
 * a function with exclusive access, reopens and wakes the users that
 * waited.  A shutdown closes it for good.  doc/gate.md has the ordering
 * argument and the reset-deadlock rule.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_GATE_H
#define SRCU_GATE_H

#include <pthread.h>

#include "srcu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* state: futex word.  Low bits as below; each reopen adds
 * SRCU_GATE__GEN, so a sleeper's futex value changes. */
#define SRCU_GATE__CLOSED   1u   /* a reset (or the shutdown) is running */
#define SRCU_GATE__SHUTDOWN 2u   /* closed for good */
#define SRCU_GATE__GEN      4u

struct srcu__gate_piggy;           /* a piggy-backing reset's result (gate.c) */

struct srcu_gate {
	struct srcu_struct srcu;      /* users are its readers */
	unsigned int state;
	unsigned int sleepers;        /* users asleep in enter (atomic) */
	pthread_mutex_t reset_lock;   /* the fields below */
	pthread_cond_t reset_cond;    /* a reset ended */
	unsigned long reset_seq;      /* resets started */
	unsigned long reset_done_seq; /* resets ended */
	int reset_running;
	unsigned int piggy_backers;   /* resets waiting for the running one */
	struct srcu__gate_piggy *piggies; /* their results: the running reset fills each */
};

#ifndef __cplusplus
#define SRCU_GATE_INITIALIZER(name) { .srcu = SRCU_INITIALIZER(name), \
	.reset_lock = PTHREAD_MUTEX_INITIALIZER, .reset_cond = PTHREAD_COND_INITIALIZER }
#else
#define SRCU_GATE_INITIALIZER(name) { SRCU_INITIALIZER(name), 0, 0, \
	PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0, 0 }
#endif
#define DEFINE_SRCU_GATE(name) struct srcu_gate name SRCU__LINE = SRCU_GATE_INITIALIZER(name)

SRCU__API int  srcu_gate_init(struct srcu_gate *g);       /* 0, -EINVAL or -ENOMEM */
/* 0, or -EBUSY while a user is inside or asleep in enter, or a reset runs
 * (g stays usable); -EINVAL for NULL. */
SRCU__API int  srcu_gate_destroy(struct srcu_gate *g);
/* Enter, sleeping while a reset runs.  Returns the tag for
 * srcu_gate_exit() (>= 0), -EINTR if a signal handler ran while asleep
 * (installed with SA_RESTART or not), -ESHUTDOWN once shut down.  Exit from the same thread.  From a reset's
 * own fn or wedge hook it would wait for that reset: aborts. */
static inline int srcu_gate_enter(struct srcu_gate *g);
/* Also -ETIMEDOUT after timeout_ns (relative; < 0 waits for ever, and
 * aborts from the reset's own fn or wedge hook, as enter does). */
SRCU__API int  srcu_gate_enter_timeout(struct srcu_gate *g, int64_t timeout_ns);
/* Never sleeps: -EAGAIN while a reset runs, -ESHUTDOWN once shut down. */
SRCU__API int  srcu_gate_tryenter(struct srcu_gate *g);
static inline void srcu_gate_exit(struct srcu_gate *g, int tag);
/*
 * Close the gate, wait until no user is inside, run fn(arg) with
 * exclusive access, reopen, wake the users that waited.  Returns fn's
 * result, -ESHUTDOWN after shutdown, -EINVAL for NULL.  A reset requested
 * while one runs piggy-backs on it: it returns after that one ends, with
 * that reset's result (never a later one's), and does not run its own
 * fn.  Calling it from inside the gate, or from a reset's own fn or wedge
 * hook, would wait for itself: that aborts with a message.
 */
SRCU__API int  srcu_gate_reset(struct srcu_gate *g, int (*fn)(void *), void *arg);
/*
 * The same, for users that may wait for something only the reset
 * provides (the i915 deadlock): if users are still inside timeout_ns
 * after the gate closed, wedge(wedge_arg) is called once, in this thread,
 * to make them leave (cancel their waits, fail their requests); then the
 * reset keeps waiting for them.
 */
SRCU__API int  srcu_gate_reset_timeout(struct srcu_gate *g, int (*fn)(void *), void *arg,
				       int64_t timeout_ns, void (*wedge)(void *), void *wedge_arg);
/* Close for good: on return no user is inside and no reset runs; every
 * later enter (and reset) gets -ESHUTDOWN; users asleep in enter are woken
 * at once with it.  0, or -EINVAL for NULL.  From inside the gate, or a
 * reset's own fn or wedge hook: aborts. */
SRCU__API int  srcu_gate_shutdown(struct srcu_gate *g);

SRCU__API int  srcu__gate_enter_slow(struct srcu_gate *g, int64_t timeout_ns, int may_sleep);

/* ---- inline fast paths ---- */

static inline int srcu_gate_enter(struct srcu_gate *g)
{
	int tag = srcu_read_lock(&g->srcu);

	/*
	 * G: the section is counted before this load (B in srcu_read_lock()).
	 * A reset stores CLOSED before its synchronize_srcu(), so either
	 * that grace period waits for this section or this load sees
	 * CLOSED.  Acquire pairs with the release that reopens the gate:
	 * a user who sees it open sees what the reset's fn wrote.
	 */
	if (__builtin_expect(!(__atomic_load_n(&g->state, __ATOMIC_ACQUIRE) &
			       (SRCU_GATE__CLOSED | SRCU_GATE__SHUTDOWN)), 1))
		return tag;
	srcu_read_unlock(&g->srcu, tag);
	return srcu__gate_enter_slow(g, -1, 1);
}

static inline void srcu_gate_exit(struct srcu_gate *g, int tag)
{
	srcu_read_unlock(&g->srcu, tag);
}

#ifdef __cplusplus
}
#endif
#endif /* SRCU_GATE_H */
