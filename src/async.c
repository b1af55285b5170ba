/*
 * async.c: call_srcu() and srcu_barrier(), with a bounded backlog,
 * start_poll_synchronize_srcu(), and the worker that runs the grace
 * periods both need.
 *
 * Each domain that uses them gets a worker thread, started on first use,
 * stopped by cleanup_srcu_struct(): one thread per domain keeps a slow
 * reader of one domain from delaying another domain's callbacks.  The
 * worker gathers callbacks for up to 1 ms (GATHER_NS), takes every queued
 * callback at once, waits for one grace period
 * that begins after it took them (a normal synchronize, so it shares GPs
 * with the domain's other updaters), and runs them in the order queued.
 *
 * Backpressure: while the backlog (queued and not yet run) is at the
 * domain's limit, call_srcu() waits for room.  Two callers never wait:
 * a thread that runs callbacks (any domain's worker, or a caller running
 * one inline), since room in one domain may need another domain's worker
 * to finish its batch (two domains whose callbacks feed each other); and
 * a thread that may be inside a section of the domain (its own sections,
 * or any srcu_down_read() or up/down section open, which belong to no
 * thread), since room needs a GP that would wait for it.  Their calls go
 * past the limit and are counted as overruns (doc/design.md, "Bound").
 *
 * Locking: a->lock protects everything in struct srcu__async but ->cursor;
 * callbacks run without it.  A domain's async pointer is installed and
 * removed under the registry lock, so that fork() (which holds the
 * registry lock) sees every live async's lock and none that cleanup is
 * freeing.  Every entry point that may create the state or start a worker
 * (call_srcu(), start_poll_synchronize_srcu(), srcu_barrier(), and
 * srcu_set_backlog_limit() and srcu_get_stats(), which lock it) is counted
 * in the domain (srcu__gp_enter()), and cleanup frees it only with the
 * domain closed to them: none holds the pointer or can start a worker.
 *
 * fork(): the child has no worker.  A batch the parent's worker had taken
 * goes back to the child's queue from ->cursor on: the callbacks that had
 * run in the parent are done in the child's memory too and must not run
 * again, and the one that was running at the fork is left unrun (its
 * thread vanished part-way through it; running it again could free twice).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

struct srcu__async {
	pthread_mutex_t lock;
	pthread_cond_t work;            /* the worker: something to do */
	pthread_cond_t room;            /* callers: backlog shrank, barrier done */
	struct srcu_head *head, **tail; /* queued, not yet taken */
	struct srcu_head *batch;        /* taken, waiting for its GP or running */
	struct srcu_head *cursor;       /* the batch's next callback not yet
					 * started; the worker stores it
					 * unlocked (for the fork child) */
	unsigned long backlog;          /* queued + taken, not yet run */
	unsigned long queued, invoked, blocked, overruns;
	pthread_t worker;
	bool running, stop;
	bool in_gp;                     /* the worker waits for a GP, unlocked */
	bool urgent;                    /* srcu_barrier() waits: no gathering */
	/* The furthest cookie of this process's start_poll_synchronize_srcu()
	 * (for a shared domain gp_seq_needed, in the file, holds every
	 * process's requests, which are theirs to serve). */
	bool poll_pending;
	unsigned long poll_needed;
};

/* Gathering: the worker lets callbacks accumulate for up to GATHER_NS
 * after the first of a batch arrives, or until half the backlog limit is
 * queued, before it starts a grace period for them.  Each grace period
 * interrupts every running thread (membarrier), the callers' included: a
 * producer that ran a GP per few dozen callbacks spent its time in those
 * interrupts (doc/design.md, "Gathering callbacks"). */
#define GATHER_NS (1000 * 1000L)

/* The domain whose worker this thread is, if any. */
static __thread struct srcu_struct *worker_of;
/* This thread runs callbacks (a worker, or call_inline()): it never waits
 * for backlog room, in any domain. */
static __thread unsigned int runs_callbacks;

/* A shared domain's private area is in its file, the same bytes in every
 * process: a pointer there would mean another thing in each. */
static struct srcu__async *shared_async[SRCU__SHARED_BLOCKS];

/* Where sp's call_srcu() state hangs: in the domain, or for a shared
 * domain in this process. */
static struct srcu__async **async_slot(struct srcu_struct *sp)
{
	unsigned int id = srcu__id_of(sp);

	if (srcu__id_shared(id))
		return &shared_async[srcu__shm_block(id)];
	return &srcu__dom(sp)->async;
}

static struct srcu__async *async_of(struct srcu_struct *sp)
{
	return load_acquire(async_slot(sp));
}

bool srcu__async_active(struct srcu_struct *sp)
{
	return async_of(sp) != NULL;
}

/* The worker's condition variable times its gathering on CLOCK_MONOTONIC
 * (gather_callbacks()); a fork child makes it anew the same way. */
static void init_work_cond(struct srcu__async *a)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&a->work, &ca);
	pthread_condattr_destroy(&ca);
}

/* sp's async state, made now unless another thread did; NULL if out of
 * memory. */
static struct srcu__async *async_create(struct srcu_struct *sp)
{
	struct srcu__async *a;

	pthread_mutex_lock(&srcu__domain_registry_lock);
	a = *async_slot(sp);
	if (!a && (a = calloc(1, sizeof(*a))) != NULL) {
		pthread_mutex_init(&a->lock, NULL);
		init_work_cond(a);
		pthread_cond_init(&a->room, NULL);
		a->tail = &a->head;
		srcu__vg_quiet(&a->cursor, sizeof(a->cursor));   /* read by a fork child */
		store_release(async_slot(sp), a);   /* pairs with async_of() */
	}
	pthread_mutex_unlock(&srcu__domain_registry_lock);
	return a;
}

/* sp's async state, created on first use; NULL if out of memory.  The
 * caller is counted in sp (srcu__gp_enter()), so cleanup cannot free it
 * until the caller leaves. */
static struct srcu__async *async_get(struct srcu_struct *sp)
{
	struct srcu__async *a = async_of(sp);

	if (!a)
		a = async_create(sp);
	if (a)
		SRCU__TORTURE_POINT(ASYNC_GOT, sp);
	return a;
}

static unsigned long backlog_limit(struct srcu_struct *sp)
{
	unsigned long l = load_relaxed(&srcu__dom(sp)->backlog_limit);

	return l ? l : SRCU_BACKLOG_DEFAULT;
}

/* ---- the worker ---- */

static bool is_barrier(struct srcu_head *h);
static void barrier_complete(struct srcu_head *h);

/* Run the batch's callbacks in order; its srcu_barrier() entries are
 * set aside on *barriers, completed once the batch is accounted for. */
static unsigned long run_batch(struct srcu__async *a, struct srcu_head *h,
			       struct srcu_head **barriers)
{
	unsigned long n = 0;

	while (h) {
		struct srcu_head *next = h->next;   /* func may free h */

		/* Before h starts: a fork from now on leaves h unrun in the
		 * child (a single store, seen whole by the child's copy).  An
		 * acquire RMW: h's own stores (its frees) cannot reach memory
		 * before the cursor on weakly ordered CPUs. */
		(void)__atomic_exchange_n(&a->cursor, next, __ATOMIC_ACQ_REL);
		if (is_barrier(h)) {
			h->next = *barriers;
			*barriers = h;
		} else {
			n++;
			h->func(h);
		}
		h = next;
	}
	return n;
}

/* One round: every queued callback after one GP.  Called and returns with
 * a->lock held. */
static void serve_callbacks(struct srcu_struct *sp, struct srcu__async *a)
{
	unsigned long n, taken = a->backlog;   /* no batch yet: all are queued */
	struct srcu_head *h, *barriers = NULL;

	a->batch = a->head;
	a->cursor = a->batch;
	a->head = NULL;
	a->tail = &a->head;
	a->in_gp = true;
	pthread_mutex_unlock(&a->lock);
	/* A GP that begins after the take: every callback taken was queued
	 * before it, and the wait's final fence orders them after it. */
	if (!SRCU__BUSTED(CBNOWAIT))
		srcu__gp_wait_seq(sp, srcu__gp_snap(sp));
	n = run_batch(a, a->batch, &barriers);
	pthread_mutex_lock(&a->lock);
	a->in_gp = false;
	a->batch = NULL;
	a->invoked += n;
	a->backlog -= taken;
	while (barriers) {
		h = barriers;
		barriers = h->next;
		barrier_complete(h);
	}
	pthread_cond_broadcast(&a->room);
}

/* Enough callbacks queued to start their grace period at once. */
static bool batch_full(struct srcu_struct *sp, struct srcu__async *a)
{
	return a->backlog >= backlog_limit(sp) / 2;
}

/* Let callbacks accumulate (see GATHER_NS).  Caller holds a->lock; the
 * callers signal work when the batch fills or srcu_barrier() waits. */
static void gather_callbacks(struct srcu_struct *sp, struct srcu__async *a)
{
	int64_t until = srcu__backend_now_ns() + GATHER_NS;
	struct timespec ts = { (time_t)(until / 1000000000), (long)(until % 1000000000) };

	while (!a->urgent && !a->stop && !batch_full(sp, a) &&
	       srcu__backend_now_ns() < until)
		pthread_cond_timedwait(&a->work, &a->lock, &ts);
	a->urgent = false;
}

/* A polled GP the worker must see run (caller holds a->lock): for a
 * private domain any request; for a shared one this process's own.  *s:
 * the gp_seq to wait for. */
static bool poll_needed(struct srcu_struct *sp, struct srcu__async *a, unsigned long *s)
{
	if (!srcu__id_shared(srcu__id_of(sp))) {
		*s = load_acquire(&srcu__dom(sp)->gp_seq_needed);
		return srcu__gp_needed(sp);
	}
	if (a->poll_pending && srcu__gp_cookie_done(sp, a->poll_needed))
		a->poll_pending = false;
	*s = a->poll_needed;
	return a->poll_pending;
}

static void *worker_main(void *arg)
{
	struct srcu_struct *sp = arg;
	struct srcu__async *a = async_of(sp);

	worker_of = sp;
	runs_callbacks = 1;
	pthread_setname_np(pthread_self(), "srcu-callbacks");
	pthread_mutex_lock(&a->lock);
	for (;;) {
		unsigned long s;

		if (a->head) {
			/* The busted flavour runs callbacks without a GP; a
			 * gathering delay would hide that behind most sections'
			 * lengths, so it does not gather. */
			if (!SRCU__BUSTED(CBNOWAIT))
				gather_callbacks(sp, a);
			serve_callbacks(sp, a);
		} else if (!a->stop && poll_needed(sp, a, &s)) {
			/* start_poll_synchronize_srcu() asked for a GP. */
			a->in_gp = true;
			pthread_mutex_unlock(&a->lock);
			srcu__gp_wait_seq(sp, s);
			pthread_mutex_lock(&a->lock);
			a->in_gp = false;
		} else if (a->stop) {
			break;
		} else {
			pthread_cond_wait(&a->work, &a->lock);
		}
	}
	a->running = false;
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* Start the worker if it is not running.  Caller holds a->lock. */
static bool worker_ensure(struct srcu_struct *sp, struct srcu__async *a)
{
	if (a->running)
		return true;
	a->stop = false;
	if (pthread_create(&a->worker, NULL, worker_main, sp) != 0)
		return false;
	a->running = true;
	return true;
}

/* Queue h for the worker, starting it if need be; false, with nothing
 * queued, when no worker thread can be started.  Caller holds a->lock. */
static bool enqueue(struct srcu_struct *sp, struct srcu__async *a, struct srcu_head *h)
{
	bool first = !a->head;

	if (!worker_ensure(sp, a))
		return false;
	*a->tail = h;
	a->tail = &h->next;
	a->backlog++;
	/* The worker sleeps for work, or gathers until the batch is full:
	 * other calls have nothing new to tell it. */
	if (first || batch_full(sp, a) || a->urgent)
		pthread_cond_signal(&a->work);
	return true;
}

/* Start the worker if needed and tell it to look for work.  Never blocks
 * (start_poll_synchronize_srcu() may run inside a read-side section).
 * Without memory or a thread for a worker the request stays in
 * gp_seq_needed: the next synchronize_srcu() on the domain, or a later
 * kick that starts the worker, runs it. */
static void async_kick(struct srcu_struct *sp, unsigned long s)
{
	struct srcu__async *a = async_get(sp);

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	if (!a->poll_pending || ULONG_CMP_LT(a->poll_needed, s))
		a->poll_needed = s;
	a->poll_pending = true;
	if (worker_ensure(sp, a))
		pthread_cond_signal(&a->work);
	pthread_mutex_unlock(&a->lock);
}

/* ---- start_poll_synchronize_srcu ---- */

unsigned long start_poll_synchronize_srcu(struct srcu_struct *sp)
{
	unsigned long s;

	srcu__gp_enter(sp, "start_poll_synchronize_srcu");
	s = srcu__gp_snap(sp);
	srcu__gp_request(sp, s);
	async_kick(sp, s);   /* the worker runs the GP if no updater does */
	srcu__gp_leave(sp);
	return s;
}

/* ---- call_srcu ---- */

static SRCU__NORETURN void report_self_wait(struct srcu_struct *sp, const char *who,
					    const char *why)
{
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];

	srcu__report_fatal("%s() called by %s %s of domain %s: it would wait for itself forever",
		    who, srcu__report_thread(t, sizeof(t)), why, srcu__report_name(sp, n, sizeof(n)));
}

/* Caller may not wait for sp's callbacks: it would wait for itself. */
static bool must_not_wait(struct srcu_struct *sp)
{
	return worker_of == sp || srcu__reader_self_inside(sp);
}

/* May the caller wait for room in sp's backlog?  Not if it runs
 * callbacks: room in sp may need the batch it is running, or another
 * domain's worker that waits for room in its own domain in turn.  Nor if
 * it may be inside a section of sp: room needs a GP.  Asked only at the
 * limit (an up/down domain's sums walk every thread's record). */
static bool may_wait_for_room(struct srcu_struct *sp)
{
	return !runs_callbacks && !srcu__reader_maybe_inside(sp);
}

/* Without memory or a thread for a worker: the callback runs here, after
 * a GP, if the caller may wait for one. */
static void call_inline(struct srcu_struct *sp, struct srcu_head *head)
{
	if (must_not_wait(sp))
		report_self_wait(sp, "call_srcu", "(no worker thread could be started) inside a "
				 "read-side section or callback");
	synchronize_srcu(sp);
	runs_callbacks++;
	head->func(head);
	runs_callbacks--;
}

/* call_srcu() once counted in sp (srcu__gp_enter()). */
static void queue_callback(struct srcu_struct *sp, struct srcu_head *head)
{
	struct srcu__async *a = async_get(sp);

	if (!a) {
		call_inline(sp, head);
		return;
	}
	pthread_mutex_lock(&a->lock);
	if (a->backlog >= backlog_limit(sp)) {
		if (may_wait_for_room(sp)) {
			a->blocked++;
			while (a->backlog >= backlog_limit(sp) && a->running)
				pthread_cond_wait(&a->room, &a->lock);
		} else {
			a->overruns++;
		}
	}
	if (!enqueue(sp, a, head)) {
		pthread_mutex_unlock(&a->lock);
		call_inline(sp, head);
		return;
	}
	a->queued++;
	pthread_mutex_unlock(&a->lock);
}

void call_srcu(struct srcu_struct *sp, struct srcu_head *head,
	       void (*func)(struct srcu_head *head))
{
	if (!sp || !head || !func)
		srcu__report_fatal("call_srcu() called with a NULL %s",
			    !sp ? "domain" : !head ? "srcu_head" : "callback");
	srcu__gp_enter(sp, "call_srcu");
	head->func = func;
	head->next = NULL;
	queue_callback(sp, head);
	srcu__gp_leave(sp);
}

/* ---- srcu_barrier ---- */

/* A srcu_barrier() call's entry, on its caller's stack.  The caller
 * sleeps on done as a futex, not on a->room: a fork child (made by a
 * signal handler of the caller, say) re-makes a->room, which would
 * strand a thread asleep on the old one. */
struct barrier {
	struct srcu_head head;
	unsigned int done;              /* under a->lock; the caller's futex */
	struct srcu_struct *sp;
	struct barrier *outer;          /* the caller's next barrier out */
};

/* The srcu_barrier() calls this thread waits in, innermost first (a signal
 * handler may wait in another): a fork child, whose only thread is the
 * forking one, keeps these entries and drops the other threads'. */
static __thread struct barrier *my_barriers;

/* Never called: marks a barrier entry in the queue. */
static void barrier_mark(struct srcu_head *h)
{
	(void)h;
}

static bool is_barrier(struct srcu_head *h)
{
	return h->func == barrier_mark;
}

/* Caller holds a->lock: the waiter re-checks done under it before it
 * returns, so its stack frame outlives this wake. */
static void barrier_complete(struct srcu_head *h)
{
	struct barrier *b = (struct barrier *)h;

	store_relaxed(&b->done, 1);   /* the lock orders it; the futex reads it */
	srcu__backend_futex_wake(&b->done, 1, false);
}

static bool is_mine(struct srcu_head *h)
{
	for (struct barrier *b = my_barriers; b; b = b->outer)
		if (&b->head == h)
			return true;
	return false;
}

/* srcu_barrier() once counted in sp (srcu__gp_enter()). */
static void barrier_wait(struct srcu_struct *sp)
{
	struct barrier b = { { NULL, barrier_mark }, 0, sp, NULL };
	struct srcu__async *a;

	/* Always, not only when callbacks are pending: the same call waits
	 * for itself whenever one is (a latent deadlock; doc/api.md). */
	if (must_not_wait(sp))
		report_self_wait(sp, "srcu_barrier", "inside a read-side section or callback");
	a = async_of(sp);
	if (!a)
		return;   /* call_srcu() was never called on sp */
	pthread_mutex_lock(&a->lock);
	if (!a->head && !a->batch) {
		pthread_mutex_unlock(&a->lock);
		return;
	}
	/* Queued last, run last: every callback queued before has run. */
	a->urgent = true;
	if (!enqueue(sp, a, &b.head)) {
		char n[SRCU__NAME_LEN];

		srcu__report_fatal("srcu_barrier(): no worker thread could be started for domain %s",
			    srcu__report_name(sp, n, sizeof(n)));
	}
	b.outer = my_barriers;
	my_barriers = &b;
	while (!load_relaxed(&b.done)) {
		pthread_mutex_unlock(&a->lock);
		(void)srcu__backend_futex_wait(&b.done, 0, -1, false);
		pthread_mutex_lock(&a->lock);
	}
	my_barriers = b.outer;
	pthread_mutex_unlock(&a->lock);
}

void srcu_barrier(struct srcu_struct *sp)
{
	srcu__gp_enter(sp, "srcu_barrier");
	barrier_wait(sp);
	srcu__gp_leave(sp);
}

int srcu_set_backlog_limit(struct srcu_struct *sp, unsigned long limit)
{
	struct srcu__async *a;

	if (!sp)
		return -EINVAL;
	srcu__gp_enter(sp, "srcu_set_backlog_limit");   /* a live async */
	store_relaxed(&srcu__dom(sp)->backlog_limit, limit);
	a = async_of(sp);
	if (a) {   /* a raised limit lets waiting callers in */
		pthread_mutex_lock(&a->lock);
		pthread_cond_broadcast(&a->room);
		pthread_mutex_unlock(&a->lock);
	}
	srcu__gp_leave(sp);
	return 0;
}

/* ---- lifetime ---- */

/* A polled request this process must still serve (caller holds a->lock). */
static bool own_gp_needed(struct srcu_struct *sp, struct srcu__async *a)
{
	unsigned long s;

	return poll_needed(sp, a, &s);
}

/*
 * The caller (cleanup, detach) holds sp closed: no call_srcu(),
 * start_poll_synchronize_srcu() or srcu_barrier() is inside, and none can
 * enter, so nothing can queue, request a GP, or start a worker until the
 * verdict.  Only the worker and its callbacks still run.  Idle, it is
 * stopped and joined here: it reads stop before any new GP, and nothing
 * it does waits for the closed word (its bookkeeping is uncounted, and a
 * callback that calls in keeps the backlog non-zero: -EBUSY first).
 */
int srcu__async_cleanup(struct srcu_struct *sp)
{
	struct srcu__async *a = async_of(sp);

	/* Its worker, and whoever holds its lock, may be the parent's. */
	srcu__gp_check_forked(sp, "cleanup_srcu_struct()");
	if (!a)
		return 0;
	pthread_mutex_lock(&a->lock);
	/* A worker whose requested GP has ended is about to go idle. */
	while (a->in_gp && !a->backlog && !own_gp_needed(sp, a)) {
		pthread_mutex_unlock(&a->lock);
		sched_yield();
		pthread_mutex_lock(&a->lock);
	}
	/* Callbacks pending, a GP the worker waits for (a reader is inside),
	 * a callback cleaning up its own domain, or a start_poll request the
	 * worker has not yet taken up: the worker stays to run it, as the
	 * cookie's owner will poll for it (and the domain stays live). */
	if (a->backlog || a->in_gp || worker_of == sp || own_gp_needed(sp, a)) {
		/* Make sure someone works on it (a fork child has callbacks
		 * but no worker until it calls call_srcu or srcu_barrier). */
		if ((a->backlog || own_gp_needed(sp, a)) && worker_ensure(sp, a))
			pthread_cond_signal(&a->work);
		pthread_mutex_unlock(&a->lock);
		return -EBUSY;
	}
	if (a->running) {
		a->stop = true;
		pthread_cond_signal(&a->work);
		pthread_mutex_unlock(&a->lock);
		pthread_join(a->worker, NULL);
	} else {
		pthread_mutex_unlock(&a->lock);
	}
	/* Under the registry lock: a fork_prepare() that read the pointer
	 * before this has it locked until fork_parent(), and one after it
	 * sees NULL, so none locks a freed async. */
	pthread_mutex_lock(&srcu__domain_registry_lock);
	store_release(async_slot(sp), NULL);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
	pthread_cond_destroy(&a->work);
	pthread_cond_destroy(&a->room);
	pthread_mutex_destroy(&a->lock);
	free(a);
	return 0;
}

/* Caller holds the registry lock, so the async cannot be freed here. */
void srcu__async_fork_prepare(struct srcu_struct *sp)
{
	struct srcu__async *a = *async_slot(sp);

	SRCU__TORTURE_POINT(FORK_PREPARE, a);
	if (a)
		pthread_mutex_lock(&a->lock);
}

void srcu__async_fork_parent(struct srcu_struct *sp)
{
	struct srcu__async *a = *async_slot(sp);

	if (a)
		pthread_mutex_unlock(&a->lock);
}

/* The child's queue: the unstarted rest of a taken batch (from the
 * cursor), then the queued callbacks; srcu_barrier() entries dropped,
 * since the threads waiting on them are not in the child, but the
 * forking thread's own (it forked from a signal handler while it
 * waited).  Sets the backlog to what is left. */
static void requeue_in_child(struct srcu__async *a)
{
	struct srcu_head *h = a->batch ? load_relaxed(&a->cursor) : NULL;
	struct srcu_head *queued = a->head, *next;

	a->head = NULL;
	a->tail = &a->head;
	a->backlog = 0;
	for (int part = 0; part < 2; part++, h = queued) {
		for (; h; h = next) {
			next = h->next;
			if (is_barrier(h) && !is_mine(h))
				continue;
			h->next = NULL;
			*a->tail = h;
			a->tail = &h->next;
			a->backlog++;
		}
	}
	a->batch = a->cursor = NULL;
}

/* A private domain's polled request that the parent's worker had yet to
 * run: srcu__gp_fork_child() dropped gp_seq_needed with the parent's
 * other waiters, but a cookie from start_poll_synchronize_srcu() is in
 * the child's memory too and must complete there, though the child may
 * only poll it (and polls start nothing: they are async-signal-safe).
 * poll_needed is the furthest of them: asked again, and a worker started
 * for it.  Caller holds a->lock (the worker waits for it). */
static void readopt_poll(struct srcu_struct *sp, struct srcu__async *a)
{
	if (!a->poll_pending)
		return;
	srcu__gp_request(sp, a->poll_needed);   /* no-op for a cookie done */
	if (srcu__gp_needed(sp))
		(void)worker_ensure(sp, a);   /* without a thread: as async_kick() */
}

/* The forking thread waits in srcu_barrier() on sp (its signal handler
 * forked): an entry of its still queued is served by a worker started
 * now; one the parent's worker had passed (every callback before it had
 * run) or the child dropped (a shared domain's: the parent runs those) is
 * done.  Caller holds a->lock. */
static void readopt_barriers(struct srcu_struct *sp, struct srcu__async *a)
{
	bool any = false;

	for (struct barrier *b = my_barriers; b; b = b->outer) {
		bool queued = false;

		if (b->sp != sp || b->done)
			continue;
		for (struct srcu_head *h = a->head; h && !queued; h = h->next)
			queued = h == &b->head;
		if (!queued)
			b->done = 1;   /* no wake needed: its thread is this one */
		any |= queued;
	}
	if (any) {
		a->urgent = true;
		if (!worker_ensure(sp, a))
			srcu__report_fatal("fork() child: no worker thread could be started "
				    "for the srcu_barrier() that the forking thread waits in");
	}
}

/* The child has no worker: what is left goes on its queue, and the next
 * call_srcu() or srcu_barrier() in the child starts a worker for it (a
 * pending polled request, or the forking thread's own srcu_barrier(),
 * starts one at once).  The parent's worker may have been waiting for a
 * GP: not the child's. */
void srcu__async_fork_child(struct srcu_struct *sp)
{
	struct srcu__async *a = *async_slot(sp);

	if (!a)
		return;
	/* A callback that called fork() is the child's only thread, this
	 * domain's worker, and goes on with its batch where it was.  A shared
	 * domain's callbacks free shared objects: the parent runs them, so
	 * the child drops its copies (doc/shared.md). */
	if (worker_of != sp && srcu__id_shared(srcu__id_of(sp))) {
		a->head = a->batch = a->cursor = NULL;
		a->tail = &a->head;
		a->backlog = 0;
		a->in_gp = false;
		a->running = false;
	} else if (worker_of != sp) {
		requeue_in_child(a);
		a->in_gp = false;
		a->running = false;
		readopt_poll(sp, a);
	}
	readopt_barriers(sp, a);
	/* Waiters on these lived in other threads, gone with them. */
	init_work_cond(a);
	pthread_cond_init(&a->room, NULL);
	pthread_mutex_unlock(&a->lock);
}

void srcu__async_stats(struct srcu_struct *sp, struct srcu_stats *st)
{
	struct srcu__async *a;

	srcu__gp_enter(sp, "srcu_get_stats");   /* a live async */
	a = async_of(sp);
	if (a) {
		pthread_mutex_lock(&a->lock);
		st->callbacks_queued = a->queued;
		st->callbacks_invoked = a->invoked;
		st->backlog = a->backlog;
		st->backlog_blocked = a->blocked;
		st->backlog_overruns = a->overruns;
		pthread_mutex_unlock(&a->lock);
	}
	srcu__gp_leave(sp);
}
