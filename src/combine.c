/*
 * combine.c: requests that share one unit of work.  A domain's grace
 * periods (gp.c) and the fence service's membarriers (fence.c) are shared
 * by the same rule, written here once, with the unit of work passed in
 * (struct srcu__combine_ops):
 *
 *   seq counts units (internal.h's sequence numbers).  A caller fences,
 *   reads seq and takes its snapshot s, the value once a unit that begins
 *   after the read has ended (srcu__seq_snap()); it returns once seq >= s
 *   (srcu__combine_done(), acquire), then fences again.  Whoever holds the
 *   lock runs units until its own s is reached, and no more; the others
 *   wait for the event, which each unit's end and each unlock bump, and
 *   the first to find the lock free takes over.
 *
 * The fences and their letters are the owner's: gp.c's P, S and F,
 * fence.c's FS, FM and FE (doc/design.md, "Sharing grace periods" and
 * "The fence service"); this file pairs only the end's release with the
 * callers' acquire, and the event's bump with its sleepers.  The owner
 * keeps the words where its layout wants them (a domain's runner words
 * and waiters' words on separate cache lines, a shared domain's in its
 * file) and names them in a struct srcu__combiner.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <sched.h>

/* Pauses between two looks at the clock while a caller spins. */
#define SPIN_PAUSES 16

void srcu__combine_bump(const struct srcu__combiner *c)
{
	/* Pairs with the sleepers' increment-then-sleep in
	 * srcu__combine_sleep() (backend.c says how). */
	srcu__backend_event_bump(c->event, c->sleepers, c->pshared);
}

void srcu__combine_sleep(const struct srcu__combiner *c, unsigned int ev, int64_t deadline_ns)
{
	/* Seq-cst: pairs with srcu__combine_bump()'s seq-cst RMW and count
	 * read: either the futex wait sees the bumped event, or the bump
	 * sees this sleeper and wakes it. */
	__atomic_fetch_add(c->sleepers, 1, __ATOMIC_SEQ_CST);
	srcu__backend_futex_wait(c->event, ev, deadline_ns, c->pshared);
	__atomic_fetch_sub(c->sleepers, 1, __ATOMIC_SEQ_CST);
}

bool srcu__combine_spin(const struct srcu__combiner *c, unsigned int ev, int64_t spin_ns,
			int64_t yield_after_ns)
{
	int64_t start = srcu__backend_now_ns(), waited;
	int i;

	do {
		for (i = 0; i < SPIN_PAUSES; i++) {
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

/*
 * Gathering (doc/design.md): before a unit begins, wait briefly for the
 * callers that the last unit served to ask again, so that this one serves
 * them too.  They were woken when it ended and are on their way back;
 * without the wait, the holder (back first: it needs no wake-up) begins
 * the unit before their snapshots, which then need the next, and callers
 * take turns, one unit each.  The quota is the callers the last unit
 * served plus those that asked while it ran (srcu__combine_end()), by the
 * arrival count.  A caller that does not come back costs at most
 * SRCU__GATHER_NS once; the quota then shrinks.  Not while an urgent
 * (expedited) request waits.  The wait comes before the unit's first
 * state store, so it changes no snapshot: a caller that asks meanwhile
 * reads seq idle and is served by the unit about to begin.
 */
static void gather(const struct srcu__combiner *c, void *arg)
{
	unsigned int at = load_relaxed(c->arrivals_start), want = load_relaxed(c->quota), n;
	int64_t start = 0;

	while ((n = load_relaxed(c->arrivals)) - at < want && !c->ops->urgent(arg)) {
		if (!start)
			start = srcu__backend_now_ns();
		else if (srcu__backend_now_ns() - start >= SRCU__GATHER_NS)
			break;
		sched_yield();   /* the callers on their way may need this CPU */
	}
	n = load_relaxed(c->arrivals);
	store_relaxed(c->quota, n - at);   /* served by the unit about to begin */
	store_relaxed(c->arrivals_start, n);
}

void srcu__combine_end(const struct srcu__combiner *c, unsigned long seq)
{
	/* Release: pairs with the acquire in srcu__combine_done(): a caller
	 * that sees the end sees it after the unit's fences (a GP's checks
	 * and their A, a membarrier), and its own fence after the wait (F,
	 * FE) orders what it does next after them. */
	store_release(c->seq, srcu__seq_end(seq));
	/* The next gather's quota: the callers this unit served, who come
	 * back, and those that asked meanwhile, who are waiting. */
	store_relaxed(c->quota, load_relaxed(c->quota) + load_relaxed(c->arrivals) -
				load_relaxed(c->arrivals_start));
	srcu__combine_bump(c);
}

/*
 * Run units until seq reaches s (the caller holds the lock), and no more:
 * the callers that asked during the last one wait for the next, and a
 * holder that ran it for them before returning would begin it before its
 * own next request could join it (one request per unit under
 * back-to-back callers).  Handing over instead lets that next unit serve
 * them all: the unlock wakes them, and whoever comes first runs it.
 */
static void run(const struct srcu__combiner *c, unsigned long s, void *arg)
{
	unsigned long seq;

	/* Relaxed: the lock's acquire brought the last holder's stores, and
	 * nobody else stores seq while it is held. */
	while (ULONG_CMP_LT(seq = load_relaxed(c->seq), s)) {
		gather(c, arg);
		c->ops->run(arg, seq);   /* ends with srcu__combine_end() */
	}
}

void srcu__combine_wait(const struct srcu__combiner *c, unsigned long s, void *arg)
{
	for (;;) {
		/* The event before seq (both acquire): a unit that ends, or a
		 * holder that leaves, after this look bumps the event after
		 * its store, so a wait for the event to move from ev returns. */
		unsigned int ev = srcu__combine_event(c);

		if (srcu__combine_done(c, s))
			return;
		if (c->ops->trylock(arg)) {
			run(c, s, arg);
			c->ops->unlock(arg);
		} else if (c->ops->wait(arg, ev)) {
			return;
		}
	}
}

void srcu__combine_fork_child(const struct srcu__combiner *c)
{
	*c->seq = srcu__seq_idle(*c->seq);   /* a running unit is gone */
	*c->lock = 0;
	*c->sleepers = 0;
	*c->quota = 0;   /* the callers the last unit served are gone */
}
