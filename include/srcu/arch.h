/*
 * srcu/arch.h: the inline read side's compiler and per-architecture
 * pieces, included by <srcu.h>: a domain word's load, the owner-only
 * increment, the lock's count that says whether it was the thread's first,
 * a counter's word, the full fence.  Asm on x86-64 (and i386 for the
 * counts), relaxed atomics elsewhere.  Do not include it yourself.  Each
 * choice is measured in doc/performance.md ("Read side code generation");
 * what orders what is in <srcu/read.h> and doc/design.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU__ARCH_H
#define SRCU__ARCH_H

#ifndef SRCU_H
#error "include <srcu.h>, not <srcu/arch.h>"
#endif

#include <stdbool.h>
#include <stdint.h>

#include "sanitizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The processor: on x86 the read side is asm, one instruction each
 * (below).  SRCU_NO_ASM, defined by the build, keeps to C11 atomics
 * everywhere, as on every other processor: for tools that ignore asm (the
 * model checker's build, model/genmc/, checks this path). */
#if !defined(SRCU_NO_ASM) && defined(__x86_64__)
#define SRCU__ASM_X86_64 1
#endif
#if !defined(SRCU_NO_ASM) && (defined(__x86_64__) || defined(__i386__))
#define SRCU__ASM_X86 1
#endif

/* The compiler's: a branch hint for the slow paths, and a compiler
 * barrier (the read side's B, C and W, <srcu/read.h>; they order for the
 * grace period's membarrier, which makes them fences when it matters). */
#define SRCU__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define srcu__barrier() __asm__ __volatile__("" ::: "memory")
/* The read side's barriers that a grace period's membarrier pairs with
 * (B, C and W, <srcu/read.h>): compiler barriers, where membarrier's IPI
 * lands as a full fence.  The model checker's build defines it to mark
 * those landing points as well (model/genmc/engine.h). */
#ifndef srcu__read_barrier
#define srcu__read_barrier() srcu__barrier()
#endif

/* Load one of a domain's 16-bit read-side words.  On x86-64 through asm,
 * so that the compiler does not know the value is below 65536 (knowing it,
 * gcc splits the unlock's address arithmetic: doc/performance.md, "Read
 * side code generation").  A plain load either way: relaxed atomic. */
#if defined(SRCU__ASM_X86_64)
static inline unsigned int srcu__load_word(const uint16_t *p)
{
	unsigned int w;

	__asm__("movzwl %1, %0" : "=r"(w) : "m"(*p));
	return w;
}
#else
#define srcu__load_word(p) ((unsigned int)__atomic_load_n((p), __ATOMIC_RELAXED))
#endif

/* Owner-only increment of the counter n words past p, which scans read
 * concurrently.  No lock prefix and no fence: only this thread writes it,
 * and the store of an aligned word is single-copy atomic.  On x86 (64 and 32-bit) one
 * instruction, as the kernel's this_cpu_inc(), addressed through one
 * register (an indexed form, or a load and a store, is slower:
 * doc/performance.md).  Elsewhere a relaxed atomic add (one LSE
 * instruction or an LL/SC loop on arm64): a separate load and store would
 * lose the counts of a signal handler's section that ran between them.
 * One instruction is atomic against this thread's handlers too.  Orders
 * nothing by itself: the callers' barriers do. */
#if defined(SRCU__ASM_X86_64)
#define srcu__owner_inc(p, n) \
	__asm__ __volatile__("addq $1, %c1(%0)" :: "r"(p), "i"(8 * (n)) : "memory")
#elif defined(SRCU__ASM_X86)
#define srcu__owner_inc(p, n) \
	__asm__ __volatile__("addl $1, %c1(%0)" :: "r"(p), "i"(4 * (n)) : "memory")
#else
#define srcu__owner_inc(p, n) \
	((void)__atomic_fetch_add((p) + (n), 1, __ATOMIC_RELAXED))
#endif

/* Count a lock in the word at p (owner-only, as srcu__owner_inc()) and
 * say whether the word lacks SRCU__LOCK_NOTED: the thread's first lock of
 * this domain index, which must put the thread in the domain's reader
 * set.  On x86 the add's sign flag says it, one predicted branch. */
#if defined(SRCU__ASM_X86)
static inline bool srcu__lock_count(unsigned long *p)
{
#if defined(SRCU__ASM_X86_64)
	__asm__ goto("addq $1, (%0)\n\tjns %l[unnoted]" : : "r"(p) : "memory", "cc" : unnoted);
#else
	__asm__ goto("addl $1, (%0)\n\tjns %l[unnoted]" : : "r"(p) : "memory", "cc" : unnoted);
#endif
	return false;
unnoted:
	return true;
}
#else
static inline bool srcu__lock_count(unsigned long *p)
{
	return (long)__atomic_add_fetch(p, 1, __ATOMIC_RELAXED) >= 0;
}
#endif

/* A fast section's counter (<srcu/read.h>, srcu__ctr()) as its word:
 * 16 bits, as the domain's words, so that a garbage scp counts inside the
 * table too (at most in its spill slot), never past it.  On x86-64
 * through asm, as srcu__load_word(): knowing where the value came from,
 * gcc keeps two copies of it and spends two moves. */
struct srcu_ctr;
#if defined(SRCU__ASM_X86_64)
static inline unsigned int srcu__ctr_word(struct srcu_ctr *scp)
{
	unsigned int w;

	__asm__("movzwl %w1, %0" : "=r"(w) : "r"(scp));
	return w;
}
#else
static inline unsigned int srcu__ctr_word(struct srcu_ctr *scp)
{
	return (unsigned int)(uintptr_t)scp & 0xffffu;
}
#endif

/* A full fence, seq-cst: smp_mb__after_srcu_read_lock()'s and
 * smp_mb__after_srcu_read_unlock()'s (<srcu/read.h>). */
static inline void srcu__full_fence(void)
{
#if defined(SRCU__ASM_X86_64)
	/* A locked RMW on the stack: a full fence, cheaper than mfence, and
	 * asm, which gcc's -fsanitize=thread accepts (it rejects fences). */
	__asm__ __volatile__("lock orq $0, (%%rsp)" ::: "memory", "cc");
#elif defined(SRCU__TSAN)
	static int srcu__fence_word;

	__atomic_fetch_add(&srcu__fence_word, 0, __ATOMIC_SEQ_CST);
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

#ifdef __cplusplus
}
#endif
#endif /* SRCU__ARCH_H */
