/*
 * srcu_urcu.h: libsrcu as a liburcu flavour, and liburcu's names on it.
 *
 * liburcu's data structures (cds_lfht, the rculist and rcuhlist helpers,
 * the lock-free queues) take their read sections and grace periods from a
 * "flavour", a struct rcu_flavor_struct of function pointers.  This header
 * makes flavours out of libsrcu domains:
 *
 *   srcu_urcu_flavor                       ready made, on srcu_urcu_domain,
 *                                          a process-wide default domain
 *   DEFINE_SRCU_URCU_FLAVOR(name, domain)  one bound to a domain of yours,
 *                                          so each structure has its own
 *                                          grace periods
 *
 * Included instead of <urcu.h>, it also gives a program written for
 * liburcu's default (memb) flavour the names it calls -- rcu_read_lock(),
 * synchronize_rcu(), call_rcu(), rcu_barrier(), defer_rcu(), the call_rcu
 * data API, rcu_flavor -- all on srcu_urcu_domain.  Link with
 * `pkg-config --libs srcu-urcu` (-lsrcu-urcu -lsrcu -lurcu-common), plus
 * -lurcu-cds for the data structures.  Or change nothing: the liburcu
 * drop-in (include/srcu-urcu/, whose urcu.h is this header, and pkg-config
 * modules named liburcu, liburcu-memb and liburcu-cds in
 * <libdir>/srcu-urcu/pkgconfig) moves a program that finds liburcu through
 * pkg-config with PKG_CONFIG_PATH alone (doc/urcu.md).  Define
 * SRCU_URCU_NO_COMPAT to get only the flavours, next to a liburcu flavour
 * of your own; <urcu.h> (or the flavour's header) must then come first.
 *
 * What differs from liburcu (doc/urcu.md has the whole list):
 *  - Read sections may sleep and block, and a slow reader of one domain
 *    delays only that domain's grace periods.
 *  - No thread registration: rcu_register_thread(), the online/offline
 *    calls and rcu_quiescent_state() do nothing, and need not be called.
 *  - synchronize_rcu() inside one's own section aborts with a message
 *    (liburcu deadlocks).
 *  - call_rcu()'s memory is bounded: past the domain's backlog limit
 *    (srcu_set_backlog_limit(), 10,000 by default) a caller outside a
 *    read section waits for the worker; liburcu's queue grows without
 *    bound.  Callbacks run on the domain's one worker thread, whatever
 *    call_rcu data the caller chose.
 *  - defer_rcu() needs no rcu_defer_register_thread() and never waits for
 *    a grace period unless memory runs out.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_URCU_H
#define SRCU_URCU_H

#include <srcu.h>
#include <srcu/nest.h>

/* liburcu's names, mapped onto ours before liburcu's headers declare them
 * (liburcu's own flavours map them the same way, onto urcu_memb_... and
 * so on). */
#ifndef SRCU_URCU_NO_COMPAT
/* As <urcu.h> says it: the unprefixed names are in use (rculfhash.h then
 * offers cds_lfht_new(), on rcu_flavor). */
#ifndef URCU_API_MAP
#define URCU_API_MAP
#endif
#define rcu_read_lock                   srcu_urcu_read_lock
#define rcu_read_unlock                 srcu_urcu_read_unlock
#define rcu_read_ongoing                srcu_urcu_read_ongoing
#define rcu_quiescent_state             srcu_urcu_quiescent_state
#define rcu_thread_offline              srcu_urcu_thread_offline
#define rcu_thread_online               srcu_urcu_thread_online
#define rcu_register_thread             srcu_urcu_register_thread
#define rcu_unregister_thread           srcu_urcu_unregister_thread
#define rcu_init                        srcu_urcu_init
#define synchronize_rcu                 srcu_urcu_synchronize_rcu
#define call_rcu                        srcu_urcu_call_rcu
#define rcu_barrier                     srcu_urcu_barrier
#define defer_rcu                       srcu_urcu_defer_rcu
#define rcu_defer_register_thread       srcu_urcu_defer_register_thread
#define rcu_defer_unregister_thread     srcu_urcu_defer_unregister_thread
#define rcu_defer_barrier               srcu_urcu_defer_barrier
#define rcu_defer_barrier_thread        srcu_urcu_defer_barrier_thread
#define create_call_rcu_data            srcu_urcu_create_call_rcu_data
#define call_rcu_data_free              srcu_urcu_call_rcu_data_free
#define get_default_call_rcu_data       srcu_urcu_get_default_call_rcu_data
#define get_cpu_call_rcu_data           srcu_urcu_get_cpu_call_rcu_data
#define get_thread_call_rcu_data        srcu_urcu_get_thread_call_rcu_data
#define get_call_rcu_data               srcu_urcu_get_call_rcu_data
#define get_call_rcu_thread             srcu_urcu_get_call_rcu_thread
#define set_thread_call_rcu_data        srcu_urcu_set_thread_call_rcu_data
#define set_cpu_call_rcu_data           srcu_urcu_set_cpu_call_rcu_data
#define create_all_cpu_call_rcu_data    srcu_urcu_create_all_cpu_call_rcu_data
#define free_all_cpu_call_rcu_data      srcu_urcu_free_all_cpu_call_rcu_data
#define call_rcu_before_fork            srcu_urcu_call_rcu_before_fork
#define call_rcu_after_fork_parent      srcu_urcu_call_rcu_after_fork_parent
#define call_rcu_after_fork_child       srcu_urcu_call_rcu_after_fork_child
#define rcu_flavor                      srcu_urcu_flavor
#define urcu_register_rculfhash_atfork  srcu_urcu_register_rculfhash_atfork
#define urcu_unregister_rculfhash_atfork srcu_urcu_unregister_rculfhash_atfork

/* rcu_dereference(), rcu_assign_pointer(), rcu_xchg_pointer(),
 * rcu_cmpxchg_pointer(): liburcu's own, which need no flavour. */
#include <urcu/pointer.h>
/* struct rcu_head and the call_rcu data API, declared under our names. */
#include <urcu/call-rcu.h>
#include <urcu/defer.h>
#endif /* SRCU_URCU_NO_COMPAT */

#include <urcu/flavor.h>

#ifdef __cplusplus
extern "C" {
#endif

struct rcu_head;

/* The process-wide default domain of srcu_urcu_flavor and of the
 * liburcu-compatible names ("srcu_urcu_domain" in messages). */
SRCU__API extern struct srcu_struct srcu_urcu_domain;
SRCU__API extern const struct rcu_flavor_struct srcu_urcu_flavor;

/* ---- Read sections without an index ----
 *
 * liburcu's read_lock() returns nothing: a flavour keeps one word per
 * thread and flavour, with <srcu/nest.h>'s srcu__nest_lock() and
 * srcu__nest_unlock() (the nesting depth and the counter the outermost
 * lock counted in; async-signal-safe).  An unlock without its lock aborts,
 * naming the domain: the word would otherwise say "nested" forever and
 * the thread's later sections would count nowhere. */

SRCU__API void srcu_urcu_unbalanced(struct srcu_struct *sp);

static inline void srcu_urcu_lock(struct srcu_struct *sp, unsigned long *state)
{
	srcu__nest_lock(sp, state);
}

static inline void srcu_urcu_unlock(struct srcu_struct *sp, unsigned long *state)
{
	if (SRCU__UNLIKELY(!srcu__nest_unlock(sp, state)))
		srcu_urcu_unbalanced(sp);
}

/* Out of line, for flavours: call_srcu() with liburcu's rcu_head (same
 * layout as struct srcu_head; src/urcu/srcu_urcu.c asserts it), and defer_rcu()
 * (a callback that takes a void *, queued through call_srcu()). */
SRCU__API void srcu_urcu_call(struct srcu_struct *sp, struct rcu_head *head,
			      void (*func)(struct rcu_head *head));
SRCU__API void srcu_urcu_defer(struct srcu_struct *sp, void (*fct)(void *p), void *p);
SRCU__API void srcu_urcu_nothing(void);
SRCU__API void srcu_urcu_register_rculfhash_atfork(struct urcu_atfork *atfork);
SRCU__API void srcu_urcu_unregister_rculfhash_atfork(struct urcu_atfork *atfork);

/*
 * DEFINE_SRCU_URCU_FLAVOR(name, domain): define `const struct
 * rcu_flavor_struct name`, a liburcu flavour whose read sections and
 * grace periods are those of domain, an expression of type struct
 * srcu_struct * (evaluated at each call; &my_domain, or t->srcu for a
 * domain in a structure that outlives every use of the flavour).  Put it
 * in one .c file; other files declare it with DECLARE_SRCU_URCU_FLAVOR().
 * Pass &name to cds_lfht_new_flavor().  Its sections nest, per thread;
 * its thread registration calls do nothing.
 */
#define DECLARE_SRCU_URCU_FLAVOR(name) \
	extern const struct rcu_flavor_struct name

#define DEFINE_SRCU_URCU_FLAVOR(name, domain) \
	DECLARE_SRCU_URCU_FLAVOR(name);   /* external linkage in C++ too */ \
	static __thread unsigned long name##_srcu_urcu_state; \
	static void name##_srcu_urcu_read_lock(void) \
	{ srcu_urcu_lock((domain), &name##_srcu_urcu_state); } \
	static void name##_srcu_urcu_read_unlock(void) \
	{ srcu_urcu_unlock((domain), &name##_srcu_urcu_state); } \
	static int name##_srcu_urcu_read_ongoing(void) \
	{ return name##_srcu_urcu_state != 0; } \
	static void name##_srcu_urcu_call_rcu(struct rcu_head *head, \
					      void (*func)(struct rcu_head *head)) \
	{ srcu_urcu_call((domain), head, func); } \
	static void name##_srcu_urcu_synchronize(void) \
	{ synchronize_srcu(domain); } \
	static void name##_srcu_urcu_defer(void (*fct)(void *p), void *p) \
	{ srcu_urcu_defer((domain), fct, p); } \
	static void name##_srcu_urcu_barrier(void) \
	{ srcu_barrier(domain); } \
	const struct rcu_flavor_struct name = { \
		name##_srcu_urcu_read_lock, \
		name##_srcu_urcu_read_unlock, \
		name##_srcu_urcu_read_ongoing, \
		srcu_urcu_nothing,                  /* read_quiescent_state */ \
		name##_srcu_urcu_call_rcu, \
		name##_srcu_urcu_synchronize, \
		name##_srcu_urcu_defer, \
		srcu_urcu_nothing,                  /* thread_offline */ \
		srcu_urcu_nothing,                  /* thread_online */ \
		srcu_urcu_nothing,                  /* register_thread */ \
		srcu_urcu_nothing,                  /* unregister_thread */ \
		name##_srcu_urcu_barrier, \
		srcu_urcu_register_rculfhash_atfork, \
		srcu_urcu_unregister_rculfhash_atfork, \
	}

/* ---- The default flavour's calls, inline ---- */

/* Its per-thread section word (see srcu_urcu_lock()). */
SRCU__API extern __thread unsigned long srcu_urcu_state SRCU__TLS_FAST;

static inline void srcu_urcu_read_lock(void)
{
	srcu_urcu_lock(&srcu_urcu_domain, &srcu_urcu_state);
}

static inline void srcu_urcu_read_unlock(void)
{
	srcu_urcu_unlock(&srcu_urcu_domain, &srcu_urcu_state);
}

static inline int srcu_urcu_read_ongoing(void)
{
	return srcu_urcu_state != 0;
}

static inline void srcu_urcu_synchronize_rcu(void)
{
	synchronize_srcu(&srcu_urcu_domain);
}

/* No registration, and no quiescent states to report: libsrcu finds its
 * readers itself. */
static inline void srcu_urcu_quiescent_state(void) { }
static inline void srcu_urcu_thread_offline(void) { }
static inline void srcu_urcu_thread_online(void) { }
static inline void srcu_urcu_register_thread(void) { }
static inline void srcu_urcu_unregister_thread(void) { }
static inline void srcu_urcu_init(void) { }

#ifdef __cplusplus
}
#endif
#endif /* SRCU_URCU_H */
