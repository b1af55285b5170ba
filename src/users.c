/*
 * users.c: the update-side callers of each domain, counted from entry to
 * return, so that cleanup_srcu_struct() (lifecycle.c) and
 * srcu_shared_detach() (shared_domain.c) can tell that none is inside
 * and keep new ones out while they decide; and the check that a caller
 * is not a fork child made without fork()'s handlers.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <unistd.h>

void srcu__gp_report_unforked(struct srcu_struct *sp, const char *who)
{
	char n[SRCU__NAME_LEN];

	srcu__report_fatal(SRCU__UNFORKED_FMT, (int)getpid(), who,
			   srcu__report_name(sp, n, sizeof(n)));
}

/*
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
static inline __attribute__((always_inline)) unsigned int *users_word(struct srcu_struct *sp)
{
	unsigned int id = srcu__id_of(sp);

	return SRCU__UNLIKELY(srcu__id_shared(id)) ? &srcu__shm_att[srcu__shm_block(id)].users
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
SRCU__TLS_ARRAY(struct srcu_struct *, inside, INSIDE_MAX);
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
		SRCU__TLS_AT(inside, inside_depth) = sp;
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
		n += SRCU__TLS_AT(inside, i) == sp;
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

/* In a fork child: only the forking thread's calls are still inside. */
void srcu__users_fork_child(struct srcu_struct *sp)
{
	*users_word(sp) = inside_count(sp);
}
