/*
 * torture-chain.c: call_srcu(), polled grace periods and srcu_barrier()
 * across domains whose callbacks chain into each other at a small backlog
 * limit, with cleanup_srcu_struct() and re-init racing them (issue 35).
 * Part of the threads mode's chaos.
 *
 * Three domains, chain-0..chain-2, each with a backlog limit of 2 to 8.
 * Objects are published in four slots that readers of any of the three
 * domains dereference.  The producer (a program thread) publishes a free
 * object in a slot and hands the one it replaced to call_srcu() on a
 * random chain domain; each callback counts its run and hands the object
 * on to call_srcu() on the next domain (chain-0 -> chain-1 -> chain-2 ->
 * chain-0 ...) until it has made 3 to 6 hops, so it has waited for a
 * grace period of every domain that began after it was unpublished; the
 * last callback poisons it and puts it back on the free list.  A poller
 * does the same for the fourth slot with start_poll_synchronize_srcu() on
 * all three and poll_state_synchronize_srcu() until each is done.  A
 * barrier thread calls srcu_barrier() on a random chain domain.  A cleaner
 * tries cleanup_srcu_struct() on chain-2 (the victim) every few hundred
 * microseconds while all of that races it, and re-initializes it when the
 * cleanup succeeds.
 *
 * The handshake, which is the program's duty: callers of the victim pass
 * a gate (counted in gate_pending) that the cleaner closes; the cleaner
 * waits until no caller is between the gate and the library's count of
 * its call (the UPDATE_ENTERED point, where the caller leaves
 * gate_pending), so a caller is either done or inside the library when
 * cleanup_srcu_struct() runs, and none starts until the gate reopens,
 * after the re-init.  Readers pass the gate to lock and to unlock only:
 * in between they are inside a section, which cleanup must see.
 *
 * Checks: every callback runs once per call (per object, a count of
 * calls and one of runs; a run with none queued is a failure), and at the
 * end every object is back and every call's callback ran; readers find
 * their object live and not reused until their section ends (its
 * generation and poison); srcu_barrier() returns only after every
 * callback queued on its domain before it has run (counts per domain);
 * cleanup_srcu_struct() never succeeds while a callback is queued on the
 * victim, a reader is inside it or a call is held inside it (a caller
 * held at UPDATE_ENTERED; the CLEANUP_CLOSED point must never see one).
 * Liveness (torture-live.c): every call_srcu() until its callback, every
 * polled cookie until done and every srcu_barrier() is a tracked wait,
 * and every chain reader's section a tracked section, so a deadlock
 * (callbacks at the limit waiting for each other's room) fails the run.
 *
 * --flavor busted-freeatcall is the tool's own bug, not the library's: the
 * producer poisons an object when it hands it to call_srcu() instead of in
 * its last callback; a reader that still holds it must see the poison.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "srcu-torture.h"
#include "../src/torture.h"   /* the library's test-only hooks */

#define NCHAIN   3
#define VICTIM   2            /* the domain that cleanup races */
#define NSLOTS   4            /* 0..2 the producer's, 3 the poller's */
#define NCOBJ    24
#define GATE_WAIT_NS (5 * MS) /* the cleaner gives up a try after this */

struct cobj {
	struct srcu_head rh;
	unsigned int magic, gen;
	int dom;                 /* where it is queued now */
	int hops_left;
	int queued;              /* 1 from its call until its callback */
	int live_token;          /* its wait, for the liveness oracle */
	unsigned long calls, runs;   /* per object: each call runs once */
	struct cobj *next_free;
};

struct chain_stats chain;

static struct srcu_struct cdom[NCHAIN];
static unsigned long limits[NCHAIN];
static struct cobj cobjs[NCOBJ];
static struct cobj *pub[NSLOTS];
static struct cobj *free_list;
static int nfree;
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t threads[8];
static int nthreads;
static bool chain_on;
static void (*next_point)(enum srcu__torture_point p, void *arg);

/* Per domain: calls begun, calls returned, callbacks run. */
static unsigned long started[NCHAIN], called[NCHAIN], ran[NCHAIN];
static unsigned long in_flight;   /* calls whose callback has not yet returned */

static const char *const names[NCHAIN] = { "chain-0", "chain-1", "chain-2" };
static const char *const cb_what[NCHAIN] = {
	"call_srcu() on chain-0 until its callback", "call_srcu() on chain-1 until its callback",
	"call_srcu() on chain-2 until its callback" };
static const char *const bar_what[NCHAIN] = {
	"srcu_barrier() on chain-0", "srcu_barrier() on chain-1", "srcu_barrier() on chain-2" };

/* ---- the victim's gate ---- */

static int gate_closed;       /* the cleaner's */
static int gate_pending;      /* callers past the gate, not yet counted by the library */
static int held_inside;       /* callers held at UPDATE_ENTERED on the victim */
static int readers_inside;    /* chain readers inside a section of the victim */
static unsigned int victim_gen;  /* incarnations, changed only while the gate is closed */
static __thread bool my_gate;    /* this thread is pending */
static __thread unsigned int hook_seed;

static void gate_enter(void)
{
	for (;;) {
		/* Seq-cst, with the load after it: pairs with the cleaner's
		 * seq-cst store of gate_closed and its loads of gate_pending
		 * (Dekker): either it sees this caller pending, or this sees
		 * the gate closed. */
		__atomic_fetch_add(&gate_pending, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&gate_closed, __ATOMIC_SEQ_CST))
			break;
		__atomic_fetch_sub(&gate_pending, 1, __ATOMIC_SEQ_CST);
		/* Acquire pairs with the cleaner's release reopening: the
		 * re-init is seen before this caller uses the domain. */
		while (__atomic_load_n(&gate_closed, __ATOMIC_ACQUIRE))
			sleep_ns(20 * 1000);
	}
	my_gate = true;
}

/* The library has counted this thread's call (or it is done). */
static void gate_counted(void)
{
	if (!my_gate)
		return;
	my_gate = false;
	/* Seq-cst pairs with the cleaner's seq-cst loads of gate_pending: it
	 * runs cleanup only once the call is counted in the domain. */
	__atomic_fetch_sub(&gate_pending, 1, __ATOMIC_SEQ_CST);
}

static void enter_if(int d)
{
	if (d == VICTIM)
		gate_enter();
}

static void leave_if(int d)
{
	if (d == VICTIM)
		gate_counted();
}

static void chain_point(enum srcu__torture_point p, void *arg)
{
	if (p == SRCU_TORTURE_POINT_UPDATE_ENTERED && arg == &cdom[VICTIM] && my_gate) {
		/* Seq-cst pairs with the CLEANUP_CLOSED check's seq-cst load:
		 * counted here after the library's seq-cst count of the call,
		 * uncounted before its release leave, so a close that sees it
		 * was made while the call was inside. */
		__atomic_fetch_add(&held_inside, 1, __ATOMIC_SEQ_CST);
		gate_counted();
		if (!hook_seed)
			hook_seed = (unsigned int)(uintptr_t)&hook_seed | 1;
		if (rnd(&hook_seed) % 4 == 0) {   /* held inside, for the cleaner */
			sleep_ns(20 * 1000 + rnd(&hook_seed) % 200000);
			__atomic_fetch_add(&chain.held_calls, 1, __ATOMIC_RELAXED);
		}
		__atomic_fetch_sub(&held_inside, 1, __ATOMIC_SEQ_CST);   /* pairs as above */
	} else if (p == SRCU_TORTURE_POINT_CLEANUP_CLOSED && arg == &cdom[VICTIM]) {
		/* Pairs with the seq-cst count above. */
		if (__atomic_load_n(&held_inside, __ATOMIC_SEQ_CST))
			torture_fail("chain: cleanup_srcu_struct() closed chain-2 while a call was "
				     "inside it");
	}
	if (next_point)
		next_point(p, arg);
}

/* ---- objects ---- */

static struct cobj *pop_free(void)
{
	struct cobj *o;

	pthread_mutex_lock(&free_lock);
	o = free_list;
	if (o) {
		free_list = o->next_free;
		nfree--;
	}
	pthread_mutex_unlock(&free_lock);
	return o;
}

static void push_free(struct cobj *o)
{
	pthread_mutex_lock(&free_lock);
	o->next_free = free_list;
	free_list = o;
	nfree++;
	pthread_mutex_unlock(&free_lock);
}

/* Poisoned and marked reused: a reader that still holds it sees either. */
static void poison(struct cobj *o)
{
	__atomic_store_n(&o->magic, MAGIC_POISON, __ATOMIC_RELAXED);
	__atomic_store_n(&o->gen, o->gen + 1, __ATOMIC_RELAXED);
}

/* Publish a free object in slot k; the one it replaces. */
static struct cobj *publish(int k, struct cobj *o)
{
	struct cobj *old = pub[k];   /* only this thread stores slot k */

	__atomic_store_n(&o->gen, o->gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&o->magic, MAGIC_LIVE, __ATOMIC_RELAXED);
	/* Release (srcu_assign_pointer): pairs with the readers'
	 * srcu_dereference(), which see the object's words above. */
	srcu_assign_pointer(pub[k], o);
	return old;
}

static void chain_cb(struct srcu_head *h);

/* Queue o on domain d; o is not touched once queued. */
static void hand_on(struct cobj *o, int d)
{
	o->dom = d;
	o->calls++;
	__atomic_store_n(&o->queued, 1, __ATOMIC_RELAXED);
	o->live_token = live_gp_begin(cb_what[d], -1);
	__atomic_fetch_add(&in_flight, 1, __ATOMIC_RELAXED);
	enter_if(d);
	__atomic_fetch_add(&started[d], 1, __ATOMIC_RELAXED);
	call_srcu(&cdom[d], &o->rh, chain_cb);
	leave_if(d);
	/* Release pairs with the barrier thread's acquire load: a call it
	 * counts returned before its srcu_barrier() began. */
	__atomic_fetch_add(&called[d], 1, __ATOMIC_RELEASE);
}

static void chain_cb(struct srcu_head *h)
{
	struct cobj *o = (struct cobj *)((char *)h - offsetof(struct cobj, rh));
	int d = o->dom;

	live_gp_end(o->live_token);
	if (__atomic_exchange_n(&o->queued, 0, __ATOMIC_RELAXED) != 1)
		torture_fail("chain: a callback on %s ran with nothing queued (twice?)", names[d]);
	if (++o->runs != o->calls)
		torture_fail("chain: object %td's callback on %s ran %lu times for %lu calls",
			     o - cobjs, names[d], o->runs, o->calls);
	__atomic_fetch_add(&chain.callbacks, 1, __ATOMIC_RELAXED);
	if (--o->hops_left > 0) {
		hand_on(o, (d + 1) % NCHAIN);
		__atomic_fetch_add(&chain.handoffs, 1, __ATOMIC_RELAXED);
	} else {
		if (cfg.tool_busted != TOOL_FREEATCALL)
			poison(o);
		__atomic_fetch_add(&chain.chains_done, 1, __ATOMIC_RELAXED);
		push_free(o);
	}
	__atomic_fetch_add(&ran[d], 1, __ATOMIC_RELAXED);
	/* Last, after the hand-on's increment: 0 means nothing queued and no
	 * callback running.  Release pairs with chain_stop()'s acquire. */
	__atomic_fetch_sub(&in_flight, 1, __ATOMIC_RELEASE);
}

/* ---- the threads ---- */

static void *producer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		struct cobj *o = pop_free(), *old;
		int k = (int)(rnd(&seed) % (NSLOTS - 1));

		if (!o) {
			sleep_ns(200 * 1000);
			continue;
		}
		old = publish(k, o);
		old->hops_left = 3 + (int)(rnd(&seed) % 4);
		if (cfg.tool_busted == TOOL_FREEATCALL)
			poison(old);   /* the bug: freed at the call, not in the callback */
		hand_on(old, (int)(rnd(&seed) % NCHAIN));
		__atomic_fetch_add(&chain.calls, 1, __ATOMIC_RELAXED);
		sleep_log_uniform(&seed, 50 * 1000, 500 * 1000);
	}
	return NULL;
}

static void *poller(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		struct cobj *o = pop_free(), *old;
		unsigned long cookie[NCHAIN];
		unsigned int gen = 0;
		int token, left;

		if (!o) {
			sleep_ns(200 * 1000);
			continue;
		}
		old = publish(NSLOTS - 1, o);
		token = live_gp_begin("start_poll_synchronize_srcu() on the chain domains until "
				      "done", -1);
		for (int d = 0; d < NCHAIN; d++) {
			enter_if(d);
			if (d == VICTIM)
				gen = __atomic_load_n(&victim_gen, __ATOMIC_RELAXED);
			cookie[d] = start_poll_synchronize_srcu(&cdom[d]);
			leave_if(d);
		}
		do {
			sleep_ns(50 * 1000 + rnd(&seed) % 250000);
			left = 0;
			for (int d = 0; d < NCHAIN; d++) {
				bool done;

				if (cookie[d] == SRCU_GET_STATE_COMPLETED)
					continue;
				enter_if(d);
				/* A victim cleaned up since: cleanup found no reader
				 * inside and its request done, so the cookie's readers
				 * have all left; the new incarnation's gp_seq is not
				 * the cookie's. */
				done = (d == VICTIM &&
					__atomic_load_n(&victim_gen, __ATOMIC_RELAXED) != gen) ||
				       poll_state_synchronize_srcu(&cdom[d], cookie[d]);
				leave_if(d);
				if (done)
					cookie[d] = SRCU_GET_STATE_COMPLETED;
				else
					left++;
			}
		} while (left);   /* the domains stay live until chain_stop() */
		live_gp_end(token);
		poison(old);
		push_free(old);
		__atomic_fetch_add(&chain.cookies, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void barrier_on(int d)
{
	/* Acquire pairs with hand_on()'s release count. */
	unsigned long before = __atomic_load_n(&called[d], __ATOMIC_ACQUIRE);
	int token = live_gp_begin(bar_what[d], -1);

	srcu_barrier(&cdom[d]);
	live_gp_end(token);
	/* Relaxed: the callbacks' counts were made before srcu_barrier()
	 * returned, which orders them (the library's queue lock). */
	if (__atomic_load_n(&ran[d], __ATOMIC_RELAXED) < before)
		torture_fail("chain: srcu_barrier() on %s returned with callbacks queued before "
			     "it not yet run (%lu run, %lu queued)", names[d],
			     __atomic_load_n(&ran[d], __ATOMIC_RELAXED), before);
	__atomic_fetch_add(&chain.barriers, 1, __ATOMIC_RELAXED);
}

static void *barrier_thread(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		int d = (int)(rnd(&seed) % NCHAIN);

		enter_if(d);
		barrier_on(d);
		leave_if(d);
		sleep_log_uniform(&seed, 200 * 1000, 4 * MS);
	}
	return NULL;
}

static void *chain_reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		int d = (int)(rnd(&seed) % NCHAIN), k = (int)(rnd(&seed) % NSLOTS), idx, token;
		struct cobj *p;
		unsigned int gen0, magic;

		token = live_open(now_ns());
		enter_if(d);
		idx = srcu_read_lock(&cdom[d]);
		if (d == VICTIM)
			__atomic_fetch_add(&readers_inside, 1, __ATOMIC_RELAXED);
		leave_if(d);
		p = srcu_dereference(pub[k], &cdom[d]);
		gen0 = __atomic_load_n(&p->gen, __ATOMIC_RELAXED);
		if (__atomic_load_n(&p->magic, __ATOMIC_RELAXED) != MAGIC_LIVE)
			torture_fail("chain: a reader of %s found a freed object published", names[d]);
		if (rnd(&seed) % 4)
			sleep_log_uniform(&seed, 1000, 2 * MS);
		magic = __atomic_load_n(&p->magic, __ATOMIC_RELAXED);
		if (magic != MAGIC_LIVE || __atomic_load_n(&p->gen, __ATOMIC_RELAXED) != gen0) {
			__atomic_fetch_add(&chain.bad_reads, 1, __ATOMIC_RELAXED);
			torture_fail("chain: a reader of %s found its object %s inside its section",
				     names[d], magic != MAGIC_LIVE ? "freed" : "reused");
		}
		enter_if(d);
		if (d == VICTIM)
			__atomic_fetch_sub(&readers_inside, 1, __ATOMIC_RELAXED);
		srcu_read_unlock(&cdom[d], idx);
		leave_if(d);
		live_close(token);
		__atomic_fetch_add(&chain.reads, 1, __ATOMIC_RELAXED);
		if (rnd(&seed) % 2)
			sleep_ns(rnd(&seed) % 100000);
	}
	return NULL;
}

static void add_stats(struct srcu_struct *sp)
{
	struct srcu_stats st;

	if (srcu_get_stats(sp, &st) == 0) {
		chain.backlog_blocked += st.backlog_blocked;
		chain.backlog_overruns += st.backlog_overruns;
	}
}

static int init_one(int d)
{
	int err = init_srcu_struct_named(&cdom[d], names[d]);

	if (err == 0)
		err = srcu_set_backlog_limit(&cdom[d], limits[d]);
	return err;
}

/* Try cleanup_srcu_struct() on the victim while everything races it. */
static void try_cleanup(void)
{
	int64_t end = now_ns() + GATE_WAIT_NS;
	unsigned long queued;
	struct srcu_stats st;
	int err, readers;

	/* Seq-cst: pairs with gate_enter()'s count-then-load (Dekker). */
	__atomic_store_n(&gate_closed, 1, __ATOMIC_SEQ_CST);
	/* Seq-cst pairs with gate_counted()'s decrement. */
	while (__atomic_load_n(&gate_pending, __ATOMIC_SEQ_CST) && now_ns() < end)
		sleep_ns(10 * 1000);
	if (__atomic_load_n(&gate_pending, __ATOMIC_SEQ_CST)) {
		chain.cleanup_skipped++;
	} else {
		/* Stable now: no reader can lock or unlock the victim. */
		readers = __atomic_load_n(&readers_inside, __ATOMIC_RELAXED);
		if (srcu_get_stats(&cdom[VICTIM], &st) != 0)
			memset(&st, 0, sizeof(st));
		err = cleanup_srcu_struct(&cdom[VICTIM]);
		/* Exact once it returned 0: every call that queued one was
		 * counted in started[] before the gate closed, and the worker
		 * ran every callback (and its count) before cleanup took it. */
		queued = __atomic_load_n(&started[VICTIM], __ATOMIC_RELAXED) -
			 __atomic_load_n(&ran[VICTIM], __ATOMIC_RELAXED);
		if (err == 0) {
			if (readers)
				torture_fail("chain: cleanup_srcu_struct() of chain-2 returned 0 with "
					     "%d readers inside", readers);
			if (queued)
				torture_fail("chain: cleanup_srcu_struct() of chain-2 returned 0 with "
					     "%lu callbacks queued (lost)", queued);
			chain.backlog_blocked += st.backlog_blocked;
			chain.backlog_overruns += st.backlog_overruns;
			__atomic_store_n(&victim_gen, victim_gen + 1, __ATOMIC_RELAXED);
			if (init_one(VICTIM) != 0)
				torture_fail("chain: re-init of chain-2 after its cleanup failed");
			chain.cleanups_ok++;
		} else if (err == -EBUSY) {
			chain.cleanups_busy++;
		} else {
			torture_fail("chain: cleanup_srcu_struct() of chain-2 returned %d", err);
		}
	}
	/* Release pairs with gate_enter()'s acquire wait: the re-init first. */
	__atomic_store_n(&gate_closed, 0, __ATOMIC_RELEASE);
}

static void *cleaner(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		try_cleanup();
		sleep_log_uniform(&seed, 100 * 1000, 2 * MS);
	}
	return NULL;
}

/* ---- start, stop, report ---- */

void chain_setup(void)
{
	unsigned int seed = cfg.seed * 2246822519u + 5;

	if (!seed)
		seed = 1;
	for (int d = 0; d < NCHAIN; d++) {
		limits[d] = 2 + rnd(&seed) % 7;   /* 2..8 */
		if (init_one(d) != 0) {
			torture_fail("chain: init of %s failed", names[d]);
			return;
		}
		srcu_set_stall_timeout(&cdom[d], 0);   /* a deadlock is the oracle's */
	}
	for (int i = 0; i < NCOBJ; i++)
		push_free(&cobjs[i]);
	for (int k = 0; k < NSLOTS; k++)
		publish(k, pop_free());
	next_point = srcu__torture_point;
	srcu__torture_point = chain_point;
	chain_on = true;
}

void chain_start(void)
{
	if (!chain_on)
		return;
	pthread_create(&threads[nthreads++], NULL, producer, (void *)(uintptr_t)(cfg.seed + 31));
	pthread_create(&threads[nthreads++], NULL, poller, (void *)(uintptr_t)(cfg.seed + 32));
	pthread_create(&threads[nthreads++], NULL, barrier_thread, (void *)(uintptr_t)(cfg.seed + 33));
	pthread_create(&threads[nthreads++], NULL, cleaner, (void *)(uintptr_t)(cfg.seed + 34));
	for (int i = 0; i < 2; i++)
		pthread_create(&threads[nthreads++], NULL, chain_reader,
			       (void *)(uintptr_t)(cfg.seed + 35 + i));
}

/* After torture_stop(): join, drain with barriers, account, clean up. */
void chain_stop(void)
{
	unsigned long calls = 0, runs = 0;
	int rounds, back;

	if (!chain_on)
		return;
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	nthreads = 0;
	/* Each round runs at least one more hop of every chain in flight. */
	for (rounds = 0; rounds < 64; rounds++) {
		for (int d = 0; d < NCHAIN; d++)
			barrier_on(d);
		/* Acquire pairs with chain_cb()'s release decrement: the last
		 * callbacks' writes to their objects, read below. */
		if (!__atomic_load_n(&in_flight, __ATOMIC_ACQUIRE))
			break;
	}
	chain.drain_rounds = (unsigned long)rounds + 1;
	if (rounds == 64) {
		torture_fail("chain: callbacks still queued after 64 rounds of srcu_barrier() on "
			     "every chain domain");
		return;   /* the domains are left as they are: a callback may still run */
	}
	pthread_mutex_lock(&free_lock);
	back = nfree + NSLOTS;
	pthread_mutex_unlock(&free_lock);
	for (int i = 0; i < NCOBJ; i++) {
		calls += cobjs[i].calls;
		runs += cobjs[i].runs;
		if (cobjs[i].calls != cobjs[i].runs || __atomic_load_n(&cobjs[i].queued,
									__ATOMIC_RELAXED))
			torture_fail("chain: object %d: %lu calls, %lu callbacks run", i,
				     cobjs[i].calls, cobjs[i].runs);
	}
	if (calls != runs || back != NCOBJ)
		torture_fail("chain: after the drain %lu calls, %lu callbacks run, %d of %d objects "
			     "back", calls, runs, back, NCOBJ);
	chain.hops = calls;
	for (int d = 0; d < NCHAIN; d++) {
		int err;

		add_stats(&cdom[d]);
		err = cleanup_srcu_struct(&cdom[d]);
		if (err)
			torture_fail("chain: cleanup_srcu_struct() of idle %s returned %d", names[d], err);
	}
	chain_on = false;   /* chain_point stays installed: it passes other domains on */
}

void chain_report(void)
{
	printf("chain: %lu objects through call_srcu() chains (%lu callbacks run, %lu handed "
	       "on by callbacks), %lu done; %lu polled cookies; %lu srcu_barrier(); %lu reads; "
	       "limits %lu/%lu/%lu: %lu calls waited for room, %lu went past; chain-2 "
	       "cleanups: %lu succeeded (re-init), %lu -EBUSY, %lu skipped, %lu calls held "
	       "inside; drained in %lu rounds\n",
	       chain.calls, chain.callbacks, chain.handoffs, chain.chains_done, chain.cookies,
	       chain.barriers, chain.reads, limits[0], limits[1], limits[2], chain.backlog_blocked,
	       chain.backlog_overruns, chain.cleanups_ok, chain.cleanups_busy,
	       chain.cleanup_skipped, chain.held_calls, chain.drain_rounds);
}

void chain_json(FILE *f)
{
	fprintf(f, "  \"chain\": {\"objects\": %lu, \"hops\": %lu, \"handoffs\": %lu, "
		"\"chains_done\": %lu, \"callbacks\": %lu, \"cookies\": %lu, \"barriers\": %lu, "
		"\"reads\": %lu, \"bad_reads\": %lu, \"limits\": [%lu, %lu, %lu], "
		"\"backlog_blocked\": %lu, \"backlog_overruns\": %lu, \"cleanups_ok\": %lu, "
		"\"cleanups_busy\": %lu, \"cleanups_skipped\": %lu, \"held_calls\": %lu, "
		"\"drain_rounds\": %lu},\n",
		chain.calls, chain.hops, chain.handoffs, chain.chains_done, chain.callbacks,
		chain.cookies, chain.barriers, chain.reads, chain.bad_reads, limits[0], limits[1],
		limits[2], chain.backlog_blocked, chain.backlog_overruns, chain.cleanups_ok,
		chain.cleanups_busy, chain.cleanup_skipped, chain.held_calls, chain.drain_rounds);
}
