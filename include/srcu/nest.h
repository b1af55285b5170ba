/*
 * srcu/nest.h: sections without an index, for the APIs whose lock returns
 * nothing: included by <srcu_urcu.h> (liburcu's flavours) and <srcu.hpp>
 * (rcu_domain), after <srcu.h>.  Do not include it yourself.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU__NEST_H
#define SRCU__NEST_H

#ifndef SRCU_H
#error "include <srcu.h>, not <srcu/nest.h>"
#endif

#include <stdbool.h>

#include "read.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Sections without an index ----
 *
 * For APIs whose lock returns nothing (srcu_urcu.h's liburcu flavours,
 * srcu.hpp's rcu_domain): one word per thread and (domain, user) keeps
 * what the outermost unlock needs.  Its upper half is the counter word
 * the outermost lock counted in (slot word plus index; below 65,536, so
 * 16 bits suffice where a long has 32), so that the unlock counts there
 * without reading the domain again, or, for a section the slow path
 * counted (a thread's first, the fence backend), its index, below
 * SRCU__WORD_FIRST; the lower half is the nesting depth.  Halves, not a
 * 16-bit top: on LP64 the depth test is then a 32-bit compare, cheaper
 * than a 48-bit mask (doc/performance.md).
 *
 * A signal handler may run a whole (balanced) section between any two
 * steps: the word is read once and written once, with the domain's count
 * taken before the word says so and released after it stops saying so,
 * so a handler finds either no section (and takes its own) or ours (and
 * nests inside it), and leaves the word as it found it (doc/design.md,
 * "Sections without an index").  SRCU__NEST_HOOK() runs between the
 * steps: nothing, except in tests that raise signals there. */
#ifndef SRCU__NEST_HOOK
#define SRCU__NEST_HOOK() do { } while (0)
#endif
#define SRCU__NEST_SHIFT (4 * sizeof(unsigned long))
#define SRCU__NEST_DEPTH ((1ul << SRCU__NEST_SHIFT) - 1)

static inline void srcu__nest_lock(struct srcu_struct *sp, unsigned long *state)
{
	unsigned long s = __atomic_load_n(state, __ATOMIC_RELAXED);

	SRCU__NEST_HOOK();
	srcu__debug_kind(sp, SRCU__KIND_ANY);
	/* Outermost is the common case: laid out straight. */
	if (__builtin_expect(s == 0, 1)) {
		unsigned long *t = (unsigned long *)srcu__slots;
		unsigned int w = srcu__load_word(&sp->lock_word);

		SRCU__LOCK_FAST(t, w, srcu__lock_word(t, w),
				w = (unsigned int)srcu__index(srcu__read_lock_slow(sp)));
		SRCU__NEST_HOOK();
		/* The section is ours before the word says so: orders the
		 * count before the store against this thread's own signal
		 * handlers (compiler only; pairs with none: B above orders the
		 * section for the grace period). */
		srcu__barrier();
		__atomic_store_n(state, ((unsigned long)w << SRCU__NEST_SHIFT) | 1, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(state, s + 1, __ATOMIC_RELAXED);
	}
}

/* False, with nothing done, when the word holds no section: an unlock
 * without its lock, which the caller reports. */
static inline bool srcu__nest_unlock(struct srcu_struct *sp, unsigned long *state)
{
	unsigned long s = __atomic_load_n(state, __ATOMIC_RELAXED);

	SRCU__NEST_HOOK();
	if (__builtin_expect((s & SRCU__NEST_DEPTH) == 1, 1)) {
		unsigned long *t = (unsigned long *)srcu__slots;
		unsigned int w = (unsigned int)(s >> SRCU__NEST_SHIFT);

		/* The word stops saying so before the section ends: the same
		 * compiler-only ordering against this thread's handlers (C
		 * and W in srcu__unlock_word() order it for grace periods). */
		__atomic_store_n(state, 0, __ATOMIC_RELAXED);
		srcu__barrier();
		SRCU__NEST_HOOK();
		/* No counters any more (a fork child fell back to fences):
		 * srcu_read_unlock()'s slow path, as for any section. */
		if (__builtin_expect(w >= SRCU__WORD_FIRST && t != 0, 1))
			srcu__unlock_word(t, w);
		else
			srcu_read_unlock(sp, srcu__index((int)(w & 1)));
		return true;
	}
	if (SRCU__UNLIKELY(s == 0))
		return false;
	__atomic_store_n(state, s - 1, __ATOMIC_RELAXED);
	return true;
}

#ifdef __cplusplus
}
#endif
#endif /* SRCU__NEST_H */
