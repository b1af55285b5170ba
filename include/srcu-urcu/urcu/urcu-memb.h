/*
 * urcu/urcu-memb.h of libsrcu's liburcu drop-in: liburcu's memb flavour,
 * the one <urcu.h> gives, on libsrcu-urcu's default domain.
 *
 * <srcu_urcu.h> gives the unprefixed names (rcu_read_lock(), call_rcu(),
 * ...); this header adds the flavour's prefixed names (urcu_memb_*), the
 * older *_memb aliases and the inline _rcu_* spellings, all onto the same
 * calls.  A liburcu name the drop-in does not provide is declared
 * unavailable: a program that uses one fails to compile with an error that
 * names it, never at link time.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_URCU_DROPIN_URCU_MEMB_H
#define SRCU_URCU_DROPIN_URCU_MEMB_H

#include <srcu_urcu.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Nothing to tear down: libsrcu's state lives as long as the process. */
static inline void srcu_urcu_exit(void) { }
static inline void srcu_urcu_defer_exit(void) { }

#ifdef __cplusplus
}
#endif

#define rcu_exit                        srcu_urcu_exit
#define rcu_defer_exit                  srcu_urcu_defer_exit
#define _rcu_read_lock                  srcu_urcu_read_lock
#define _rcu_read_unlock                srcu_urcu_read_unlock
#define _rcu_read_ongoing               srcu_urcu_read_ongoing
#define _rcu_quiescent_state            srcu_urcu_quiescent_state

/* The flavour's own names. */
#define urcu_memb_read_lock             srcu_urcu_read_lock
#define urcu_memb_read_unlock           srcu_urcu_read_unlock
#define urcu_memb_read_ongoing          srcu_urcu_read_ongoing
#define _urcu_memb_read_lock            srcu_urcu_read_lock
#define _urcu_memb_read_unlock          srcu_urcu_read_unlock
#define _urcu_memb_read_ongoing         srcu_urcu_read_ongoing
#define urcu_memb_quiescent_state       srcu_urcu_quiescent_state
#define _urcu_memb_quiescent_state      srcu_urcu_quiescent_state
#define urcu_memb_thread_offline        srcu_urcu_thread_offline
#define urcu_memb_thread_online         srcu_urcu_thread_online
#define urcu_memb_register_thread       srcu_urcu_register_thread
#define urcu_memb_unregister_thread     srcu_urcu_unregister_thread
#define urcu_memb_init                  srcu_urcu_init
#define urcu_memb_exit                  srcu_urcu_exit
#define urcu_memb_synchronize_rcu       srcu_urcu_synchronize_rcu
#define urcu_memb_call_rcu              srcu_urcu_call_rcu
#define urcu_memb_barrier               srcu_urcu_barrier
#define urcu_memb_defer_rcu             srcu_urcu_defer_rcu
#define urcu_memb_defer_register_thread srcu_urcu_defer_register_thread
#define urcu_memb_defer_unregister_thread srcu_urcu_defer_unregister_thread
#define urcu_memb_defer_barrier         srcu_urcu_defer_barrier
#define urcu_memb_defer_barrier_thread  srcu_urcu_defer_barrier_thread
#define urcu_memb_defer_exit            srcu_urcu_defer_exit
#define urcu_memb_create_call_rcu_data  srcu_urcu_create_call_rcu_data
#define urcu_memb_call_rcu_data_free    srcu_urcu_call_rcu_data_free
#define urcu_memb_get_default_call_rcu_data srcu_urcu_get_default_call_rcu_data
#define urcu_memb_get_cpu_call_rcu_data srcu_urcu_get_cpu_call_rcu_data
#define urcu_memb_get_thread_call_rcu_data srcu_urcu_get_thread_call_rcu_data
#define urcu_memb_get_call_rcu_data     srcu_urcu_get_call_rcu_data
#define urcu_memb_get_call_rcu_thread   srcu_urcu_get_call_rcu_thread
#define urcu_memb_set_thread_call_rcu_data srcu_urcu_set_thread_call_rcu_data
#define urcu_memb_set_cpu_call_rcu_data srcu_urcu_set_cpu_call_rcu_data
#define urcu_memb_create_all_cpu_call_rcu_data srcu_urcu_create_all_cpu_call_rcu_data
#define urcu_memb_free_all_cpu_call_rcu_data srcu_urcu_free_all_cpu_call_rcu_data
#define urcu_memb_call_rcu_before_fork  srcu_urcu_call_rcu_before_fork
#define urcu_memb_call_rcu_after_fork_parent srcu_urcu_call_rcu_after_fork_parent
#define urcu_memb_call_rcu_after_fork_child srcu_urcu_call_rcu_after_fork_child
#define urcu_memb_flavor                srcu_urcu_flavor
#define urcu_memb_register_rculfhash_atfork srcu_urcu_register_rculfhash_atfork
#define urcu_memb_unregister_rculfhash_atfork srcu_urcu_unregister_rculfhash_atfork
#define urcu_memb_dereference           rcu_dereference
#define urcu_memb_cmpxchg_pointer       rcu_cmpxchg_pointer
#define urcu_memb_xchg_pointer          rcu_xchg_pointer
#define urcu_memb_set_pointer           rcu_set_pointer

/* liburcu's older flavour-suffixed aliases. */
#define rcu_read_lock_memb              srcu_urcu_read_lock
#define _rcu_read_lock_memb             srcu_urcu_read_lock
#define rcu_read_unlock_memb            srcu_urcu_read_unlock
#define _rcu_read_unlock_memb           srcu_urcu_read_unlock
#define rcu_read_ongoing_memb           srcu_urcu_read_ongoing
#define _rcu_read_ongoing_memb          srcu_urcu_read_ongoing
#define rcu_register_thread_memb        srcu_urcu_register_thread
#define rcu_unregister_thread_memb      srcu_urcu_unregister_thread
#define rcu_init_memb                   srcu_urcu_init
#define rcu_exit_memb                   srcu_urcu_exit
#define synchronize_rcu_memb            srcu_urcu_synchronize_rcu
#define call_rcu_memb                   srcu_urcu_call_rcu
#define rcu_barrier_memb                srcu_urcu_barrier
#define defer_rcu_memb                  srcu_urcu_defer_rcu
#define rcu_defer_register_thread_memb  srcu_urcu_defer_register_thread
#define rcu_defer_unregister_thread_memb srcu_urcu_defer_unregister_thread
#define rcu_defer_barrier_memb          srcu_urcu_defer_barrier
#define rcu_defer_barrier_thread_memb   srcu_urcu_defer_barrier_thread
#define rcu_defer_exit_memb             srcu_urcu_defer_exit
#define create_call_rcu_data_memb       srcu_urcu_create_call_rcu_data
#define call_rcu_data_free_memb         srcu_urcu_call_rcu_data_free
#define get_default_call_rcu_data_memb  srcu_urcu_get_default_call_rcu_data
#define get_cpu_call_rcu_data_memb      srcu_urcu_get_cpu_call_rcu_data
#define get_thread_call_rcu_data_memb   srcu_urcu_get_thread_call_rcu_data
#define get_call_rcu_data_memb          srcu_urcu_get_call_rcu_data
#define get_call_rcu_thread_memb        srcu_urcu_get_call_rcu_thread
#define set_thread_call_rcu_data_memb   srcu_urcu_set_thread_call_rcu_data
#define set_cpu_call_rcu_data_memb      srcu_urcu_set_cpu_call_rcu_data
#define create_all_cpu_call_rcu_data_memb srcu_urcu_create_all_cpu_call_rcu_data
#define free_all_cpu_call_rcu_data_memb srcu_urcu_free_all_cpu_call_rcu_data
#define call_rcu_before_fork_memb       srcu_urcu_call_rcu_before_fork
#define call_rcu_after_fork_parent_memb srcu_urcu_call_rcu_after_fork_parent
#define call_rcu_after_fork_child_memb  srcu_urcu_call_rcu_after_fork_child
#define rcu_flavor_memb                 srcu_urcu_flavor
#define urcu_register_rculfhash_atfork_memb srcu_urcu_register_rculfhash_atfork
#define urcu_unregister_rculfhash_atfork_memb srcu_urcu_unregister_rculfhash_atfork
#define rcu_dereference_memb            rcu_dereference
#define rcu_cmpxchg_pointer_memb        rcu_cmpxchg_pointer
#define rcu_xchg_pointer_memb           rcu_xchg_pointer
#define rcu_set_pointer_memb            rcu_set_pointer

/*
 * What the drop-in lacks: liburcu's internal reader and grace-period
 * state, and liburcu 0.14's polling grace periods (libsrcu's own are
 * start_poll_synchronize_srcu() and poll_state_synchronize_srcu() on
 * &srcu_urcu_domain).  Declared unavailable, so that any use is a compile
 * error naming the call; a compiler without the attribute still fails, on
 * calling an object of an incomplete type.
 */
#if defined(__has_attribute)
#if __has_attribute(unavailable)
#define SRCU_URCU__LACKS(what) \
	__attribute__((unavailable("not provided by libsrcu's liburcu drop-in: " what " (doc/urcu.md)")))
#endif
#endif
#ifndef SRCU_URCU__LACKS
#define SRCU_URCU__LACKS(what)
#endif
struct srcu_urcu_lacks;
#define SRCU_URCU__LACK(name, what) \
	extern struct srcu_urcu_lacks name SRCU_URCU__LACKS(what)

SRCU_URCU__LACK(rcu_reader, "liburcu's per-thread reader state");
SRCU_URCU__LACK(urcu_memb_reader, "liburcu's per-thread reader state");
SRCU_URCU__LACK(rcu_reader_memb, "liburcu's per-thread reader state");
SRCU_URCU__LACK(rcu_gp, "liburcu's grace-period state");
SRCU_URCU__LACK(urcu_memb_gp, "liburcu's grace-period state");
SRCU_URCU__LACK(rcu_gp_memb, "liburcu's grace-period state");
SRCU_URCU__LACK(start_poll_synchronize_rcu, "use start_poll_synchronize_srcu(&srcu_urcu_domain)");
SRCU_URCU__LACK(urcu_memb_start_poll_synchronize_rcu, "use start_poll_synchronize_srcu(&srcu_urcu_domain)");
SRCU_URCU__LACK(poll_state_synchronize_rcu, "use poll_state_synchronize_srcu(&srcu_urcu_domain, ...)");
SRCU_URCU__LACK(urcu_memb_poll_state_synchronize_rcu, "use poll_state_synchronize_srcu(&srcu_urcu_domain, ...)");
SRCU_URCU__LACK(rcu_memb_before_fork, "libsrcu needs no fork hooks; call_rcu_before_fork() is provided");
SRCU_URCU__LACK(rcu_memb_after_fork_parent, "libsrcu needs no fork hooks; call_rcu_after_fork_parent() is provided");
SRCU_URCU__LACK(rcu_memb_after_fork_child, "libsrcu needs no fork hooks; call_rcu_after_fork_child() is provided");

#endif /* SRCU_URCU_DROPIN_URCU_MEMB_H */
