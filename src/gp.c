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
 * the lock counts and compares.  Where the counts are (this process's
 * reader records, or a shared domain's file slots) is counts.h's to know;
 * who may call in while cleanup decides is users.c's.  A GP with idle
 * readers costs one membarrier.  While readers
 * remain, the wait spins briefly on cheap checks, then sleeps on a futex
 * that the last reader's unlock bumps.  doc/design.md holds the ordering
 * argument.
 *
 * Sharing (the kernel's gp_seq rule): gp_seq counts GPs in its upper bits
 * and holds the GP state in its two low bits.  A caller takes the snapshot
 * s = the value gp_seq will have once a GP that starts after now has
 * ended, and returns as soon as gp_seq >= s.  Whichever caller holds
 * gp_lock runs GPs until its own snapshot is reached, then hands over;
 * the others wait on gp_event, which each release of gp_lock bumps (after
 * the GP's end), and the first to come runs the next GP.  combine.c runs
 * that rule, with run_gp() as its unit of work (struct gp_call).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "combine.h"
#include "counts.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/* gp_seq's states (internal.h's sequence numbers). */
#define SEQ_SCAN1      1ul   /* srcu__seq_start()'s: a GP starts in it */
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
	return srcu__counts_of(sp)->shared;
}

/* When a sleep of a wait with deadline dl (NULL: none) must end at the
 * latest: also_until (< 0: none), or dl's time if its hook is still due. */
static int64_t late_until(const struct srcu__deadline *dl, int64_t also_until)
{
	return dl && dl->late ? srcu__backend_earliest(also_until, dl->at_ns) : also_until;
}

/* After a sleep: once dl's time has passed, call its late hook, once
 * (then the caller's loop sleeps on). */
static void late_check(struct srcu__deadline *dl)
{
	void (*late)(void *);

	if (dl && dl->late && now_ns() >= dl->at_ns) {
		late = dl->late;
		dl->late = NULL;
		late(dl->arg);
	}
}

/* Sleep on a futex word; with a deadline, call its late hook. */
static void wait_on(struct srcu_struct *sp, unsigned int *addr, unsigned int val,
		    struct srcu__deadline *dl, int64_t also_until)
{
	/* shared: woken from any process */
	srcu__backend_futex_wait(addr, val, late_until(dl, also_until), shared(sp));
	late_check(dl);
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

/* A check's verdict: the lock sum (read after A) equals the unlock sum
 * (read before), modulo 2^63 (2^31 on 32-bit) as every count (srcu/layout.h). */
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

/*
 * An up/down domain's check: more unlocks in the sum (read first) than
 * locks (read after fence A).  An up without its down, or a down the
 * check did not read: its record was created, claimed or entered the
 * reader set after the unlock sum looked, while the up, in a record it
 * did read, came after the down (the program handed the section over).
 * A check that skips such a record is right to (the section began after
 * it), but its sums are then no proof of misuse: the report waits for a
 * second look over every reader there is (open_everywhere()).
 */
static void check_sums_updown(struct srcu_struct *sp, const unsigned long locks[2],
			      const unsigned long unlocks[2])
{
	for (int idx = 0; idx < 2; idx++)
		if (SRCU__UNLIKELY(srcu__count_signed(srcu__count_diff(locks[idx], unlocks[idx])) < 0) &&
		    srcu__counts_of(sp)->open_everywhere(sp, idx) < 0)
			srcu__report_extra_up(sp, idx, true);
}

/* The unlock sums of both indices: the domain's down/up counters
 * (srcu_up_read() counts there), then its readers' (counts.h), with
 * acquire, before fence A. */
static void sum_unlocks(struct srcu_struct *sp, struct srcu__scan *scan)
{
	/* Not counted[]: the unlock sum writes each word the lock sum reads
	 * (zeroing it cost 512 bytes of stores, ~70 instructions, a check). */
	scan->records = 0;
	scan->others = false;
	scan->shm_slots = 0;
	for (int i = 0; i < 2; i++)
		scan->unlocks[i] = scan->down_unlocks[i] =
			load_acquire(&srcu__dom(sp)->down_unlock[i]);
	srcu__counts_of(sp)->sum_unlocks(sp, scan);
}

/* The lock sums of both indices, after fence A, over the readers the
 * unlock sum counted; each counted reader's balance is checked, or on an
 * up/down domain the sums' (an extra unlock is reported, never taken for
 * an ended section). */
static void sum_locks(struct srcu_struct *sp, const struct srcu__scan *scan,
		      unsigned long locks[2])
{
	bool per_thread = !updown(sp);

	for (int idx = 0; idx < 2; idx++) {
		locks[idx] = load_acquire(&srcu__dom(sp)->down_lock[idx]);
		if (per_thread)
			check_down(sp, idx, scan->down_unlocks[idx], locks[idx]);
	}
	srcu__counts_of(sp)->sum_locks(sp, scan, locks, per_thread);
	if (!per_thread)
		check_sums_updown(sp, locks, scan->unlocks);
}

/* A GP asleep on one index checks the other: an unlock counted on the
 * wrong index leaves the one it waits for open forever and makes the
 * other's unlocks exceed its locks, which no correct program does (a
 * slot read so is confirmed behind a heavy fence before it is reported:
 * srcu__slot_extra_confirmed()).
 * (Each reader's check looks at both indices, the one waited for too,
 * which its own checks also look at.) */
static void check_unlocks(struct srcu_struct *sp, int idx)
{
	unsigned long du;

	if (updown(sp))
		return;   /* every scan checks its sums (check_sums_updown()) */
	/* The ups first, in a statement of their own (a function's
	 * arguments are loaded in any order): a down and its up between
	 * the two loads then raise the downs, never the ups alone. */
	du = load_acquire(&srcu__dom(sp)->down_unlock[idx]);
	check_down(sp, idx, du, load_acquire(&srcu__dom(sp)->down_lock[idx]));
	srcu__counts_of(sp)->check_balance(sp, idx);
}

/* ---- readers first: pacing ---- */

/* gp_flags, the running GP's mode (runner's word). */
#define GP_READERS_RAN 1u   /* the last first check saw lock counts move */
#define GP_PACED       2u   /* this GP spaces its membarriers */
#define GP_PACING      4u   /* ... and is waiting to issue one now */

/* The running (or next) GP is expedited: someone asked for it, before or
 * since it began (srcu_expedite_current() may ask mid-way). */
static bool expedited_asked(struct srcu_struct *sp)
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
		 * after this look is followed by its runner's leave, which
		 * bumps the event after the seq store, so the sleep below
		 * returns. */
		unsigned int ev = srcu__fence_event();

		/* The busted flavour is the wait before issue 33: no
		 * membarrier run meanwhile serves it either. */
		if (now_ns() >= until || (!SRCU__BUSTED(PACEUNBOUNDED) && srcu__fence_served(s)))
			break;
		/* X: pairs with expedite(): flag, then request (both seq-cst). */
		__atomic_fetch_or(&d->gp_flags, GP_PACING, __ATOMIC_SEQ_CST);
		if (expedited_asked(sp))
			break;
		srcu__fence_sleep(ev, until);
		if (SRCU__BUSTED(PACEUNBOUNDED))   /* each membarrier moves it on */
			until = srcu__fence_paced_until();
	}
	__atomic_fetch_and(&d->gp_flags, ~GP_PACING, __ATOMIC_RELAXED);
}

/* The process's heavy fence (A, W) for sp's GP; after the pacing wait of
 * a paced GP, where the fence is asked for first and any membarrier run
 * meanwhile serves it. */
static void fence_private(struct srcu_struct *sp)
{
	int64_t until = pace_until(sp);
	unsigned long s;

	/* 0: not paced, and no clock read (a vDSO clock_gettime() is 20-25
	 * ns on the development VM, a GP of idle readers under a microsecond
	 * plus its membarrier). */
	if (until == 0 || until <= now_ns()) {
		srcu__fence_heavy();
		return;
	}
	s = srcu__fence_ask();   /* FS, before the wait: see pace() */
	pace(sp, s, until);
	srcu__fence_heavy_asked(s);
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
	if (srcu__counts_of(sp)->shared) {
		srcu__fence_heavy_global();   /* A: readers in every process */
	} else if (scan->others) {
		fence_private(sp);
	} else {
		srcu__mb(A);
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
	srcu__mb(L);  /* L: local, pairs with none; its "idle" is re-checked under A */
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
	return srcu__counts_of(sp)->recover_dead(sp, dead);
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
	exp = expedited_asked(sp);   /* perhaps since the GP began */
	if (!spin_until_done(sp, idx, exp ? EXP_SPIN_NS : SPIN_NS, exp ? EXP_YIELD_NS : 0))
		sleep_until_done(sp, idx, dl);
	/* Down, where a sleep or the MOVE request raised it: a store of 0
	 * over 0 would still take the line that every inline unlock reads. */
	if (load_relaxed(waiting))
		store_relaxed(waiting, 0);
}

/* ---- one grace period (caller holds gp_lock) ---- */

/* A caller's wait for gp_seq, the combiner's argument (combine.c): the
 * domain's combiner, and what a wait and a GP need. */
struct gp_call {
	struct srcu__combiner c;
	struct srcu_struct *sp;
	struct srcu__deadline *dl;   /* the waiting caller's, or NULL */
	int64_t patience_ns;         /* shared: until a holder is checked for death */
};

static const struct srcu__combine_ops gp_ops;

/* sp's combiner: gp_seq and gp_lock on the runner's line, the event
 * (and its sleepers' mark) on the waiters' (layout.h); shared futexes for a
 * shared domain, whose words are in its file. */
static void gp_combiner(struct srcu_struct *sp, struct srcu__combiner *c)
{
	struct srcu__domain *d = srcu__dom(sp);

	/* Field by field, not a compound literal: that is a memcpy(), which
	 * the model checker (model/genmc) cannot run. */
	c->seq = &d->gp_seq;
	c->lock = &d->gp_lock;
	c->event = &d->gp_event;
	c->pshared = shared(sp);
}

static void gp_call_init(struct gp_call *call, struct srcu_struct *sp, struct srcu__deadline *dl)
{
	gp_combiner(sp, &call->c);
	call->sp = sp;
	call->dl = dl;
	call->patience_ns = DEAD_CHECK_FIRST_NS;
}

static void flip(struct srcu_struct *sp)
{
	uint16_t *index = srcu__index_word(sp);

	srcu__mb(E);  /* E: the SCAN1 sums before the flip (redundant, cheap) */
	store_relaxed(index, (uint16_t)(load_relaxed(index) ^ 1));
	srcu__counts_of(sp)->flipped(sp);   /* this process's readers move at once */
	srcu__mb(D);  /* D: the flip before the SCAN2 sums and their fence A */
}

/* One GP from gp_seq's idle value seq: combine.h's unit of work. */
static void run_gp(void *arg, unsigned long seq)
{
	struct gp_call *call = arg;
	struct srcu_struct *sp = call->sp;
	struct srcu__domain *d = srcu__dom(sp);
	unsigned int idle, flags;
	int64_t start;
	int idx;

	start = now_ns();
	/* Paced when its readers ran since the last GP and nobody asked for
	 * it expedited (which may still happen: pace() asks again). */
	flags = load_relaxed(&d->gp_flags) & GP_READERS_RAN;
	if (flags && !expedited_asked(sp))
		flags |= GP_PACED;
	store_relaxed(&d->gp_flags, flags);
	store_relaxed(&d->gp_start_ns, (uint64_t)start);
	/* SCAN1.  Release: a caller waiting for the previous GP's end may
	 * read this start instead (the GP ran by another thread than the one
	 * that ended the last, which took gp_lock after it): the release,
	 * after that lock's acquire, carries the last GP's end to the
	 * caller's acquire in srcu__combine_done() / srcu__gp_cookie_done()
	 * (model/litmus/F-next; without it only F orders the caller, and C11
	 * sees a race). */
	store_release(&d->gp_seq, srcu__seq_start(seq));
	/* S: pairs with P in srcu__gp_snap(): the state store before the
	 * scans, so a caller that sees the GP idle (and so expects a full GP
	 * after its snapshot) is covered. */
	srcu__mb(S);
	idx = srcu__cur_idx(sp);
	/* The busted flavour skips SCAN1, and so this check of both. */
	idle = SRCU__BUSTED(ONESCAN) ? IDLE_INACTIVE : idle_indices(sp, idx);
	if (idle != IDLE_BOTH) {
		if (!(idle & IDLE_INACTIVE))
			wait_readers(sp, idx ^ 1, call->dl);  /* SCAN1: stale readers */
		flip(sp);
		/* Relaxed: the first check's A and the flip's fences, full
		 * fences after gp_lock's acquire, order the last GP's end
		 * before it for a caller that reads it, as the start's
		 * release does. */
		store_relaxed(&d->gp_seq, srcu__seq_set_state(seq, SEQ_SCAN2));
		wait_readers(sp, idx, call->dl);          /* SCAN2: the old index */
	}
	if (expedited_asked(sp))   /* asked for before it ended, perhaps mid-way */
		stat_inc(&d->stat_exp_gps);
	/* Pacing is a running GP's: cleanup's checks, between GPs, are not. */
	store_relaxed(&d->gp_flags, load_relaxed(&d->gp_flags) & ~GP_PACED);
	/* gp_seq's end, released: pairs with the callers' acquire
	 * (srcu__combine_done()), so that one that sees the GP ended is
	 * ordered after the scans' fences (F follows). */
	srcu__combine_end(&call->c, seq);
	stat_gp_time(sp, (uint64_t)(now_ns() - start));
}

/* ---- sharing ---- */

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

/* What gp_lock holds while this process runs a GP (counts.h: 1, or a
 * shared domain's process identity). */
static uint64_t lock_token(struct srcu_struct *sp)
{
	const struct srcu__counts *counts = srcu__counts_of(sp);

	return counts->shared ? counts->lock_token(sp) : 1;   /* private: any nonzero */
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

	if (!srcu__counts_of(sp)->holder_dead(token) ||
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
	struct srcu__domain *d = srcu__dom(sp);
	uint64_t token = lock_token(sp);
	bool pshared = shared(sp);
	char n[SRCU__NAME_LEN];

	/* A shared domain's lock is released only by its holder: a fork
	 * child of a process inside a grace period (a fork from a signal
	 * handler, or a stall handler) is another process, and must not go
	 * on with its parent's grace period. */
	if (!pshared)
		store_release(&d->gp_lock, 0);
	else if (!__atomic_compare_exchange_n(&d->gp_lock, &token, 0, false,
					      __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		srcu__report_fatal("process %d ended a grace period of shared domain %s that "
			    "another process runs (a fork() inside a grace period?)",
			    (int)getpid(), srcu__report_name(sp, n, sizeof(n)));
	/* A waiter whose GP is not done takes over.  The bump alone, as
	 * srcu__combine_bump() makes it (pairs with the sleepers'
	 * mark-then-sleep in srcu__combine_sleep()), without building
	 * the whole combiner. */
	srcu__combine_bump_event(&d->gp_event, pshared);
}

/* ---- waiting for gp_seq: combine.c's ops ---- */

static bool gp_trylock(void *arg)
{
	return srcu__gp_trylock(((struct gp_call *)arg)->sp);
}

static void gp_unlock(void *arg)
{
	srcu__gp_unlock(((struct gp_call *)arg)->sp);
}

/* Wait for the next gp_lock release (after a GP's end, or a holder's
 * leave).  Spin briefly first: a GP of local fences takes well under a
 * microsecond, much less than a futex sleep and wake-up.  Not while GPs
 * use membarrier: it would have to interrupt this spinning CPU (10-12 us
 * instead of 0.5), so waiters sleep and leave their CPUs idle, after one
 * sched_yield() while the membarriers show that yields interrupt nobody
 * (fence.c, "Yield or sleep": loaded, the yield often outlasts the GP and
 * saves the sleep and its wake-up).  A shared
 * domain's holder may die and never bump gp_event: its waiters wake up
 * now and then (patience_ns, doubling) and see whether it is alive. */
static bool wait_for_gp_event(void *arg, unsigned int ev)
{
	struct gp_call *call = arg;
	struct srcu_struct *sp = call->sp;
	int64_t until = -1;

	if (!load_relaxed(&srcu__dom(sp)->gp_heavy)) {
		if (srcu__combine_spin(&call->c, ev, SHARE_SPIN_NS, SHARE_PAUSE_NS))
			return false;
	} else if (srcu__fence_waiters_may_yield(shared(sp)) &&
		   srcu__combine_yield(&call->c, ev)) {
		return false;
	}
	if (shared(sp))
		until = now_ns() + call->patience_ns;
	srcu__combine_sleep(&call->c, ev, late_until(call->dl, until));
	late_check(call->dl);
	if (until >= 0 && now_ns() >= until) {
		if (take_over(sp)) {
			recover_dead(sp);
			srcu__gp_unlock(sp);   /* the caller's loop runs the GP */
		}
		call->patience_ns = backoff(call->patience_ns);
	}
	return false;
}

static const struct srcu__combine_ops gp_ops = {
	.trylock = gp_trylock, .unlock = gp_unlock, .run = run_gp,
	.wait = wait_for_gp_event,
};

static void check_not_reader(struct srcu_struct *sp, const char *who)
{
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];

	if (srcu__reader_self_inside(sp))
		srcu__report_fatal("%s() called by %s inside its own read-side critical "
			    "section of domain %s: it would wait for itself forever",
			    who, srcu__report_thread(t, sizeof(t)), srcu__report_name(sp, n, sizeof(n)));
}

static void wait_for_seq(struct gp_call *call, unsigned long s);

static void synchronize(struct srcu_struct *sp, bool exp, const char *who,
			struct srcu__deadline *dl)
{
	struct srcu__domain *d;
	struct gp_call call;
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

		if (srcu__seq_state(now) == SEQ_SCAN1)
			s = srcu__seq_end(now);
	}
	seq_request(&d->gp_seq_needed, s);
	if (exp)
		expedite(sp, s);
	gp_call_init(&call, sp, dl);
	srcu__stall_set_waiting_on(sp);   /* for deadlock probes */
	wait_for_seq(&call, s);
	srcu__stall_set_waiting_on(NULL);
	srcu__gp_leave(sp);
}

unsigned long srcu__gp_snap(struct srcu_struct *sp)
{
	/* P: pairs with S in run_gp() and with A: the caller's updates are
	 * ordered before the snapshot, so the GP that satisfies it starts
	 * after them. */
	srcu__mb(P);
	return seq_snap(sp);
}

bool srcu__gp_needed(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);

	return ULONG_CMP_LT(load_acquire(&d->gp_seq), load_acquire(&d->gp_seq_needed));
}

/* Return once gp_seq has reached s, running GPs when nobody else does. */
static void wait_for_seq(struct gp_call *call, unsigned long s)
{
	srcu__combine_wait(&call->c, &gp_ops, s, call);
	/* F: pairs with the last check's A (through gp_seq's release in
	 * srcu__combine_end() and the acquire in srcu__combine_done()): what
	 * the caller does next (its frees) is ordered after the GP, even when
	 * another thread ran it. */
	srcu__mb(F);
	srcu__hb_gp_end(srcu__id_of(call->sp));
}

void srcu__gp_wait_seq(struct srcu_struct *sp, unsigned long s)
{
	struct gp_call call;

	srcu__gp_check_forked(sp, "a call_srcu() or polled grace period");
	gp_call_init(&call, sp, NULL);
	wait_for_seq(&call, s);
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
	struct srcu__combiner c;

	gp_combiner(sp, &c);
	srcu__combine_fork_child(&c);   /* gp_seq idle, gp_lock free, no waiter */
	srcu__users_fork_child(sp);   /* the other threads' calls are gone */
	*srcu__gp_waiting(id, 0) = 0;
	*srcu__gp_waiting(id, 1) = 0;
	d->gp_seq_needed = d->gp_seq;
	d->gp_exp_needed = d->gp_seq;
	d->gp_flags = 0;
}

/* In a fork child, for a shared domain attached: only the count of this
 * process's callers is the child's (the GP state is the file's). */
void srcu__gp_fork_child_shared(struct srcu_struct *sp)
{
	srcu__users_fork_child(sp);
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
 * Has gp_seq passed cookie s?  srcu__seq_done_exact(): not
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
	return srcu__seq_done_exact(cur, s);
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
		srcu__mb(F);
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
