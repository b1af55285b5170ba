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

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header (srcu_version(): of the library loaded).
 * CMakeLists.txt reads them: they are the project's one version. */
#define SRCU_VERSION_MAJOR 0
#define SRCU_VERSION_MINOR 1
#define SRCU_VERSION_PATCH 0
#define SRCU__STR2(x) #x
#define SRCU__STR(x) SRCU__STR2(x)
#define SRCU_VERSION_STRING SRCU__STR(SRCU_VERSION_MAJOR) "." \
	SRCU__STR(SRCU_VERSION_MINOR) "." SRCU__STR(SRCU_VERSION_PATCH)
/* For #if: 0x00MMmmpp. */
#define SRCU_VERSION_NUMBER \
	((SRCU_VERSION_MAJOR << 16) | (SRCU_VERSION_MINOR << 8) | SRCU_VERSION_PATCH)

/* The library is built with -fvisibility=hidden; these are its exports. */
#define SRCU__API __attribute__((visibility("default")))

/* ---------------------------------------------------------------------- */
/* Private layout, needed by the inline fast paths.  Do not touch.        */

#define SRCU__MAX_IDS     16384u                /* live domains + sentinels */
/* Sentinel ids send the fast path to the slow path.  A zeroed srcu_struct
 * is thus an unused static domain, never an alias of a live one. */
#define SRCU__ID_UNSET    0u                    /* static, not yet used   */
#define SRCU__ID_DEAD     1u                    /* after cleanup          */
#define SRCU__ID_FIRST    2u                    /* first real id          */
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
 * domain's reader set; counts are taken without it, modulo 2^63. */
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

/* This thread's counters, indexed by domain id (SRCU__TABLE_WORDS words):
 * a 516 KiB reservation of which only the pages of ids the thread uses get
 * memory.  NULL until the
 * thread's first read-side section, and always NULL with the fence
 * backend (whose readers take the out-of-line path).  Initial-exec TLS:
 * one %fs-relative load, also from programs linked against libsrcu.so. */
SRCU__API extern __thread struct srcu__slot *srcu__slots
	__attribute__((tls_model("initial-exec")));
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
	unsigned int srcu__reserved;
	const char *name;        /* used in every message; may be NULL */

	unsigned char srcu__pad[64 - 16];

	/* Everything else is private (src/layout.h): the update side, three
	 * groups a cache line each, from the domain's second line.  Fixed
	 * size, zero in a static domain, so that DEFINE_SRCU needs no
	 * allocation and sizeof is an ABI fact (doc/abi.md).  The type keeps
	 * malloc()'s alignment; the lines are the domain's own when it is
	 * 64-byte aligned, as DEFINE_SRCU makes it. */
	unsigned char srcu__private[SRCU__PRIVATE_SIZE] __attribute__((aligned(8)));
};

#define SRCU_INITIALIZER(domain) { 0, 0, 0, #domain, { 0 }, { 0 } }
/* Static domains start a cache line: the update side's groups are then
 * lines of their own. */
#define SRCU__LINE __attribute__((aligned(64)))
#define DEFINE_SRCU(name) \
	struct srcu_struct name SRCU__LINE = SRCU_INITIALIZER(name)
#define DEFINE_STATIC_SRCU(name) \
	static struct srcu_struct name SRCU__LINE = SRCU_INITIALIZER(name)

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
/* "MAJOR.MINOR.PATCH" of the library loaded. */
SRCU__API const char *srcu_version(void);
/* Is the calling thread inside a srcu_read_lock() section of sp?  For
 * assertions (the kernel's srcu_read_lock_held(), liburcu's
 * rcu_read_ongoing()).  srcu_down_read() sections belong to no thread and
 * do not count.  False for NULL, a never-used static or a cleaned-up
 * domain.  Async-signal-safe. */
SRCU__API bool srcu_read_lock_held(struct srcu_struct *sp);

/* ---- Process-shared domains (src/shared.c, doc/shared.md) ----
 *
 * A domain that lives in a file mapped by several processes (a memfd, a
 * shm_open() object, a file): readers in every attached process use the
 * ordinary read side, synchronize_srcu() from any of them waits for
 * sections that began before it in all of them, and a process killed
 * anywhere is found dead and its sections ended, never a live one's. */

/* Most shared domains one process attaches at once. */
#define SRCU_SHARED_MAX_ATTACHED 8u
/* Bytes the file of a domain with this many reader slots needs (0 if
 * slots is 0 or too large).  One slot per thread that reads it, in every
 * process together. */
SRCU__API unsigned long srcu_shared_size(unsigned int slots);
/* Make the file fd (opened read-write; its first srcu_shared_size(slots)
 * bytes are zeroed, and it is grown to that if shorter) a shared domain
 * named name (up to 47 bytes are kept), attach to it and store it in *spp.  0, -EINVAL,
 * -EEXIST (fd already holds a domain), -ENOSPC (no id block left in this
 * process), -ENOSYS (no global membarrier), -EACCES (no /proc/self/stat),
 * or the errno of a failed ftruncate()/mmap(). */
SRCU__API int init_srcu_struct_shared(int fd, unsigned int slots, const char *name,
				      struct srcu_struct **spp);
/* Attach to the shared domain in fd from another process: 0 and *spp,
 * -EINVAL (not a domain, or a file too short for its header), -EPROTO
 * (another layout version), -EADDRINUSE (its id block is taken in this
 * process), -EALREADY (attached already), -EXDEV (another pid or time
 * namespace), -ENOSPC (no reader slot free), -EBUSY (an image of this
 * process before exec() left itself attached), -ENOSYS, -EACCES. */
SRCU__API int srcu_shared_attach(int fd, struct srcu_struct **spp);
/* Reserve reader slots for up to threads threads of this process at
 * once (each attach reserves one): 0, or -ENOSPC with nothing reserved.
 * A thread beyond the reservation takes a free slot at its first
 * section, and if none is left the process aborts with a message. */
SRCU__API int srcu_shared_reserve(struct srcu_struct *sp, unsigned int threads);
/* Detach this process: 0, or -EBUSY while a thread of this process is
 * inside a section, runs a grace period or has callbacks pending; -EINVAL
 * for a domain that is not an attached shared one.  sp is unmapped. */
SRCU__API int srcu_shared_detach(struct srcu_struct *sp);
/* Is sp a shared domain attached in this process? */
SRCU__API bool srcu_shared(struct srcu_struct *sp);

/* ---- Names (used in every message) ---- */
SRCU__API int  init_srcu_struct_named(struct srcu_struct *sp, const char *name);

/* ---- Asynchronous grace periods (src/async.c) ---- */

/* Embed in the object to free; func(head) runs on the domain's worker
 * thread after a grace period that began after call_srcu(). */
struct srcu_head {
	struct srcu_head *next;
	void (*func)(struct srcu_head *head);
};
#define SRCU_BACKLOG_DEFAULT 10000ul
/* Queue func(head) for after a grace period.  Blocks while more than the
 * domain's backlog limit of callbacks wait (backpressure), except when the
 * caller is inside a read-side section of sp or is the domain's worker
 * (both would wait for themselves): those calls never block. */
SRCU__API void call_srcu(struct srcu_struct *sp, struct srcu_head *head,
			 void (*func)(struct srcu_head *head));
/* Wait until every callback queued on sp before the call has run. */
SRCU__API void srcu_barrier(struct srcu_struct *sp);
/* Backlog limit (0 restores SRCU_BACKLOG_DEFAULT): 0 or -EINVAL. */
SRCU__API int  srcu_set_backlog_limit(struct srcu_struct *sp, unsigned long limit);

/* ---- Polled grace periods (the kernel's API) ---- */

/* A cookie that poll_state_synchronize_srcu() reports done once a full
 * grace period that began after this call has ended.  No GP is started. */
SRCU__API unsigned long get_state_synchronize_srcu(struct srcu_struct *sp);
/* The same cookie, and makes sure such a grace period runs (the domain's
 * worker runs it if no updater does). */
SRCU__API unsigned long start_poll_synchronize_srcu(struct srcu_struct *sp);
/* Has the grace period that cookie names ended?  Never blocks. */
SRCU__API bool poll_state_synchronize_srcu(struct srcu_struct *sp, unsigned long cookie);

/* ---- Diagnostics (src/stall.c) ---- */

#define SRCU_STALL_DEFAULT_MS 10000u
/* A grace period waiting longer than ms for readers is reported, once,
 * then again after 2x, 4x, ... the threshold.  0 disables; the default is
 * SRCU_STALL_DEFAULT_MS. */
SRCU__API int  srcu_set_stall_timeout(struct srcu_struct *sp, unsigned int ms);

struct srcu_stall_thread {
	int tid;                      /* kernel thread id */
	char name[16];                /* its name (/proc), "" if unknown */
};
struct srcu_stall {
	const char *domain;           /* the domain's name (bare: no quotes), or
				       * srcu_struct@0x... if it has none */
	int idx;                      /* the index the GP waits on */
	double waited_s;              /* since the grace period began */
	unsigned int report;          /* 1 for the first report of this stall */
	unsigned int nthreads;        /* threads holding sections of idx */
	const struct srcu_stall_thread *threads;  /* the first (up to 16) */
	unsigned long down_readers;   /* srcu_down_read() sections on idx */
	/* Shared domains: nonzero when this report is not a stall but a
	 * recovery: process dead_pid died, and the dead_sections read-side
	 * sections it held open were ended (its reader slots freed). */
	int dead_pid;
	unsigned long dead_sections;
};
/* Where stall reports go (process-wide); NULL restores the default,
 * which prints one line to stderr. */
SRCU__API void srcu_set_stall_handler(void (*fn)(const struct srcu_stall *s, void *arg),
				      void *arg);
/* Cross-domain deadlock detection (off by default; on when built with
 * -DSRCU_DEADLOCK_DETECT=ON or with SRCU_DEADLOCK_DETECT=1 in the
 * environment): a grace period that sleeps checks whether the threads it
 * waits for wait, inside synchronize_srcu*(), for a domain whose section
 * its caller holds, and reports the cycle and aborts instead of hanging. */
SRCU__API void srcu_set_deadlock_detection(bool on);

struct srcu_stats {
	unsigned long gps;            /* grace periods completed */
	unsigned long gps_expedited;  /* of which expedited */
	double gp_mean_us;            /* mean grace-period latency */
	double gp_max_us;             /* longest grace period */
	unsigned long callbacks_queued;
	unsigned long callbacks_invoked;
	unsigned long backlog;        /* queued, not yet invoked */
	unsigned long backlog_blocked;/* call_srcu() calls that waited for room */
	unsigned long backlog_overruns;/* calls let past the limit (see call_srcu) */
	unsigned int reader_threads;  /* live threads that have read this domain */
	unsigned int stalls;          /* stall reports made */
	/* Process-wide, every domain together: the fence service
	 * (doc/design.md), which shares one membarrier among the grace
	 * periods that asked before it began.  Requests per membarrier is
	 * the sharing; both stay 0 with the fence backend. */
	unsigned long fence_requests;     /* fences A and W asked for */
	unsigned long fence_membarriers;  /* membarriers run to serve them */
};
/* A snapshot of sp's counters: 0, or -EINVAL. */
SRCU__API int  srcu_get_stats(struct srcu_struct *sp, struct srcu_stats *st);

/* Slow paths of the inline functions below. */
SRCU__API int  srcu__read_lock_slow(struct srcu_struct *sp);
SRCU__API void srcu__read_lock_note(unsigned int word);
SRCU__API void srcu__read_unlock_slow(struct srcu_struct *sp, int idx);
SRCU__API void srcu__wake_gp(unsigned int id);

/* ---------------------------------------------------------------------- */
/* Inline read side.                                                      */

/* Between loading the index and counting on it (the stale-reader
 * window): nothing, except in the never-installed test build, which
 * defines it first (src/torture_hook.h). */
#ifndef SRCU__READ_LOCK_HOOK
#define SRCU__READ_LOCK_HOOK() do { } while (0)
#endif

#define SRCU__UNLIKELY(x) __builtin_expect(!!(x), 0)

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
 * so that the compiler does not know the value is below 65536: knowing it,
 * gcc 12 computes word + 2 in a separate 32-bit step and zero-extends it
 * (1.06-1.13 instead of 1.00 ns per pair).  A plain load either way:
 * relaxed atomic. */
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
 * and the store of an aligned word is single-copy atomic.  On x86-64 one
 * instruction, as the kernel's this_cpu_inc(), addressed through one
 * register: an indexed read-modify-write of memory ran twice as slowly
 * here (2.2 vs 1.0 ns per pair, measured in isolation), and a separate
 * load and store cost 1.25.  Elsewhere a relaxed atomic add (one LSE
 * instruction or an LL/SC loop on arm64): a separate load and store would
 * lose the counts of a signal handler's section that ran between them.
 * One instruction is atomic against this thread's handlers too.  Orders
 * nothing by itself: the callers' barriers do. */
#if defined(__x86_64__)
#define srcu__owner_inc(p, n) \
	__asm__ __volatile__("addq $1, %c1(%0)" :: "r"(p), "i"(8 * (n)) : "memory")
#else
#define srcu__owner_inc(p, n) \
	((void)__atomic_fetch_add((p) + (n), 1, __ATOMIC_RELAXED))
#endif

/* Count a lock in the word at p (owner-only, as srcu__owner_inc()) and
 * say whether the word lacks SRCU__LOCK_NOTED: the thread's first lock of
 * this domain index, which must put the thread in the domain's reader
 * set.  On x86-64 the add's sign flag says it, one predicted branch. */
#if defined(__x86_64__)
static inline bool srcu__lock_count(unsigned long *p)
{
	__asm__ goto("addq $1, (%0)\n\tjns %l[unnoted]" : : "r"(p) : "memory", "cc" : unnoted);
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

/* The fast path's count of the unlock matching a lock of word w. */
static inline void srcu__unlock_word(unsigned long *t, unsigned int w)
{
	SRCU__TSAN_RELEASE(&srcu__gp_waits[w]);
	/* C: the critical section before the count (a release store on
	 * x86, where only the compiler may reorder it); pairs with A
	 * (membarrier) in srcu__gp_readers_done(). */
#if defined(__x86_64__)
	srcu__barrier();
	srcu__owner_inc(t + w, 2);   /* unlock[idx] */
#else
	/* An RMW, not a load and a store: see srcu__owner_inc(). */
	(void)__atomic_fetch_add(t + w + 2, 1, __ATOMIC_RELEASE);
#endif
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

	/* Slow path: this thread's first section, a static domain's first
	 * use, the fence backend, or misuse.  Two tests, not one "||": clang
	 * 14 turns the "||" into a setb and a second branch here. */
	if (SRCU__UNLIKELY(!t))
		return srcu__index(srcu__read_lock_slow(sp));
	if (SRCU__UNLIKELY(w < SRCU__WORD_FIRST))
		return srcu__index(srcu__read_lock_slow(sp));
	srcu__lock_word(t, w);
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
	 * (srcu__sum_locks()) or at thread exit, off this path. */
	srcu__unlock_word(t, w + (unsigned int)idx);
}

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
 * 16-bit top: on LP64 the depth test is then a 32-bit compare (a 48-bit
 * mask cost the pair 5 instructions).
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
	/* Outermost is the common case: laid out straight. */
	if (__builtin_expect(s == 0, 1)) {
		unsigned long *t = (unsigned long *)srcu__slots;
		unsigned int w = srcu__load_word(&sp->lock_word);

		/* srcu_read_lock()'s two tests, for its slow path. */
		if (SRCU__UNLIKELY(!t))
			w = (unsigned int)srcu__index(srcu__read_lock_slow(sp));
		else if (SRCU__UNLIKELY(w < SRCU__WORD_FIRST))
			w = (unsigned int)srcu__index(srcu__read_lock_slow(sp));
		else
			srcu__lock_word(t, w);
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

/* Load an SRCU-protected pointer inside a read-side critical section of
 * sp.  Variadic so that sp may be any expression, commas included. */
#define srcu_dereference(p, ...) \
	__extension__({ (void)(__VA_ARGS__); \
			__typeof__(p) srcu__p_ = __atomic_load_n(&(p), __ATOMIC_ACQUIRE); \
			SRCU__HG_CONSUME(&(p)); srcu__p_; })

/* Publish v in p: everything written to *v before is seen by readers.
 * Variadic so that v may be any expression, such as C++'s
 * new T{a, {}}, whose commas the preprocessor would otherwise split. */
#define srcu_assign_pointer(p, ...) \
	__extension__({ __typeof__(p) srcu__v_ = (__VA_ARGS__); \
			SRCU__HG_PUBLISH(&(p)); \
			__atomic_store_n(&(p), srcu__v_, __ATOMIC_RELEASE); srcu__v_; })

#ifdef __cplusplus
}
#endif
#endif /* SRCU_H */
