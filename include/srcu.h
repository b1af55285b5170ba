/*
 * libsrcu: Sleepable RCU for userspace.
 *
 * A domain (struct srcu_struct) lets readers of shared, read-mostly data
 * run with a few plain loads and stores, sleep or block inside their
 * read-side critical sections, and lets an updater wait, with
 * synchronize_srcu(), for every reader of that domain that began before it.
 *
 * The read side is inline here: it touches only the calling thread's own
 * counters (no atomic read-modify-write, no hardware fence while the
 * membarrier backend is active) and one read-mostly line of the domain.
 * Everything else lives in src/.  The ordering argument behind every
 * barrier named below (A, B, C, W, ...) is in doc/design.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_H
#define SRCU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SRCU_VERSION_MAJOR 0
#define SRCU_VERSION_MINOR 1

/* The library is built with -fvisibility=hidden; these are its exports. */
#define SRCU__API __attribute__((visibility("default")))

/* ---------------------------------------------------------------------- */
/* Private layout, needed by the inline fast paths.  Do not touch.        */

#define SRCU__MAX_IDS     65536u                /* live domains + sentinels */
/* Sentinel ids send the fast path to the slow path.  A zeroed srcu_struct
 * is thus an unused static domain, never an alias of a live one. */
#define SRCU__ID_UNSET    0u                    /* static, not yet used   */
#define SRCU__ID_DEAD     1u                    /* after cleanup          */
#define SRCU__ID_FIRST    2u                    /* first real id          */

/* One thread's counters for one domain.  Written only by the owning
 * thread; read by grace-period scans.  Counts only ever increase: a
 * domain index is idle when the sum of its unlock counts over all threads
 * equals the sum of its lock counts (modern Tree SRCU's scheme). */
struct srcu__slot {
	unsigned long lock[2];
	unsigned long unlock[2];
};

/* This thread's counters, indexed by domain id: a 2 MiB reservation of
 * which only the pages of ids the thread uses get memory.  NULL until the
 * thread's first read-side section, and always NULL with the fence
 * backend (whose readers take the out-of-line path).  Initial-exec TLS:
 * one %fs-relative load, also from programs linked against libsrcu.so. */
SRCU__API extern __thread struct srcu__slot *srcu__slots
	__attribute__((tls_model("initial-exec")));
/* A grace period that sleeps waiting for readers of domain id announces
 * it here, outside the domain: a reader checks it after its last count,
 * when the domain may already have been cleaned up and freed. */
struct srcu__gp_wait {
	unsigned int waiting[2]; /* [idx] nonzero: a GP sleeps on that index */
	unsigned int wake_seq;   /* futex word: bumped by each waking reader */
	unsigned int pad;
};
SRCU__API extern struct srcu__gp_wait srcu__gp_waits[SRCU__MAX_IDS];

/* ---------------------------------------------------------------------- */
/* The domain.                                                            */

struct srcu_struct {
	/* Read-side state: read by every reader, written by the updater. */
	uint16_t id;             /* this domain's slot in per-thread tables */
	uint16_t pad0;
	unsigned int idx;        /* readers use idx & 1; the grace period flips it */
	const char *name;        /* used in every message; may be NULL */
	char pad1[64 - 16];

	/* Update-side state: written by updaters only, under gp_lock unless
	 * noted.  See src/gp.c. */
	unsigned long gp_seq;         /* ctr << 2 | state; release-stored */
	unsigned long gp_seq_needed;  /* furthest snapshot requested (atomic max) */
	unsigned long gp_exp_needed;  /* furthest snapshot requested expedited */
	unsigned int gp_lock;         /* 0 free, 1 held: the GP runner */
	unsigned int gp_event;        /* futex: bumped when a GP ends or runner leaves */
	unsigned int gp_event_waiters;/* callers sleeping on gp_event (atomic) */
	unsigned long stat_checks;    /* full reader checks performed */
	unsigned long stat_sleeps;    /* futex sleeps while waiting for readers */
	unsigned long stat_exp_gps;   /* grace periods run expedited */
	char pad3[64 - 8];

	/* srcu_down_read()/srcu_up_read() counters: shared, atomic RMW. */
	unsigned long down_lock[2];
	unsigned long down_unlock[2];
};

#ifndef __cplusplus
#define SRCU_INITIALIZER(domain) { .id = SRCU__ID_UNSET, .name = #domain }
#else   /* every member, in order: C++ warns about skipped ones */
#define SRCU_INITIALIZER(domain) { SRCU__ID_UNSET, 0, 0, #domain, {0}, \
	0, 0, 0, 0, 0, 0, 0, 0, 0, {0}, {0, 0}, {0, 0} }
#endif
#define DEFINE_SRCU(name)        struct srcu_struct name = SRCU_INITIALIZER(name)
#define DEFINE_STATIC_SRCU(name) static struct srcu_struct name = SRCU_INITIALIZER(name)

/* ---------------------------------------------------------------------- */
/* Out-of-line API (src/).                                                */

SRCU__API int  init_srcu_struct(struct srcu_struct *sp);
SRCU__API int  cleanup_srcu_struct(struct srcu_struct *sp);
SRCU__API int  srcu_set_name(struct srcu_struct *sp, const char *name);
SRCU__API void synchronize_srcu(struct srcu_struct *sp);
SRCU__API void synchronize_srcu_expedited(struct srcu_struct *sp);
SRCU__API unsigned long srcu_batches_completed(struct srcu_struct *sp);
SRCU__API int  srcu_down_read(struct srcu_struct *sp);
SRCU__API void srcu_up_read(struct srcu_struct *sp, int idx);
SRCU__API const char *srcu_backend(void);

/* Slow paths of the inline functions below. */
SRCU__API int  srcu__read_lock_slow(struct srcu_struct *sp);
SRCU__API void srcu__read_unlock_slow(struct srcu_struct *sp, int idx);
SRCU__API void srcu__wake_gp(unsigned int id);

/* ---------------------------------------------------------------------- */
/* Inline read side.                                                      */

/* Test-only: tools/srcu-torture builds with SRCU_TORTURE and links the
 * never-installed libsrcu_torture.a, whose readers may be delayed between
 * loading the index and counting on it (the stale-reader window). */
#ifdef SRCU_TORTURE
SRCU__API extern void (*srcu__torture_reader_delay)(void);
#define SRCU__TORTURE_READER_DELAY() \
	do { if (srcu__torture_reader_delay) srcu__torture_reader_delay(); } while (0)
#else
#define SRCU__TORTURE_READER_DELAY() do { } while (0)
#endif

#define SRCU__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define srcu__barrier() __asm__ __volatile__("" ::: "memory")

/* This thread's counters for domain id, or NULL when the slow path must
 * run: first use by this thread, a static domain's first use, the fence
 * backend, or misuse. */
static inline struct srcu__slot *srcu__my_slot(unsigned int id)
{
	struct srcu__slot *t = srcu__slots;

	if (SRCU__UNLIKELY(!t || id < SRCU__ID_FIRST))
		return 0;
	return &t[id];
}

/*
 * Enter a read-side critical section of sp.  Returns the index to pass to
 * srcu_read_unlock() from the same thread.  May nest and overlap freely.
 */
static inline int srcu_read_lock(struct srcu_struct *sp)
{
	struct srcu__slot *s = srcu__my_slot(__atomic_load_n(&sp->id, __ATOMIC_RELAXED));
	unsigned long *c;
	int idx;

	if (SRCU__UNLIKELY(!s))
		return srcu__read_lock_slow(sp);
	idx = (int)(__atomic_load_n(&sp->idx, __ATOMIC_RELAXED) & 1);
	SRCU__TORTURE_READER_DELAY();
	c = &s->lock[idx];
	/* Owner-only increment: a plain load and store; atomic only so that
	 * the scans' concurrent loads are not data races. */
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	/* B: pairs with A (membarrier) in srcu__readers_done(); keeps the
	 * critical section's accesses after the count, as the compiler sees
	 * it; membarrier turns this into a full fence when it matters. */
	srcu__barrier();
	return idx;
}

/*
 * Leave the read-side critical section that srcu_read_lock() returned idx
 * for.  Must run in the thread that locked (see srcu_up_read() otherwise).
 */
static inline void srcu_read_unlock(struct srcu_struct *sp, int idx)
{
	unsigned int id = __atomic_load_n(&sp->id, __ATOMIC_RELAXED);
	struct srcu__slot *s = srcu__my_slot(id);
	unsigned long *c, u;

	if (SRCU__UNLIKELY(!s || (unsigned int)idx > 1)) {
		srcu__read_unlock_slow(sp, idx);
		return;
	}
	/* An unlock without its lock is caught by the next grace-period scan
	 * (srcu__sum_locks()) or at thread exit, off this path. */
	c = &s->unlock[idx];
	u = __atomic_load_n(c, __ATOMIC_RELAXED);
	/* C: release keeps the critical section before the count; pairs
	 * with A (membarrier) in srcu__readers_done(). */
	__atomic_store_n(c, u + 1, __ATOMIC_RELEASE);
	/* W: pairs with the membarrier after the GP sets ->waiting in
	 * sleep_until_done(): either its scan sees this count or we see
	 * ->waiting. */
	srcu__barrier();
	/* sp may be freed from here on: touch only srcu__gp_waits[]. */
	if (SRCU__UNLIKELY(__atomic_load_n(&srcu__gp_waits[id].waiting[idx], __ATOMIC_RELAXED)))
		srcu__wake_gp(id);
}

/* Load an SRCU-protected pointer inside a read-side critical section of sp. */
#define srcu_dereference(p, sp) \
	__extension__({ (void)(sp); __atomic_load_n(&(p), __ATOMIC_ACQUIRE); })

/* Publish v in p: everything written to *v before is seen by readers. */
#define srcu_assign_pointer(p, v) \
	__extension__({ __typeof__(p) srcu__v_ = (v); \
			__atomic_store_n(&(p), srcu__v_, __ATOMIC_RELEASE); })

#ifdef __cplusplus
}
#endif
#endif /* SRCU_H */
