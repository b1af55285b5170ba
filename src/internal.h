/*
 * Internal interfaces shared by the files of src/.  Nothing here is
 * exported (the library builds with -fvisibility=hidden).
 *
 * src/ is a stack of layers; each file calls only the files below it
 * (tests/layers_check.sh checks it on the objects' symbols), and this
 * header lists each file's interface in that order, lowest first:
 *
 *   report.c         messages naming the domain and thread; misuse reports
 *   backend.c        membarrier and the backend choice, futexes, clock
 *   combine.c        requests that share one unit of work (GPs, membarriers):
 *                    the loop inline in combine.h, its waits here
 *   fence.c          the fence service: one membarrier shared by every caller
 *   domain.c         domain ids, the id -> domain table, the registry lock
 *   shared_file.c    shared domains' files: layout, slots, owners' liveness
 *   reader.c         reader records, the read side's slow paths, thread exit,
 *                    srcu_down_read()/srcu_up_read()
 *   stall.c          stall reports and deadlock probes of a sleeping GP
 *   gp.c             the grace-period engine: sums, checks, sharing, polling
 *   async.c          call_srcu(), srcu_barrier(), start_poll and their worker
 *   shared_domain.c  process-shared domains: create, attach, detach, fork
 *   lifecycle.c      a domain's life: init, name, cleanup; srcu_get_stats()
 *   process.c        the process's: start-up (the constructor), fork()
 *   gate.c           srcu_gate: the reset-backoff lock built on a domain
 *
 * Each file's shared names carry its prefix: srcu__report_, srcu__backend_,
 * srcu__combine_, srcu__fence_, srcu__domain_, srcu__shm_ (shared_file.c),
 * srcu__reader_, srcu__stall_, srcu__gp_, srcu__async_, srcu__shared_
 * (shared_domain.c), srcu__process_.
 * Exceptions: the processor primitives (srcu__smp_mb, srcu__cpu_relax,
 * srcu__barrier) and the names the public headers already export
 * (srcu__slots, srcu__gp_waits, srcu__read_*_slow, srcu__wake_gp).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_INTERNAL_H
#define SRCU_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "srcu.h"
#include "layout.h"
#include "torture.h"
#include "vg.h"

#define SRCU__HIDDEN __attribute__((visibility("hidden")))
#define SRCU__NORETURN __attribute__((noreturn))
#define SRCU__PRINTF(f, a) __attribute__((format(printf, f, a)))

#define load_relaxed(p)     __atomic_load_n((p), __ATOMIC_RELAXED)
#define load_acquire(p)     __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)

/* A domain's id (its slot in reader tables), from its slot word
 * (srcu/layout.h).  Its current index: srcu__cur_idx(), below. */
static inline unsigned int srcu__id_of(const struct srcu_struct *sp)
{
	return __atomic_load_n(&sp->slot_word, __ATOMIC_RELAXED) / SRCU__SLOT_WORDS;
}

/* Domain id's grace-period waiting flag for index idx, and its futex
 * word.  The flag's bits: a GP sleeps on the index (an unlock on it
 * wakes the GP); a shared domain's GP waits for the index to drain (an
 * unlock on it makes its process take the file's index:
 * srcu__shm_index_refresh()).  Any bit sends the inline unlock to
 * srcu__wake_gp(). */
#define SRCU__WAIT_SLEEPING 1u
#define SRCU__WAIT_MOVE     2u
static inline unsigned int *srcu__gp_waiting(unsigned int id, int idx)
{
	return &srcu__gp_waits[id * SRCU__SLOT_WORDS + (unsigned int)(idx & 1)];
}

static inline unsigned int *srcu__gp_wake_seq(unsigned int id)
{
	return &srcu__gp_waits[id * SRCU__SLOT_WORDS + SRCU__WAIT_SEQ];
}

/* Happens-before for race detectors, which see neither membarrier nor
 * this library's code: ThreadSanitizer (see SRCU__TSAN in srcu/sanitizer.h; weak,
 * so that they run only in a program that has the TSan runtime) and
 * Helgrind (vg.h). */
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));

/* An unlock of index idx of domain id: what the section did happens
 * before the GP that waits for it. */
static inline void srcu__hb_section_end(unsigned int id, int idx)
{
	if (__tsan_release)
		__tsan_release(srcu__gp_waiting(id, idx));
	srcu__vg_before(srcu__gp_waiting(id, idx));   /* the same for Helgrind */
}

/* A grace period of domain id has ended for the caller. */
static inline void srcu__hb_gp_end(unsigned int id)
{
	if (__tsan_acquire) {
		__tsan_acquire(srcu__gp_waiting(id, 0));
		__tsan_acquire(srcu__gp_waiting(id, 1));
	}
	srcu__vg_after(srcu__gp_waiting(id, 0));
	srcu__vg_after(srcu__gp_waiting(id, 1));
}

/* Wrap-safe "a is at or after b" for sequence numbers. */
#define ULONG_CMP_GE(a, b) ((long)((a) - (b)) >= 0)
#define ULONG_CMP_LT(a, b) ((long)((a) - (b)) < 0)

/* Sequence numbers of runs (grace periods in gp.c's gp_seq, membarriers
 * in fence.c's seq), the kernel's rcu_seq scheme: the count of runs ended
 * above SRCU__SEQ_STATE_BITS bits of state, 0 while idle.  A caller's
 * snapshot is the value once a run that starts after now has ended. */
#define SRCU__SEQ_STATE_BITS 2
#define SRCU__SEQ_STATE_MASK ((1ul << SRCU__SEQ_STATE_BITS) - 1)
#define SRCU__SEQ_ONE        (1ul << SRCU__SEQ_STATE_BITS)   /* one run */

/* Runs ended. */
static inline unsigned long srcu__seq_count(unsigned long s)
{
	return s >> SRCU__SEQ_STATE_BITS;
}

/* The value once the run s is in (or the next, if idle) has ended. */
static inline unsigned long srcu__seq_end(unsigned long s)
{
	return (s | SRCU__SEQ_STATE_MASK) + 1;
}

/* The value once a run that begins after s was read has ended. */
static inline unsigned long srcu__seq_snap(unsigned long s)
{
	return (s + 2 * SRCU__SEQ_STATE_MASK + 1) & ~SRCU__SEQ_STATE_MASK;
}

/* s with its run abandoned (a fork child, a dead runner): idle again. */
static inline unsigned long srcu__seq_idle(unsigned long s)
{
	return s & ~SRCU__SEQ_STATE_MASK;
}

static inline bool srcu__seq_done(unsigned long cur, unsigned long snap)
{
	return ULONG_CMP_GE(cur, snap);
}

/* The state bits of s: 0 while idle, the runner's state while it runs. */
static inline unsigned long srcu__seq_state(unsigned long s)
{
	return s & SRCU__SEQ_STATE_MASK;
}

/* The idle value s with its run begun: state 1. */
static inline unsigned long srcu__seq_start(unsigned long s)
{
	return s + 1;
}

/* s (idle: a run begins) with its runner's state set to state. */
static inline unsigned long srcu__seq_set_state(unsigned long s, unsigned long state)
{
	return srcu__seq_idle(s) | state;
}

/* srcu__seq_done(), and also done when cur is further behind snap than
 * any real snapshot of a value at most cur can be ahead of it (the
 * kernel's rcu_seq_done_exact() guard band, 3 * SRCU__SEQ_STATE_MASK +
 * 1): a snapshot held for about 2^(BITS_PER_LONG-2) runs is not taken
 * for one in the future. */
static inline bool srcu__seq_done_exact(unsigned long cur, unsigned long snap)
{
	return ULONG_CMP_GE(cur, snap) ||
	       ULONG_CMP_LT(cur, snap - (3 * SRCU__SEQ_STATE_MASK + 1));
}

/* ---- report.c ---- */

/* The buffers of a domain's name (srcu__report_name()) and of a thread's
 * (srcu__report_thread()) in messages.  (The model checker's build makes
 * them small: its stack objects must stay small, model/genmc/platform.h.) */
#ifndef SRCU__NAME_LEN
#define SRCU__NAME_LEN 96
#define SRCU__THREAD_LEN 64
#endif


/* "'name'" or "srcu_struct@0x..." into buf.  Safe on garbage: the name
 * pointer is probed, not followed, and a name that cannot be read (or is
 * not printable) gives the address. */
SRCU__HIDDEN const char *srcu__report_name(const struct srcu_struct *sp, char *buf, size_t len);
/* The same without the quotes, for struct srcu_stall's domain. */
SRCU__HIDDEN const char *srcu__report_bare_name(const struct srcu_struct *sp, char *buf,
						size_t len);
SRCU__HIDDEN int srcu__report_gettid(void);
SRCU__HIDDEN void srcu__report_warn(const char *fmt, ...) SRCU__PRINTF(1, 2);
SRCU__HIDDEN SRCU__NORETURN void srcu__report_fatal(const char *fmt, ...) SRCU__PRINTF(1, 2);
/* Keep a copy of sp's name, which cleanup found busy, for the messages
 * that follow a free() of it anyway (they name sp by it once sp's words
 * have changed); forget it when sp is bound again or cleaned up. */
SRCU__HIDDEN void srcu__report_keep_name(const struct srcu_struct *sp);
SRCU__HIDDEN void srcu__report_forget_name(const struct srcu_struct *sp);
/* "thread 1234 (name)" for the calling thread. */
SRCU__HIDDEN const char *srcu__report_thread(char *buf, size_t len);
/* Abort: an unlock of sp's index idx without its lock (found says where;
 * other_open: the thread holds a section of the other index, so the
 * unlock was likely given the wrong one). */
SRCU__HIDDEN SRCU__NORETURN void srcu__report_extra_unlock(struct srcu_struct *sp,
							   const char *thread, int idx,
							   const char *found, bool other_open);
/* The same, held naming the other domains the thread holds sections of
 * ("" if none): then the unlock was likely given the wrong domain. */
SRCU__HIDDEN SRCU__NORETURN void srcu__report_extra_unlock_held(struct srcu_struct *sp,
								const char *thread, int idx,
								const char *found, bool other_open,
								const char *held);
SRCU__HIDDEN SRCU__NORETURN void srcu__report_extra_up(struct srcu_struct *sp, int idx,
							   bool fast);

/* A thread-local array, and its element i.  GenMC keeps only scalars and
 * pointers thread-local: the model checker's build (model/genmc/platform.h)
 * defines these as a table indexed by its thread numbers. */
#ifndef SRCU__TLS_ARRAY
#define SRCU__TLS_ARRAY(type, name, n) static __thread type name[n]
#define SRCU__TLS_AT(name, i) ((name)[i])
#endif

/* ---- backend.c ---- */

/* Full fence on this thread only (the updater's half of a pairing). */
static inline void srcu__smp_mb(void)
{
#if defined(SRCU__ASM_X86_64)
	__asm__ __volatile__("lock orq $0, (%%rsp)" ::: "memory", "cc");
#else
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

/* A lettered full fence (doc/design.md, "Fence letters").  The model
 * checker's build removes one letter's fences to show that some scenario
 * needs them (model/genmc/verify.sh: -DSRCU_VERIFY_DROP=SRCU__MB_S); BC
 * is the fence backend's reader fences around its counting RMW. */
enum srcu__mb_letter {
	SRCU__MB_NONE, SRCU__MB_A, SRCU__MB_BC, SRCU__MB_D, SRCU__MB_E, SRCU__MB_F,
	SRCU__MB_FE, SRCU__MB_FM, SRCU__MB_FS, SRCU__MB_L, SRCU__MB_N, SRCU__MB_P,
	SRCU__MB_R, SRCU__MB_S, SRCU__MB_T, SRCU__MB_W, SRCU__MB_Q,
};
#ifndef SRCU_VERIFY_DROP
#define SRCU_VERIFY_DROP SRCU__MB_NONE
#endif
#ifndef SRCU_VERIFY_DROP2   /* a second letter, for fences that cover each other */
#define SRCU_VERIFY_DROP2 SRCU__MB_NONE
#endif
#define srcu__mb_kept(letter) \
	(SRCU_VERIFY_DROP != SRCU__MB_##letter && SRCU_VERIFY_DROP2 != SRCU__MB_##letter)
#define srcu__mb(letter) do { if (srcu__mb_kept(letter)) srcu__smp_mb(); } while (0)
/* A lettered ordering RMW's memory order (relaxed where the build drops
 * the letter). */
#define srcu__order(letter, mo) (srcu__mb_kept(letter) ? (mo) : __ATOMIC_RELAXED)

static inline void srcu__cpu_relax(void)
{
#if defined(SRCU__ASM_X86)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__) && !defined(SRCU_NO_ASM)
	__asm__ __volatile__("yield" ::: "memory");
#else
	srcu__barrier();
#endif
}

/* Nonzero when membarrier(2) is unavailable (or SRCU_BACKEND=fence):
 * readers then take the out-of-line path and use fences.  Changes from 1
 * to 0 once, in the library constructor (sections that ran before it
 * used fences; reader.c's fence T covers the switch), and back to 1 only
 * in a single-threaded fork child that cannot register again. */
SRCU__HIDDEN extern int srcu__backend_fence_mode;

/* After a locked RMW, for a full fence: on x86 the RMW already is one. */
#if defined(SRCU__ASM_X86)
#define srcu__mb_after_rmw() srcu__barrier()
#else
#define srcu__mb_after_rmw() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

/* membarrier(PRIVATE_EXPEDITED): a full fence on every thread of the
 * process.  Only fence.c calls it. */
SRCU__HIDDEN void srcu__backend_membarrier(void);
/* membarrier(GLOBAL_EXPEDITED): a full fence on every running thread of
 * every process registered for it (shared domains; fence.c calls it). */
SRCU__HIDDEN void srcu__backend_membarrier_global(void);
/* Register this process for it: 0, or -ENOSYS where the kernel lacks it. */
SRCU__HIDDEN int srcu__backend_register_global(void);
SRCU__HIDDEN void srcu__backend_init(void);
SRCU__HIDDEN void srcu__backend_fork_prepare(void);
SRCU__HIDDEN void srcu__backend_fork_child(void);
/* Is this process a child made without the fork handlers (_Fork(),
 * clone() without CLONE_VM, syscall(SYS_fork)), or a descendant of one?
 * It is a copy of its parent, not a process the library knows: see
 * doc/design.md, "Fork variants".  One load; false where unknown. */
SRCU__HIDDEN extern unsigned int *srcu__backend_with_handlers;   /* backend.c says how */
static inline bool srcu__backend_unforked_child(void)
{
	unsigned int *w = load_relaxed(&srcu__backend_with_handlers);

	return w && !load_relaxed(w);
}
/* The message for what such a child may not do (who: the call, on
 * domain name). */
#define SRCU__UNFORKED_FMT "process %d was made without fork()'s handlers (_Fork(), clone() " \
	"or syscall(SYS_fork)) by a process that uses libsrcu: %s on domain %s needs them " \
	"(the child has its parent's locks, identity and membarrier registration, not its " \
	"own); use fork(), or only exec() or read private domains in such a child"

/* ---- futex helpers (backend.c) ----
 * pshared: the word is in memory other processes share (a shared
 * domain's file), and sleepers and wakers may be in any of them (no
 * FUTEX_PRIVATE_FLAG). */
SRCU__HIDDEN void srcu__backend_futex_wake(unsigned int *addr, int n, bool pshared);
/* Sleep while *addr == val, until woken or CLOCK_MONOTONIC deadline_ns
 * (< 0: none).  0 (woken, value changed, or spurious), -ETIMEDOUT, or
 * -EINTR (a signal handler ran).  Callers re-check their condition. */
SRCU__HIDDEN int srcu__backend_futex_wait(unsigned int *addr, unsigned int val, int64_t deadline_ns,
					  bool pshared);
SRCU__HIDDEN int64_t srcu__backend_now_ns(void);

/* The earlier of two CLOCK_MONOTONIC deadlines, < 0 meaning none. */
static inline int64_t srcu__backend_earliest(int64_t a, int64_t b)
{
	return a < 0 ? b : b < 0 ? a : a < b ? a : b;
}

/* A one-word lock taken with a CAS after a plain look: a failing CAS would
 * take the line from its holder, once per waiting caller.  The holder
 * stores token (nonzero): 1, or an identity that names it. */
static inline bool srcu__backend_trylock(srcu__u64 *lock, uint64_t token)
{
	uint64_t expected = 0;

	return load_relaxed(lock) == 0 &&
	       __atomic_compare_exchange_n(lock, &expected, token, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* ---- fence.c ---- */

/* The asymmetric fence (A, W): every thread of the process executes a
 * full fence after the caller's accesses before the call and before its
 * accesses after it.  One membarrier serves all callers that asked
 * before it began; with the fence backend, a local fence. */
SRCU__HIDDEN void srcu__fence_heavy(void);
/* The same for shared domains: every running thread of every process
 * registered for global membarrier (all attached processes).  A service
 * of its own, shared the same way. */
SRCU__HIDDEN void srcu__fence_heavy_global(void);
/* Whether a grace period's waiters (gp.c's wait_for_gp_event()) may yield
 * their CPU once before they sleep, judged from what the membarriers of
 * the service the domain uses (global: shared domains) cost (fence.c,
 * "Yield or sleep").  Asks that the coming membarriers be timed. */
SRCU__HIDDEN bool srcu__fence_waiters_may_yield(bool global);
/* The judge itself, exposed for test_fence: one window of membarriers at
 * a time, each noted with whether it interrupted a running thread.  Its
 * one writer is the service's lock holder (a patient caller's membarrier
 * is not noted); relaxed words, since waiters read whether it refuses. */
struct srcu__yield_judge {
	unsigned int seen;           /* membarriers noted in this window */
	unsigned int interrupting;   /* of them, those that interrupted a thread */
	unsigned int sleep_windows;  /* windows left in which waiters do not yield */
	unsigned int backoff;        /* the last such run of windows; 0 after one that passed */
};
#define SRCU__YIELD_WINDOW 64          /* membarriers judged together */
#define SRCU__YIELD_BACKOFF_MAX 64     /* windows: ~4 k membarriers */
SRCU__HIDDEN void srcu__yield_judge_note(struct srcu__yield_judge *j, bool interrupting);
SRCU__HIDDEN bool srcu__yield_judge_allows(const struct srcu__yield_judge *j);
/* When a paced (normal) grace period may issue its next membarrier:
 * CLOCK_MONOTONIC ns, or 0 for now.  Asks that the coming membarriers be
 * timed (fence.c, TIMED_RUN). */
SRCU__HIDDEN int64_t srcu__fence_paced_until(void);
/* A paced heavy fence (private domains, membarrier mode), in steps: ask
 * (fence FS, and the snapshot that a membarrier beginning after it
 * reaches), wait out the pacing gap, then srcu__fence_heavy_asked().  A
 * membarrier that anyone runs in the meantime serves the request
 * (srcu__fence_served()); the pacing wait sleeps on the service's event,
 * bumped when each membarrier's runner leaves and by srcu__fence_kick(). */
SRCU__HIDDEN unsigned long srcu__fence_ask(void);
SRCU__HIDDEN bool srcu__fence_served(unsigned long s);
SRCU__HIDDEN unsigned int srcu__fence_event(void);
SRCU__HIDDEN void srcu__fence_sleep(unsigned int ev, int64_t deadline_ns);
SRCU__HIDDEN void srcu__fence_kick(void);
SRCU__HIDDEN void srcu__fence_heavy_asked(unsigned long s);
/* The longest a paced grace period waits for its gaps, counted from its
 * start: past it the GP runs unpaced (1 ms; tests lengthen it). */
SRCU__HIDDEN extern int64_t srcu__fence_pace_max_ns;
/* Membarriers run, heavy fences asked for: since the process started. */
SRCU__HIDDEN void srcu__fence_stats(unsigned long *membarriers, unsigned long *requests);
SRCU__HIDDEN void srcu__fence_fork_child(void);
/* How long a caller waits for another's membarrier before it runs its own
 * (1 ms; tests that hold a membarrier in flight lengthen it). */
SRCU__HIDDEN extern int64_t srcu__fence_patience_ns;

/* ---- domain.c ---- */

/* The registry lock: records, ids, the id table.  Never held while
 * waiting for readers. */
SRCU__HIDDEN extern pthread_mutex_t srcu__domain_registry_lock;
/* id -> live domain, or NULL. Read under srcu__domain_registry_lock. */
SRCU__HIDDEN extern struct srcu_struct *srcu__domain_table[SRCU__MAX_IDS];
/* One past the highest id ever handed out (under srcu__domain_registry_lock). */
SRCU__HIDDEN extern unsigned int srcu__domain_id_high;

/* init_srcu_struct(): zero sp and bind it to a fresh id (else mark it
 * dead): 0, -ENOMEM (no id left), or -EEXIST, untouched, if sp is live. */
SRCU__HIDDEN int srcu__domain_init_bind(struct srcu_struct *sp, unsigned int kind);
/* Give a statically initialized domain its id on first use; report and
 * abort on a domain used after cleanup.  Returns the id. */
SRCU__HIDDEN unsigned int srcu__domain_id(struct srcu_struct *sp, const char *who);
/* The same checks without the binding, for calls that only read or set
 * a domain: its id, SRCU__ID_UNSET for a static domain not yet used
 * (left unbound).  Async-signal-safe: it takes no lock. */
SRCU__HIDDEN unsigned int srcu__domain_check(struct srcu_struct *sp, const char *who);
/* Is sp a live domain (bound, and its id's entry)?  Safe on garbage. */
SRCU__HIDDEN bool srcu__domain_live(struct srcu_struct *sp);
/* sp's id as it stands (acquire; SRCU__ID_UNSET or _DEAD included). */
SRCU__HIDDEN unsigned int srcu__domain_peek(struct srcu_struct *sp);
/* Release sp's id (no reader inside, gp_lock held); mark a never-used
 * static domain dead. */
SRCU__HIDDEN void srcu__domain_unbind(struct srcu_struct *sp, unsigned int id);
SRCU__HIDDEN void srcu__domain_retire_unused(struct srcu_struct *sp);
SRCU__HIDDEN void srcu__domain_init(void);
/* A shared domain mapped at sp in this process takes (or leaves) its id's
 * table entry; its read-side words live in the file and are not touched. */
SRCU__HIDDEN void srcu__domain_attach_shared(struct srcu_struct *sp, unsigned int id);
SRCU__HIDDEN void srcu__domain_detach_shared(unsigned int id);

/* ---- shared_file.c ---- */

static inline bool srcu__id_shared(unsigned int id)
{
	return id >= SRCU__SHARED_ID_FIRST;
}

static inline unsigned int srcu__shm_block(unsigned int id)
{
	return (id - SRCU__SHARED_ID_FIRST) / SRCU__SHARED_BLOCK_IDS;
}

static inline unsigned int srcu__shm_block_id(unsigned int b)
{
	return SRCU__SHARED_ID_FIRST + b * SRCU__SHARED_BLOCK_IDS;
}

/* The file's format (magic, header, slot pages, owners): shared_file.h. */
#include "shared_file.h"

/* This process's attachment of block b (NULL hdr: none). */
struct srcu__shm_att {
	/* The domain as this process's callers name it (*spp of attach and
	 * init): its read-side words are this process's own, so that
	 * whoever else writes the file cannot choose the word of this
	 * process's counter table that its inline read side counts at
	 * (doc/shared.md, "Permissions").  Its slot word is the block's;
	 * its lock word's index is the file's as this process last read it
	 * (srcu__shm_index_refresh()); its engine state is the file's
	 * (srcu__dom()). */
	struct srcu_struct handle __attribute__((aligned(64)));
	struct srcu__shm_header *hdr;   /* the whole file, mapped */
	unsigned long len;
	unsigned int slots;             /* the slot count validated at attach */
	int fd;                         /* a duplicate, for mapping slots */
	/* This process's update-side callers inside the domain, and the bit
	 * srcu_shared_detach() holds while it decides (gp.c's users word). */
	unsigned int users;
};
SRCU__HIDDEN extern struct srcu__shm_att srcu__shm_att[SRCU__SHARED_BLOCKS];

/* Block b's domain as this process names it (its handle, above), and
 * the domain in its file, whose read-side words nothing reads after
 * attach but the index bit. */
static inline struct srcu_struct *srcu__shm_domain(unsigned int b)
{
	return &srcu__shm_att[b].handle;
}

static inline struct srcu_struct *srcu__shm_file_domain(unsigned int b)
{
	return srcu__shm_domain_at(srcu__shm_att[b].hdr);
}

/* The file's domain behind sp if sp is an attached shared domain's
 * handle, else NULL (a private domain; a handle once detached). */
static inline struct srcu_struct *srcu__shm_file_of(struct srcu_struct *sp)
{
	unsigned int id = srcu__id_of(sp);
	struct srcu__shm_header *h;

	if (SRCU__UNLIKELY(srcu__id_shared(id)) &&
	    (h = load_acquire(&srcu__shm_att[srcu__shm_block(id)].hdr)))
		return srcu__shm_domain_at(h);
	return NULL;
}

/* sp's engine state: its own private part, or a shared domain's in the
 * file (the handle's own part, zero, once detached: a use after detach
 * is reported by the checks, not faulted on). */
static inline struct srcu__domain *srcu__dom(struct srcu_struct *sp)
{
	struct srcu_struct *file = srcu__shm_file_of(sp);

	return srcu__dom_area(file ? file : sp);
}

/* The word whose low bit is sp's current index, which a grace period
 * flips: sp's lock word, a shared domain's in the file (every process's
 * readers read it there). */
static inline uint16_t *srcu__index_word(struct srcu_struct *sp)
{
	struct srcu_struct *file = srcu__shm_file_of(sp);

	return &(file ? file : sp)->lock_word;
}

/* Block b's handle takes the file's index: after this process flips it,
 * and when a reader here unlocks on an index a grace period waits for
 * (doc/design.md, "Liveness").  A stale index is safe (a section counts
 * on the index it names, and every scan sums both); it only keeps the
 * grace periods that wait for that index waiting for this process. */
static inline void srcu__shm_index_refresh(unsigned int b)
{
	struct srcu__shm_att *a = &srcu__shm_att[b];
	struct srcu__shm_header *h = load_acquire(&a->hdr);

	if (h)
		store_relaxed(&a->handle.lock_word,
			      (uint16_t)(load_relaxed(&a->handle.slot_word) |
					 (load_relaxed(&srcu__shm_domain_at(h)->lock_word) & 1u)));
}

static inline int srcu__cur_idx(struct srcu_struct *sp)
{
	return (int)(__atomic_load_n(srcu__index_word(sp), __ATOMIC_RELAXED) & 1);
}

/* This process's owner word (pid | start time << 32), or 0 if its start
 * time cannot be read as other processes read it
 * (/proc/self/task/<pid>/stat, naming our pid). */
SRCU__HIDDEN uint64_t srcu__shm_self(void);
SRCU__HIDDEN void srcu__shm_fork_child(void);
SRCU__HIDDEN unsigned long srcu__shm_size(unsigned int slots);
/* A copy of a file's header, and its domain (in the file): 0, -EINVAL
 * (garbage), -EPROTO (another layout version).  Reads only. */
SRCU__HIDDEN int srcu__shm_validate(const struct srcu__shm_header *h, const struct srcu_struct *sp,
				    unsigned long file_size);
SRCU__HIDDEN struct srcu__slot *srcu__shm_counters(unsigned int b, unsigned int i);
SRCU__HIDDEN struct srcu__shm_owner *srcu__shm_owner_of(unsigned int b, unsigned int i);
/* Reserve a free (else a dead process's idle) slot for this process in
 * state st (SRCU__SHM_RESERVED or _PENDING): its index, or -1. */
SRCU__HIDDEN int srcu__shm_reserve(unsigned int b, unsigned int st);
/* Free slots, counted (a hint: others may take them meanwhile). */
SRCU__HIDDEN unsigned int srcu__shm_count_free(unsigned int b);
/* The inodes of this process's pid and time namespaces (0 if unknown). */
SRCU__HIDDEN uint64_t srcu__shm_pidns(void);
SRCU__HIDDEN uint64_t srcu__shm_timens(void);
/* A thread's first section: take a slot (reserved, else free) and map its
 * page at page; the slot, or -1 if none is free.  Async-signal-safe. */
SRCU__HIDDEN int srcu__shm_map_slot(unsigned int b, void *page);
SRCU__HIDDEN void srcu__shm_release(unsigned int b, unsigned int i);
/* The same after ending what slot i still counts open: the sections it
 * ended (a dead twin's: see shared_domain.c's release_all()). */
SRCU__HIDDEN unsigned long srcu__shm_release_balanced(unsigned int b, unsigned int i);
/* Slots ever claimed (the bound of every walk), at most the slot count. */
SRCU__HIDDEN unsigned int srcu__shm_slots_high(unsigned int b);
/* The slots this process holds (reserved or mapped by a thread). */
SRCU__HIDDEN unsigned int srcu__shm_count_mine(unsigned int b);
/* A check's sums over the slots below slots_high: the unlock sums (added
 * to unlocks[]) return how many slots they read, for the lock sum to read
 * the same; a slot with more unlocks than locks sets *bad_slot (1 + it). */
SRCU__HIDDEN unsigned int srcu__shm_sum_unlocks(unsigned int b, unsigned long unlocks[2]);
SRCU__HIDDEN unsigned long srcu__shm_sum_locks(unsigned int b, int idx, unsigned int n,
					       unsigned int *bad_slot);
/* Is the process this owner word names (a slot's, or the GP lock's
 * holder) dead?  Only on evidence; false for 0 and for this process. */
SRCU__HIDDEN bool srcu__shm_owner_dead(uint64_t owner);
/* Balance and free every slot of a dead owner (caller holds the GP
 * lock); what each dead process held, up to max, in dead: their count. */
struct srcu__shm_dead {
	int pid;
	uint64_t owner;               /* pid and start time: one incarnation */
	unsigned long sections;
};
SRCU__HIDDEN unsigned int srcu__shm_recover(unsigned int b, struct srcu__shm_dead *dead,
					    unsigned int max);

/* ---- reader.c ---- */

/* A thread's reader record. */
struct srcu__record {
	struct srcu__slot *slots;    /* SRCU__MAX_IDS slots, mmap()ed; immutable */
	struct srcu__record *next;   /* registry list: append-only, never freed */
	int tid;                     /* owning thread, 0 while on the free list */
	unsigned int index;          /* creation order: its bit in a srcu__scan */
	unsigned int waiting_on;     /* domain id its thread synchronizes on, or 0 */
	/* Per shared id block: 1 + the file slot mapped over this record's
	 * page of that block, or 0 (shared_file.c).  Written by the owner with its
	 * signals blocked; stays with the record across thread reuse. */
	unsigned int shm_slot[SRCU__SHARED_BLOCKS];
};
/* Record r's slot of domain id.  A record lives at the start of its own
 * table (reader.c, record_new()), so its ->slots is r itself: the scans
 * compute the address rather than load it, which keeps the record's own
 * line (a dependent load, a miss of its own) out of their per-record
 * cost. */
static inline struct srcu__slot *srcu__record_slot(struct srcu__record *r, unsigned int id)
{
	return (struct srcu__slot *)(void *)r + id;
}

/* shm_slot[b] while the slot is being taken and mapped. */
#define SRCU__SHM_MAPPING (~0u)

/* Head of the registry of all reader records (acquire-load to traverse). */
SRCU__HIDDEN extern struct srcu__record *srcu__reader_records;
/* The same records by ->index, densely, for the scans: a free one costs
 * them one int, not a cache miss on its page.  srcu__reader_count records
 * exist (acquire); those below SRCU__DENSE_RECORDS are here, with their
 * owner's tid (0: free, or not yet claimed past fence R; acquire) and
 * their address (NULL: not yet complete; acquire).  Records past that
 * are found on the list only.  (The model checker's build makes it
 * small: model/genmc/platform.h.) */
#ifndef SRCU__DENSE_RECORDS
#define SRCU__DENSE_RECORDS 4096
#endif
#define SRCU__WORD_BITS (8 * sizeof(unsigned long))
#define SRCU__NOTED_WORDS (SRCU__DENSE_RECORDS / SRCU__WORD_BITS)
SRCU__HIDDEN extern int srcu__reader_owner[SRCU__DENSE_RECORDS];
/* Domain id's reader set: a bit per dense record that has ever counted a
 * lock on id (set by srcu__read_lock_note(), cleared when the record is
 * released at its thread's exit; acquire). */
SRCU__HIDDEN extern unsigned long srcu__reader_noted_map[];
static inline unsigned long *srcu__reader_noted(unsigned int id)
{
	return srcu__reader_noted_map + (size_t)id * SRCU__NOTED_WORDS;
}

/* The word of domain id's reader set that holds dense record i's bit,
 * and that bit. */
static inline unsigned long *srcu__reader_noted_word(unsigned int id, unsigned int i)
{
	return &srcu__reader_noted(id)[i / SRCU__WORD_BITS];
}

static inline unsigned long srcu__reader_noted_bit(unsigned int i)
{
	return 1ul << (i % SRCU__WORD_BITS);
}

/* Counts as the scans compare them: a lock word without its NOTED bit,
 * and differences modulo 2^63 (2^31 on 32-bit) (sign-extended by srcu__count_signed()). */
static inline unsigned long srcu__count(unsigned long lock_word)
{
	return lock_word & ~SRCU__LOCK_NOTED;
}

static inline unsigned long srcu__count_diff(unsigned long locks, unsigned long unlocks)
{
	return (locks - unlocks) & ~SRCU__LOCK_NOTED;
}

static inline long srcu__count_signed(unsigned long diff)
{
	return (long)(diff << 1) >> 1;
}

/* Sections open on one index, from its lock word and its unlock count
 * (negative: more unlocks than locks).  Callers load the two in the
 * order their pairing needs, unlocks first. */
static inline long srcu__open(unsigned long lock_word, unsigned long unlocks)
{
	return srcu__count_signed(srcu__count_diff(srcu__count(lock_word), unlocks));
}

/* Sections open on index idx of slot s (negative: more unlocks), its
 * unlocks read first.  From another thread a hint for messages only. */
static inline long srcu__slot_open_on(struct srcu__slot *s, int idx)
{
	unsigned long u = load_acquire(&s->unlock[idx]);

	return srcu__open(load_acquire(&s->lock[idx]), u);
}

/* A scan read more unlocks than locks in slot s: misuse, or a section
 * that began after the check's fence A, whose owner's two relaxed counts
 * a weakly ordered CPU showed unlock first.  Misuse only if it holds by
 * A's own argument: an unlock read before a heavy fence has its lock
 * seen after it.  Cold: a scan gets here only on a negative balance. */
SRCU__HIDDEN bool srcu__slot_extra_confirmed(struct srcu__slot *s, int idx, bool global);
SRCU__HIDDEN extern struct srcu__record *srcu__reader_dense[SRCU__DENSE_RECORDS];
SRCU__HIDDEN extern unsigned int srcu__reader_count;

/* Does the calling thread hold a read-side section of sp?  Signal-safe
 * against handlers' sections on this thread. */
SRCU__HIDDEN bool srcu__reader_self_inside(struct srcu_struct *sp);
/* May the calling thread be inside a section of sp, so that a wait for
 * sp's next GP could wait for itself?  Its own sections as above, and,
 * since srcu_down_read() and up/down sections belong to no thread, any
 * such section open on sp (conservative: maybe another thread's). */
SRCU__HIDDEN bool srcu__reader_maybe_inside(struct srcu_struct *sp);
/* Shared block b is being detached: every record's page of it goes back
 * to private memory (its slot was released by the caller).  Sections of
 * this process on it: false, nothing done. */
SRCU__HIDDEN bool srcu__reader_shared_idle(unsigned int b);
SRCU__HIDDEN void srcu__reader_unmap_shared(unsigned int b);
SRCU__HIDDEN void srcu__reader_init(void);
/* fork(): the prepare handler blocks the forking thread's signals and
 * takes its open sections of each shared domain (only it writes its
 * slots); the child gets those on a private page (the slot pages are
 * MADV_DONTFORK); fork_end restores the signal mask, in the parent and
 * last in the child. */
SRCU__HIDDEN void srcu__reader_fork_prepare(void);
SRCU__HIDDEN void srcu__reader_fork_child(void);
SRCU__HIDDEN void srcu__reader_fork_end(void);
SRCU__HIDDEN struct srcu__record *srcu__reader_self_record(void);
/* Does r's thread hold a section of domain id (read from another thread)? */
SRCU__HIDDEN bool srcu__reader_record_holds(struct srcu__record *r, unsigned int id);
/* srcu__report_extra_unlock() for record r's thread (NULL: none), naming
 * the other domains it holds sections of. */
SRCU__HIDDEN SRCU__NORETURN void srcu__reader_report_extra_unlock(struct srcu_struct *sp,
								  struct srcu__record *r,
								  const char *thread, int idx,
								  const char *found);
/* Is domain id's reader kind SRCU__KIND_FAST_UPDOWN (its sections may
 * end in another thread: no per-thread balance)? */
SRCU__HIDDEN bool srcu__reader_updown(unsigned int id);
/* The unlock (lock) counts of idx over every record ever made, owned or
 * not, and the domain's shared down/up counters: a check's two sums
 * over everything, whatever the reader sets (acquire loads; a caller
 * wanting each unlock's lock seen runs fence A between the two). */
SRCU__HIDDEN unsigned long srcu__reader_unlocks_everywhere(struct srcu_struct *sp, int idx);
SRCU__HIDDEN unsigned long srcu__reader_locks_everywhere(struct srcu_struct *sp, int idx);
/* An up/down domain's sections open on idx, summed over its shared
 * counters and every thread's slot (a stall report's figure). */
SRCU__HIDDEN unsigned long srcu__reader_updown_open(struct srcu_struct *sp, int idx);
/* An up/down domain's cleanup, before it leaves its id: every thread's
 * slot of id balanced again (takes srcu__domain_registry_lock). */
SRCU__HIDDEN void srcu__reader_rebalance(unsigned int id);
/* Live threads whose counts show they have read sp. */
SRCU__HIDDEN unsigned int srcu__reader_threads(struct srcu_struct *sp);

/* ---- stall.c ---- */

/* A sleeping grace period's stall watch: when to report next. */
struct srcu__stall_watch {
	int64_t next_ns;            /* < 0: stall warnings off */
	int64_t interval_ns;        /* doubles after each report */
	int64_t probe_ns;           /* next deadlock probe, < 0: off */
	unsigned int report;
	bool cycle_seen;             /* the last probe found a cycle */
};
SRCU__HIDDEN void srcu__stall_watch_init(struct srcu_struct *sp, struct srcu__stall_watch *w);
/* Earliest of the watch's deadlines, or -1. */
SRCU__HIDDEN int64_t srcu__stall_deadline(const struct srcu__stall_watch *w);
/* Report a stall, probe for a deadlock, if their time has come. */
SRCU__HIDDEN void srcu__stall_check(struct srcu_struct *sp, int idx, struct srcu__stall_watch *w);
SRCU__HIDDEN extern int srcu__stall_deadlock_detect;
/* The calling thread synchronizes on sp (NULL: no longer). */
SRCU__HIDDEN void srcu__stall_set_waiting_on(struct srcu_struct *sp);
/* Shared domains: process pid died holding sections open sections, now
 * ended; reported through the stall handler. */
SRCU__HIDDEN void srcu__stall_report_dead(struct srcu_struct *sp, int pid, unsigned long sections);
/* fork(): the stall handler's lock, taken in prepare, released after. */
SRCU__HIDDEN void srcu__stall_fork_prepare(void);
SRCU__HIDDEN void srcu__stall_fork_parent(void);
SRCU__HIDDEN void srcu__stall_fork_child(void);


/* ---- users.c ---- */

/* An update-side call enters sp (checked live; NULL and misuse reported,
 * naming who) and leaves it: cleanup_srcu_struct() returns -EBUSY while
 * any is inside.  Cleanup closes sp to new callers while it decides
 * (false: a caller is inside) and reopens it. */
SRCU__HIDDEN void srcu__gp_enter(struct srcu_struct *sp, const char *who);
SRCU__HIDDEN void srcu__gp_leave(struct srcu_struct *sp);
SRCU__HIDDEN bool srcu__gp_close(struct srcu_struct *sp);
SRCU__HIDDEN void srcu__gp_reopen(struct srcu_struct *sp);
/* In a fork child: the count of sp's callers inside is the forking
 * thread's. */
SRCU__HIDDEN void srcu__users_fork_child(struct srcu_struct *sp);
/* Abort, naming sp and who, in a child made without the fork handlers:
 * the update side's locks and identity there are its parent's.  One
 * load and a test inline; the report out of line. */
SRCU__HIDDEN SRCU__NORETURN void srcu__gp_report_unforked(struct srcu_struct *sp, const char *who);
static inline void srcu__gp_check_forked(struct srcu_struct *sp, const char *who)
{
	if (SRCU__UNLIKELY(srcu__backend_unforked_child()))
		srcu__gp_report_unforked(sp, who);
}

/* ---- gp.c ---- */

/* A grace-period wait with a deadline: once it has waited past at_ns,
 * late(arg) is called once, in the waiting thread, and the wait goes on. */
struct srcu__deadline {
	int64_t at_ns;
	void (*late)(void *arg);
	void *arg;
};
SRCU__HIDDEN void srcu__gp_synchronize_deadline(struct srcu_struct *sp, struct srcu__deadline *dl);
SRCU__HIDDEN bool srcu__gp_readers_done(struct srcu_struct *sp, int idx);
/* gp_lock: held by whoever runs grace periods (or cleans up).  Unlock
 * bumps gp_event, so that waiting callers re-check and may take over. */
SRCU__HIDDEN bool srcu__gp_trylock(struct srcu_struct *sp);
/* gp_seq sharing, for the polled API and the call_srcu() worker: the
 * snapshot a caller takes now (after a full fence), whether any request
 * (gp_seq_needed) is unsatisfied, and the wait for one. */
SRCU__HIDDEN unsigned long srcu__gp_snap(struct srcu_struct *sp);
SRCU__HIDDEN bool srcu__gp_needed(struct srcu_struct *sp);
SRCU__HIDDEN void srcu__gp_wait_seq(struct srcu_struct *sp, unsigned long s);
SRCU__HIDDEN void srcu__gp_unlock(struct srcu_struct *sp);
/* A request for the GP that completes the polled cookie s. */
SRCU__HIDDEN void srcu__gp_request(struct srcu_struct *sp, unsigned long s);
/* Has the GP that cookie names ended?  poll_state_synchronize_srcu()'s
 * answer without its count in sp or its fence F: for the worker's
 * bookkeeping under its lock, which may not wait for a cleanup's verdict
 * (that cleanup takes the lock). */
SRCU__HIDDEN bool srcu__gp_cookie_done(struct srcu_struct *sp, unsigned long cookie);
/* In a fork child: the domain's grace-period state back to idle. */
SRCU__HIDDEN void srcu__gp_fork_child(struct srcu_struct *sp);
SRCU__HIDDEN void srcu__gp_fork_child_shared(struct srcu_struct *sp);
/* A shared domain's dead processes' slots recovered now, under gp_lock
 * (taken, or taken over from a dead holder), for an attacher that found
 * no slot: how many dead processes dead[] (SRCU__DEAD_REPORTS_MAX) holds
 * to report, or -1 if a live process holds the lock (its GP recovers).
 * The caller reports them (srcu__gp_report_dead()) once it holds no lock
 * a stall handler's call could need. */
#define SRCU__DEAD_REPORTS_MAX 16
struct srcu__shm_dead;
SRCU__HIDDEN int srcu__gp_recover_shared(struct srcu_struct *sp, struct srcu__shm_dead *dead);
SRCU__HIDDEN void srcu__gp_report_dead(struct srcu_struct *sp, const struct srcu__shm_dead *dead,
				       unsigned int n);


/* ---- async.c ---- */

/* For cleanup_srcu_struct() and srcu_shared_detach(): -EBUSY while
 * callbacks are pending or the worker waits for a GP, else stop the
 * worker and free the state.  Called with sp closed to update-side
 * callers (srcu__gp_close()): none can start a worker again meanwhile. */
SRCU__HIDDEN int srcu__async_cleanup(struct srcu_struct *sp);
/* Has sp call_srcu() state (made by a callback or a polled request)? */
SRCU__HIDDEN bool srcu__async_active(struct srcu_struct *sp);
SRCU__HIDDEN void srcu__async_fork_prepare(struct srcu_struct *sp);
SRCU__HIDDEN void srcu__async_fork_parent(struct srcu_struct *sp);
SRCU__HIDDEN void srcu__async_fork_child(struct srcu_struct *sp);
/* Callback counters for srcu_get_stats(). */
SRCU__HIDDEN void srcu__async_stats(struct srcu_struct *sp, struct srcu_stats *st);

/* ---- shared_domain.c ---- */

/* In a fork child, after srcu__reader_fork_child(): the child attaches
 * anew to the shared domains its parent had (identity, home slot). */
SRCU__HIDDEN void srcu__shared_fork_child(void);


#endif /* SRCU_INTERNAL_H */
