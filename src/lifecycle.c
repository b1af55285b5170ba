/*
 * lifecycle.c: a domain's life, from init_srcu_struct() to
 * cleanup_srcu_struct(), and srcu_get_stats(): the entry points that
 * drive the layers below them (ids in domain.c, the grace-period engine,
 * the callback worker).  doc/design.md, "Teardown", argues cleanup.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

/* ---- init ---- */

static SRCU__NORETURN void report_reinit(struct srcu_struct *sp)
{
	char n[SRCU__NAME_LEN];

	srcu__report_fatal("init_srcu_struct() on domain %s, which is live (initialized and "
		    "not cleaned up, or freed without cleanup_srcu_struct() and its memory "
		    "reused): its readers, grace periods and id would be lost; call "
		    "cleanup_srcu_struct() first", srcu__report_name(sp, n, sizeof(n)));
}

static int init_kind(struct srcu_struct *sp, unsigned int kind)
{
	int err;

	if (!sp)
		return -EINVAL;
	err = srcu__domain_init_bind(sp, kind);
	if (err == -EEXIST)
		report_reinit(sp);
	return err;
}

int init_srcu_struct(struct srcu_struct *sp)
{
	return init_kind(sp, SRCU__KIND_ANY);
}

int init_srcu_struct_fast(struct srcu_struct *sp)
{
	return init_kind(sp, SRCU__KIND_FAST);
}

int init_srcu_struct_fast_updown(struct srcu_struct *sp)
{
	return init_kind(sp, SRCU__KIND_FAST_UPDOWN);
}

int init_srcu_struct_named(struct srcu_struct *sp, const char *name)
{
	int err = init_srcu_struct(sp);

	if (sp)
		/* Also on failure: the name is in its messages.  Release, as
		 * in srcu_set_name(): once bound, other threads' reports may
		 * read it. */
		store_release(&sp->name, name);
	return err;
}

int srcu_set_name(struct srcu_struct *sp, const char *name)
{
	if (!sp || srcu__id_shared(srcu__id_of(sp)))   /* a shared one's is in its file */
		return -EINVAL;
	/* Release: pairs with the acquire loads of sp->name in messages
	 * made by other threads (report.c's name_of(), srcu.hpp,
	 * srcu_urcu.c): a thread that reads the pointer reads the string
	 * the caller wrote before this call, not bytes from before. */
	store_release(&sp->name, name);
	return 0;
}

/* ---- cleanup ---- */

/* A domain with no reader inside leaves its id.  An up/down domain's
 * slots are balanced first, while the id is still its own. */
static void unbind(struct srcu_struct *sp, unsigned int id)
{
	if (srcu__reader_updown(id))
		srcu__reader_rebalance(id);
	srcu__domain_unbind(sp, id);
}

/* The verdict on sp, closed to update-side callers: drain (callbacks
 * pending or a GP for the worker: -EBUSY), stop and free the worker,
 * then, under gp_lock, no reader on either index: unbound. */
static int decide(struct srcu_struct *sp, unsigned int id)
{
	int err = srcu__async_cleanup(sp);   /* callbacks pending: -EBUSY */

	if (err)
		return err;
	if (!srcu__gp_trylock(sp))
		return -EBUSY;            /* a grace period is running */
	/* A signal handler of this thread (let in while the word is closed,
	 * gp.c) may have made async state again since. */
	if (srcu__async_active(sp) ||
	    !srcu__gp_readers_done(sp, 0) || !srcu__gp_readers_done(sp, 1))
		err = -EBUSY;             /* callbacks again, or readers inside */
	else
		unbind(sp, id);
	srcu__gp_unlock(sp);   /* wakes a waiter that read gp_lock held */
	return err;
}

/*
 * One ordered protocol (doc/design.md, "Teardown"): close the domain to
 * update-side callers first, so that none is inside and none can enter
 * (one that arrives waits for the verdict); then drain and stop the
 * callback worker, which nothing can restart; then free and unbind.
 */
int cleanup_srcu_struct(struct srcu_struct *sp)
{
	unsigned int id;
	int err;

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
	srcu__gp_check_forked(sp, "cleanup_srcu_struct()");
	if (!srcu__gp_close(sp)) {
		err = -EBUSY;             /* an update-side call is inside */
	} else {
		SRCU__TORTURE_POINT(CLEANUP_CLOSED, sp);
		err = decide(sp, id);
		srcu__gp_reopen(sp);      /* callers waiting see the verdict */
	}
	if (!err)
		srcu__hb_gp_end(id);   /* race detectors: the caller may free sp now */
	else
		srcu__report_keep_name(sp);   /* for the warnings if it is freed anyway */
	return err;
}

/* ---- statistics ---- */

int srcu_get_stats(struct srcu_struct *sp, struct srcu_stats *st)
{
	struct srcu__domain *d;
	unsigned long timed;

	if (!sp || !st)
		return -EINVAL;
	(void)srcu__domain_check(sp, "srcu_get_stats");
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
