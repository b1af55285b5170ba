/*
 * srcu_urcu.c: libsrcu-urcu, the liburcu flavour on libsrcu domains and
 * the out-of-line half of liburcu's names (include/srcu_urcu.h).
 *
 * A library of its own, above libsrcu: it calls only libsrcu's public API
 * and needs liburcu's headers, not its libraries.  Everything it offers
 * maps onto one domain's grace periods and its call_srcu() worker; the
 * call_rcu data API keeps liburcu's shape (handles to create, set, get
 * and free) over that one worker.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <srcu_urcu.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

DEFINE_SRCU(srcu_urcu_domain);
static void learn_worker(void);
__thread unsigned long srcu_urcu_state SRCU__TLS_FAST;

/* call_rcu() hands liburcu's rcu_head to call_srcu() as a srcu_head: the
 * same two words, the link first and the callback second, and a callback
 * that takes a pointer to the head.  The link's type differs (liburcu's
 * wait-free queue node is one pointer); call_srcu() writes it before it
 * reads it. */
_Static_assert(sizeof(struct rcu_head) == sizeof(struct srcu_head),
	       "struct rcu_head and struct srcu_head differ in size");
_Static_assert(offsetof(struct rcu_head, func) == offsetof(struct srcu_head, func),
	       "struct rcu_head and struct srcu_head differ in layout");

void srcu_urcu_call(struct srcu_struct *sp, struct rcu_head *head,
		    void (*func)(struct rcu_head *head))
{
	/* The callback is called as void (*)(struct srcu_head *) with the
	 * same address it was given: one pointer argument either way. */
	call_srcu(sp, (struct srcu_head *)(void *)head,
		  (void (*)(struct srcu_head *))(void (*)(void))func);
}

/* ---- liburcu's out-of-line pointer calls ----
 *
 * Without _LGPL_SOURCE, liburcu's rcu_dereference() and friends (from its
 * own urcu/pointer.h) call these; liburcu's flavour libraries define them,
 * so a program leaving -lurcu-memb for -lsrcu-urcu needs them here. */

void *rcu_dereference_sym(void *p)
{
	/* Pairs with the release in rcu_set_pointer_sym(): what the
	 * publisher wrote before it is seen through p, ordered by the
	 * address dependency on every CPU but Alpha (as liburcu's own).
	 * The compiler must not guess p's value from elsewhere. */
	srcu__barrier();
	return p;
}

void *rcu_set_pointer_sym(void **p, void *v)
{
	/* Pairs with the acquire in rcu_dereference_sym(). */
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
	return v;
}

/*
 * A full fence on one side of a read-modify-write that liburcu documents
 * as a full barrier (rcu_xchg_pointer(), rcu_cmpxchg_pointer(), like its
 * uatomic_xchg() and uatomic_cmpxchg()): every access before the call is
 * ordered before every access after it, as with cmm_smp_mb() on both
 * sides.  A seq-cst RMW alone is not that: C11 orders it only against
 * other seq-cst operations and fences, and on ARMv8.0 without LSE it is
 * an LDAXR/STLXR loop, after which a later load may be satisfied before
 * an earlier store (to another location) is visible: the store-buffering
 * outcome that a caller's "store x; xchg p; load y" against another
 * thread's "store y; fence; load x" must not see (model/litmus/
 * urcu-xchg*.litmus).  So each side gets a seq-cst fence (dmb ish on
 * arm64, sync on POWER), as Linux's fully ordered xchg() has.  On x86 the
 * locked instruction is a full fence already: only the compiler is kept
 * from moving accesses across it.
 */
static inline void full_fence_around_rmw(void)
{
#if defined(__x86_64__) || defined(__i386__)
	srcu__barrier();
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

void *rcu_xchg_pointer_sym(void **p, void *v)
{
	void *old;

	/* Before: the caller's earlier accesses (the object's initialization
	 * above all) before the exchange and all that follows it; pairs
	 * with the reader's address dependency (rcu_dereference()) and with
	 * any full fence of another thread (the store-buffering shape). */
	full_fence_around_rmw();
	old = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
	/* After: the exchange and everything before it before the caller's
	 * later accesses (a later load of another location included); pairs
	 * as the fence before. */
	full_fence_around_rmw();
	return old;
}

void *rcu_cmpxchg_pointer_sym(void **p, void *old, void *_new)
{
	/* Before and after, as in rcu_xchg_pointer_sym(); liburcu's
	 * cmpxchg is a full barrier whether or not it succeeds. */
	full_fence_around_rmw();
	__atomic_compare_exchange_n(p, &old, _new, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	full_fence_around_rmw();
	return old;
}

/* ---- defer_rcu() ---- */

struct deferred {
	struct srcu_head head;
	void (*fct)(void *p);
	void *p;
};

static void run_deferred(struct srcu_head *head)
{
	struct deferred *d = (struct deferred *)head;

	d->fct(d->p);
	free(d);
}

/* liburcu queues defer_rcu() per thread and runs a grace period itself
 * when the queue fills; here the domain's worker does both.  Without
 * memory for the node, wait for a grace period here, as liburcu does when
 * its queue is full (which makes a call inside one's own section fail
 * loudly, as it deadlocks in liburcu). */
void srcu_urcu_defer(struct srcu_struct *sp, void (*fct)(void *p), void *p)
{
	struct deferred *d = malloc(sizeof(*d));

	if (!d) {
		synchronize_srcu(sp);
		fct(p);
		return;
	}
	d->fct = fct;
	d->p = p;
	call_srcu(sp, &d->head, run_deferred);
}

void srcu_urcu_nothing(void)
{
}

/* rcu_read_unlock() (or a flavour's read_unlock) without its lock in this
 * thread: libsrcu's format, then abort, as libsrcu's own misuse does. */
void srcu_urcu_unbalanced(struct srcu_struct *sp)
{
	/* Acquire: pairs with the release in srcu_set_name(). */
	const char *name = __atomic_load_n(&sp->name, __ATOMIC_ACQUIRE);

	if (name)
		fprintf(stderr, "libsrcu: fatal: rcu_read_unlock() without rcu_read_lock() "
			"on domain '%s' (liburcu flavour, srcu_urcu.h)\n", name);
	else
		fprintf(stderr, "libsrcu: fatal: rcu_read_unlock() without rcu_read_lock() "
			"on domain srcu_struct@%p (liburcu flavour, srcu_urcu.h)\n", (void *)sp);
	abort();
}

/* ---- the default flavour ---- */

static void default_read_lock(void)
{
	srcu_urcu_read_lock();
}

static void default_read_unlock(void)
{
	srcu_urcu_read_unlock();
}

static int default_read_ongoing(void)
{
	return srcu_urcu_read_ongoing();
}

void srcu_urcu_call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	learn_worker();
	srcu_urcu_call(&srcu_urcu_domain, head, func);
}

static void default_synchronize(void)
{
	synchronize_srcu(&srcu_urcu_domain);
}

void srcu_urcu_defer_rcu(void (*fct)(void *p), void *p)
{
	learn_worker();
	srcu_urcu_defer(&srcu_urcu_domain, fct, p);
}

void srcu_urcu_barrier(void)
{
	srcu_barrier(&srcu_urcu_domain);
}

/* Shares the read-side word with the inline srcu_urcu_read_lock(), so
 * that a section opened by liburcu's code through the flavour and one
 * opened by the program through rcu_read_lock() nest as one, and
 * read_ongoing() sees both. */
const struct rcu_flavor_struct srcu_urcu_flavor = {
	default_read_lock,
	default_read_unlock,
	default_read_ongoing,
	srcu_urcu_nothing,           /* read_quiescent_state */
	srcu_urcu_call_rcu,
	default_synchronize,
	srcu_urcu_defer_rcu,
	srcu_urcu_nothing,           /* thread_offline */
	srcu_urcu_nothing,           /* thread_online */
	srcu_urcu_nothing,           /* register_thread */
	srcu_urcu_nothing,           /* unregister_thread */
	srcu_urcu_barrier,
	srcu_urcu_register_rculfhash_atfork,
	srcu_urcu_unregister_rculfhash_atfork,
};

/* ---- defer_rcu()'s thread calls: nothing to register ---- */

int srcu_urcu_defer_register_thread(void)
{
	return 0;
}

void srcu_urcu_defer_unregister_thread(void)
{
}

/* Every callback queued so far, by any thread, has run: more than
 * liburcu promises (this thread's), which is allowed. */
void srcu_urcu_defer_barrier(void)
{
	srcu_barrier(&srcu_urcu_domain);
}

void srcu_urcu_defer_barrier_thread(void)
{
	srcu_barrier(&srcu_urcu_domain);
}

/* ---- the call_rcu data API: handles over the domain's one worker ----
 *
 * A program may create handles, give them to threads and CPUs, and free
 * them; callbacks queued through any of them, or none, go to the default
 * domain's worker.  The handles exist so that such a program runs
 * unchanged, and so that freeing one twice or a foreign pointer is caught
 * the same way as with any other heap pointer. */

struct call_rcu_data {
	unsigned long flags;
	int cpu_affinity;
};

static struct call_rcu_data default_data = { 0, -1 };
static __thread struct call_rcu_data *thread_data;

struct call_rcu_data *srcu_urcu_create_call_rcu_data(unsigned long flags,
								   int cpu_affinity)
{
	struct call_rcu_data *crdp = malloc(sizeof(*crdp));

	if (crdp) {
		crdp->flags = flags;
		crdp->cpu_affinity = cpu_affinity;
	}
	return crdp;
}

/* liburcu moves the handle's pending callbacks to the default worker
 * before it frees it; they are already there. */
void srcu_urcu_call_rcu_data_free(struct call_rcu_data *crdp)
{
	if (crdp && crdp != &default_data)
		free(crdp);
}

struct call_rcu_data *srcu_urcu_get_default_call_rcu_data(void)
{
	return &default_data;
}

/* No per-CPU handles: NULL, as liburcu answers for a CPU without one, and
 * callers then use the thread's or the default one. */
struct call_rcu_data *srcu_urcu_get_cpu_call_rcu_data(int cpu)
{
	(void)cpu;
	return NULL;
}

int srcu_urcu_set_cpu_call_rcu_data(int cpu, struct call_rcu_data *crdp)
{
	(void)crdp;
	return cpu < 0 ? -EINVAL : 0;
}

struct call_rcu_data *srcu_urcu_get_thread_call_rcu_data(void)
{
	return thread_data;
}

void srcu_urcu_set_thread_call_rcu_data(struct call_rcu_data *crdp)
{
	thread_data = crdp;
}

struct call_rcu_data *srcu_urcu_get_call_rcu_data(void)
{
	return thread_data ? thread_data : &default_data;
}

/* One worker for all CPUs already: nothing to create.  0, as liburcu
 * returns on success. */
int srcu_urcu_create_all_cpu_call_rcu_data(unsigned long flags)
{
	(void)flags;
	return 0;
}

void srcu_urcu_free_all_cpu_call_rcu_data(void)
{
}

/* The thread that runs the default domain's callbacks.  liburcu's
 * get_call_rcu_thread() is a plain getter, callable anywhere, a read
 * section and a callback included.  Here the worker is learnt by a
 * callback of ours, queued ahead of the first call_rcu() of the process
 * (so it has run before any callback of the program's does) or by the
 * first get_call_rcu_thread() that may wait for it; a fork child, whose
 * worker is a new thread, learns again. */
static pid_t whoami_queued_by;          /* the process that queued it */
static pid_t worker_known_in;           /* the process worker_thread is of */
static pthread_t worker_thread;

static void record_worker(struct srcu_head *head)
{
	free(head);
	worker_thread = pthread_self();
	/* Release: pairs with the acquire in worker_known(). */
	__atomic_store_n(&worker_known_in, getpid(), __ATOMIC_RELEASE);
}

static bool worker_known(void)
{
	return __atomic_load_n(&worker_known_in, __ATOMIC_ACQUIRE) == getpid();
}

/* Queue the whoami callback, once per process.  Its head is allocated,
 * not static: a fork child that queues its own must not queue a head its
 * parent's copy may still hold.  Without memory, nothing is learnt. */
static void learn_worker(void)
{
	pid_t me = getpid(), old = __atomic_load_n(&whoami_queued_by, __ATOMIC_ACQUIRE);
	struct srcu_head *head;

	if (old == me ||
	    !__atomic_compare_exchange_n(&whoami_queued_by, &old, me, false,
					 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	head = malloc(sizeof(*head));
	if (head)
		call_srcu(&srcu_urcu_domain, head, record_worker);
	else
		__atomic_store_n(&whoami_queued_by, 0, __ATOMIC_RELEASE);
}

pthread_t srcu_urcu_get_call_rcu_thread(struct call_rcu_data *crdp)
{
	(void)crdp;
	if (worker_known())
		return worker_thread;
	learn_worker();
	/* Inside a section of the domain the wait would never end; the
	 * worker has not run a callback of this process yet, so no caller
	 * can have seen it: answer the caller's own thread, documented. */
	if (srcu_read_lock_held(&srcu_urcu_domain))
		return pthread_self();
	srcu_barrier(&srcu_urcu_domain);
	return worker_thread;
}

/* ---- fork: liburcu's manual hooks, for cds_lfht's resize worker ----
 *
 * libsrcu handles its own state across fork() by itself.  cds_lfht keeps
 * a resize worker thread, and registers hooks that pause it before a fork
 * and restart it in the child; liburcu runs them when the program calls
 * call_rcu_before_fork() and the after-fork calls around fork(), and so
 * do these.  Registrations are counted, as cds_lfht registers the same
 * hooks once per table. */

static pthread_mutex_t atfork_lock = PTHREAD_MUTEX_INITIALIZER;
static struct urcu_atfork *atfork_hooks;
static unsigned long atfork_users;

void srcu_urcu_register_rculfhash_atfork(struct urcu_atfork *atfork)
{
	pthread_mutex_lock(&atfork_lock);
	if (atfork_users++ == 0)
		atfork_hooks = atfork;
	pthread_mutex_unlock(&atfork_lock);
}

void srcu_urcu_unregister_rculfhash_atfork(struct urcu_atfork *atfork)
{
	(void)atfork;
	pthread_mutex_lock(&atfork_lock);
	if (atfork_users && --atfork_users == 0)
		atfork_hooks = NULL;
	pthread_mutex_unlock(&atfork_lock);
}

/* Held from before the fork to after it, so that no table registers or
 * unregisters in between. */
void srcu_urcu_call_rcu_before_fork(void)
{
	pthread_mutex_lock(&atfork_lock);
	if (atfork_hooks)
		atfork_hooks->before_fork(atfork_hooks->priv);
}

void srcu_urcu_call_rcu_after_fork_parent(void)
{
	if (atfork_hooks)
		atfork_hooks->after_fork_parent(atfork_hooks->priv);
	pthread_mutex_unlock(&atfork_lock);
}

void srcu_urcu_call_rcu_after_fork_child(void)
{
	if (atfork_hooks)
		atfork_hooks->after_fork_child(atfork_hooks->priv);
	pthread_mutex_unlock(&atfork_lock);   /* the child's one thread holds it */
}
