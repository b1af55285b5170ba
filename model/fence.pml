/*
 * fence.pml: the fence service (src/fence.c) in Promela, with the weak
 * memory that fence A exists for, for exhaustive checking with Spin
 * (model/check.sh).
 *
 * srcu.pml checks the grace-period engine with every step sequentially
 * consistent, fence A being only a place in the scan.  Here fence A is
 * what it is on x86: readers' counter stores wait in a store buffer
 * (TSO), their loads do not wait for them, and a membarrier drains the
 * buffer of every thread at some point while it runs.  Updaters are
 * sequentially consistent (their fences FS, FE, P, F make them so).
 *
 * Two domains, each with an updater: the updater replaces its domain's
 * object, waits for readers with checks (unlock sum, fence A through the
 * shared service, lock sum, compare), and frees the old object.  The
 * updaters share membarriers by the rule of fence.c: a caller needs the
 * end of the first membarrier that begins after its read of seq.  One
 * reader, of domain 1: it counts (into its store buffer), loads the
 * object, uses it, and uncounts.
 *
 * The property (assertion in reader()): an object the reader loaded
 * inside its section is not freed while the section is open.
 *
 * No gather (since issue 38; from issue 23 on the holder could wait for
 * more requests before its "running" store, which changed no snapshot):
 * a request that read seq before the running store is served by this
 * membarrier, by the rule above; one that read "running" needs the next.
 *
 * Broken variants, each of which must fail: EARLYFENCE lets a caller be
 * served by the membarrier in flight (src/torture.h's busted flavour):
 * it is also the tempting way to serve a late request by the membarrier
 * in flight; NOFENCE has no fence A at all (so the store
 * buffers matter here).
 *
 * SPDX-License-Identifier: MIT
 */

#ifndef ROUNDS
#define ROUNDS 2      /* the reader's sections */
#endif
#ifndef CALLS
#define CALLS  1      /* each updater's replace-and-free rounds */
#endif

/* The reader's counters for domain 1: visible values and its buffer.
 * Stores leave the buffer in order: a lock before the unlock after it. */
byte lock_vis, unlock_vis;
byte pend_lock, pend_unlock;     /* stores in the buffer, oldest first */

byte obj[2];                     /* each domain's object (a generation) */
bit  freed[8];                   /* generations 0..3 of domain 0, 4..7 of 1 */

/* The fence service. */
byte fseq;                       /* membarriers: count << 1 | running */
bit  flock;

/* One store leaves the reader's buffer. */
inline drain_one()
{
	if
	:: pend_lock > 0 -> pend_lock--; lock_vis++
	:: pend_lock == 0 && pend_unlock > 0 -> pend_unlock--; unlock_vis++
	fi
}

proctype reader()
{
	byte round = 0, g;

	do
	:: round < ROUNDS ->
		pend_lock++;                  /* srcu_read_lock(): B is a compiler barrier */
		g = obj[1];                   /* may pass the buffered count (TSO) */
		assert(!freed[4 + g]);        /* the use, inside the section */
		pend_unlock++;                /* srcu_read_unlock() */
		round++
	:: else -> break
	od
}

/* The hardware: buffered stores drain at any time. */
active proctype drainer()
{
	do
	:: atomic { pend_lock + pend_unlock > 0 -> drain_one() }
	:: atomic { pend_lock + pend_unlock == 0 && _nr_pr == 1 -> break }
	od
}

/* membarrier(): every thread's buffer is drained at some point while it
 * runs (here: before it returns, interleaved with everything else). */
inline membarrier()
{
	do
	:: atomic { pend_lock + pend_unlock > 0 -> drain_one() }
	:: atomic { pend_lock + pend_unlock == 0 -> break }
	od
}

/* srcu__fence_heavy(): FS, then the snapshot of seq, then wait for it. */
inline fence_heavy(s)
{
#ifdef NOFENCE
	skip                             /* no fence A at all */
#else
#ifdef EARLYFENCE
	s = (fseq + 2) & 254             /* the membarrier in flight will do */
#else
	s = (fseq + 3) & 254             /* one that begins after this read */
#endif
	do
	:: fseq >= s -> break            /* no wrap: a few calls only */
	:: else ->
		if
		:: atomic { flock == 0 -> flock = 1 } ->
			do
			:: fseq < s ->
				fseq++;                  /* running (then FM) */
				membarrier();
				fseq++                   /* ended (release) */
			:: else -> break
			od;
			flock = 0
		:: else -> (fseq >= s || flock == 0)   /* wait, or take over */
		fi
	od
#endif
}

proctype updater(byte dom)
{
	byte old, u, l, s, calls = 0;

	do
	:: calls < CALLS ->
		old = obj[dom];
		obj[dom] = old + 1;          /* replace the object, then P */
		do
		::	/* one check: unlock sum, fence A, lock sum */
			if :: dom == 1 -> u = unlock_vis :: else -> u = 0 fi;
			fence_heavy(s);
			if :: dom == 1 -> l = lock_vis :: else -> l = 0 fi;
			if
			:: l == u -> break
			:: else -> (unlock_vis != u)  /* sleep until an unlock is seen */
			fi
		od;
		freed[dom * 4 + old] = 1;    /* after the grace period (F) */
		calls++
	:: else -> break
	od
}

init
{
	atomic { run reader(); run updater(0); run updater(1) }
}
