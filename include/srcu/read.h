/*
 * srcu/read.h: the inline read side of <srcu.h>, included by it:
 * srcu_read_lock() and srcu_read_unlock(), the fast kinds' sections, the
 * kernel's other names for them, and the guards.  Do not include it
 * yourself.  The API, with what each call does, is in <srcu.h>; the
 * ordering argument behind every barrier named here (A, B, C, W, ...) is
 * in doc/design.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU__READ_H
#define SRCU__READ_H

#ifndef SRCU_H
#error "include <srcu.h>, not <srcu/read.h>"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "layout.h"
#include "arch.h"
#include "sanitizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Slow paths of the inline functions below. */
SRCU__API int  srcu__read_lock_slow(struct srcu_struct *sp);
SRCU__API void srcu__read_lock_note(unsigned int word);
SRCU__API void srcu__read_lock_note_kind(unsigned int word, unsigned int kind);
SRCU__API void srcu__read_unlock_slow(struct srcu_struct *sp, int idx);
SRCU__API void srcu__wake_gp(unsigned int id);
SRCU__API int  srcu__read_lock_kind_slow(struct srcu_struct *sp, unsigned int kind);
SRCU__API void srcu__up_read_fast_slow(struct srcu_struct *sp, unsigned int word);
SRCU__API void srcu__debug_kind_fail(struct srcu_struct *sp, unsigned int used);

/* Between loading the index and counting on it (the stale-reader
 * window): nothing, except in the never-installed test build, which
 * defines it first (src/torture_hook.h). */
#ifndef SRCU__READ_LOCK_HOOK
#define SRCU__READ_LOCK_HOOK() do { } while (0)
#endif

/* A section of kind `used` (SRCU__KIND_*; ANY for srcu_read_lock()'s)
 * entering sp: the checking build (-DSRCU_DEBUG) checks every one against
 * the domain's reader kind, out of line when it fails (the kernel's
 * CONFIG_PROVE_RCU).  Elsewhere the check is the slow path's and the
 * note's (a thread's first lock of each index) only, and nothing is
 * added here. */
#ifdef SRCU_DEBUG
static inline void srcu__debug_kind(struct srcu_struct *sp, unsigned int used)
{
	unsigned int kind = __atomic_load_n(&sp->srcu__reader_kind, __ATOMIC_RELAXED);

	if (SRCU__UNLIKELY(kind != used && !(kind == SRCU__KIND_ANY && used == SRCU__KIND_FAST)))
		srcu__debug_kind_fail(sp, used);
}
#else
#define srcu__debug_kind(sp, used) do { } while (0)
#endif

/* Tells the compiler what srcu_read_lock() returns, so that an unlock
 * inlined after it drops its index check. */
static inline int srcu__index(int idx)
{
	if ((unsigned int)idx > 1)
		__builtin_unreachable();
	return idx;
}

/* The fast path's count of a lock in word w of this thread's counters t
 * (slot word plus index), once the checks have passed.  Shared with
 * the index-less sections (<srcu/nest.h>). */
static inline void srcu__lock_word(unsigned long *t, unsigned int w)
{
	SRCU__READ_LOCK_HOOK();
	if (SRCU__UNLIKELY(srcu__lock_count(t + w)))
		srcu__read_lock_note(w);   /* once per thread, domain and index */
	/* B: pairs with A (membarrier) in srcu__gp_readers_done(); keeps the
	 * critical section's accesses after the count, as the compiler sees
	 * it; membarrier turns this into a full fence when it matters. */
	srcu__read_barrier();
}

/* The same for the fast kinds' sections (SRCU__KIND_*), whose first
 * lock per thread, domain and index checks the domain's reader kind. */
static inline void srcu__lock_word_kind(unsigned long *t, unsigned int w, unsigned int kind)
{
	SRCU__READ_LOCK_HOOK();
	if (SRCU__UNLIKELY(srcu__lock_count(t + w)))
		srcu__read_lock_note_kind(w, kind);
	/* B, as in srcu__lock_word(). */
	srcu__read_barrier();
}

/* Every lock's fast path once it has loaded this thread's counters t and
 * the domain's lock word w (srcu_read_lock(), the fast kinds' locks,
 * <srcu/nest.h>'s srcu__nest_lock()): count, the caller's count in word w
 * of t (srcu__lock_word() or srcu__lock_word_kind()), or else slow, the
 * caller's slow path (a return, or an assignment to w), where the fast
 * path cannot count: this thread's first section, a static domain's first
 * use, the fence backend, or misuse.  Two tests, each with its own copy
 * of slow, not one "||" (which clang compiles to a setb and a second
 * branch).  A macro, not a function handing the slow path back to its
 * caller: each caller compiles exactly as when it wrote these lines out. */
#define SRCU__LOCK_FAST(t, w, count, slow) do { \
	if (SRCU__UNLIKELY(!(t))) \
		slow; \
	else if (SRCU__UNLIKELY((w) < SRCU__WORD_FIRST)) \
		slow; \
	else \
		count; \
	} while (0)

/* The fast path's count of the unlock matching a lock of word w. */
static inline void srcu__unlock_word(unsigned long *t, unsigned int w)
{
	SRCU__TSAN_RELEASE(&srcu__gp_waits[w]);
	/* C: the critical section before the count, as the compiler sees
	 * it; pairs with A (membarrier) in srcu__gp_readers_done().  No
	 * release on any CPU: a check that sums this count before its
	 * membarrier had the membarrier's fence point land after the count
	 * in this thread, and so after every access of the section
	 * (doc/design.md, "The argument in C11 terms"; model/litmus's
	 * *-RS-plain-unlock tests on AArch64 and POWER). */
	srcu__read_barrier();
	srcu__owner_inc(t + w, 2);   /* unlock[idx] */
	/* W: pairs with the membarrier after the GP sets its waiting flag in
	 * sleep_until_done(): either its scan sees this count or we see
	 * the flag. */
	srcu__read_barrier();
	/* The domain may be freed from here on: touch only srcu__gp_waits[]. */
	if (SRCU__UNLIKELY(__atomic_load_n(&srcu__gp_waits[w], __ATOMIC_RELAXED)))
		srcu__wake_gp(w / SRCU__SLOT_WORDS);
}

/*
 * Enter a read-side critical section of sp.  Returns the index to pass to
 * srcu_read_unlock() from the same thread.  May nest and overlap freely.
 */
static inline int srcu_read_lock(struct srcu_struct *sp)
{
	unsigned long *t = (unsigned long *)srcu__slots;
	unsigned int w = srcu__load_word(&sp->lock_word);

	srcu__debug_kind(sp, SRCU__KIND_ANY);
	SRCU__LOCK_FAST(t, w, srcu__lock_word(t, w),
			return srcu__index(srcu__read_lock_slow(sp)));
	return (int)(w & 1);
}

/*
 * Leave the read-side critical section that srcu_read_lock() returned idx
 * for.  Must run in the thread that locked (see srcu_up_read() otherwise).
 */
static inline void srcu_read_unlock(struct srcu_struct *sp, int idx)
{
	unsigned long *t = (unsigned long *)srcu__slots;
	unsigned int w = srcu__load_word(&sp->slot_word);

	if (SRCU__UNLIKELY(!t || w < SRCU__WORD_FIRST || (unsigned int)idx > 1)) {
		srcu__read_unlock_slow(sp, idx);
		return;
	}
	/* An unlock without its lock is caught by the next grace-period scan
	 * (gp.c's checked_locks()) or at thread exit, off this path. */
	srcu__unlock_word(t, w + (unsigned int)idx);
}

/* ---- Fast readers (the kernel's srcu_read_lock_fast(), 6.15) ----
 *
 * The kernel returns the per-CPU counter it counted on, so that the
 * unlock needs no index-to-counter step.  Here the thread's counter is
 * named by its word number in this thread's table (slot word plus index,
 * the lock word's value), not by its address: the unlock counts at word
 * +2 of the same slot (unlock[idx], struct srcu__slot), and flags and
 * wakes through srcu__gp_waits[] at the same word number, so it reads
 * neither the domain nor an index.  A word number, not an address, so
 * that an unlock in the wrong thread counts in its own slot (a misuse
 * the grace-period scans report) instead of racing on another thread's
 * counter, and so that the up/down forms can count in the up-thread's
 * slot.  A section the slow path counted (a thread's first, the fence
 * backend) is named by 2 | idx: below SRCU__WORD_FIRST, never NULL, and
 * sent to srcu_read_unlock()'s slow path.  The opaque type is never
 * defined: the pointer is not to be followed. */
static inline struct srcu_ctr *srcu__ctr(unsigned int w)
{
	return (struct srcu_ctr *)(uintptr_t)w;
}

/* srcu_read_lock()'s path for the fast kinds: the counter of the count,
 * the slow path's 2 | idx if it counted. */
static inline struct srcu_ctr *srcu__read_lock_fast_kind(struct srcu_struct *sp,
							 unsigned int kind)
{
	unsigned long *t = (unsigned long *)srcu__slots;
	unsigned int w = srcu__load_word(&sp->lock_word);

	srcu__debug_kind(sp, kind);
	SRCU__LOCK_FAST(t, w, srcu__lock_word_kind(t, w, kind),   /* B */
			return srcu__ctr(2u | (unsigned int)srcu__read_lock_kind_slow(sp, kind)));
	return srcu__ctr(w);
}

/*
 * srcu_read_lock()'s section, returning the counter for
 * srcu_read_unlock_fast() in the same thread.  Nests and overlaps freely
 * with both kinds of section.
 */
static inline struct srcu_ctr *srcu_read_lock_fast(struct srcu_struct *sp)
{
	return srcu__read_lock_fast_kind(sp, SRCU__KIND_FAST);
}

/*
 * Leave the section srcu_read_lock_fast() returned scp for, in the thread
 * that entered it.  sp only names the domain in a slow path's message.
 */
static inline void srcu_read_unlock_fast(struct srcu_struct *sp, struct srcu_ctr *scp)
{
	unsigned long *t = (unsigned long *)srcu__slots;
	unsigned int w = srcu__ctr_word(scp);

	/* A section the slow path counted, or no counters any more (a fork
	 * child fell back to fences): srcu_read_unlock()'s slow path, whose
	 * checks report a bad index. */
	if (SRCU__UNLIKELY(!t || w < SRCU__WORD_FIRST)) {
		srcu__read_unlock_slow(sp, (int)(w & 1));
		return;
	}
	/* C, the count in unlock[idx] (word w + 2), W and the wake-up:
	 * srcu_read_unlock()'s, from the counter's word. */
	srcu__unlock_word(t, w);
}

/*
 * A section of a DEFINE_SRCU_FAST_UPDOWN domain that may end in another
 * thread (the kernel's srcu_down_read_fast(), 6.16): counted as
 * srcu_read_lock_fast()'s, in the calling thread's counters, without an
 * atomic read-modify-write.
 */
static inline struct srcu_ctr *srcu_down_read_fast(struct srcu_struct *sp)
{
	return srcu__read_lock_fast_kind(sp, SRCU__KIND_FAST_UPDOWN);
}

/*
 * End the section srcu_down_read_fast() returned scp for, in any thread:
 * the unlock counts in the calling thread's counters at the same word
 * (the counter names a word number, not a thread), and the grace
 * period's sums, over every thread, balance.  A thread's first count of
 * the domain's index puts it in the domain's reader set first (the lock
 * word lacks SRCU__LOCK_NOTED: the slow path), so that the scans read
 * the unlock.
 */
static inline void srcu_up_read_fast(struct srcu_struct *sp, struct srcu_ctr *scp)
{
	unsigned long *t = (unsigned long *)srcu__slots;
	unsigned int w = srcu__ctr_word(scp);

	if (SRCU__UNLIKELY(!t || w < SRCU__WORD_FIRST)) {
		srcu__up_read_fast_slow(sp, w);
		return;
	}
	/* The NOTED bit of this thread's lock word of the index: its own,
	 * never written by another thread. */
	if (SRCU__UNLIKELY((long)__atomic_load_n(t + w, __ATOMIC_RELAXED) >= 0)) {
		srcu__up_read_fast_slow(sp, w);
		return;
	}
	/* C, W and the wake-up: srcu_read_unlock()'s, in this thread's
	 * counters. */
	srcu__unlock_word(t, w);
}

/* The kernel's names for the same pair (6.19): a lock-like spelling of
 * srcu_down_read_fast()/srcu_up_read_fast(). */
static inline struct srcu_ctr *srcu_read_lock_fast_updown(struct srcu_struct *sp)
{
	return srcu_down_read_fast(sp);
}

static inline void srcu_read_unlock_fast_updown(struct srcu_struct *sp, struct srcu_ctr *scp)
{
	srcu_up_read_fast(sp, scp);
}

/* The kernel's _notrace names for the fast pair (6.17); userspace
 * traces nothing. */
static inline struct srcu_ctr *srcu_read_lock_fast_notrace(struct srcu_struct *sp)
{
	return srcu_read_lock_fast(sp);
}

static inline void srcu_read_unlock_fast_notrace(struct srcu_struct *sp, struct srcu_ctr *scp)
{
	srcu_read_unlock_fast(sp, scp);
}

/* The kernel's other names for the same section (<srcu.h>). */
static inline int srcu_read_lock_nmisafe(struct srcu_struct *sp)
{
	return srcu_read_lock(sp);
}
static inline void srcu_read_unlock_nmisafe(struct srcu_struct *sp, int idx)
{
	srcu_read_unlock(sp, idx);
}
static inline int srcu_read_lock_notrace(struct srcu_struct *sp)
{
	return srcu_read_lock(sp);
}
static inline void srcu_read_unlock_notrace(struct srcu_struct *sp, int idx)
{
	srcu_read_unlock(sp, idx);
}

/* B and C above are compiler barriers: with the membarrier backend the
 * lock and unlock imply no fence on any CPU (the fence backend's slow
 * path has one, but code must not count on the backend), so these are
 * real. */
static inline void smp_mb__after_srcu_read_unlock(void)
{
	srcu__full_fence();
}
static inline void smp_mb__after_srcu_read_lock(void)
{
	srcu__full_fence();
}

/* SRCU_GUARD(), SRCU_SCOPED_GUARD() and their _FAST forms (<srcu.h>): a
 * section held by a variable whose cleanup ends it (the kernel's
 * DEFINE_LOCK_GUARD_1()).  SRCU__DEFINE_GUARD() defines struct type, which
 * holds the domain, what lock(sp) returned and done (which ends the scoped
 * form's one-pass for loop; the cleanup runs however the loop is left),
 * and type_enter() and type_exit(). */
#define SRCU__CAT2(a, b) a##b
#define SRCU__CAT(a, b) SRCU__CAT2(a, b)
#define SRCU__DEFINE_GUARD(type, section_type, lock, unlock) \
	struct type { \
		struct srcu_struct *sp; \
		section_type section; \
		int done; \
	}; \
	static inline struct type type##_enter(struct srcu_struct *sp) \
	{ \
		struct type g; \
		g.sp = sp; \
		g.section = lock(sp); \
		g.done = 0; \
		return g; \
	} \
	static inline void type##_exit(struct type *g) \
	{ \
		unlock(g->sp, g->section); \
	}
SRCU__DEFINE_GUARD(srcu__guard, int, srcu_read_lock, srcu_read_unlock)
SRCU__DEFINE_GUARD(srcu__guard_fast, struct srcu_ctr *, srcu_read_lock_fast,
		   srcu_read_unlock_fast)
/* A guard of type in variable g: to the end of the block, or (scoped) for
 * the next statement. */
#define SRCU__GUARD_OF(type, sp, g) \
	struct type g __attribute__((cleanup(type##_exit), unused)) = type##_enter(sp)
#define SRCU__SCOPED_GUARD_OF(type, sp, g) \
	for (struct type g __attribute__((cleanup(type##_exit))) = type##_enter(sp); \
	     !g.done; g.done = 1)
#define SRCU__GUARD(sp, g) SRCU__GUARD_OF(srcu__guard, sp, g)
#define SRCU__SCOPED_GUARD(sp, g) SRCU__SCOPED_GUARD_OF(srcu__guard, sp, g)
#define SRCU__GUARD_FAST(sp, g) SRCU__GUARD_OF(srcu__guard_fast, sp, g)
#define SRCU__SCOPED_GUARD_FAST(sp, g) SRCU__SCOPED_GUARD_OF(srcu__guard_fast, sp, g)

#ifdef __cplusplus
}
#endif
#endif /* SRCU__READ_H */
