/*
 * fence.c: the fence service.  One membarrier serves every caller, on any
 * domain, that asked for a heavy fence before that membarrier began.
 *
 * Each grace-period check needs every thread of the process to execute a
 * full fence between its unlock sums and its lock sums (fence A), and a
 * grace period that goes to sleep needs one after it sets its waiting
 * flag (fence W).  membarrier(PRIVATE_EXPEDITED) gives that, but the
 * kernel runs expedited membarriers one at a time, and each interrupts
 * every CPU that runs a thread of the process: N updaters issuing their
 * own interrupt and queue behind each other, whether they share a domain
 * or not.  Here they share, by the rule gp_seq uses for grace periods
 * (combine.c, with a membarrier as the unit of work):
 *
 *   seq counts membarriers (internal.h's sequence numbers; state 1 while
 *   one runs).  A caller fences (FS), reads seq, and needs the end of the
 *   first membarrier that begins after that read: srcu__seq_snap().  It
 *   returns once seq >= s.  Whoever holds the lock runs membarriers until
 *   its own s is reached; the others wait for it (spinning briefly and
 *   yielding while the membarriers interrupt nobody, see "Yield or sleep",
 *   then on a futex), and take the lock over if it is free and they are not
 *   served; one that waited srcu__fence_patience_ns runs its own
 *   membarrier without the lock (a descheduled lock holder must not
 *   stall every domain).
 *
 * A paced caller (a normal grace period whose readers ran) asks first
 * and waits out its pacing gap after: any membarrier that begins after
 * the ask, whoever runs it, serves it and ends the wait.
 *
 * doc/design.md ("The fence service") argues that a membarrier which
 * began after the caller's read of seq is, for the caller's check, as good
 * as one the caller ran itself; model/fence.pml checks it with store
 * buffers, and the broken rule (accepting the membarrier in flight) is
 * the busted flavour EARLYFENCE.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "combine.h"

/* How long a caller spins for the running membarrier before it yields
 * and sleeps, when it may (below): an uncontended one takes about a
 * microsecond. */
#define FENCE_SPIN_NS (3 * 1000L)
/* How long a caller waits for another's membarrier before it runs its own
 * without the lock: a lock holder that is descheduled (a SCHED_IDLE or
 * stopped thread, a signal handler that blocks) must not hold every
 * domain's grace periods.  Any membarrier that begins after the caller's
 * read of seq serves it, its own included. */
int64_t srcu__fence_patience_ns = 1000 * 1000L;   /* tests may lengthen it */

/* The pacing gap after a membarrier that interrupted someone, in units of
 * what the interruption cost (its duration above the cheapest seen): at
 * most one part in PACE_RATIO + 1 of a running thread's time goes to
 * paced membarriers (doc/design.md, "Readers first"). */
#define PACE_RATIO 6
/* Below this excess a membarrier interrupted nobody that matters. */
#define PACE_MIN_EXCESS_NS 1000
/* The bound on a grace period's pacing (gp.c's pace()): an updater pays
 * at most this for the readers' sake, whatever other domains do. */
int64_t srcu__fence_pace_max_ns = 1000 * 1000L;   /* tests may lengthen it */

/* One service per kind of membarrier: the process's own (private), and
 * the global one for shared domains.  Its words are this process's. */
struct service {
	/* The combiner's words (combine.c): membarriers counted, state 1
	 * while one runs; the lock (1: a caller runs membarriers); the event
	 * (bumped when the runner leaves; its sleepers' mark). */
	unsigned long seq;
	srcu__u64 lock;
	unsigned int event;
	bool global;              /* GLOBAL_EXPEDITED, not PRIVATE_EXPEDITED */
	unsigned long membarriers;/* run (statistics) */
	unsigned long requests;   /* heavy fences asked for (statistics) */
	/* Pacing (relaxed; a patient caller's membarrier writes them too):
	 * when the last membarrier ended, how long it took, the cheapest. */
	int64_t last_end_ns __attribute__((aligned(8)));
	int64_t last_cost_ns __attribute__((aligned(8)));
	int64_t floor_ns __attribute__((aligned(8)));
	struct srcu__yield_judge yield;   /* may grace periods' waiters yield? */
	/* Membarriers are timed until this count of them (timing_wanted()). */
	unsigned long timed_until;
	/* Where the words above are, and the unit of work: read only, on a
	 * line of its own. */
	struct srcu__combiner c __attribute__((aligned(64)));
} __attribute__((aligned(64)));

static const struct srcu__combine_ops fence_ops;

#define SERVICE(fs, is_global) { .global = (is_global), .c = {			\
	.seq = &(fs).seq, .lock = &(fs).lock, .event = &(fs).event,		\
	.pshared = false } }
static struct service private_fs = SERVICE(private_fs, false),
		      global_fs = SERVICE(global_fs, true);

/* One caller's wait, for the combiner's ops. */
struct fence_call {
	struct service *fs;
	int64_t deadline;         /* when it runs its own membarrier; < 0: not yet set */
};

/* A membarrier's duration says whether it interrupted anyone: one that
 * found no other thread of the process running costs a system call (the
 * floor); each running thread it interrupts adds an IPI (doc/performance.md,
 * figure 9).  The excess is what the running threads paid. */
static void note_cost(struct service *fs, int64_t start, int64_t end, bool judged)
{
	int64_t cost = end - start, floor = load_relaxed(&fs->floor_ns);

	if (floor == 0 || cost < floor)
		store_relaxed(&fs->floor_ns, cost);
	store_relaxed(&fs->last_cost_ns, cost);
	store_relaxed(&fs->last_end_ns, end);
	if (judged)
		srcu__yield_judge_note(&fs->yield, floor != 0 && cost - floor >= PACE_MIN_EXCESS_NS);
}

/* Timing a membarrier costs two clock reads (a vDSO clock_gettime() is
 * 20-25 ns on the development VM, against 0.5-0.8 us for the membarrier:
 * about 6% of one updater's synchronize call with idle readers).  Its
 * cost is wanted only by a paced grace period's gap
 * (srcu__fence_paced_until(), whose GP's readers ran) and by the yield
 * judge while callers wait; each asks that the membarriers be timed for
 * a run of TIMED_RUN / 2 to TIMED_RUN more.  A paced fence that finds
 * the run over is unpaced: the last timed membarrier may be long past,
 * and those since were not timed (doc/design.md, "Readers first").
 * The run is kept as what is left of it, unsigned: left in 1..TIMED_RUN
 * means timed, whatever the counts' width (32-bit longs wrap). */
#define TIMED_RUN 256

static unsigned long timed_left(struct service *fs)
{
	return load_relaxed(&fs->timed_until) - load_relaxed(&fs->membarriers);
}

static bool timing_wanted(struct service *fs)
{
	unsigned long left = timed_left(fs);

	return left >= 1 && left <= TIMED_RUN;
}

static void want_timing(struct service *fs)
{
	unsigned long left = timed_left(fs);

	/* Stored only when half the run is used (or it is over): waiters
	 * do not all write the line at each wait. */
	if (left <= TIMED_RUN / 2 || left > TIMED_RUN)
		store_relaxed(&fs->timed_until, load_relaxed(&fs->membarriers) + TIMED_RUN);
}

/* ---- Yield or sleep: how waiters wait while GPs use membarrier ----
 *
 * A caller that finds another's grace period running on a domain whose
 * GPs use membarrier (gp.c's wait_for_gp_event()), or another's
 * membarrier running (fence_wait_event()), waits for it.  Asleep, it
 * costs a futex wake-up (11-20 us here), and on a machine where another
 * process holds the other CPU the woken thread then waits for a CPU as
 * well.  One that yields once first (a fence waiter: spins briefly, then
 * yields) often finds the wait over when it runs again, with no sleep and
 * no wake-up.  But it keeps the thread runnable, and if the thread runs
 * on another CPU while a membarrier runs, the membarrier must interrupt
 * it (an IPI: 10-20 us in a VM).  Which costs more depends on what else
 * the machine runs, and the membarriers say which: one that cost more
 * than the floor interrupted a running thread (note_cost()).  So waiters
 * yield unless, in a window of SRCU__YIELD_WINDOW membarriers in which
 * they did, more than a quarter interrupted someone; then they sleep at
 * once for 2, 4, ... up to SRCU__YIELD_BACKOFF_MAX windows, and the
 * yields are tried again.  Measured (doc/runs/2026-12-06-issue38-
 * yield.txt): with yields, 46-69% of the membarriers interrupted someone
 * with 4 updaters on 2 CPUs and no other process (yields halve their
 * calls/s), 0.2-0.3% with a CPU-bound process beside them (yields double
 * them); the judge keeps the first figure and the second. */

void srcu__yield_judge_note(struct srcu__yield_judge *j, bool interrupting)
{
	unsigned int seen = load_relaxed(&j->seen) + 1, left, backoff;

	if (interrupting)
		store_relaxed(&j->interrupting, load_relaxed(&j->interrupting) + 1);
	if (seen < SRCU__YIELD_WINDOW) {
		store_relaxed(&j->seen, seen);
		return;
	}
	left = load_relaxed(&j->sleep_windows);
	if (left > 0) {
		store_relaxed(&j->sleep_windows, left - 1);
	} else if (load_relaxed(&j->interrupting) > SRCU__YIELD_WINDOW / 4) {
		backoff = load_relaxed(&j->backoff) * 2;
		if (backoff < 2)
			backoff = 2;
		if (backoff > SRCU__YIELD_BACKOFF_MAX)
			backoff = SRCU__YIELD_BACKOFF_MAX;
		store_relaxed(&j->backoff, backoff);
		store_relaxed(&j->sleep_windows, backoff);
	} else {
		store_relaxed(&j->backoff, 0);
	}
	store_relaxed(&j->seen, 0);
	store_relaxed(&j->interrupting, 0);
}

bool srcu__yield_judge_allows(const struct srcu__yield_judge *j)
{
	return load_relaxed(&j->sleep_windows) == 0;
}

/* Asks that the coming membarriers be timed: the judge needs them. */
static bool waiters_may_yield(struct service *fs)
{
	want_timing(fs);
	return srcu__yield_judge_allows(&fs->yield);
}

bool srcu__fence_waiters_may_yield(bool global)
{
	return waiters_may_yield(global ? &global_fs : &private_fs);
}

/* judged: run by the lock holder, the judge's one writer; a patient
 * caller's membarrier (outside the lock) is timed for pacing only. */
static void issue_membarrier(struct service *fs, bool judged)
{
	bool timed;
	int64_t start = 0;

	SRCU__TORTURE_POINT(FENCE_BEGUN, NULL);
	timed = timing_wanted(fs);
	if (timed)
		start = srcu__backend_now_ns();
	if (fs->global)
		srcu__backend_membarrier_global();
	else
		srcu__backend_membarrier();
	if (timed)
		note_cost(fs, start, srcu__backend_now_ns(), judged);
	__atomic_fetch_add(&fs->membarriers, 1, __ATOMIC_RELAXED);
}

/* No membarrier before this (CLOCK_MONOTONIC ns) for a paced caller: the
 * last timed one's end plus PACE_RATIO times what it cost the threads it
 * interrupted.  0 when it interrupted nobody, when membarriers went
 * untimed since (a run of timing just asked for: see TIMED_RUN), or with
 * the fence backend. */
int64_t srcu__fence_paced_until(void)
{
	struct service *fs = &private_fs;
	int64_t excess, until = 0;
	bool timed;

	if (load_acquire(&srcu__backend_fence_mode))
		return 0;
	timed = timing_wanted(fs);
	want_timing(fs);
	excess = load_relaxed(&fs->last_cost_ns) - load_relaxed(&fs->floor_ns);
	if (timed && excess >= PACE_MIN_EXCESS_NS)
		until = load_relaxed(&fs->last_end_ns) + PACE_RATIO * excess;
	SRCU__TORTURE_POINT(PACE, &until);
	return until;
}

/* ---- the combiner's ops (combine.c): a membarrier is the unit ---- */

static bool fence_trylock(void *arg)
{
	return srcu__backend_trylock(&((struct fence_call *)arg)->fs->lock, 1);
}

static void fence_unlock(void *arg)
{
	struct service *fs = ((struct fence_call *)arg)->fs;

	store_release(&fs->lock, 0);
	srcu__combine_bump(&fs->c);   /* a caller not yet served takes over */
}

static void run_fence(void *arg, unsigned long seq)
{
	struct service *fs = ((struct fence_call *)arg)->fs;

	/* Release, as gp.c's GP start: a caller served by the last
	 * membarrier may read this start instead (model/litmus/FE-next). */
	store_release(&fs->seq, srcu__seq_start(seq));
	/* FM: pairs with FS in fence_ask(): the "running" store before the
	 * membarrier, so that a caller whose read of seq did not see it (and
	 * so counts on this membarrier) issued every access before its FS
	 * before this membarrier began. */
	srcu__mb(FM);
	issue_membarrier(fs, true);
	srcu__combine_end(&fs->c, seq);   /* release: seq's end (FE follows) */
}

/* Wait for the running membarrier to end or the lock to be freed, or
 * until the caller's patience runs out: then it runs its own membarrier,
 * without the lock, which serves it. */
static bool fence_wait_event(void *arg, unsigned int ev)
{
	struct fence_call *call = arg;
	int64_t now = srcu__backend_now_ns();

	if (call->deadline < 0) {
		call->deadline = now + srcu__fence_patience_ns;
	} else if (now >= call->deadline) {
		/* FM: as in run_fence(); this one begins after our read of
		 * seq, so it serves us. */
		srcu__mb(FM);
		issue_membarrier(call->fs, false);
		return true;
	}
	/* Spin, then yield, only while the membarriers interrupt nobody
	 * ("Yield or sleep" above): otherwise this thread, running, is one
	 * more that the next membarrier must interrupt. */
	if (waiters_may_yield(call->fs) &&
	    (srcu__combine_spin(&call->fs->c, ev, FENCE_SPIN_NS, INT64_MAX) ||
	     srcu__combine_yield(&call->fs->c, ev)))
		return false;
	srcu__combine_sleep(&call->fs->c, ev, call->deadline);
	return false;
}

static const struct srcu__combine_ops fence_ops = {
	.trylock = fence_trylock, .unlock = fence_unlock, .run = run_fence,
	.wait = fence_wait_event,
};

/* ---- requests ---- */

/* The seq value that serves a caller who read seq: the end of the first
 * membarrier that begins after the read.  (srcu-torture's broken flavour
 * accepts the one in flight.) */
static unsigned long fence_snap(unsigned long seq)
{
	if (SRCU__BUSTED(EARLYFENCE))
		return srcu__seq_end(seq);
	return srcu__seq_snap(seq);
}

/* A request for a heavy fence: the seq value that serves it. */
static unsigned long fence_ask(struct service *fs)
{
	unsigned long s;

	/* FS: pairs with FM in run_fence(): what the caller's thread has
	 * stored and seen so far (the updates its grace period publishes,
	 * through P and S; a GP's waiting flag) before its read of seq, so
	 * the membarrier it waits for begins after them and carries them to
	 * every thread's fence point (doc/design.md, "The fence service"). */
	srcu__mb(FS);
	s = fence_snap(load_relaxed(&fs->seq));
	__atomic_fetch_add(&fs->requests, 1, __ATOMIC_RELAXED);
	return s;
}

/* Return once seq reaches s: served by a membarrier someone else runs,
 * by the ones this caller runs under the lock, or, past its patience, by
 * its own. */
static void fence_wait(struct service *fs, unsigned long s)
{
	struct fence_call call = { .fs = fs, .deadline = -1 };

	srcu__combine_wait(&fs->c, &fence_ops, s, &call);
	/* FE: pairs with the membarrier through seq's release and the
	 * acquire in srcu__combine_done(): the caller's later accesses (a
	 * check's lock sums) after every thread's fence, as if it had run
	 * the membarrier. */
	srcu__mb(FE);
}

static void fence_heavy(struct service *fs)
{
	fence_wait(fs, fence_ask(fs));
}

void srcu__fence_heavy(void)
{
	/* Acquire: see srcu__backend_init().  A caller that still reads
	 * "fence" while threads switch to the fast path is covered by their
	 * fence T (reader.c): its own full fence S at its GP's start (D and
	 * earlier checks' A come later, but S carries it) makes the
	 * read-to-write causality argument. */
	if (load_acquire(&srcu__backend_fence_mode)) {
		srcu__mb(A);  /* A, W (fence backend): pairs with the readers' locked RMWs */
		return;
	}
	fence_heavy(&private_fs);
}

/* Whatever this process's backend: other attached processes may use
 * membarrier, and their readers only compiler barriers. */
void srcu__fence_heavy_global(void)
{
	fence_heavy(&global_fs);
}

/* ---- paced fences (gp.c's pace()) ---- */

unsigned long srcu__fence_ask(void)
{
	return fence_ask(&private_fs);
}

bool srcu__fence_served(unsigned long s)
{
	return srcu__combine_done(&private_fs.c, s);
}

unsigned int srcu__fence_event(void)
{
	return srcu__combine_event(&private_fs.c);
}

void srcu__fence_sleep(unsigned int ev, int64_t deadline_ns)
{
	/* Woken when each membarrier's runner leaves (after the end) and by
	 * srcu__fence_kick(). */
	srcu__combine_sleep(&private_fs.c, ev, deadline_ns);
}

void srcu__fence_kick(void)
{
	srcu__combine_bump(&private_fs.c);
}

void srcu__fence_heavy_asked(unsigned long s)
{
	/* Asked for in membarrier mode (a paced gap is 0 with fences); a
	 * fork child that a handler made during the wait may have fallen
	 * back to fences since (srcu__backend_fork_child()). */
	if (load_acquire(&srcu__backend_fence_mode)) {
		srcu__mb(A);  /* A, W (fence backend): as in srcu__fence_heavy() */
		return;
	}
	fence_wait(&private_fs, s);
}

void srcu__fence_stats(unsigned long *membarriers, unsigned long *requests)
{
	*membarriers = __atomic_load_n(&private_fs.membarriers, __ATOMIC_RELAXED) +
		       __atomic_load_n(&global_fs.membarriers, __ATOMIC_RELAXED);
	*requests = __atomic_load_n(&private_fs.requests, __ATOMIC_RELAXED) +
		    __atomic_load_n(&global_fs.requests, __ATOMIC_RELAXED);
}

/* In a fork child: the other threads, a running membarrier among them,
 * are gone, and the judge's costs were theirs (a child that falls back
 * to fences issues no membarrier that would end a refusal).  Field by
 * field, not memset(): GenMC's models compile this file and cannot take
 * the memory intrinsic. */
static void service_fork_child(struct service *fs)
{
	srcu__combine_fork_child(&fs->c);
	store_relaxed(&fs->yield.seen, 0);
	store_relaxed(&fs->yield.interrupting, 0);
	store_relaxed(&fs->yield.sleep_windows, 0);
	store_relaxed(&fs->yield.backoff, 0);
}

void srcu__fence_fork_child(void)
{
	service_fork_child(&private_fs);
	service_fork_child(&global_fs);
}

bool srcu__slot_extra_confirmed(struct srcu__slot *s, int idx, bool global)
{
	unsigned long u = load_acquire(&s->unlock[idx]);

	/* A (confirming a misuse report): pairs with B and C of the slot's
	 * owner, as in gp.c's fence_a(): an unlock read before this fence
	 * has its lock read after it; forbids reporting the unlock of a
	 * section whose lock was still in flight. */
	if (global)
		srcu__fence_heavy_global();
	else
		srcu__fence_heavy();
	return srcu__open(load_acquire(&s->lock[idx]), u) < 0;
}
