/*
 * gp.c: the grace-period engine.
 *
 * A grace period (GP) runs in the thread of a synchronize_srcu*() caller,
 * under the domain's gp_lock, and has the shape of modern Tree SRCU:
 *
 *   check  one check of both indices; both idle ends the GP here, with
 *          one fence (doc/design.md, "One fence for an idle domain").
 *   SCAN1  wait until the *inactive* index has no readers.  Its only
 *          readers are "stale" ones: they loaded the index before the
 *          previous flip and counted on it after.
 *   flip   sp->lock_word ^= 1: new readers count on the other index.
 *   SCAN2  wait until the old index has no readers.
 *
 * A check sums the unlock counts, runs heavy fence A (membarrier), sums
 * the lock counts and compares.  The sums live here too, beside the fence
 * that makes them mean something: one grace period reads top to bottom in
 * this file.  A GP with idle readers costs one membarrier.  While readers
 * remain, the wait spins briefly on cheap checks, then sleeps on a futex
 * that the last reader's unlock bumps.  doc/design.md holds the ordering
 * argument.
 *
 * Sharing (the kernel's gp_seq rule): gp_seq counts GPs in its upper bits
 * and holds the GP state in its two low bits.  A caller takes the snapshot
 * s = the value gp_seq will have once a GP that starts after now has
 * ended, and returns as soon as gp_seq >= s.  Whichever caller holds
 * gp_lock runs GPs until its own snapshot is reached, then hands over
 * (run_gps()); the others wait on gp_event, which each GP end and each
 * release of gp_lock bumps, and the first to come runs the next GP.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* gp_seq's states (internal.h's sequence numbers). */
#define SEQ_SCAN1      1ul
#define SEQ_SCAN2      2ul

/* How long a wait spins on cheap checks before it sleeps. */
#define SPIN_NS        (20 * 1000L)       /* normal: briefly */
#define EXP_SPIN_NS    (200 * 1000L)      /* expedited: pause-spin ... */
#define EXP_YIELD_NS   (2 * 1000 * 1000L) /* ... then sched_yield() spin */
/* How long a caller spins for a running GP to end before it sleeps. */
#define SHARE_PAUSE_NS (2 * 1000L)        /* pause-spinning, then ... */
#define SHARE_SPIN_NS  (10 * 1000L)      /* ... sched_yield() spinning */

#define now_ns() srcu__backend_now_ns()

/* A process-shared domain (doc/shared.md): its words are in its file. */
static bool shared(struct srcu_struct *sp)
{
	return srcu__id_shared(srcu__id_of(sp));
}

/* Sleep on a futex word; with a deadline, call its late hook once when
 * the deadline has passed (then the caller's loop sleeps on). */
static void wait_on(struct srcu_struct *sp, unsigned int *addr, unsigned int val,
		    struct srcu__deadline *dl, int64_t also_until)
{
	bool timed = dl && dl->late;
	void (*late)(void *);
	int64_t until = also_until;

	if (timed && (until < 0 || dl->at_ns < until))
		until = dl->at_ns;
	srcu__backend_futex_wait(addr, val, until, shared(sp));   /* shared: woken from any process */
	if (timed && now_ns() >= dl->at_ns) {
		late = dl->late;
		dl->late = NULL;
		late(dl->arg);
	}
}

static void stat_inc(unsigned long *c)
{
	store_relaxed(c, load_relaxed(c) + 1);   /* single writer: gp_lock */
}

static void stat_gp_time(struct srcu_struct *sp, uint64_t ns)
{
	struct srcu__domain *d = srcu__dom(sp);

	store_relaxed(&d->stat_gp_ns_sum, load_relaxed(&d->stat_gp_ns_sum) + ns);
	if (ns > load_relaxed(&d->stat_gp_ns_max))
		store_relaxed(&d->stat_gp_ns_max, ns);
	stat_inc(&d->stat_gps_timed);
}

/* ---- the sums a check is made of ---- */

/* What one check's unlock sum counted, so that its lock sum counts the
 * same records: owned ones.  A free record's counts are balanced and
 * still, so a check skips it (doc/design.md, "Free records"); records
 * past SRCU__DENSE_RECORDS are always counted. */
#define SCAN_WORD_BITS SRCU__WORD_BITS
struct srcu__scan {
	unsigned long counted[SRCU__DENSE_RECORDS / SCAN_WORD_BITS];
	unsigned int records;          /* srcu__reader_count when it began */
	bool others;   /* a record owned by another thread than the caller */
	unsigned long unlocks[2];      /* the unlock sum of each index */
	unsigned long down_unlocks[2]; /* srcu_up_read() counts in it */
	bool shared;                   /* a shared domain: the file's slots */
	unsigned int shm_slots;        /* how many of them the unlock sum read */
};

static unsigned int dense_records(const struct srcu__scan *scan)
{
	return scan->records < SRCU__DENSE_RECORDS ? scan->records : SRCU__DENSE_RECORDS;
}

/* A check's verdict: the lock sum (read after A) equals the unlock sum
 * (read before), modulo 2^63 (2^31 on 32-bit) as every count (srcu/impl.h). */
static bool sums_match(unsigned long locks, unsigned long unlocks)
{
	return srcu__count_diff(locks, unlocks) == 0;
}

/* Abort, naming sp, if the down/up counters of index idx show more
 * up_reads than down_reads: unlocks (du) read before locks (dl). */
static void check_down(struct srcu_struct *sp, int idx, unsigned long du, unsigned long dl)
{
	if (SRCU__UNLIKELY((long)(du - dl) > 0))
		srcu__report_extra_up(sp, idx, false);
}

/* Sections of an up/down domain (SRCU__KIND_FAST_UPDOWN) may end in
 * another thread: a thread's slot may hold more unlocks than locks, and
 * an exiting thread's imbalance goes to the shared down/up counters
 * (reader.c, hand_over_updown()).  Only the sums over every thread must
 * balance, so the checks are made on them. */
static bool updown(struct srcu_struct *sp)
{
	return load_relaxed(&sp->srcu__reader_kind) == SRCU__KIND_FAST_UPDOWN;
}

/* Sections of index idx open in sp's every reader record (or, shared,
 * every slot of its file) and shared counters, whatever their owners and
 * reader sets: unlocks first, a heavy fence (A, for the same reason as a
 * check's), locks from the records listed by then.  Negative: an up
 * without its down. */
static long updown_open_everywhere(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__id_of(sp), bad = 0;
	unsigned long u = load_acquire(&srcu__dom(sp)->down_unlock[idx]), l, su[2] = { 0, 0 };
	struct srcu__record *r;

	if (shared(sp)) {
		(void)srcu__shm_sum_unlocks(srcu__shm_block(id), su);
		u += su[idx];
		srcu__fence_heavy_global();   /* A: as in fence_a() */
		l = load_acquire(&srcu__dom(sp)->down_lock[idx]);
		l += srcu__shm_sum_locks(srcu__shm_block(id), idx,
					 srcu__shm_slots_high(srcu__shm_block(id)), &bad);
		return srcu__count_signed(srcu__count_diff(l, u));
	}
	for (r = load_acquire(&srcu__reader_records); r; r = r->next)
		u += load_acquire(&srcu__record_slot(r, id)->unlock[idx]);
	srcu__fence_heavy(true);   /* A: as in fence_a() */
	l = load_acquire(&srcu__dom(sp)->down_lock[idx]);
	for (r = load_acquire(&srcu__reader_records); r; r = r->next)
		l += srcu__count(load_acquire(&srcu__record_slot(r, id)->lock[idx]));
	return srcu__count_signed(srcu__count_diff(l, u));
}

/*
 * An up/down domain's check: more unlocks in the sum (read first) than
 * locks (read after fence A).  An up without its down, or a down the
 * check did not read: its record was created, claimed or entered the
 * reader set after the unlock sum looked, while the up, in a record it
 * did read, came after the down (the program handed the section over).
 * A check that skips such a record is right to (the section began after
 * it), but its sums are then no proof of misuse: the report waits for a
 * second look over every record there is (updown_open_everywhere()).
 */
static void check_sums_updown(struct srcu_struct *sp, const unsigned long locks[2],
			      const unsigned long unlocks[2])
{
	for (int idx = 0; idx < 2; idx++)
		if (SRCU__UNLIKELY(srcu__count_signed(srcu__count_diff(locks[idx], unlocks[idx])) < 0) &&
		    updown_open_everywhere(sp, idx) < 0)
			srcu__report_extra_up(sp, idx, true);
}

/* Report record r's extra unlock on index idx, found by a
 * scan: out of the scans' loop, which it would otherwise weigh down. */
static __attribute__((noinline, cold)) void report_extra(struct srcu_struct *sp,
							   struct srcu__record *r, int idx,
							   const char *hint)
{
	char t[32];

	snprintf(t, sizeof(t), "thread %d", load_relaxed(&r->tid));
	srcu__reader_report_extra_unlock(sp, r, t, idx, hint);
}

/* Record r's lock counts of both indices (locks[]), each read after its
 * unlock count (with acquire, pairing with C): never smaller unless the
 * thread unlocked more than it locked, which is reported (hint says how it
 * may have happened).  A slot's four counters share a cache line: the
 * second index costs no extra miss. */
static inline void checked_locks(struct srcu_struct *sp, unsigned int id,
				 struct srcu__record *r, unsigned long locks[2],
				 const char *hint)
{
	struct srcu__slot *s = srcu__record_slot(r, id);
	unsigned long u0 = load_acquire(&s->unlock[0]), u1 = load_acquire(&s->unlock[1]);
	unsigned long l0 = srcu__count(load_acquire(&s->lock[0]));
	unsigned long l1 = srcu__count(load_acquire(&s->lock[1]));

	locks[0] += l0;
	locks[1] += l1;
	if (!hint)   /* an up/down domain: no per-thread balance */
		return;
	if (SRCU__UNLIKELY(srcu__open(l0, u0) < 0))
		report_extra(sp, r, 0, hint);
	if (SRCU__UNLIKELY(srcu__open(l1, u1) < 0))
		report_extra(sp, r, 1, hint);
}

/* A shared domain's lock sum over the first n slots, each slot's balance
 * checked as checked_locks() checks a record's. */
static unsigned long shared_locks(struct srcu_struct *sp, int idx, unsigned int n,
				  const char *hint)
{
	unsigned int b = srcu__shm_block(srcu__id_of(sp)), bad = 0;
	unsigned long sum = srcu__shm_sum_locks(b, idx, n, &bad);

	if (SRCU__UNLIKELY(bad)) {
		uint64_t owner = load_relaxed(&srcu__shm_owner_of(b, bad - 1)->owner);
		char t[64];

		snprintf(t, sizeof(t), "a thread of process %d (reader slot %u)",
			 srcu__shm_owner_pid(owner), bad - 1);
		srcu__report_extra_unlock(sp, t, idx, hint, false);
	}
	return sum;
}

static void add_unlocks(unsigned long sum[2], struct srcu__record *r, unsigned int id)
{
	/* Acquire pairs with the release in srcu_read_unlock() (C): the
	 * section happens before what the GP's caller does next. */
	struct srcu__slot *s = srcu__record_slot(r, id);

	sum[0] += load_acquire(&s->unlock[0]);
	sum[1] += load_acquire(&s->unlock[1]);
}

/* Sums the unlock counts of both indices (a slot's four counters share a
 * cache line: the second index costs no extra miss) over the owned
 * records, noted in scan: a free record's counts are balanced and nobody
 * changes them.  The dense owner table makes a free record cost one int,
 * not a miss on its page.  Also notes whether a thread other than the
 * caller owns a record: if none does, no other thread can be inside a
 * section that this check must see (doc/design.md, "The lone updater"). */
static void sum_unlocks(struct srcu_struct *sp, struct srcu__scan *scan)
{
	unsigned int i, w, n, id = srcu__id_of(sp);
	struct srcu__record *r, *me = srcu__reader_self_record();

	memset(scan, 0, sizeof(*scan));
	for (i = 0; i < 2; i++)
		scan->unlocks[i] = scan->down_unlocks[i] =
			load_acquire(&srcu__dom(sp)->down_unlock[i]);
	if (srcu__id_shared(id)) {
		/* Every process's readers count in the file's slots: sum
		 * them all; other processes' threads always need fence A. */
		scan->shared = scan->others = true;
		scan->shm_slots = srcu__shm_sum_unlocks(srcu__shm_block(id), scan->unlocks);
		return;
	}
	scan->records = load_acquire(&srcu__reader_count);
	n = dense_records(scan);
	/* The loop's sums, the noted bits and "others" are locals, written
	 * to scan once per word: a walk of N records spends its time on
	 * their pages, not on stores to scan. */
	for (w = 0; w * SCAN_WORD_BITS < n; w++) {
		/* The domain's reader set: a record not in it holds no open
		 * section of this domain that began before this check (its
		 * counts are balanced, or its first count's note, fence N,
		 * orders the section after the check's start; doc/design.md,
		 * "Reader sets"). */
		unsigned long bits = load_acquire(&srcu__reader_noted(id)[w]);
		unsigned long counted = 0, sum[2] = { 0, 0 };
		bool others = false;

		for (; bits; bits &= bits - 1) {
			i = w * SCAN_WORD_BITS + (unsigned int)__builtin_ctzl(bits);
			/* Acquire on the owner pairs with its release in
			 * set_owner() (reader.c): seen free, seen balanced. */
			if (i >= n || !load_acquire(&srcu__reader_owner[i]) ||
			    !(r = load_acquire(&srcu__reader_dense[i])))
				continue;
			counted |= bits & -bits;   /* i's bit */
			others |= r != me;
			add_unlocks(sum, r, id);
		}
		scan->counted[w] = counted;
		scan->others |= others;
		scan->unlocks[0] += sum[0];
		scan->unlocks[1] += sum[1];
	}
	if (scan->records <= SRCU__DENSE_RECORDS)
		return;
	for (r = load_acquire(&srcu__reader_records); r; r = r->next) {
		if (r->index < SRCU__DENSE_RECORDS)
			continue;
		scan->others |= load_acquire(&r->tid) != 0 && r != me;
		add_unlocks(scan->unlocks, r, id);
	}
}

/*
 * The lock sums of both indices (locks[]), over exactly the records that
 * the same check's unlock sum counted, in one pass: a record's counters
 * share a line, and a second pass would pay each record's page (a TLB
 * miss, after fence A's membarrier) again.  A record taken since (or
 * created since) holds readers that began after the taker's fence in
 * my_record(), so after this check began.
 *
 * Also checks each counted thread's balance on both indices
 * (checked_locks()): every scan that an extra unlock could fool
 * therefore reports it instead.
 */
static void sum_locks(struct srcu_struct *sp, const struct srcu__scan *scan,
		      unsigned long locks[2])
{
	bool per_thread = !updown(sp);
	const char *hint = per_thread ? ", found by a grace-period scan" : NULL;
	unsigned int w, n = dense_records(scan), id = srcu__id_of(sp);
	struct srcu__record *r;
	int idx;

	for (idx = 0; idx < 2; idx++) {
		locks[idx] = load_acquire(&srcu__dom(sp)->down_lock[idx]);
		if (per_thread)
			check_down(sp, idx, scan->down_unlocks[idx], locks[idx]);
	}
	if (scan->shared) {
		for (idx = 0; idx < 2; idx++)
			locks[idx] += shared_locks(sp, idx, scan->shm_slots, hint);
		return;
	}
	for (w = 0; w * SCAN_WORD_BITS < n; w++) {
		unsigned long sum[2] = { 0, 0 };   /* a local: kept in registers */

		for (unsigned long bits = scan->counted[w]; bits; bits &= bits - 1) {
			unsigned int i = w * SCAN_WORD_BITS + (unsigned int)__builtin_ctzl(bits);

			r = load_relaxed(&srcu__reader_dense[i]);   /* seen by the unlock sum */
			checked_locks(sp, id, r, sum, hint);
		}
		locks[0] += sum[0];
		locks[1] += sum[1];
	}
	if (scan->records > SRCU__DENSE_RECORDS)
		for (r = load_acquire(&srcu__reader_records); r; r = r->next)
			if (r->index >= SRCU__DENSE_RECORDS)
				checked_locks(sp, id, r, locks, hint);
	if (!per_thread)
		check_sums_updown(sp, locks, scan->unlocks);
}

/* A GP asleep on one index checks the other: an unlock counted on the
 * wrong index leaves the one it waits for open forever and makes the
 * other's unlocks exceed its locks, which no correct program does (each
 * thread's lock precedes its unlock; unlocks are read first, acquire).
 * (checked_locks() looks at both indices of each slot, the one waited
 * for too, which its own checks also look at.) */
static void check_unlocks(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__id_of(sp);
	unsigned long du = load_acquire(&srcu__dom(sp)->down_unlock[idx]);
	static const char hint[] = ", found by a grace-period scan";
	unsigned long unused[2] = { 0, 0 };
	unsigned int n, dense, i;
	struct srcu__record *r;

	if (updown(sp))
		return;   /* every scan checks its sums (check_sums_updown()) */
	check_down(sp, idx, du, load_acquire(&srcu__dom(sp)->down_lock[idx]));
	if (srcu__id_shared(id)) {
		(void)shared_locks(sp, idx, srcu__shm_slots_high(srcu__shm_block(id)), hint);
		return;
	}
	n = load_acquire(&srcu__reader_count);
	dense = n < SRCU__DENSE_RECORDS ? n : SRCU__DENSE_RECORDS;
	/* Every owned record, through the owner table as the scans read it:
	 * a free record costs four bytes there, not a miss on its page (the
	 * list, walked at each wake-up, made srcu-bench figure 5's wake-up
	 * p50 429 us after figure 12's 1000 threads had come and gone, 92 us
	 * without it).  Not only the domain's reader set: an inline unlock
	 * by a thread that never locked this domain counts in its own record
	 * without noting it, and that extra unlock is what must be found. */
	for (i = 0; i < dense; i++)
		if (load_acquire(&srcu__reader_owner[i]) && (r = load_acquire(&srcu__reader_dense[i])))
			checked_locks(sp, id, r, unused, hint);
	if (n <= SRCU__DENSE_RECORDS)
		return;
	for (r = load_acquire(&srcu__reader_records); r; r = r->next)
		if (r->index >= SRCU__DENSE_RECORDS && load_acquire(&r->tid))
			checked_locks(sp, id, r, unused, hint);
}

/* ---- readers first: pacing ---- */

/* gp_flags, the running GP's mode (runner's word). */
#define GP_READERS_RAN 1u   /* the last first check saw lock counts move */
#define GP_PACED       2u   /* this GP spaces its membarriers */
#define GP_PACING      4u   /* ... and is waiting to issue one now */

/* The running (or next) GP is expedited: someone asked for it, before or
 * since it began (srcu_expedite_current() may ask mid-way). */
static bool gp_exp(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);

	return srcu__seq_done(__atomic_load_n(&d->gp_exp_needed, __ATOMIC_SEQ_CST),
			      srcu__seq_end(load_relaxed(&d->gp_seq)));
}

static void seq_request(unsigned long *needed, unsigned long s);

/* Ask that the GP which completes s, and every GP before it still to
 * end, be expedited; wake a runner that is pacing.  X: the seq-cst request
 * and flag read pair with pace()'s seq-cst flag set and request read:
 * either it sees the request, or this sees it pacing and kicks the fence
 * service's event, on which it sleeps. */
static void expedite(struct srcu_struct *sp, unsigned long s)
{
	struct srcu__domain *d = srcu__dom(sp);

	seq_request(&d->gp_exp_needed, s);
	if (__atomic_load_n(&d->gp_flags, __ATOMIC_SEQ_CST) & GP_PACING)
		srcu__fence_kick();
}

/* Whether readers of sp ran since its last GP's first check, from that
 * check's lock sums (both indices): counts only grow, so any change is a
 * section begun (or a reader's record freed).  Decides whether the next
 * normal GP is paced. */
static void note_readers(struct srcu_struct *sp, unsigned long locks)
{
	struct srcu__domain *d = srcu__dom(sp);
	unsigned int flags = load_relaxed(&d->gp_flags) & ~GP_READERS_RAN;

	if ((unsigned int)locks != load_relaxed(&d->gp_locks_seen))
		flags |= GP_READERS_RAN;
	store_relaxed(&d->gp_locks_seen, (unsigned int)locks);
	store_relaxed(&d->gp_flags, flags);
}

/* When a paced fence of sp's running GP may go: the gap after the last
 * membarrier (srcu__fence_paced_until()), read once, and never later
 * than srcu__fence_pace_max_ns after the GP began.  0: not paced. */
static int64_t pace_until(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);
	int64_t until, bound;

	if (!(load_relaxed(&d->gp_flags) & GP_PACED))
		return 0;
	until = srcu__fence_paced_until();
	bound = (int64_t)load_relaxed(&d->gp_start_ns) + srcu__fence_pace_max_ns;
	return until < bound || SRCU__BUSTED(PACEUNBOUNDED) ? until : bound;
}

/*
 * Readers first (doc/design.md): a normal GP of a domain whose readers
 * ran since its last GP waits, before each membarrier, until the last
 * membarrier's end plus a multiple of what it cost the threads it
 * interrupted, so that back-to-back GPs take a bounded share of a running
 * reader's time.  The wait is bounded (doc/design.md, "Liveness"): its
 * end is read once (membarriers that other domains issue meanwhile move
 * the process's gap, not this wait), it ends by srcu__fence_pace_max_ns
 * after the GP began, and it ends as soon as any membarrier that began
 * after the fence was asked for (s) has run: that one serves it, and has
 * already cost the readers what pacing spares them.  An expedited
 * request ends it too (expedite() kicks the event).
 */
static void pace(struct srcu_struct *sp, unsigned long s, int64_t until)
{
	struct srcu__domain *d = srcu__dom(sp);

	for (;;) {
		/* The event before seq (both acquire): a membarrier that ends
		 * after this look bumps the event after its seq store, so
		 * the sleep below returns. */
		unsigned int ev = srcu__fence_event();

		/* The busted flavour is the wait before issue 33: no
		 * membarrier run meanwhile serves it either. */
		if (now_ns() >= until || (!SRCU__BUSTED(PACEUNBOUNDED) && srcu__fence_served(s)))
			break;
		/* X: pairs with expedite(): flag, then request (both seq-cst). */
		__atomic_fetch_or(&d->gp_flags, GP_PACING, __ATOMIC_SEQ_CST);
		if (gp_exp(sp))
			break;
		srcu__fence_sleep(ev, until);
		if (SRCU__BUSTED(PACEUNBOUNDED))   /* each membarrier moves it on */
			until = srcu__fence_paced_until();
	}
	__atomic_fetch_and(&d->gp_flags, ~GP_PACING, __ATOMIC_RELAXED);
}

/* The process's heavy fence (A, W) for sp's GP: urgent when the GP is
 * expedited; after the pacing wait of a paced GP, where the fence is
 * asked for first and any membarrier run meanwhile serves it. */
static void fence_private(struct srcu_struct *sp)
{
	int64_t until = pace_until(sp);
	unsigned long s;

	if (until <= now_ns()) {
		srcu__fence_heavy(gp_exp(sp));
		return;
	}
	s = srcu__fence_ask();   /* FS, before the wait: see pace() */
	pace(sp, s, until);
	srcu__fence_heavy_asked(s, gp_exp(sp));
}

/* ---- reader checks ---- */

/* Fence A itself: who must execute a full fence for this check. */
static void fence_a(struct srcu_struct *sp, const struct srcu__scan *scan)
{
	/*
	 * A: pairs with B and C in srcu_read_lock()/srcu_read_unlock().  A
	 * reader whose unlock we counted has its lock counted below (the
	 * locks are read after the fence), and a reader whose lock we miss
	 * below started its section after this fence, so it sees every
	 * update made before this grace period.  Only threads that own a
	 * reader record need the membarrier: one that takes a record after
	 * the unlock sum saw it free fences in my_record() (pairing with
	 * this fence), and the caller is ordered by its own program order.
	 */
	if (scan->shared) {
		srcu__fence_heavy_global();   /* A: readers in every process */
	} else if (scan->others) {
		fence_private(sp);
	} else {
		srcu__smp_mb();
	}
}

/* Between a check's unlock sums and its lock sums. */
static void check_fence(struct srcu_struct *sp, const struct srcu__scan *scan)
{
	struct srcu__domain *d = srcu__dom(sp);

	if (!SRCU__BUSTED(NOFENCE))   /* srcu-torture's broken flavour skips it */
		fence_a(sp, scan);
	if (load_relaxed(&d->gp_heavy) != scan->others)
		store_relaxed(&d->gp_heavy, scan->others);
	stat_inc(&d->stat_checks);
}

bool srcu__gp_readers_done(struct srcu_struct *sp, int idx)
{
	struct srcu__scan scan;
	unsigned long locks[2];

	sum_unlocks(sp, &scan);
	check_fence(sp, &scan);
	sum_locks(sp, &scan, locks);
	return sums_match(locks[idx], scan.unlocks[idx]);
}

/*
 * Both indices in one check: the unlock sums of both, fence A, the lock
 * sums of both.  Each index's comparison means what it means in a check
 * of that index alone (doc/design.md, "One fence for an idle domain"): no
 * section that began before A is still open on it.  Both idle is the
 * whole grace period, for half the fences of SCAN1 and SCAN2.  Returns
 * IDLE_INACTIVE | IDLE_CURRENT as they are found, for the current idx.
 */
#define IDLE_INACTIVE 1u
#define IDLE_CURRENT  2u
#define IDLE_BOTH     (IDLE_INACTIVE | IDLE_CURRENT)
static unsigned int idle_indices(struct srcu_struct *sp, int idx)
{
	struct srcu__scan scan;
	unsigned int idle = 0;
	unsigned long locks[2];

	sum_unlocks(sp, &scan);
	check_fence(sp, &scan);
	sum_locks(sp, &scan, locks);
	if (sums_match(locks[idx ^ 1], scan.unlocks[idx ^ 1]))
		idle |= IDLE_INACTIVE;
	if (sums_match(locks[idx], scan.unlocks[idx]))
		idle |= IDLE_CURRENT;
	note_readers(sp, locks[0] + locks[1]);
	return idle;
}

/* Same sums with only a local fence: can say "busy" when the index is in
 * fact idle, and its "idle" must be confirmed by srcu__gp_readers_done(). */
static bool readers_look_done(struct srcu_struct *sp, int idx)
{
	struct srcu__scan scan;
	unsigned long locks[2];

	sum_unlocks(sp, &scan);
	srcu__smp_mb();  /* L: local, pairs with none; its "idle" is re-checked under A */
	sum_locks(sp, &scan, locks);
	return sums_match(locks[idx], scan.unlocks[idx]);
}

static bool spin_until_done(struct srcu_struct *sp, int idx, int64_t pause_ns, int64_t yield_ns)
{
	int64_t start = now_ns();
	int i;

	for (;;) {
		if (readers_look_done(sp, idx) && srcu__gp_readers_done(sp, idx))
			return true;
		int64_t waited = now_ns() - start;
		if (waited >= pause_ns + yield_ns)
			return false;
		if (waited < pause_ns)
			for (i = 0; i < 64; i++)
				srcu__cpu_relax();
		else
			sched_yield();
	}
}

/* Shared domains: how soon a sleeping GP first looks for dead owners
 * among the processes whose sections it waits for, and the longest it
 * waits between looks (a killed reader never wakes it; the next GP must
 * end within a second of the kill). */
#define DEAD_CHECK_FIRST_NS (10 * 1000 * 1000L)
#define DEAD_CHECK_MAX_NS   (160 * 1000 * 1000L)

void srcu__gp_report_dead(struct srcu_struct *sp, const struct srcu__shm_dead *dead,
			  unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		SRCU__TORTURE_POINT(DEAD_REPORT, (void *)&dead[i].owner);
		srcu__stall_report_dead(sp, dead[i].pid, dead[i].sections);
	}
}

/* Balance and free the slots of dead processes (caller holds gp_lock):
 * how many of them dead[] (SRCU__DEAD_REPORTS_MAX) holds to report. */
static unsigned int recover_collect(struct srcu_struct *sp, struct srcu__shm_dead *dead)
{
	return srcu__shm_recover(srcu__shm_block(srcu__id_of(sp)), dead, SRCU__DEAD_REPORTS_MAX);
}

/* The same, and report each (doc/shared.md, "Dead owners"). */
static void recover_dead(struct srcu_struct *sp)
{
	struct srcu__shm_dead dead[SRCU__DEAD_REPORTS_MAX];

	srcu__gp_report_dead(sp, dead, recover_collect(sp, dead));
}

/* The next wait of a doubling backoff, up to DEAD_CHECK_MAX_NS. */
static int64_t backoff(int64_t ns)
{
	return ns * 2 > DEAD_CHECK_MAX_NS ? DEAD_CHECK_MAX_NS : ns * 2;
}

static void sleep_until_done(struct srcu_struct *sp, int idx, struct srcu__deadline *dl)
{
	unsigned int id = srcu__id_of(sp);
	unsigned int *waiting = srcu__gp_waiting(id, idx), *wake_seq = srcu__gp_wake_seq(id);
	struct srcu__stall_watch watch;
	int64_t dead_check = -1, dead_interval = DEAD_CHECK_FIRST_NS;

	srcu__stall_watch_init(sp, &watch);
	if (shared(sp))
		dead_check = now_ns() + dead_interval;
	store_relaxed(waiting, load_relaxed(waiting) | SRCU__WAIT_SLEEPING);
	/* W: pairs with W in srcu_read_unlock(): each unlock after this
	 * fence sees the flag and wakes us; each one before it is counted
	 * by the scans below.  A shared domain's flag is in its file, seen
	 * by readers in every process, which the global membarrier fences. */
	if (shared(sp))
		srcu__fence_heavy_global();
	else
		fence_private(sp);
	for (;;) {
		/* Acquire pairs with the waking reader's seq-cst bump in
		 * srcu__wake_gp(): if we see the bump we see its count. */
		unsigned int seq = load_acquire(wake_seq);

		if (readers_look_done(sp, idx) && srcu__gp_readers_done(sp, idx))
			break;
		stat_inc(&srcu__dom(sp)->stat_sleeps);
		SRCU__TORTURE_POINT(GP_SLEEP, sp);
		wait_on(sp, wake_seq, seq, dl,
			srcu__backend_earliest(srcu__stall_deadline(&watch), dead_check));
		if (dead_check >= 0 && now_ns() >= dead_check) {
			recover_dead(sp);
			dead_interval = backoff(dead_interval);
			dead_check = now_ns() + dead_interval;
		}
		check_unlocks(sp, idx ^ 1);   /* a stall caused by misuse? */
		srcu__stall_check(sp, idx, &watch);
	}
}

static void wait_readers(struct srcu_struct *sp, int idx, struct srcu__deadline *dl)
{
	unsigned int *waiting = srcu__gp_waiting(srcu__id_of(sp), idx);
	bool exp;

	if (srcu__gp_readers_done(sp, idx))
		return;
	/* A shared domain's readers in other processes count on the index
	 * their process last read from the file: ask those on idx to take
	 * the file's, the other one (liveness only: no fence; the unlock
	 * sees the flag soon enough, and at the latest after fence W of a
	 * sleep). */
	if (shared(sp))
		store_relaxed(waiting, SRCU__WAIT_MOVE);
	exp = gp_exp(sp);   /* perhaps since the GP began */
	if (!spin_until_done(sp, idx, exp ? EXP_SPIN_NS : SPIN_NS, exp ? EXP_YIELD_NS : 0))
		sleep_until_done(sp, idx, dl);
	/* Down, where a sleep or the MOVE request raised it: a store of 0
	 * over 0 would still take the line that every inline unlock reads. */
	if (load_relaxed(waiting))
		store_relaxed(waiting, 0);
}

/* ---- one grace period (caller holds gp_lock) ---- */

/*
 * Gathering (doc/design.md): before a normal GP, wait briefly for the
 * synchronize callers that the last GP served to call again, so that
 * this GP serves them too.  They were woken when it ended and are on
 * their way back; without the wait, the runner (back first: it needs no
 * wake-up) starts this GP before their snapshots, which then need the
 * next, and callers take turns, one GP each.  gp_expect is the quota:
 * the calls the last GP served plus those that arrived while it ran
 * (already waiting), by the arrival count.  A caller that does not come
 * back costs at most SRCU__GATHER_NS once; the quota then shrinks.
 */
static void gather(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);
	unsigned int at = load_relaxed(&d->gp_arrivals_start), n;
	unsigned int want = load_relaxed(&d->gp_expect);
	int64_t start = 0;

	while ((n = load_relaxed(&d->gp_arrivals)) - at < want && !gp_exp(sp)) {
		if (!start)
			start = now_ns();
		else if (now_ns() - start >= SRCU__GATHER_NS)
			break;
		sched_yield();   /* the callers on their way may need this CPU */
	}
	n = load_relaxed(&d->gp_arrivals);
	store_relaxed(&d->gp_expect, n - at);   /* served by this GP */
	store_relaxed(&d->gp_arrivals_start, n);
}

/* At a GP's end: the next gather's quota (see gather()). */
static void expect(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);
	unsigned int waiting = load_relaxed(&d->gp_arrivals) - load_relaxed(&d->gp_arrivals_start);

	store_relaxed(&d->gp_expect, load_relaxed(&d->gp_expect) + waiting);
}

static void gp_event_bump(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);

	/* Pairs with the waiters' increment-then-sleep in wait_for_gp_event(). */
	srcu__backend_event_bump(&d->gp_event, &d->gp_event_waiters, shared(sp));
}

static void flip(struct srcu_struct *sp)
{
	uint16_t *index = srcu__index_word(sp);

	srcu__smp_mb();  /* E: the SCAN1 sums before the flip (redundant, cheap) */
	store_relaxed(index, (uint16_t)(load_relaxed(index) ^ 1));
	if (shared(sp))   /* this process's readers move at once */
		srcu__shm_index_refresh(srcu__shm_block(srcu__id_of(sp)));
	srcu__smp_mb();  /* D: the flip before the SCAN2 sums and their fence A */
}

static void run_gp(struct srcu_struct *sp, struct srcu__deadline *dl)
{
	struct srcu__domain *d = srcu__dom(sp);
	unsigned long seq = load_relaxed(&d->gp_seq);
	unsigned int idle, flags;
	int64_t start;
	int idx;

	gather(sp);
	start = now_ns();
	/* Paced when its readers ran since the last GP and nobody asked for
	 * it expedited (which may still happen: pace() asks again). */
	flags = load_relaxed(&d->gp_flags) & GP_READERS_RAN;
	if (flags && !gp_exp(sp))
		flags |= GP_PACED;
	store_relaxed(&d->gp_flags, flags);
	store_relaxed(&d->gp_start_ns, (uint64_t)start);
	store_relaxed(&d->gp_seq, seq + SEQ_SCAN1);
	/* S: pairs with P in srcu__gp_snap(): the state store before the
	 * scans, so a caller that sees the GP idle (and so expects a full GP
	 * after its snapshot) is covered. */
	srcu__smp_mb();
	idx = srcu__cur_idx(sp);
	/* The busted flavour skips SCAN1, and so this check of both. */
	idle = SRCU__BUSTED(ONESCAN) ? IDLE_INACTIVE : idle_indices(sp, idx);
	if (idle != IDLE_BOTH) {
		if (!(idle & IDLE_INACTIVE))
			wait_readers(sp, idx ^ 1, dl);  /* SCAN1: stale readers */
		flip(sp);
		store_relaxed(&d->gp_seq, seq + SEQ_SCAN2);
		wait_readers(sp, idx, dl);          /* SCAN2: the old index */
	}
	if (gp_exp(sp))   /* asked for before it ended, perhaps mid-way */
		stat_inc(&d->stat_exp_gps);
	/* Release pairs with the acquire in seq_done(): a caller that sees
	 * the GP ended is ordered after the scans' fences. */
	store_release(&d->gp_seq, srcu__seq_end(seq));
	/* Pacing is a running GP's: cleanup's checks, between GPs, are not. */
	store_relaxed(&d->gp_flags, load_relaxed(&d->gp_flags) & ~GP_PACED);
	expect(sp);
	gp_event_bump(sp);
	stat_gp_time(sp, (uint64_t)(now_ns() - start));
}

/* ---- sharing ---- */

static bool seq_done(struct srcu_struct *sp, unsigned long s)
{
	return srcu__seq_done(load_acquire(&srcu__dom(sp)->gp_seq), s);
}

/* gp_seq once a GP that starts after now has ended. */
static unsigned long seq_snap(struct srcu_struct *sp)
{
	return srcu__seq_snap(load_acquire(&srcu__dom(sp)->gp_seq));
}

static void seq_request(unsigned long *needed, unsigned long s)
{
	unsigned long cur = load_relaxed(needed);

	while (ULONG_CMP_LT(cur, s) &&
	       !__atomic_compare_exchange_n(needed, &cur, s, true,
					    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
}

/* What gp_lock holds while this process runs a GP: 1, or for a shared
 * domain the process's owner word, which names the holder for a waiter
 * that may find it dead, and which no other process ever has (a waiter
 * that read it, then found it dead, cannot take over from a live
 * process that happens to hold the lock by the time of its CAS). */
static uint64_t lock_token(struct srcu_struct *sp)
{
	char n[SRCU__NAME_LEN];
	uint64_t me;

	if (!shared(sp))
		return 1;
	me = srcu__shm_self();
	if (!me)   /* a fork child that cannot read its own /proc entry */
		srcu__report_fatal("process %d cannot run a grace period of shared domain %s: "
			    "it cannot read /proc/self/task/<pid>/stat, its identity there",
			    (int)getpid(), srcu__report_name(sp, n, sizeof(n)));
	return me;
}

void srcu__gp_check_forked(struct srcu_struct *sp, const char *who)
{
	char n[SRCU__NAME_LEN];

	if (SRCU__UNLIKELY(srcu__backend_unforked_child()))
		srcu__report_fatal(SRCU__UNFORKED_FMT, (int)getpid(), who,
				   srcu__report_name(sp, n, sizeof(n)));
}

bool srcu__gp_trylock(struct srcu_struct *sp)
{
	/* A gp_lock taken by a thread that the child does not have would
	 * be waited for forever; a shared one is taken in the parent's name. */
	srcu__gp_check_forked(sp, "a grace period (or cleanup_srcu_struct())");
	return srcu__backend_trylock(&srcu__dom(sp)->gp_lock, lock_token(sp));
}

/*
 * A shared domain's gp_lock whose holder died: take it over.  Its grace
 * period may have stopped anywhere; it is begun again (gp_seq's state
 * bits cleared, the waiting flags down): re-scanning is always safe, and
 * a flip it made stands, as any flip does.  The CAS is from the very
 * value found dead, which no live process can hold.
 */
static bool take_over(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);
	unsigned int id = srcu__id_of(sp);
	uint64_t token = load_acquire(&d->gp_lock);

	if (!srcu__shm_owner_dead(token) ||
	    !__atomic_compare_exchange_n(&d->gp_lock, &token, lock_token(sp), false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return false;
	store_relaxed(srcu__gp_waiting(id, 0), 0);
	store_relaxed(srcu__gp_waiting(id, 1), 0);
	store_release(&d->gp_seq, srcu__seq_idle(load_relaxed(&d->gp_seq)));
	return true;
}

int srcu__gp_recover_shared(struct srcu_struct *sp, struct srcu__shm_dead *dead)
{
	unsigned int n;

	if (!srcu__gp_trylock(sp) && !take_over(sp))
		return -1;
	n = recover_collect(sp, dead);
	srcu__gp_unlock(sp);
	return (int)n;
}

void srcu__gp_unlock(struct srcu_struct *sp)
{
	uint64_t token = lock_token(sp);
	char n[SRCU__NAME_LEN];

	/* A shared domain's lock is released only by its holder: a fork
	 * child of a process inside a grace period (a fork from a signal
	 * handler, or a stall handler) is another process, and must not go
	 * on with its parent's grace period. */
	if (!shared(sp))
		store_release(&srcu__dom(sp)->gp_lock, 0);
	else if (!__atomic_compare_exchange_n(&srcu__dom(sp)->gp_lock, &token, 0, false,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		srcu__report_fatal("process %d ended a grace period of shared domain %s that "
			    "another process runs (a fork() inside a grace period?)",
			    (int)getpid(), srcu__report_name(sp, n, sizeof(n)));
	gp_event_bump(sp);   /* a waiter whose GP is not done takes over */
}

/*
 * Run GPs until the caller's snapshot is reached, and no more: the
 * callers that arrived during the last one wait for the next, and a
 * runner that ran it for them before returning would start it before its
 * own next call could join it (one call per GP under back-to-back
 * callers).  Handing over instead lets that next GP serve them all: the
 * unlock wakes them, and whoever comes first runs it.
 */
static void run_gps(struct srcu_struct *sp, unsigned long s, struct srcu__deadline *dl)
{
	while (!seq_done(sp, s))
		run_gp(sp, dl);
}

/* Spin briefly for the next GP end: a GP of local fences takes well under
 * a microsecond, much less than a futex sleep and wake-up.  Not while GPs
 * use membarrier: it would have to interrupt this spinning CPU (10-12 us
 * instead of 0.5), so waiters sleep and leave their CPUs idle. */
static bool gp_event_soon(struct srcu_struct *sp, unsigned int ev)
{
	int64_t start = now_ns(), waited;
	int i;

	do {
		for (i = 0; i < 32; i++) {
			if (load_acquire(&srcu__dom(sp)->gp_event) != ev)
				return true;
			srcu__cpu_relax();
		}
		waited = now_ns() - start;
		if (waited > SHARE_PAUSE_NS)
			sched_yield();   /* the runner may need this CPU */
	} while (waited < SHARE_SPIN_NS);
	return false;
}

/* Wait for the next GP end or gp_lock release.  A shared domain's holder
 * may die and never bump gp_event: its waiters wake up now and then
 * (*patience_ns, doubling) and see whether it is alive. */
static void wait_for_gp_event(struct srcu_struct *sp, unsigned int ev,
			      struct srcu__deadline *dl, int64_t *patience_ns)
{
	struct srcu__domain *d = srcu__dom(sp);
	int64_t until = -1;

	if (!load_relaxed(&d->gp_heavy) && gp_event_soon(sp, ev))
		return;
	if (shared(sp))
		until = now_ns() + *patience_ns;
	__atomic_fetch_add(&d->gp_event_waiters, 1, __ATOMIC_SEQ_CST);
	wait_on(sp, &d->gp_event, ev, dl, until);
	__atomic_fetch_sub(&d->gp_event_waiters, 1, __ATOMIC_SEQ_CST);
	if (until >= 0 && now_ns() >= until) {
		if (take_over(sp)) {
			recover_dead(sp);
			srcu__gp_unlock(sp);   /* the caller's loop runs the GP */
		}
		*patience_ns = backoff(*patience_ns);
	}
}

static void check_not_reader(struct srcu_struct *sp, const char *who)
{
	char n[SRCU__NAME_LEN], t[64];

	if (srcu__reader_self_inside(sp))
		srcu__report_fatal("%s() called by %s inside its own read-side critical "
			    "section of domain %s: it would wait for itself forever",
			    who, srcu__report_thread(t, sizeof(t)), srcu__report_name(sp, n, sizeof(n)));
}

static void wait_for_seq(struct srcu_struct *sp, unsigned long s, struct srcu__deadline *dl);

/* ---- update-side callers, for cleanup_srcu_struct() ----
 *
 * Every update-side call (synchronize, the polled calls, call_srcu(),
 * srcu_barrier()) counts itself in the domain's users word from entry to
 * return, so that cleanup returns -EBUSY while any is inside, waiting or
 * not.  Cleanup closes the word (0 -> USERS_CLOSING) for the moment it
 * decides: a caller that arrives meanwhile waits for the verdict, then
 * goes on (still live) or is reported (cleaned up).  A shared domain's
 * callers are counted per process (its file's words are every process's),
 * in the block's srcu__shm_att: srcu_shared_detach() closes that word the
 * same way, so that no thread of this process is inside when the file is
 * unmapped.
 */
#define USERS_CLOSING (1u << 31)

/* The word that counts this process's update-side callers of sp. */
static unsigned int *users_word(struct srcu_struct *sp)
{
	unsigned int id = srcu__id_of(sp);

	return srcu__id_shared(id) ? &srcu__shm_att[srcu__shm_block(id)].users
				   : &srcu__dom(sp)->users;
}

/* A shared domain detached while the caller waited for the verdict: its
 * memory (the file's mapping) is gone, so say so before touching it. */
static void check_still_attached(unsigned int id, const char *who)
{
	if (srcu__id_shared(id) && !load_acquire(&srcu__shm_att[srcu__shm_block(id)].hdr))
		srcu__report_fatal("%s() on a shared domain (id %u) that another thread of "
				   "process %d detached meanwhile (srcu_shared_detach())",
				   who, id, (int)getpid());
}

/* The calls this thread is inside, innermost last (a stall handler or a
 * callback run inline may call in again): a fork child keeps the forking
 * thread's counts and drops every other thread's. */
#define INSIDE_MAX 8
static __thread struct srcu_struct *inside[INSIDE_MAX];
static __thread unsigned int inside_depth;
/* The domain this thread's cleanup holds closed, if any. */
static __thread struct srcu_struct *closing;

/* Wait until cleanup has decided (its close of the users word is gone).
 * It decides after reader checks, whose membarriers may take a while on a
 * loaded machine: a short spin, then a sleep on the word, which
 * srcu__gp_reopen() wakes.  The acquire pairs with its release: the
 * verdict (unbound, or still live) is seen. */
static void wait_verdict(unsigned int *users)
{
	int saved_errno = errno;   /* the polled calls may run in a handler */
	unsigned int v;

	for (int i = 0; i < 256; i++) {
		if (!(load_acquire(users) & USERS_CLOSING))
			return;
		srcu__cpu_relax();
	}
	while ((v = load_acquire(users)) & USERS_CLOSING)
		srcu__backend_futex_wait(users, v, -1, false);
	errno = saved_errno;
}

void srcu__gp_enter(struct srcu_struct *sp, const char *who)
{
	unsigned int *users, id;

	if (!sp)
		srcu__report_fatal("%s() called with a NULL domain", who);
	/* A child made without fork()'s handlers: before anything that may
	 * take a lock a vanished thread of its parent held. */
	srcu__gp_check_forked(sp, who);
	id = srcu__domain_id(sp, who);
	if (inside_depth < INSIDE_MAX)
		inside[inside_depth] = sp;
	inside_depth++;
	users = users_word(sp);
	/* Seq-cst RMW: either cleanup's close sees this count, or this sees
	 * the close (or what followed it, an unbind, checked below).  A
	 * signal handler of the thread that holds sp closed (the polled calls
	 * are async-signal-safe) does not wait for a verdict its own thread
	 * gives only once it returns: it goes on, and returns before the
	 * cleanup decides. */
	while ((__atomic_fetch_add(users, 1, __ATOMIC_SEQ_CST) & USERS_CLOSING) &&
	       load_relaxed(&closing) != sp) {
		__atomic_fetch_sub(users, 1, __ATOMIC_RELAXED);
		wait_verdict(users);
	}
	check_still_attached(id, who);
	(void)srcu__domain_id(sp, who);   /* cleaned up before we counted: reported */
	SRCU__TORTURE_POINT(UPDATE_ENTERED, sp);
}

void srcu__gp_leave(struct srcu_struct *sp)
{
	/* Release: the call's accesses to sp before cleanup's close sees the
	 * count drop (its CAS acquires), and so before the caller frees sp
	 * (or detach unmaps it). */
	inside_depth--;
	__atomic_fetch_sub(users_word(sp), 1, __ATOMIC_RELEASE);
}

/* This thread's calls inside sp (a fork child's count). */
static unsigned int inside_count(struct srcu_struct *sp)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < inside_depth && i < INSIDE_MAX; i++)
		n += inside[i] == sp;
	return n;
}

bool srcu__gp_close(struct srcu_struct *sp)
{
	unsigned int none = 0;

	/* Before the CAS (its release keeps the store before it): a handler
	 * that finds the word closed finds this thread's mark too. */
	store_relaxed(&closing, sp);
	if (__atomic_compare_exchange_n(users_word(sp), &none, USERS_CLOSING, false,
					__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return true;
	store_relaxed(&closing, NULL);
	return false;
}

void srcu__gp_reopen(struct srcu_struct *sp)
{
	/* An AND, not a store of 0: a caller that counted itself and saw the
	 * bit takes its count back after this may have run. */
	unsigned int *users = users_word(sp);

	__atomic_fetch_and(users, ~USERS_CLOSING, __ATOMIC_RELEASE);
	/* Callers asleep in wait_verdict(): the word changed, so one about
	 * to sleep returns at once, and one asleep is woken here. */
	srcu__backend_futex_wake(users, INT_MAX, false);
	store_relaxed(&closing, NULL);   /* after: the word is open again first */
}

static void synchronize(struct srcu_struct *sp, bool exp, const char *who,
			struct srcu__deadline *dl)
{
	struct srcu__domain *d;
	unsigned long s;

	srcu__gp_enter(sp, who);
	d = srcu__dom(sp);
	check_not_reader(sp, who);
	if (SRCU__BUSTED(NOSYNC)) {
		srcu__gp_leave(sp);
		return;
	}
	s = srcu__gp_snap(sp);
	if (SRCU__BUSTED(LATEJOIN)) {   /* joins a GP in its first check */
		unsigned long now = load_relaxed(&d->gp_seq);

		if ((now & SRCU__SEQ_STATE_MASK) == SEQ_SCAN1)
			s = srcu__seq_end(now);
	}
	seq_request(&d->gp_seq_needed, s);
	if (exp)
		expedite(sp, s);
	__atomic_fetch_add(&d->gp_arrivals, 1, __ATOMIC_RELAXED);   /* for gather() */
	srcu__stall_set_waiting_on(sp);   /* for deadlock probes */
	wait_for_seq(sp, s, dl);
	srcu__stall_set_waiting_on(NULL);
	srcu__gp_leave(sp);
}

unsigned long srcu__gp_snap(struct srcu_struct *sp)
{
	/* P: pairs with S in run_gp() and with A: the caller's updates are
	 * ordered before the snapshot, so the GP that satisfies it starts
	 * after them. */
	srcu__smp_mb();
	return seq_snap(sp);
}

bool srcu__gp_needed(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);

	return ULONG_CMP_LT(load_acquire(&d->gp_seq), load_acquire(&d->gp_seq_needed));
}

/* Return once gp_seq has reached s, running GPs when nobody else does. */
static void wait_for_seq(struct srcu_struct *sp, unsigned long s, struct srcu__deadline *dl)
{
	int64_t patience = DEAD_CHECK_FIRST_NS;

	for (;;) {
		unsigned int ev = load_acquire(&srcu__dom(sp)->gp_event);

		if (seq_done(sp, s))
			break;
		if (srcu__gp_trylock(sp)) {
			run_gps(sp, s, dl);
			srcu__gp_unlock(sp);
		} else {
			wait_for_gp_event(sp, ev, dl, &patience);
		}
	}
	/* F: pairs with the last check's A (through gp_seq's release and
	 * acquire): what the caller does next (its frees) is ordered after
	 * the GP, even when another thread ran it. */
	srcu__smp_mb();
	srcu__hb_gp_end(srcu__id_of(sp));
}

void srcu__gp_wait_seq(struct srcu_struct *sp, unsigned long s)
{
	srcu__gp_check_forked(sp, "a call_srcu() or polled grace period");
	wait_for_seq(sp, s, NULL);
}

/*
 * In the child of fork() (process.c's handler, registry lock held): it
 * has only the forking thread.  Grace periods that other threads were
 * running, and their waits, are gone with them: reset the domain's
 * update-side state to idle so that the child can run its own.  A grace
 * period cut short here is simply not counted as completed.  The
 * requests go too (their callers are gone); a polled cookie's, whose
 * caller may be the child, async.c's handler asks again.
 */
void srcu__gp_fork_child(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);
	unsigned int id = srcu__id_of(sp);

	d->gp_lock = 0;
	d->gp_event_waiters = 0;
	d->users = inside_count(sp);   /* the other threads' calls are gone */
	*srcu__gp_waiting(id, 0) = 0;
	*srcu__gp_waiting(id, 1) = 0;
	d->gp_seq = srcu__seq_idle(d->gp_seq);
	d->gp_seq_needed = d->gp_seq;
	d->gp_exp_needed = d->gp_seq;
	d->gp_expect = 0;   /* its callers are gone */
	d->gp_flags = 0;
}

/* In a fork child, for a shared domain attached: only the count of this
 * process's callers is the child's (the GP state is the file's). */
void srcu__gp_fork_child_shared(struct srcu_struct *sp)
{
	*users_word(sp) = inside_count(sp);
}

/* ---- polled grace periods ---- */

void srcu__gp_request(struct srcu_struct *sp, unsigned long s)
{
	/* SRCU_GET_STATE_COMPLETED needs no grace period; as a request it
	 * would read as ahead of gp_seq half the time, and have the worker
	 * run GPs until the counter wrapped to it. */
	if (s == SRCU_GET_STATE_COMPLETED)
		return;
	seq_request(&srcu__dom(sp)->gp_seq_needed, s);
}

/*
 * Has gp_seq passed cookie s?  The kernel's rcu_seq_done_exact(): not
 * only "cur at or after s" (ULONG_CMP_GE, which would call a cookie held
 * 2^(BITS_PER_LONG-3) grace periods not done), but also done when cur is
 * further behind s than any real cookie can be.  A cookie is
 * srcu__seq_snap() of a gp_seq at most cur: at most 2 * SRCU__SEQ_ONE
 * ahead of cur (7 while a GP runs, 8 once a fork child's or a dead
 * runner's srcu__seq_idle() dropped the running GP's state).  The
 * kernel's guard band, 3 * SRCU__SEQ_STATE_MASK + 1 = 10, covers that.
 * So a cookie is misjudged (not done) only while cur lies 1-10 below it
 * modulo 2^BITS_PER_LONG: when the grace periods completed since its own
 * are 3 (with a GP in its second scan), 2 or 1 short of a multiple of
 * 2^(BITS_PER_LONG-2) (doc/api.md, poll_state_synchronize_srcu).
 */
_Static_assert((SRCU_GET_STATE_COMPLETED & SRCU__SEQ_STATE_MASK) != 0,
	       "SRCU_GET_STATE_COMPLETED must have state bits no snapshot has");
static bool cookie_done(unsigned long cur, unsigned long s)
{
	return ULONG_CMP_GE(cur, s) ||
	       ULONG_CMP_LT(cur, s - (3 * SRCU__SEQ_STATE_MASK + 1));
}

bool srcu__gp_cookie_done(struct srcu_struct *sp, unsigned long cookie)
{
	/* SRCU_GET_STATE_COMPLETED: low bits 01, which no srcu__seq_snap()
	 * has (its low bits are 00), done whatever gp_seq holds. */
	return cookie == SRCU_GET_STATE_COMPLETED ||
	       cookie_done(load_acquire(&srcu__dom(sp)->gp_seq), cookie);
}

unsigned long get_state_synchronize_srcu(struct srcu_struct *sp)
{
	unsigned long s;

	srcu__gp_enter(sp, "get_state_synchronize_srcu");
	s = srcu__gp_snap(sp);
	srcu__gp_leave(sp);
	return s;
}

bool poll_state_synchronize_srcu(struct srcu_struct *sp, unsigned long cookie)
{
	bool done;

	srcu__gp_enter(sp, "poll_state_synchronize_srcu");
	if (SRCU__BUSTED(EARLYPOLL))
		cookie -= SRCU__SEQ_ONE;   /* one grace period early */
	done = srcu__gp_cookie_done(sp, cookie);
	if (done) {
		/* F, as at the end of synchronize(): what the caller does next
		 * (free the object) is ordered after the grace period. */
		srcu__smp_mb();
		srcu__hb_gp_end(srcu__id_of(sp));
	}
	srcu__gp_leave(sp);
	return done;
}

void synchronize_srcu(struct srcu_struct *sp)
{
	synchronize(sp, false, "synchronize_srcu", NULL);
}

void srcu__gp_synchronize_deadline(struct srcu_struct *sp, struct srcu__deadline *dl)
{
	synchronize(sp, false, "synchronize_srcu", dl);
}

void synchronize_srcu_expedited(struct srcu_struct *sp)
{
	synchronize(sp, true, "synchronize_srcu_expedited", NULL);
}

void srcu_expedite_current(struct srcu_struct *sp)
{
	srcu__gp_enter(sp, "srcu_expedite_current");
	/* The GP in progress, else the next one to start: its end.  Starts
	 * none (doc/api.md: unlike the kernel's, which queues a callback). */
	expedite(sp, srcu__seq_end(load_acquire(&srcu__dom(sp)->gp_seq)));
	srcu__gp_leave(sp);
}

unsigned long srcu_batches_completed(struct srcu_struct *sp)
{
	(void)srcu__domain_check(sp, "srcu_batches_completed");
	return srcu__seq_count(load_acquire(&srcu__dom(sp)->gp_seq));
}
