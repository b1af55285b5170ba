/*
 * lifecycle.c: the top of the stack (doc/design.md, "Layers"): the
 * library's start-up, fork(), cleanup_srcu_struct() and srcu_get_stats(),
 * the entry points that drive every layer below them.  Nothing below
 * calls up into this file: what a lower layer must do at start-up, at a
 * fork or at cleanup, this file asks of it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

/* Before main(), before any reader can have counted through the fast
 * path (srcu__backend_fence_mode starts at 1: fences).  Global (hidden):
 * a program linked against libsrcu.a may call nothing in this file, and
 * the static library's users link with --undefined=srcu__lifecycle_startup
 * (CMake's srcu::srcu_static and pkg-config --static say so), or the
 * archive would leave the constructor out: no membarrier, no thread-exit
 * hook. */
void srcu__lifecycle_startup(void) __attribute__((constructor)) SRCU__HIDDEN;
void srcu__lifecycle_startup(void)
{
	const char *dd = getenv("SRCU_DEADLOCK_DETECT");

	srcu__backend_init();
	srcu__domain_init();
	if (dd && *dd)
		srcu_set_deadlock_detection(strcmp(dd, "0") != 0);
	srcu__reader_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- cleanup ---- */

int cleanup_srcu_struct(struct srcu_struct *sp)
{
	unsigned int id;
	int err = 0;

	if (!sp)
		return -EINVAL;
	id = srcu__domain_peek(sp);
	if (id == SRCU__ID_DEAD)
		return -EINVAL;
	if (srcu__id_shared(id))
		return -EINVAL;           /* srcu_shared_detach() */
	if (id == SRCU__ID_UNSET) {       /* static, never used */
		srcu__domain_retire_unused(sp);
		return 0;
	}
	if (load_relaxed(&srcu__domain_table[id]) != sp)
		return -EINVAL;
	err = srcu__async_cleanup(sp);   /* callbacks pending: -EBUSY */
	if (err)
		return err;
	if (!srcu__gp_trylock(sp))
		return -EBUSY;            /* a grace period is running */
	if (load_acquire(&srcu__dom(sp)->gp_event_waiters) ||
	    !srcu__gp_readers_done(sp, 0) || !srcu__gp_readers_done(sp, 1))
		err = -EBUSY;             /* updaters waiting, or readers inside */
	else
		srcu__domain_unbind(sp, id);
	srcu__gp_unlock(sp);   /* wakes a synchronize that arrived meanwhile */
	if (!err)
		srcu__hb_gp_end(id);   /* race detectors: the caller may free sp now */
	return err;
}

/* ---- fork: the registry lock is held across it ---- */

/* Every live domain, in id order (caller holds the registry lock). */
#define FOR_LIVE_DOMAINS(id) \
	for (id = SRCU__ID_FIRST; id < srcu__domain_id_high; id++) if (srcu__domain_table[id])
/* The same for the shared domains attached (their GP state is in the
 * file, the parent's and every other process's: only their call_srcu()
 * state is this process's). */
#define FOR_SHARED_DOMAINS(id) \
	for (id = SRCU__SHARED_ID_FIRST; id < SRCU__MAX_IDS; id += SRCU__SHARED_BLOCK_IDS) \
		if (srcu__domain_table[id])

static void fork_prepare(void)
{
	unsigned int id;

	pthread_mutex_lock(&srcu__domain_registry_lock);
	FOR_LIVE_DOMAINS(id)
		srcu__async_fork_prepare(srcu__domain_table[id]);
	FOR_SHARED_DOMAINS(id)
		srcu__async_fork_prepare(srcu__domain_table[id]);
	srcu__stall_fork_prepare();   /* innermost: released first */
}

static void fork_parent(void)
{
	unsigned int id;

	srcu__stall_fork_parent();
	FOR_LIVE_DOMAINS(id)
		srcu__async_fork_parent(srcu__domain_table[id]);
	FOR_SHARED_DOMAINS(id)
		srcu__async_fork_parent(srcu__domain_table[id]);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

static void fork_child(void)
{
	unsigned int id;

	srcu__stall_fork_child();
	srcu__backend_fork_child();
	srcu__fence_fork_child();
	FOR_LIVE_DOMAINS(id) {
		srcu__gp_fork_child(srcu__domain_table[id]);
		srcu__async_fork_child(srcu__domain_table[id]);
	}
	FOR_SHARED_DOMAINS(id)
		srcu__async_fork_child(srcu__domain_table[id]);
	srcu__reader_fork_child();
	srcu__shared_fork_child();
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

/* ---- statistics ---- */

int srcu_get_stats(struct srcu_struct *sp, struct srcu_stats *st)
{
	struct srcu__domain *d;
	unsigned long timed;

	if (!sp || !st)
		return -EINVAL;
	d = srcu__dom(sp);
	memset(st, 0, sizeof(*st));
	st->gps = srcu_batches_completed(sp);
	st->gps_expedited = load_relaxed(&d->stat_exp_gps);
	timed = load_relaxed(&d->stat_gps_timed);
	if (timed)
		st->gp_mean_us = (double)load_relaxed(&d->stat_gp_ns_sum) / (double)timed / 1e3;
	st->gp_max_us = (double)load_relaxed(&d->stat_gp_ns_max) / 1e3;
	srcu__async_stats(sp, st);
	st->reader_threads = srcu__reader_threads(sp);
	st->stalls = load_relaxed(&d->stat_stalls);
	srcu__fence_stats(&st->fence_membarriers, &st->fence_requests);
	return 0;
}
