/*
 * combine.c: the out-of-line half of combine.h (which says what a
 * combiner is): a caller's spin and sleep on the event and the fork
 * child's reset.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "combine.h"

#include <sched.h>

/* Looks at the event between two looks at the clock while a caller
 * spins (a build may choose fewer: model/genmc/platform.h). */
#ifndef SRCU__SPIN_LOOKS
#define SRCU__SPIN_LOOKS 16
#endif

void srcu__combine_sleep(const struct srcu__combiner *c, unsigned int ev, int64_t deadline_ns)
{
	unsigned int marked = ev | SRCU__EVENT_SLEEPERS, seen = ev;

	/* Mark the word, then sleep on the marked value: the bump is an RMW
	 * of the same word, so it sees the mark and wakes us, or came first
	 * and the CAS fails (srcu__combine_bump_event()).  A CAS that finds
	 * the value marked already (another sleeper's mark, or this caller's
	 * own from a wait that timed out: a bump leaves none) sleeps too.
	 * Relaxed: the caller's look at seq came after its acquire of ev,
	 * and it looks again after the wait. */
	if (!__atomic_compare_exchange_n(c->event, &seen, marked, false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED) && seen != marked)
		return;   /* the event moved */
	srcu__backend_futex_wait(c->event, marked, deadline_ns, c->pshared);
}

bool srcu__combine_spin(const struct srcu__combiner *c, unsigned int ev, int64_t spin_ns,
			int64_t yield_after_ns)
{
	int64_t start = srcu__backend_now_ns(), waited;
	int i;

	do {
		for (i = 0; i < SRCU__SPIN_LOOKS; i++) {
			if (srcu__combine_event(c) != ev)
				return true;
			srcu__cpu_relax();
		}
		waited = srcu__backend_now_ns() - start;
		if (waited > yield_after_ns)
			sched_yield();   /* the runner may need this CPU */
	} while (waited < spin_ns);
	return false;
}

bool srcu__combine_yield(const struct srcu__combiner *c, unsigned int ev)
{
	sched_yield();
	return srcu__combine_event(c) != ev;
}

void srcu__combine_fork_child(const struct srcu__combiner *c)
{
	*c->seq = srcu__seq_idle(*c->seq);   /* a running unit is gone */
	*c->lock = 0;
	*c->event &= ~SRCU__EVENT_SLEEPERS;
}
