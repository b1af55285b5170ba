/*
 * model/wake.pml: the combiner's waits (src/combine.h, combine.c) under
 * Spin, for liveness: every caller's wait ends.  The grace period itself
 * is srcu.pml's; here a unit of work is a start and an end of seq, and
 * what is checked is the event word, its sleepers' mark and the futex:
 *
 *   a caller takes its snapshot, then reads the event and seq; returns
 *   once seq reaches the snapshot; else takes the lock and runs units up
 *   to it, or sleeps: marks the event word (a CAS from the value it read
 *   to that value | SLEEPERS) and waits on the futex while the word holds
 *   the marked value;
 *   whoever frees the lock bumps the event (an add of STEP) and, if the
 *   value it replaced was marked, clears the mark and wakes every
 *   sleeper.
 *
 * The futex is the kernel's: a wait compares the word and queues as one
 * step (the hash-bucket lock), and only a wake-up takes it off the queue.
 * Each step is one atomic access in the code (or the futex's own lock),
 * all of one word but the lock and seq, so Spin's interleavings cover
 * the executions.  A lost wake-up leaves a caller asleep when every other
 * has returned: an invalid end state, which pan reports.
 *
 * STALL lets one waker stop before its FUTEX_WAKE, until every other caller
 * has returned, if it owes no sleeper (none is queued on the value it
 * replaced): a protocol in which a sleeper depends on a waker it did not
 * wait for fails then (an adversarial review's variant, 2026-12-06).
 * STALL_POINT chooses: stall (at most one waker in a run) or go on.
 * TIMEOUT lets sleepers leave their futex wait early, LEAVES times in a
 * run (a deadline, a signal, a spurious wake-up): a bounded number, so
 * that a sleeper that is never woken still ends the run asleep (check.sh
 * requires CHECK_FIRST caught with TIMEOUT too).
 *
 * Other protocols:
 *   OLD_COUNT   before issue 38 (not in check.sh: 3 callers x 2 calls, 19,104,814
 *               states, no error, 2026-12-06): a count of
 *               sleepers beside the word, the sleeper's own increment
 *               before its wait and decrement after it, the waker's
 *               wake-up whenever the count is not 0.  Correct, but each
 *               bump while a sleeper was preempted between its count and
 *               its wait made a FUTEX_WAKE for nobody.
 * Broken variants, which check.sh requires caught:
 *   WAKECOUNT   that count taken by the waker (exchange to 0) instead of
 *               the sleeper's decrement: a bump whose add came before a
 *               sleeper read the event takes that sleeper's count, and the
 *               bump the sleeper waits for sees none.  Tried for issue 38,
 *               found here before it shipped.
 *   SPLIT       the add and the clear as two RMWs (commit b303359): between
 *               them the new value carries the old mark, a new sleeper
 *               takes it for another's and sleeps on it, and the clear
 *               leaves it to that waker's wake-up, not to the bump it waits
 *               for.  Caught with STALL (the review's finding).
 *   CHECK_FIRST the mark read before the bump: a sleeper that marks
 *               between the two is asleep on a value the bump replaces
 *               without a wake-up.
 *   WAKE_ONE    FUTEX_WAKE of one sleeper: the cleared mark stood for all.
 *
 * SPDX-License-Identifier: MIT
 */

#ifndef CALLERS
#define CALLERS 3
#endif
#ifndef CALLS
#define CALLS 2
#endif

#ifndef LEAVES
#define LEAVES 2
#endif
#define SLEEPERS 1
#define STEP     2

byte seq;          /* 2 * units ended, + 1 while one runs */
bit  lock;
byte event;        /* the futex word: bumps * STEP | SLEEPERS */
bit  queued[CALLERS];   /* on the futex's queue */
byte slept_on[CALLERS]; /* the value each queued on */
byte returned;     /* callers done with all their calls */
byte leaves = LEAVES; /* TIMEOUT: early leaves of a futex wait still allowed */
bit  stalled;      /* STALL: a waker has stopped */
#if defined(OLD_COUNT) || defined(WAKECOUNT)
byte sleepers;
#endif

/* STALL: the point before a waker's FUTEX_WAKE where it may stop until
 * every other caller has returned, if no sleeper is queued on the value
 * old it replaced (marked or not). */
#ifdef STALL
#define STALL_POINT \
	d_step { \
		owed = 0; k = 0; \
		do \
		:: k < CALLERS -> \
			if :: queued[k] && (slept_on[k] == (old | SLEEPERS) || slept_on[k] == old) -> owed = 1 \
			   :: else -> skip fi; \
			k++ \
		:: else -> k = 0; break \
		od \
	}; \
	if :: atomic { !stalled && !owed -> stalled = 1 }; (returned == CALLERS - 1) \
	   :: skip fi; \
	owed = 0
#else
#define STALL_POINT skip
#endif

/* FUTEX_WAKE of every sleeper (INT_MAX); WAKE_ONE: the first queued. */
inline futex_wake()
{
	d_step {
		k = 0;
		do
#ifdef WAKE_ONE
		:: k < CALLERS && queued[k] -> queued[k] = 0; k = 0; break
		:: k < CALLERS && !queued[k] -> k++
#else
		:: k < CALLERS -> queued[k] = 0; k++
#endif
		:: else -> k = 0; break
		od
	}
}

/* The futex wait: compare and queue in one step; then asleep until a
 * wake-up takes it off the queue (TIMEOUT: or until it leaves). */
inline futex_wait(val)
{
	atomic { if :: event == (val) -> queued[me] = 1; slept_on[me] = val :: else -> skip fi };
#ifdef TIMEOUT
	if
	:: (queued[me] == 0)
	:: atomic { queued[me] == 1 && leaves > 0 -> queued[me] = 0; leaves-- }
	fi
#else
	(queued[me] == 0)
#endif
}

/* srcu__combine_bump_event(), after the lock's release. */
inline bump()
{
#if defined(OLD_COUNT)
	d_step { old = event; event = event + STEP };
	STALL_POINT;
	if :: sleepers > 0 -> futex_wake() :: else -> skip fi
#elif defined(WAKECOUNT)
	event = event + STEP;
	if
	:: sleepers > 0 ->
		d_step { old = sleepers; sleepers = 0 };
		if :: old > 0 -> futex_wake() :: else -> skip fi
	:: else -> skip
	fi
#elif defined(SPLIT)
	d_step { old = event; event = event + STEP };   /* fetch_add */
	if
	:: old & SLEEPERS -> event = event & ~SLEEPERS; STALL_POINT; futex_wake()   /* fetch_and */
	:: else -> skip
	fi
#elif defined(CHECK_FIRST)
	old = event;
	event = (event + STEP) & ~SLEEPERS;
	if :: old & SLEEPERS -> STALL_POINT; futex_wake() :: else -> skip fi
#else
	d_step { old = event; event = (event + STEP) & ~SLEEPERS };   /* the CAS loop */
	if :: old & SLEEPERS -> STALL_POINT; futex_wake() :: else -> skip fi
#endif
	old = 0
}

/* srcu__combine_sleep(ev). */
inline sleep()
{
#if defined(OLD_COUNT) || defined(WAKECOUNT)
	sleepers++;
	futex_wait(ev);
#ifdef OLD_COUNT
	sleepers--;
#endif
#else
	atomic {   /* CAS ev -> ev | SLEEPERS; "seen == marked" sleeps too */
		if
		:: event == ev || event == (ev | SLEEPERS) -> event = ev | SLEEPERS; marked = 1
		:: else -> marked = 0   /* the event moved */
		fi
	};
	if :: marked -> futex_wait(ev | SLEEPERS) :: else -> skip fi;
	marked = 0
#endif
}

proctype caller(byte me)
{
	byte calls = CALLS, s, ev, k, old;
	bit marked, owed;

	do
	:: calls > 0 ->
		s = (seq + 3) & 254;     /* srcu__seq_snap(): a unit begun after */
		do
		:: ev = event & ~SLEEPERS;   /* srcu__combine_event() */
			if
			:: seq >= s -> break
			:: else ->
				if
				:: atomic { lock == 0 -> lock = 1 } ->
					do                     /* srcu__combine_run() */
					:: seq < s -> seq++; seq++   /* start, end */
					:: else -> break
					od;
					lock = 0;
					bump()
				:: else -> sleep()
				fi
			fi
		od;
		calls--
	:: else -> break
	od;
	returned++
}

init
{
	byte n = 0;

	atomic {
		do :: n < CALLERS -> run caller(n); n++ :: else -> break od
	}
}
