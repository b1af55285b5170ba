/*
 * srcu/impl.h: the private half of <srcu.h>, included by it.  Do not
 * include it yourself, and do not touch what it defines: the layout of a
 * domain and of a thread's counters, which the inline read side needs,
 * and that read side itself.  The API, with what each call does and its
 * errors, is in <srcu.h>; the ordering argument behind every barrier
 * named here (A, B, C, W, ...) is in doc/design.md.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_IMPL_H
#define SRCU_IMPL_H

#ifndef SRCU_H
#error "include <srcu.h>, not <srcu/impl.h>"
#endif

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with -fvisibility=hidden; these are its exports. */
#define SRCU__API __attribute__((visibility("default")))

/* ---------------------------------------------------------------------- */
/* Private layout, needed by the inline fast paths.  Do not touch.        */

#define SRCU__MAX_IDS     16384u                /* live domains + sentinels */
/* Sentinel ids send the fast path to the slow path.  A zeroed srcu_struct
 * is thus an unused static domain, never an alias of a live one. */
#define SRCU__ID_UNSET    0u                    /* static, not yet used   */
#define SRCU__ID_DEAD     1u                    /* after cleanup          */
/* First real id: the ids below it are sentinels, whose slots of a
 * thread's table hold the thread's reader record instead (two slots of
 * 8-byte counters, four of 4-byte ones). */
#if __SIZEOF_LONG__ == 8
#define SRCU__ID_FIRST    2u
#else
#define SRCU__ID_FIRST    4u
#endif
/* Process-shared domains (doc/shared.md) take ids from blocks reserved
 * at the top, the same in every process: 8 blocks of 256 ids (one page
 * of srcu__gp_waits[], two of a thread's counters), of which a shared
 * domain uses the first. */
#define SRCU__SHARED_BLOCK_IDS 256u
#define SRCU__SHARED_BLOCKS    8u
#define SRCU__SHARED_ID_FIRST  (SRCU__MAX_IDS - SRCU__SHARED_BLOCKS * SRCU__SHARED_BLOCK_IDS)

/* One thread's counters for one domain.  Written only by the owning
 * thread; read by grace-period scans.  Counts only ever increase: a
 * domain index is idle when the sum of its unlock counts over all threads
 * equals the sum of its lock counts (modern Tree SRCU's scheme).  A lock
 * word's top bit (SRCU__LOCK_NOTED) says that the record is in the
 * domain's reader set; counts are taken without it, modulo 2^63 (2^31 where a long has
 * 32 bits). */
struct srcu__slot {
	unsigned long lock[2];
	unsigned long unlock[2];
};
#define SRCU__LOCK_NOTED (~0ul ^ (~0ul >> 1))
/* Read-side addresses are counted in words: domain id's slot starts at
 * word id * SRCU__SLOT_WORDS of a thread's table, lock[idx] is word +idx,
 * unlock[idx] word +2+idx.  Words below SRCU__WORD_FIRST belong to the
 * sentinel ids and send the fast path to the slow path.  The domain holds
 * its words in 16 bits, so that even a garbage srcu_struct stays inside
 * the table (hence 16384 ids): its words are below 65536, an unlock
 * counts at most 3 words past its word (word 65538) and reads
 * srcu__gp_waits[] at most 1 past (65536).  So the table, and
 * srcu__gp_waits[], end with a spill slot that no id names, where only
 * such garbage counts land: no test on the fast path. */
#define SRCU__SLOT_WORDS  4u
#define SRCU__WORD_FIRST  (SRCU__ID_FIRST * SRCU__SLOT_WORDS)
#define SRCU__TABLE_WORDS ((SRCU__MAX_IDS + 1) * SRCU__SLOT_WORDS)

/* The library's thread-local words: initial-exec with glibc, one
 * %fs-relative load also from code linked against libsrcu.so, even in a
 * module dlopen()ed later (glibc keeps static TLS to spare for that).
 * musl has none to spare and refuses to dlopen() a module with such an
 * access to another's TLS: there the compiler picks (initial-exec in
 * programs, a __tls_get_addr() call in -fPIC code). */
#ifdef __GLIBC__
#define SRCU__TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define SRCU__TLS_FAST
#endif

/* This thread's counters, indexed by domain id (SRCU__TABLE_WORDS words):
 * a 516 KiB reservation of which only the pages of ids the thread uses get
 * memory.  NULL until the thread's first read-side section, and always
 * NULL with the fence backend (whose readers take the out-of-line path). */
SRCU__API extern __thread struct srcu__slot *srcu__slots SRCU__TLS_FAST;
/* A grace period that sleeps waiting for readers of domain id announces
 * it here, outside the domain: a reader checks it after its last count,
 * when the domain may already have been cleaned up and freed.  Four words
 * per id, laid out like the id's slot so that an unlock finds its flag at
 * the word number of its own counter: [id*4 + idx] nonzero while a GP
 * sleeps on that index, [id*4 + 2] the futex word each waking reader
 * bumps. */
#define SRCU__WAIT_SEQ    2u
SRCU__API extern unsigned int srcu__gp_waits[SRCU__TABLE_WORDS];

/* ---------------------------------------------------------------------- */
/* The domain.                                                            */

/* The private area's size: three 64-byte lines (src/layout.h asserts
 * that its layout fits). */
#define SRCU__PRIVATE_SIZE 192u

struct srcu_struct {
	/* Read-side state: all the inline fast path reads.  Both words are 0
	 * in a static domain not yet used. */
	uint16_t slot_word;      /* id * SRCU__SLOT_WORDS: its slot in tables */
	uint16_t lock_word;      /* slot_word + current index: the GP flips it */
	/* SRCU__KIND_*: the reader kind fixed at initialization, checked
	 * off the fast path (the slow path and a thread's first lock of
	 * each index).  Set by the initializer, kept by cleanup. */
	unsigned int srcu__reader_kind;
	const char *name;        /* used in every message; may be NULL */

	/* A shared domain's name, kept in its file (name would point into
	 * one process's memory); unused by private domains. */
	unsigned char srcu__name_buf[64 - 16];

	/* Everything else is private (src/layout.h): the update side, three
	 * groups a cache line each, from the domain's second line.  Fixed
	 * size, zero in a static domain, so that DEFINE_SRCU needs no
	 * allocation and sizeof is an ABI fact (doc/abi.md).  The type keeps
	 * malloc()'s alignment; the lines are the domain's own when it is
	 * 64-byte aligned, as DEFINE_SRCU makes it. */
	unsigned char srcu__private[SRCU__PRIVATE_SIZE] __attribute__((aligned(8)));
};

/* Reader kinds, of a domain and of a section.  A domain of kind ANY (the
 * default) takes srcu_read_lock() (and srcu_down_read()) sections and
 * srcu_read_lock_fast() ones, mixed freely; FAST (DEFINE_SRCU_FAST,
 * init_srcu_struct_fast()) takes srcu_read_lock_fast() ones only;
 * FAST_UPDOWN (DEFINE_SRCU_FAST_UPDOWN, init_srcu_struct_fast_updown())
 * only srcu_down_read_fast() / srcu_read_lock_fast_updown() ones, which
 * may end in another thread. */
#define SRCU__KIND_ANY         0u
#define SRCU__KIND_FAST        1u
#define SRCU__KIND_FAST_UPDOWN 2u

/* A static domain: id SRCU__ID_UNSET, named, the rest zero. */
#define SRCU__INITIALIZER(domain) SRCU__INITIALIZER_KIND(domain, SRCU__KIND_ANY)
#define SRCU__INITIALIZER_KIND(domain, kind) { 0, 0, kind, #domain, { 0 }, { 0 } }
/* Static domains start a cache line: the update side's groups are then
 * lines of their own. */
#define SRCU__LINE __attribute__((aligned(64)))

/* Slow paths of the inline functions below. */
SRCU__API int  srcu__read_lock_slow(struct srcu_struct *sp);
SRCU__API void srcu__read_lock_note(unsigned int word);
SRCU__API void srcu__read_lock_note_kind(unsigned int word, unsigned int kind);
SRCU__API void srcu__read_unlock_slow(struct srcu_struct *sp, int idx);
SRCU__API void srcu__wake_gp(unsigned int id);
SRCU__API int  srcu__read_lock_kind_slow(struct srcu_struct *sp, unsigned int kind);
SRCU__API void srcu__up_read_fast_slow(struct srcu_struct *sp, unsigned int word);
SRCU__API void srcu__debug_kind_fail(struct srcu_struct *sp, unsigned int used);



/* ---------------------------------------------------------------------- */
/* Inline read side.                                                      */

/* Between loading the index and counting on it (the stale-reader
 * window): nothing, except in the never-installed test build, which
 * defines it first (src/torture_hook.h). */
#ifndef SRCU__READ_LOCK_HOOK
#define SRCU__READ_LOCK_HOOK() do { } while (0)
#endif

#define SRCU__UNLIKELY(x) __builtin_expect(!!(x), 0)

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

/* ThreadSanitizer cannot see the grace period's ordering (membarrier, or
 * the library's uninstrumented code), and would call a callback's free()
 * and a reader's access a race.  In a program built with -fsanitize=thread
 * each unlock therefore releases on its domain index's waiting flag, and
 * the library (through a weak reference, so that a plain libsrcu.so works)
 * acquires both of a domain's flags when a grace period has ended for a
 * caller or a callback: happens-before from every section the GP waited
 * for to what follows it.  Nothing is added to other builds. */
#if defined(__SANITIZE_THREAD__)
#define SRCU__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SRCU__TSAN 1
#endif
#endif
#ifdef SRCU__TSAN
void __tsan_release(void *addr);
#define SRCU__TSAN_RELEASE(addr) __tsan_release((void *)(addr))
#else
#define SRCU__TSAN_RELEASE(addr) do { } while (0)
#endif
#define srcu__barrier() __asm__ __volatile__("" ::: "memory")

/* Load one of a domain's 16-bit read-side words.  On x86-64 through asm,
 * so that the compiler does not know the value is below 65536 (knowing it,
 * gcc splits the unlock's address arithmetic: doc/performance.md, "Read
 * side code generation").  A plain load either way: relaxed atomic. */
#if defined(__x86_64__)
static inline unsigned int srcu__load_word(const uint16_t *p)
{
	unsigned int w;

	__asm__("movzwl %1, %0" : "=r"(w) : "m"(*p));
	return w;
}
#else
#define srcu__load_word(p) ((unsigned int)__atomic_load_n((p), __ATOMIC_RELAXED))
#endif

/* Tells the compiler what srcu_read_lock() returns, so that an unlock
 * inlined after it drops its index check. */
static inline int srcu__index(int idx)
{
	if ((unsigned int)idx > 1)
		__builtin_unreachable();
	return idx;
}

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
#if defined(__x86_64__)
#define srcu__owner_inc(p, n) \
	__asm__ __volatile__("addq $1, %c1(%0)" :: "r"(p), "i"(8 * (n)) : "memory")
#elif defined(__i386__)
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
#if defined(__x86_64__) || defined(__i386__)
static inline bool srcu__lock_count(unsigned long *p)
{
#if defined(__x86_64__)
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

/* The fast path's count of a lock in word w of this thread's counters t
 * (slot word plus index), once the checks have passed.  Shared with
 * srcu_urcu.h's index-less sections. */
static inline void srcu__lock_word(unsigned long *t, unsigned int w)
{
	SRCU__READ_LOCK_HOOK();
	if (SRCU__UNLIKELY(srcu__lock_count(t + w)))
		srcu__read_lock_note(w);   /* once per thread, domain and index */
	/* B: pairs with A (membarrier) in srcu__gp_readers_done(); keeps the
	 * critical section's accesses after the count, as the compiler sees
	 * it; membarrier turns this into a full fence when it matters. */
	srcu__barrier();
}

/* The same for the fast kinds' sections (SRCU__KIND_*), whose first
 * lock per thread, domain and index checks the domain's reader kind. */
static inline void srcu__lock_word_kind(unsigned long *t, unsigned int w, unsigned int kind)
{
	SRCU__READ_LOCK_HOOK();
	if (SRCU__UNLIKELY(srcu__lock_count(t + w)))
		srcu__read_lock_note_kind(w, kind);
	/* B, as in srcu__lock_word(). */
	srcu__barrier();
}

/* Every lock's fast path once it has loaded this thread's counters t and
 * the domain's lock word w (srcu_read_lock(), the fast kinds' locks,
 * srcu__nest_lock()): count, the caller's count in word w of t
 * (srcu__lock_word() or srcu__lock_word_kind()), or else slow, the
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
	srcu__barrier();
	srcu__owner_inc(t + w, 2);   /* unlock[idx] */
	/* W: pairs with the membarrier after the GP sets its waiting flag in
	 * sleep_until_done(): either its scan sees this count or we see
	 * the flag. */
	srcu__barrier();
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

/* The counter's word: 16 bits, as the domain's words, so that a garbage
 * scp counts inside the table too (at most in its spill slot), never past
 * it.  On x86-64 through asm, as srcu__load_word(): knowing where the
 * value came from, gcc keeps two copies of it and spends two moves. */
#if defined(__x86_64__)
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
static inline void srcu__full_fence(void)
{
#if defined(__x86_64__)
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

/* Helgrind does not see C11 release/acquire: a program built with
 * -DSRCU_HELGRIND tells it that publishing a pointer happens before a
 * reader's use of it (the library annotates its grace periods itself).
 * Needs Valgrind's headers; no cost outside Valgrind worth measuring. */
#ifdef SRCU_HELGRIND
#include <valgrind/helgrind.h>
#define SRCU__HG_PUBLISH(pp) do { \
	ANNOTATE_BENIGN_RACE_SIZED((pp), sizeof(*(pp)), "SRCU-protected pointer"); \
	ANNOTATE_HAPPENS_BEFORE(pp); } while (0)
#define SRCU__HG_CONSUME(pp) ANNOTATE_HAPPENS_AFTER(pp)
#else
#define SRCU__HG_PUBLISH(pp) do { } while (0)
#define SRCU__HG_CONSUME(pp) do { } while (0)
#endif

/* srcu_dereference()'s load (doc/design.md, "srcu_dereference(): acquire
 * or dependency").  By default a relaxed load, whose address dependency
 * orders the reader's loads through the pointer on every CPU Linux runs
 * on but Alpha (the kernel's READ_ONCE() and liburcu's rcu_dereference()):
 * a plain ldr on arm64, a plain ld on POWER.  -DSRCU_DEREFERENCE_ACQUIRE
 * makes it an acquire load (ldar, lwsync), which also orders loads that
 * do not depend on the pointer.  ThreadSanitizer knows no dependencies:
 * its builds always acquire, so that it sees the publication. */
#if defined(SRCU_DEREFERENCE_ACQUIRE) || defined(SRCU__TSAN) || defined(__alpha__)
#define SRCU__DEREF_ORDER __ATOMIC_ACQUIRE
#else
#define SRCU__DEREF_ORDER __ATOMIC_RELAXED
#endif

/* The checking build (-DSRCU_DEBUG before including <srcu.h>): a
 * srcu_dereference() outside every section of its domain in this thread,
 * or a _check()/_protected() one whose condition fails too, reports its
 * call site and aborts (the kernel's lockdep splat).  Without it the
 * condition is type-checked, never evaluated (the kernel's "0 && (c)",
 * which unlike sizeof counts as a use for -Wunused-function), and nothing
 * is added. */
SRCU__API __attribute__((noreturn, cold))
void srcu__debug_deref_fail(struct srcu_struct *sp, const char *macro, const char *file,
			    int line, const char *expr, const char *cond);
#ifdef SRCU_DEBUG
#define SRCU__DEBUG_CHECK(sp, c, macro, expr, cond) do { \
	struct srcu_struct *srcu__dsp_ = (sp); \
	if (!(c) && !srcu_read_lock_held(srcu__dsp_)) \
		srcu__debug_deref_fail(srcu__dsp_, macro, __FILE__, __LINE__, expr, cond); \
	} while (0)
#define SRCU__DEBUG_COND(c, macro, expr, cond) do { \
	if (!(c)) \
		srcu__debug_deref_fail(0, macro, __FILE__, __LINE__, expr, cond); \
	} while (0)
#else
#define SRCU__DEBUG_CHECK(sp, c, macro, expr, cond) do { \
	(void)(sp); (void)(0 && (c)); } while (0)
#define SRCU__DEBUG_COND(c, macro, expr, cond) do { (void)(0 && (c)); } while (0)
#endif

/* srcu_dereference(), srcu_dereference_check(), srcu_dereference_protected(),
 * srcu_access_pointer(), srcu_assign_pointer() and srcu_replace_pointer()
 * (<srcu.h>).  Each evaluates p and sp once; c is evaluated only by the
 * checking build. */
#define SRCU__DEREF_LOAD(p) \
	__extension__({ __typeof__(p) srcu__p_ = __atomic_load_n(&(p), SRCU__DEREF_ORDER); \
			SRCU__HG_CONSUME(&(p)); srcu__p_; })
#define SRCU__DEREFERENCE(p, ...) \
	__extension__({ SRCU__DEBUG_CHECK((__VA_ARGS__), 0, "srcu_dereference", #p, 0); \
			SRCU__DEREF_LOAD(p); })
#define SRCU__DEREFERENCE_CHECK(p, sp, ...) \
	__extension__({ SRCU__DEBUG_CHECK(sp, (__VA_ARGS__), "srcu_dereference_check", #p, \
					  #__VA_ARGS__); \
			SRCU__DEREF_LOAD(p); })
/* Update side: the caller's lock orders it, a plain load as the kernel's. */
#define SRCU__DEREFERENCE_PROTECTED(p, ...) \
	__extension__({ SRCU__DEBUG_COND((__VA_ARGS__), "srcu_dereference_protected", #p, \
					 #__VA_ARGS__); \
			(p); })
/* Not for dereferencing: the value, loaded once (READ_ONCE()). */
#define SRCU__ACCESS_POINTER(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define SRCU__ASSIGN_POINTER(p, ...) \
	__extension__({ __typeof__(p) srcu__v_ = (__VA_ARGS__); \
			SRCU__HG_PUBLISH(&(p)); \
			__atomic_store_n(&(p), srcu__v_, __ATOMIC_RELEASE); srcu__v_; })
/* The kernel's rcu_replace_pointer(): the protected load, then the
 * assignment; p evaluated once. */
#define SRCU__REPLACE_POINTER(p, v, ...) \
	__extension__({ __typeof__(p) *srcu__pp_ = &(p), srcu__old_; \
			SRCU__DEBUG_COND((__VA_ARGS__), "srcu_replace_pointer", #p, #__VA_ARGS__); \
			srcu__old_ = *srcu__pp_; \
			(void)SRCU__ASSIGN_POINTER(*srcu__pp_, v); srcu__old_; })

#ifdef __cplusplus
}
#endif
#endif /* SRCU_IMPL_H */
