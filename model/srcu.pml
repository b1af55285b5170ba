/*
 * srcu.pml: the libsrcu read side and grace-period engine in Promela, for
 * exhaustive checking with Spin (model/check.sh, `make model`).
 *
 * What is modelled, step for step as src/gp.c and include/srcu.h do it:
 *   - readers: load the index, (any amount of preemption), count on it in
 *     the thread's own lock counter; unlock counts in the thread's own
 *     unlock counter.  Sections nest and overlap (two open at once).
 *   - the scan: sum every thread's unlock count one thread at a time,
 *     then (fence A) every thread's lock count, compare; retry if busy.
 *   - a grace period: one check of both indices (unlock sums of both,
 *     fence A, lock sums of both), which ends it if both are idle; else
 *     SCAN1 on the inactive index (unless that check found it idle),
 *     flip, SCAN2 on the old index, with the gp_seq state updates.
 *   - sharing: two updaters take gp_seq snapshots, whoever wins gp_lock
 *     runs grace periods until its own snapshot is reached (no more), the
 *     other waits for gp_seq to reach its snapshot or for the lock to be
 *     free again.
 *   - no gathering (since issue 38; srcu.pml gathered in every run from
 *     issue 23 on: the runner could wait before S for the callers its
 *     last GP served, which changed no snapshot).  Pacing and
 *     srcu_expedite_current() only delay when a step begins, which the
 *     interleavings already hold; not modelled.
 *
 * What is not: weak memory.  Each step here is sequentially consistent;
 * the argument that membarrier (fence A) and the readers' compiler
 * barriers B and C give the scans that view is in doc/design.md.  Sleeping
 * and waking are left out too: they decide when a scan is retried, never
 * what it concludes.
 *
 * The safety property (assertion in updater()): every read-side section
 * that was open when synchronize() was called has ended when it returns.
 *
 * REUSE lets a reader's thread exit between sections and a new thread
 * take its record (the scans skip free records).
 *
 * Variants (spin -D...), each of which must fail: REREAD (with REUSE) has
 * the lock sum look at ownership again instead of counting what the
 * unlock sum counted; ONESCAN skips SCAN1 (the
 * stale-reader case); LOCKSFIRST sums the lock counts before the unlock
 * counts (a reader that runs a whole section between the two sums);
 * EARLYSNAP lets a caller be served by the grace period already in
 * flight (its scans may be past the caller's readers); FASTHALF ends a
 * grace period when the one check finds only the inactive index idle;
 * LATEJOIN lets a caller join the running GP: a caller that reads gp_seq in
 * state SCAN1 (the GP's first check, or SCAN1's wait) joins that GP (its
 * snapshot is the running GP's end; src/torture.h's busted flavour).  The
 * counterexample: the first check finds both indices idle, a reader then
 * begins a section, a caller reads SCAN1 and joins, and the GP ends with
 * the section open.  (A caller that joined only before the first check's
 * fence A would be served: that check's lock sums come after its call.
 * Verified without a violation, with a ghost flag from S to that fence,
 * for 1 reader and 2 updaters x 2 calls (5.8 million states) and x 1
 * call with 2 rounds (12.9 million); not in check.sh.  But nothing a
 * caller can read tells it that fence A has not yet run.)
 *
 * DEAD (issue 11's process-shared domains, doc/shared.md): a reader may
 * die at any step, inside a section or not; its counts freeze where they
 * are and it reads nothing more (its ghost sections end).  A grace
 * period that waits for readers may recover a dead reader's slot at any
 * moment (the design's probe), ending its open sections as thread exit
 * does: unlocks raised to the locks, only once the owner is dead.  The
 * broken variant DISCARDLIVE recovers a slot without asking whether its
 * owner is dead, and must fail.
 *
 * TAKEOVER (with DEAD; the slot reuse of src/shared_file.c): each slot has an
 * owner word naming one incarnation of its reader (1, 2, ...; 0 free,
 * RECOVERING the recovery's marker).  A dead reader may come back as a
 * new process (TAKEOVERS times) that claims the slot, only if its owner
 * word still names the dead incarnation and its counts are balanced
 * (claim_dead(): read the owner, ask whether it is dead, compare the
 * counts, CAS the owner word) or if the slot is free (claim_free()), and
 * then runs its sections in the same counters, with fresh ghost
 * sections; it may die again.  The recovery is srcu__shm_recover()'s
 * steps, each its own: read the owner word, ask whether that incarnation
 * is dead, CAS the word to RECOVERING (which fails if the slot was taken
 * over, and makes a later claim fail), balance, free.  The broken variant
 * LATEMARK is the order before the marker: ask, balance, then CAS the
 * owner word to free; a new owner that claimed the balanced dead slot in
 * between has its section ended by the balance, and it must fail.
 *
 * SPDX-License-Identifier: MIT
 */

/* The configuration (check.sh runs several): */
#ifndef NR
#define NR        2   /* reader threads */
#endif
#ifndef ROUNDS
#define ROUNDS    1   /* sections (or section pairs) per reader */
#endif
#ifndef UPDATERS
#define UPDATERS  1   /* updater threads: 2 share grace periods */
#endif
#ifndef CALLS
#define CALLS     2   /* synchronize() calls per updater */
#endif
#ifndef TAKEOVERS
#define TAKEOVERS 1   /* TAKEOVER: new incarnations per reader slot */
#endif

byte idx;                      /* the domain's current index (low bit) */
byte lock_cnt[NR * 2];         /* [reader * 2 + index] */
byte unlock_cnt[NR * 2];

byte gp_seq;                   /* GP count << 2 | state */
byte gp_seq_needed;
bit  gp_lock;

/* Reader records: owned, or free (REUSE: a reader's thread exits between
 * sections and a new one takes the record).  A check's unlock sum notes
 * the owned records; its lock sum counts exactly those. */
bit  owned[NR] = 1;

/* SETS: the domain's reader set (doc/design.md, "Reader sets").  A
 * record enters it at its owner's first lock, after the count and before
 * the section (then fence N); a released record leaves it.  Checks count
 * only records in the set.  Broken variants: NOTELATE notes after the
 * section has begun; KEEPMARK (with REUSE) forgets the record's set bit
 * but not its NOTED mark, so the next owner never notes. */
#ifdef SETS
bit  noted[NR];
bit  marked[NR];               /* the lock word's NOTED bit */
#define IN_SET(r) (owned[r] && noted[r])
#else
#define IN_SET(r) owned[r]
#endif

/* DEAD: is the reader's process still running?  Written once, by the
 * reader as it dies; read by the updaters' recovery. */
#ifdef DEAD
bit  alive[NR] = 1;
#define MAYDIE  if :: true -> goto died :: true -> skip fi
#else
#define MAYDIE  skip
#endif

/* TAKEOVER: the slot's owner word and the reader's current incarnation
 * (alive[] is that incarnation's).  Incarnations only grow, so an owner
 * word never names a later process (the library's pid and start time). */
#ifdef TAKEOVER
#define RECOVERING 255
byte owner[NR] = 1;            /* 0: free; RECOVERING: being recovered */
byte gen[NR] = 1;
/* owner_dead(o) for slot r: a marker or a free word is nobody's */
#define OWNER_DEAD(r, o) ((o) != 0 && (o) != RECOVERING && ((o) != gen[r] || !alive[r]))
#define BALANCED(r) (lock_cnt[(r) * 2] == unlock_cnt[(r) * 2] && \
		     lock_cnt[(r) * 2 + 1] == unlock_cnt[(r) * 2 + 1])
#endif

/* Ghost state for the property: per reader, two section slots. */
bit  inside[NR * 2];           /* [reader * 2 + slot] */
byte sect[NR * 2];             /* generation of the slot's current section */

#define SEQ_GE(a, b) ((((a) - (b)) & 255) < 128)   /* wrap-safe on bytes */

/* ---- readers ---- */

inline read_lock(me, i)
{
	i = idx & 1;                       /* may be preempted after this */
	lock_cnt[me * 2 + i]++;            /* then B: the section starts */
#if defined(SETS) && !defined(NOTELATE)
	if                                 /* the count found NOTED clear: */
	:: !marked[me] -> noted[me] = 1; marked[me] = 1   /* note, N, mark */
	:: else -> skip
	fi
#else
	skip
#endif
}

inline read_unlock(me, i)
{
	d_step { unlock_cnt[me * 2 + i]++; i = 0 }  /* C: after the section */
}

inline enter(me, k)
{
	d_step { sect[me * 2 + k]++; inside[me * 2 + k] = 1 };
#ifdef NOTELATE
	noted[me] = 1                      /* too late: the section has begun */
#else
	skip
#endif
}

inline leave(me, k)
{
	inside[me * 2 + k] = 0
}

proctype reader(byte me)
{
	byte a, b, round = 0;
#ifdef TAKEOVER
	byte o;
again:
#endif
	do
	:: round < ROUNDS ->
		read_lock(me, a); MAYDIE; enter(me, 0); MAYDIE;
		if
		:: true ->                          /* a single section */
			leave(me, 0); MAYDIE; read_unlock(me, a); MAYDIE
		:: true ->                          /* nested */
			read_lock(me, b); enter(me, 1);
			leave(me, 1); read_unlock(me, b);
			leave(me, 0); read_unlock(me, a)
		:: true ->                          /* overlapping */
			read_lock(me, b); enter(me, 1);
			leave(me, 0); read_unlock(me, a);
			leave(me, 1); read_unlock(me, b)
		fi;
		round++;
#ifdef REUSE
		if
#ifdef SETS
#ifdef KEEPMARK
		:: true -> noted[me] = 0; owned[me] = 0; owned[me] = 1   /* forgets, keeps NOTED */
#else
		:: true -> noted[me] = 0; marked[me] = 0; owned[me] = 0; owned[me] = 1   /* exit (forget); reuse */
#endif
#else
		:: true -> owned[me] = 0; owned[me] = 1   /* exit; a new thread takes it */
#endif
		:: true -> skip
		fi
#endif
	:: else -> break
	od;
#ifdef DEAD
	goto done;
died:   skip;                               /* killed: nothing runs after */
	d_step { alive[me] = 0; inside[me * 2] = 0; inside[me * 2 + 1] = 0 };
#ifdef TAKEOVER
	/* A new process comes to the slot (or none does): the claim's read
	 * of the owner word, then (its own steps) the death and balance
	 * checks, then the CAS from the value read. */
	if
	:: gen[me] <= TAKEOVERS ->
		d_step { gen[me]++; alive[me] = 1; round = 0; a = 0; b = 0; o = owner[me] };
		if
		:: o == 0 -> skip                           /* claim_free() */
		:: OWNER_DEAD(me, o) -> if :: BALANCED(me) -> skip :: else -> goto done fi
		:: else -> goto done                        /* marked, or alive: gives up */
		fi;
		if
		:: d_step { owner[me] == o -> owner[me] = gen[me]; o = 0 } -> goto again
		:: else -> goto done                        /* the CAS failed */
		fi
	:: true -> skip
	fi;
#endif
done:
#endif
	skip
}

/* ---- the scan: srcu__readers_done() ---- */

inline readers_done(x, done)
{
#ifdef LOCKSFIRST
	do :: r < NR -> locks = locks + lock_cnt[r * 2 + x]; r++ :: else -> break od;
	r = 0;
	do :: r < NR -> unlocks = unlocks + unlock_cnt[r * 2 + x]; r++ :: else -> break od;
#else
	do
	:: r < NR ->
		if
		:: IN_SET(r) -> counted[r] = 1; unlocks = unlocks + unlock_cnt[r * 2 + x]
		:: else -> counted[r] = 0
		fi;
		r++
	:: else -> break
	od;
	/* fence A */
	r = 0;
	do
	:: r < NR ->
#ifdef REREAD
		if :: owned[r] -> locks = locks + lock_cnt[r * 2 + x] :: else -> skip fi;
#else
		if :: counted[r] -> locks = locks + lock_cnt[r * 2 + x] :: else -> skip fi;
#endif
		r++
	:: else -> break
	od;
#endif
	atomic {
		done = (locks == unlocks); locks = 0; unlocks = 0; r = 0;
		counted[0] = 0; counted[NR - 1] = 0   /* NR <= 2 here */
	}
}

/* idle_indices(): one check of both indices (unlock sums of both, fence
 * A, lock sums of both); idle gets bit 0 for the inactive index x1 and
 * bit 1 for the current one x0.  FASTHALF, a broken variant, compares
 * only the inactive index and calls the domain idle. */
inline idle_indices(x1, x0, idle)
{
	do
	:: r < NR ->
		if
		:: IN_SET(r) ->
			counted[r] = 1;
			unlocks = unlocks + unlock_cnt[r * 2 + x1];
			unlocks0 = unlocks0 + unlock_cnt[r * 2 + x0]
		:: else -> counted[r] = 0
		fi;
		r++
	:: else -> break
	od;
	/* fence A */
	r = 0;
	do
	:: r < NR ->
		if
		:: counted[r] ->
			locks = locks + lock_cnt[r * 2 + x1];
			locks0 = locks0 + lock_cnt[r * 2 + x0]
		:: else -> skip
		fi;
		r++
	:: else -> break
	od;
	atomic {
#ifdef FASTHALF
		idle = 3 * (locks == unlocks);
#else
		idle = (locks == unlocks) + 2 * (locks0 == unlocks0);
#endif
		locks = 0; unlocks = 0; locks0 = 0; unlocks0 = 0; r = 0;
		counted[0] = 0; counted[NR - 1] = 0
	}
}

inline balance(r)
{
	d_step {
		unlock_cnt[r * 2] = lock_cnt[r * 2];
		unlock_cnt[r * 2 + 1] = lock_cnt[r * 2 + 1]
	}
}

/* DEAD: the recovery step.  Any slot whose owner is dead may have its
 * open sections ended (both indices), at any point where the updater
 * waits for readers; DISCARDLIVE does it for a live owner too. */
inline recover_dead()
{
#if defined(DEAD) && defined(TAKEOVER)
	do
	:: r < NR ->
		if
		:: true ->
			o = owner[r];                           /* load_acquire */
			if
			:: OWNER_DEAD(r, o) ->                  /* owner_dead(owner) */
#ifdef LATEMARK
				balance(r);                         /* before the CAS: too early */
				d_step { if :: owner[r] == o -> owner[r] = 0 :: else -> skip fi }
#else
				if
				:: d_step { owner[r] == o -> owner[r] = RECOVERING } ->   /* mark_recovering() */
					balance(r);
					owner[r] = 0                    /* freed (release) */
				:: else -> skip                     /* taken over first */
				fi
#endif
			:: else -> skip
			fi;
			o = 0
		:: true -> skip
		fi;
		r++
	:: else -> r = 0; break
	od
#elif defined(DEAD)
	do
	:: r < NR ->
		if
#ifdef DISCARDLIVE
		:: true ->
#else
		:: !alive[r] ->
#endif
			d_step {
				unlock_cnt[r * 2] = lock_cnt[r * 2];
				unlock_cnt[r * 2 + 1] = lock_cnt[r * 2 + 1]
			}
		:: true -> skip
		fi;
		r++
	:: else -> r = 0; break
	od
#else
	skip
#endif
}

inline wait_readers(x)
{
	do
	:: recover_dead(); readers_done(x, done); if :: done -> done = 0; break :: else -> skip fi
	od
}

/* ---- one grace period: run_gp() ---- */

inline run_gp()
{
	seq = gp_seq;
	gp_seq = seq + 1;                  /* SCAN1 state (S) */
	i = idx & 1;
#ifdef ONESCAN
	idle = 1;                          /* SCAN1 (and the check of both) skipped */
#else
	idle_indices(1 - i, i, idle);      /* both idle: the whole GP */
#endif
	if
	:: idle == 3 -> skip
	:: else ->
		if
		:: (idle & 1) == 0 -> wait_readers(1 - i)   /* SCAN1: stale readers */
		:: else -> skip
		fi;
		idx = idx + 1;                 /* flip (E, D) */
		gp_seq = seq + 2;              /* SCAN2 state */
		wait_readers(i)                /* SCAN2 */
	fi;
	atomic { gp_seq = seq + 4; seq = 0; i = 0; idle = 0 }   /* GP ended (release) */
}

inline run_gps(s)
{
	do :: !SEQ_GE(gp_seq, s) -> run_gp() :: else -> break od   /* and no more */
}

/* ---- synchronize(), with the property ---- */

proctype updater(byte calls)
{
	bit  was_in[NR * 2];
	byte was_sect[NR * 2];
	byte s, k;
	byte seq, i, r, locks, unlocks;   /* run_gp() and the scans */
	byte locks0, unlocks0, idle;             /* idle_indices() */
	bit  done;
	bit  counted[NR];                        /* the check's srcu__scan */
#ifdef TAKEOVER
	byte o;                                  /* recovery: the owner word read */
#endif

	do
	:: calls > 0 ->
		/* The call: remember every section open now. */
		d_step {
			k = 0;
			do
			:: k < NR * 2 -> was_in[k] = inside[k]; was_sect[k] = sect[k]; k++
			:: else -> break
			od
		}
#ifdef EARLYSNAP
		d_step { k = 0; s = (gp_seq + 3) & 252 }   /* the GP in flight */
#elif defined(LATEJOIN)
		d_step {
			k = 0;
			if
			:: (gp_seq & 3) == 1 -> s = (gp_seq + 3) & 252   /* joins the GP in SCAN1 */
			:: else -> s = (gp_seq + 7) & 252
			fi
		}
#else
		d_step { k = 0; s = (gp_seq + 7) & 252 }   /* seq_snap() */
#endif
		d_step {                       /* seq_request(): CAS loop */
			if :: !SEQ_GE(gp_seq_needed, s) -> gp_seq_needed = s :: else -> skip fi
		}
		do
		:: SEQ_GE(gp_seq, s) -> break
		:: else ->
			if
			:: atomic { gp_lock == 0 -> gp_lock = 1 } ->
				run_gps(s);
				gp_lock = 0
			:: else ->                 /* sleep on gp_event */
				(SEQ_GE(gp_seq, s) || gp_lock == 0)
			fi
		od;
		/* The return: none of those sections may still be open. */
		k = 0;
		do
		:: k < NR * 2 ->
			assert(!(was_in[k] && inside[k] && sect[k] == was_sect[k]));
			d_step { was_in[k] = 0; was_sect[k] = 0; k++ }
		:: else -> k = 0; break
		od;
		atomic { calls--; s = 0 }
	:: else -> break
	od
}

init
{
	byte n = 0;

	atomic {
		do :: n < NR -> run reader(n); n++ :: else -> break od;
		n = 0;
		do :: n < UPDATERS -> run updater(CALLS); n++ :: else -> break od
	}
}
