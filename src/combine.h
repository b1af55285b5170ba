/*
 * combine.h: requests that share one unit of work.  A domain's grace
 * periods (gp.c) and the fence service's membarriers (fence.c) are shared
 * by the same rule, written here once, with the unit of work passed in
 * (struct srcu__combine_ops):
 *
 *   seq counts units (internal.h's sequence numbers).  A caller fences,
 *   reads seq and takes its snapshot s, the value once a unit that begins
 *   after the read has ended (srcu__seq_snap()), and returns once
 *   seq >= s (srcu__combine_wait(), srcu__combine_done(): acquire), then
 *   fences again.  Whoever holds the lock runs units until its own s is
 *   reached, and no more, at once; the others wait for the event, which
 *   the holder bumps once it has freed the lock, and the first to find
 *   the lock free takes over.
 *
 *   No unit waits for callers (an earlier version gathered: the holder
 *   waited up to 50 us, yielding, for the callers its last unit served to
 *   ask again, so that the next unit would serve them too).  Each caller
 *   needed a wake-up before it could ask again, and the holder's wait
 *   cost more than the unit it saved; on a machine with other work, the
 *   yields gave the holder's CPU away (srcu-bench figure 12 with
 *   --background-load: 2 updaters at 0.21-0.27x urcu-memb's calls/s
 *   gathering, 0.97-1.26x without; doc/runs/2026-12-06-issue38-gather.txt).
 *   And the event is bumped after the unlock, not at the unit's end: a
 *   waiter woken while the holder still held the lock, on the holder's
 *   CPU, took the CPU from it and, if it asked again, found the lock held
 *   and slept.
 *
 * The fences and their letters are the owner's: gp.c's P, S and F,
 * fence.c's FS, FM and FE (doc/design.md, "Sharing grace periods" and
 * "The fence service"); this file pairs only the end's release with the
 * callers' acquire, and the event's bump with its sleepers' mark.  The owner
 * keeps the words where its layout wants them (a domain's runner words
 * and waiters' words on separate cache lines, a shared domain's in its
 * file) and names them in a struct srcu__combiner.
 *
 * The loop is inline, with the owner's ops a constant: each owner gets
 * it with its ops called directly (an uncontended synchronize_srcu() runs
 * it once, and a GP of local fences costs a few hundred instructions, so
 * calls through pointers showed: doc/runs/history.md).  Waiting, which
 * costs a system call or a spin, is out of line in combine.c.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_COMBINE_H
#define SRCU_COMBINE_H

#include "internal.h"

#include <limits.h>

struct srcu__combine_ops {
	/* Take the lock for the caller arg (false: it is held); free it, and
	 * then bump the event (srcu__combine_bump()), so that a waiter not yet
	 * served takes over. */
	bool (*trylock)(void *arg);
	void (*unlock)(void *arg);
	/* One unit of work from seq, idle: it stores its states
	 * (srcu__seq_start(seq) first, then the owner's full fence that pairs
	 * with its callers' fence before their snapshots), does the work, and
	 * ends with srcu__combine_end(). */
	void (*run)(void *arg, unsigned long seq);
	/* Wait for the event to move from ev, or less (the owner's policy,
	 * with srcu__combine_spin() and srcu__combine_sleep()); true when the
	 * caller's request was served another way, which ends the wait. */
	bool (*wait)(void *arg, unsigned int ev);
};

/* Where the owner keeps a combiner's words. */
struct srcu__combiner {
	unsigned long *seq;            /* units: count << 2 | state (release-stored end) */
	srcu__u64 *lock;               /* held (nonzero) by whoever runs units */
	unsigned int *event;           /* futex word: bumps << 1 | SRCU__EVENT_SLEEPERS */
	bool pshared;                  /* in memory other processes map: shared futexes */
};

/* The event word: a count of the holders' leaves (in steps of
 * SRCU__EVENT_STEP), and a bit that a caller sets before it sleeps on the
 * word, which the next bump clears, waking every sleeper. */
#define SRCU__EVENT_SLEEPERS 1u
#define SRCU__EVENT_STEP 2u

/* Spin until the event moves from ev (true), for up to spin_ns: pausing,
 * and past yield_after_ns (INT64_MAX: never) yielding the CPU as well. */
SRCU__HIDDEN bool srcu__combine_spin(const struct srcu__combiner *c, unsigned int ev,
				     int64_t spin_ns, int64_t yield_after_ns);
/* Give the CPU away once (sched_yield()), then look: true when the event
 * moved meanwhile (the wait is over), false to go on waiting.  A waiter's
 * step before it sleeps where spinning would cost more than it saves
 * (fence.c, "Yield or sleep"). */
SRCU__HIDDEN bool srcu__combine_yield(const struct srcu__combiner *c, unsigned int ev);
/* Sleep until the event moves from ev (or a wake-up, a signal), or until
 * CLOCK_MONOTONIC deadline_ns (< 0: none). */
SRCU__HIDDEN void srcu__combine_sleep(const struct srcu__combiner *c, unsigned int ev,
				      int64_t deadline_ns);
/* In a fork child: the units, the holder and the sleepers were other
 * threads'.  seq idle again, the lock free, no sleeper. */
SRCU__HIDDEN void srcu__combine_fork_child(const struct srcu__combiner *c);

/*
 * Bump the event word and wake its sleepers.  A sleeper marks the word
 * (SRCU__EVENT_SLEEPERS, a CAS from the value it read) and sleeps on the
 * marked value (srcu__combine_sleep()); the bump adds and clears the mark
 * in one RMW of the same word, so the two are ordered: a mark before the
 * bump is in the value the bump replaces, and it wakes; a mark after it
 * fails (the value moved) or marks the new value, which the next bump
 * sees.  A marked value is always a sleeper's mark, never one a bump left
 * behind, so a sleeper is woken by the first bump after its mark at the
 * latest (a late FUTEX_WAKE of an earlier bump may wake it before: it
 * looks, and sleeps again).
 *
 * Why one RMW: the add and the clear as two (commit b303359) left the old
 * mark on the new value between them; a caller that read the new value
 * took it for another sleeper's mark and slept on it, and the clear made
 * its wake-up that waker's, not the next bump's: with that waker
 * preempted before its FUTEX_WAKE, the caller slept past the bump it
 * waited for (model/wake.pml's SPLIT with STALL; an adversarial review).
 *
 * Why a mark in the word and not a count of sleepers beside it (the
 * version before issue 38): decremented by each sleeper after it woke,
 * the count stayed up while a sleeper was preempted between its count and
 * its wait, or woken and waiting for a CPU, and each bump meanwhile made a
 * FUTEX_WAKE for nobody: about one per synchronize call with 4 updaters on
 * a loaded machine (doc/runs/2026-12-06-issue38-wake.txt).  And a count
 * taken by the waker (exchange to 0) loses wake-ups: a bump whose
 * increment came before a sleeper read the event may take that sleeper's
 * count, and the bump it needs then sees none (model/wake.pml found it,
 * WAKECOUNT, before it shipped; the model checks that this protocol's
 * every wait ends).
 */
static inline void srcu__combine_bump_event(unsigned int *event, bool pshared)
{
	unsigned int old = __atomic_load_n(event, __ATOMIC_RELAXED);

	/* Seq-cst (release, at least): a caller whose event read (acquire)
	 * sees the bump sees the unit's end and the lock's release before
	 * it.  A retry only when a sleeper's mark or another bump came
	 * between the load and the CAS. */
	while (!__atomic_compare_exchange_n(event, &old,
					    (old + SRCU__EVENT_STEP) & ~SRCU__EVENT_SLEEPERS,
					    false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
	if (old & SRCU__EVENT_SLEEPERS)
		srcu__backend_futex_wake(event, INT_MAX, pshared);
}

/* Bump the combiner's event and wake its sleepers. */
static inline void srcu__combine_bump(const struct srcu__combiner *c)
{
	srcu__combine_bump_event(c->event, c->pshared);
}

/* Has seq reached s?  Acquire: pairs with srcu__combine_end()'s release. */
static inline bool srcu__combine_done(const struct srcu__combiner *c, unsigned long s)
{
	return srcu__seq_done(load_acquire(c->seq), s);
}

/* The event's count, to wait for it to move (acquire, before a look at
 * seq: a unit that ends after the look bumps it after its end); without
 * the sleepers' mark, which moves nothing. */
static inline unsigned int srcu__combine_event(const struct srcu__combiner *c)
{
	return load_acquire(c->event) & ~SRCU__EVENT_SLEEPERS;
}

/* The end of the unit begun at seq: seq's end (release).  The event is
 * bumped when the holder leaves (ops->unlock()), once for all its units. */
static inline void srcu__combine_end(const struct srcu__combiner *c, unsigned long seq)
{
	/* Release: pairs with the acquire in srcu__combine_done(): a caller
	 * that sees the end sees it after the unit's fences (a GP's checks
	 * and their A, a membarrier), and its own fence after the wait (F,
	 * FE) orders what it does next after them. */
	store_release(c->seq, srcu__seq_end(seq));
}

/*
 * Run units until seq reaches s (the caller holds the lock), and no more:
 * the callers that asked during the last one wait for the next, and a
 * holder that ran it for them before returning would begin it before its
 * own next request could join it (one request per unit under
 * back-to-back callers).  Handing over instead lets that next unit serve
 * them all: the unlock wakes them, and whoever comes first runs it.
 */
static inline void srcu__combine_run(const struct srcu__combiner *c,
				     const struct srcu__combine_ops *ops, unsigned long s, void *arg)
{
	unsigned long seq;

	/* Relaxed: the lock's acquire brought the last holder's stores, and
	 * nobody else stores seq while it is held. */
	while (ULONG_CMP_LT(seq = load_relaxed(c->seq), s))
		ops->run(arg, seq);   /* ends with srcu__combine_end() */
}

/* Return once seq reaches s: served by units someone else runs, by the
 * ones this caller runs under the lock, or by ops->wait().  arg is the
 * caller's, for ops (a constant: see the top).  The caller's fence after
 * it is its own. */
static inline void srcu__combine_wait(const struct srcu__combiner *c,
				      const struct srcu__combine_ops *ops, unsigned long s, void *arg)
{
	for (;;) {
		/* The event before seq (both acquire): a unit that ends after
		 * this look is followed by its holder's leave, which bumps the
		 * event after the unit's end and the lock's release, so a wait
		 * for the event to move from ev returns.  (If trylock() below
		 * sees the lock held, ev is older than that holder's bump: the
		 * bump follows its release of the lock.  A dead shared holder
		 * never bumps: its waiters' patience covers it, gp.c.) */
		unsigned int ev = srcu__combine_event(c);

		if (srcu__combine_done(c, s))
			return;
		if (ops->trylock(arg)) {
			srcu__combine_run(c, ops, s, arg);
			ops->unlock(arg);
		} else if (ops->wait(arg, ev)) {
			return;
		}
	}
}

#endif /* SRCU_COMBINE_H */
