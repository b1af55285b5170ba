/*
 * libsrcu: Sleepable RCU for userspace.
 *
 * A domain (struct srcu_struct) protects read-mostly data.  Its readers
 * run with a few plain loads and stores, may sleep or block inside their
 * read-side critical sections, and need no registration; an updater waits
 * with synchronize_srcu() for every reader of that domain that began
 * before it, then frees what it unlinked.  Grace periods are per domain:
 * a slow reader of one never delays another.
 *
 * This file is the API, in reading order: the domain, the read side, the
 * update side, asynchronous and polled grace periods, process-shared
 * domains, diagnostics.  Errors are negative errno values; misuse that
 * would hang or corrupt a domain aborts with a message naming the domain
 * and the mistake.  doc/api.md (man 3 <name>) has each call at length,
 * doc/design.md the ordering argument.  The private half, included at the
 * end: the layout (<srcu/layout.h>), the inline read side (<srcu/read.h>,
 * over <srcu/arch.h> and <srcu/sanitizer.h>) and the pointer macros
 * (<srcu/pointer.h>).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_H
#define SRCU_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* This header's version (srcu_version(): the library's).  CMakeLists.txt
 * reads them: they are the project's one version. */
#define SRCU_VERSION_MAJOR 0
#define SRCU_VERSION_MINOR 1
#define SRCU_VERSION_PATCH 0
#define SRCU__STR2(x) #x
#define SRCU__STR(x) SRCU__STR2(x)
#define SRCU_VERSION_STRING SRCU__STR(SRCU_VERSION_MAJOR) "." \
	SRCU__STR(SRCU_VERSION_MINOR) "." SRCU__STR(SRCU_VERSION_PATCH)
#define SRCU_VERSION_NUMBER /* 0x00MMmmpp, for #if */ \
	((SRCU_VERSION_MAJOR << 16) | (SRCU_VERSION_MINOR << 8) | SRCU_VERSION_PATCH)

/* A result not to be ignored: C23's and C++17's [[nodiscard]] (a cast to
 * void silences it), else GCC's attribute (which gcc warns about even
 * through a cast: test the result). */
#if defined(__cplusplus) && __cplusplus >= 201703L
#define SRCU__MUST_CHECK [[nodiscard]]
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 202311L
#define SRCU__MUST_CHECK [[nodiscard]]
#else
#define SRCU__MUST_CHECK __attribute__((warn_unused_result))
#endif

/* Every function below is the library's export (it is built with
 * -fvisibility=hidden). */
#pragma GCC visibility push(default)

/* ---- The domain ------------------------------------------------------ */

/* 256 bytes, its fields private; embed it anywhere, or define it
 * statically (no init call needed; zeroed memory is such a domain too). */
struct srcu_struct;
#define SRCU_INITIALIZER(name) SRCU__INITIALIZER(name)
#define DEFINE_SRCU(name) \
	struct srcu_struct name SRCU__LINE = SRCU_INITIALIZER(name)
#define DEFINE_STATIC_SRCU(name) \
	static struct srcu_struct name SRCU__LINE = SRCU_INITIALIZER(name)
/* A domain for srcu_read_lock_fast() sections only (the kernel's, 6.18):
 * a srcu_read_lock() section of it aborts, naming the domain and both
 * kinds, when checked: a thread's first lock of each index, every section
 * with -DSRCU_DEBUG (doc/api.md). */
#define DEFINE_SRCU_FAST(name) \
	struct srcu_struct name SRCU__LINE = SRCU__INITIALIZER_KIND(name, SRCU__KIND_FAST)
#define DEFINE_STATIC_SRCU_FAST(name) \
	static struct srcu_struct name SRCU__LINE = SRCU__INITIALIZER_KIND(name, SRCU__KIND_FAST)
/* A domain for srcu_down_read_fast() / srcu_read_lock_fast_updown()
 * sections only (the kernel's, 6.19), which may end in another thread;
 * any other section of it aborts, as above. */
#define DEFINE_SRCU_FAST_UPDOWN(name) \
	struct srcu_struct name SRCU__LINE = SRCU__INITIALIZER_KIND(name, SRCU__KIND_FAST_UPDOWN)
#define DEFINE_STATIC_SRCU_FAST_UPDOWN(name) \
	static struct srcu_struct name SRCU__LINE = \
		SRCU__INITIALIZER_KIND(name, SRCU__KIND_FAST_UPDOWN)

/* 0, -ENOMEM (every domain id taken: 14,334 live domains), -EINVAL. */
int init_srcu_struct(struct srcu_struct *sp);
/* init_srcu_struct() for srcu_read_lock_fast() sections only, as
 * DEFINE_SRCU_FAST. */
int init_srcu_struct_fast(struct srcu_struct *sp);
/* ... for srcu_down_read_fast() sections only, as DEFINE_SRCU_FAST_UPDOWN. */
int init_srcu_struct_fast_updown(struct srcu_struct *sp);
/* The same, named in every message (the string must outlive sp). */
int init_srcu_struct_named(struct srcu_struct *sp, const char *name);
/* 0, or -EINVAL (NULL, or a shared domain, whose name is in its file). */
int srcu_set_name(struct srcu_struct *sp, const char *name);
/* 0; -EBUSY while a reader is inside, an update-side call is inside or a
 * grace period runs, callbacks or a polled request are pending (sp stays
 * usable: do not free it); -EINVAL for NULL, twice, or a shared domain.
 * The kernel's returns nothing: ignoring this one is a compiler warning. */
SRCU__MUST_CHECK int cleanup_srcu_struct(struct srcu_struct *sp);

/* ---- The read side (inline; async-signal-safe) ----------------------- */

/* Enter a section: the index for the matching unlock, in the same
 * thread.  Sections nest and overlap freely. */
static inline int srcu_read_lock(struct srcu_struct *sp);
static inline void srcu_read_unlock(struct srcu_struct *sp, int idx);
/* A section that may end in another thread (atomic counters: slower). */
int srcu_down_read(struct srcu_struct *sp);
void srcu_up_read(struct srcu_struct *sp, int idx);
/* Load an SRCU-protected pointer inside a section of sp: the loads
 * through it see what the updater wrote before publishing (an address
 * dependency; -DSRCU_DEREFERENCE_ACQUIRE: an acquire load).  Variadic, so
 * that sp may be any expression, commas included.  With -DSRCU_DEBUG,
 * outside every section of sp in this thread it reports the call site and
 * aborts. */
#define srcu_dereference(p, ...) SRCU__DEREFERENCE(p, __VA_ARGS__)
/* The kernel's spelling for untraced code: nothing traces here. */
#define srcu_dereference_notrace(p, ...) SRCU__DEREFERENCE(p, __VA_ARGS__)
/* The same, also legal where c is true (an update-side lock held): the
 * checking build aborts only when neither holds; elsewhere c is never
 * evaluated. */
#define srcu_dereference_check(p, sp, ...) SRCU__DEREFERENCE_CHECK(p, sp, __VA_ARGS__)
/* Update side, where c (never evaluated outside -DSRCU_DEBUG) says p
 * cannot change: a plain load, no ordering. */
#define srcu_dereference_protected(p, ...) SRCU__DEREFERENCE_PROTECTED(p, __VA_ARGS__)
/* p's value, loaded once, anywhere: to test or compare, not to follow. */
#define srcu_access_pointer(p) SRCU__ACCESS_POINTER(p)
/* Publish v in p (release): readers see what was written to *v before.
 * Variadic, so that v may be any expression, e.g. C++'s new T{a, {}}. */
#define srcu_assign_pointer(p, ...) SRCU__ASSIGN_POINTER(p, __VA_ARGS__)
/* Publish v in p, as srcu_assign_pointer(), where c says the caller
 * owns p; returns the old value (for a grace period, then free). */
#define srcu_replace_pointer(p, v, ...) SRCU__REPLACE_POINTER(p, v, __VA_ARGS__)
/* Is this thread inside a srcu_read_lock() section of sp?  For
 * assertions; false for NULL, an unused or cleaned-up domain. */
bool srcu_read_lock_held(struct srcu_struct *sp);
/* The kernel's other spellings of the same section, so that its code
 * compiles (the read side is async-signal-safe; nothing traces). */
static inline int srcu_read_lock_nmisafe(struct srcu_struct *sp);
static inline void srcu_read_unlock_nmisafe(struct srcu_struct *sp, int idx);
static inline int srcu_read_lock_notrace(struct srcu_struct *sp);
static inline void srcu_read_unlock_notrace(struct srcu_struct *sp, int idx);
/* The kernel's fast readers (6.15): the same section, the lock returning
 * this thread's counter (opaque, not to be followed) so that the unlock,
 * in the same thread, needs neither the domain's words nor an index.
 * Mix, nest and overlap freely with srcu_read_lock() sections. */
struct srcu_ctr;
static inline struct srcu_ctr *srcu_read_lock_fast(struct srcu_struct *sp);
static inline void srcu_read_unlock_fast(struct srcu_struct *sp, struct srcu_ctr *scp);
static inline struct srcu_ctr *srcu_read_lock_fast_notrace(struct srcu_struct *sp);
static inline void srcu_read_unlock_fast_notrace(struct srcu_struct *sp, struct srcu_ctr *scp);
/* The kernel's fast up/down sections (6.16, 6.19), on a
 * DEFINE_SRCU_FAST_UPDOWN domain: srcu_read_lock_fast()'s cost, and the
 * up (unlock) may run in any thread.  The two pairs are one operation. */
static inline struct srcu_ctr *srcu_down_read_fast(struct srcu_struct *sp);
static inline void srcu_up_read_fast(struct srcu_struct *sp, struct srcu_ctr *scp);
static inline struct srcu_ctr *srcu_read_lock_fast_updown(struct srcu_struct *sp);
static inline void srcu_read_unlock_fast_updown(struct srcu_struct *sp, struct srcu_ctr *scp);
/* Make the srcu_read_unlock() (srcu_read_lock()) just before a full
 * memory barrier: a seq-cst fence each (the kernel's are empty: its read
 * side has the barrier; this one has none). */
static inline void smp_mb__after_srcu_read_unlock(void);
static inline void smp_mb__after_srcu_read_lock(void);
/* C: a section of sp from here to the end of the enclosing block
 * (SRCU_GUARD(sp);) or for the next statement or block only
 * (SRCU_SCOPED_GUARD(sp) { ... }), ended by any way out of it: block end,
 * break, continue, return, goto (GNU C's cleanup attribute; not longjmp()
 * or a thread's exit).  C++: srcu.hpp's srcu::read_guard.  The _FAST
 * forms hold a srcu_read_lock_fast() section. */
#ifndef __cplusplus
#define SRCU_GUARD(sp) SRCU__GUARD(sp, SRCU__CAT(srcu__guard_, __COUNTER__))
#define SRCU_SCOPED_GUARD(sp) SRCU__SCOPED_GUARD(sp, SRCU__CAT(srcu__scope_, __COUNTER__))
#define SRCU_GUARD_FAST(sp) SRCU__GUARD_FAST(sp, SRCU__CAT(srcu__guard_, __COUNTER__))
#define SRCU_SCOPED_GUARD_FAST(sp) \
	SRCU__SCOPED_GUARD_FAST(sp, SRCU__CAT(srcu__scope_, __COUNTER__))
#endif

/* ---- The update side ------------------------------------------------- */

/* Wait until every section of sp that began before the call has ended;
 * sleeps while readers sleep.  Concurrent callers share grace periods;
 * membarriers are paced while sp's readers run (doc/api.md).  Inside
 * one's own section of sp it would wait for itself: aborts. */
void synchronize_srcu(struct srcu_struct *sp);
/* The same, never paced, spinning longer before it sleeps: lower latency,
 * more CPU, and an interrupt to every running reader per membarrier. */
void synchronize_srcu_expedited(struct srcu_struct *sp);
/* Make the grace period of sp in progress (else the next to start)
 * expedited, without waiting; repeated calls collapse into one request. */
void srcu_expedite_current(struct srcu_struct *sp);
/* Grace periods completed: monotonic. */
unsigned long srcu_batches_completed(struct srcu_struct *sp);

/* ---- Asynchronous grace periods -------------------------------------- */

/* Embed in the object to free. */
struct srcu_head {
	struct srcu_head *next;
	void (*func)(struct srcu_head *head);
};
#define SRCU_BACKLOG_DEFAULT 10000ul
/* Run func(head) on sp's worker thread after a grace period that began
 * after the call (gathered for up to 1 ms).  Blocks while the backlog is
 * at its limit, except in a callback of any domain, inside the caller's
 * section of sp, or while any srcu_down_read*() section of sp is open
 * (it may be the caller's): those go past the limit (doc/api.md). */
void call_srcu(struct srcu_struct *sp, struct srcu_head *head,
	       void (*func)(struct srcu_head *head));
/* Wait until every callback queued on sp before the call has run.
 * Inside a section of sp or a callback: aborts (it would deadlock).  A
 * fork() from the waiter's signal handler: the child's copy waits on. */
void srcu_barrier(struct srcu_struct *sp);
/* Callbacks that may wait at once (0: SRCU_BACKLOG_DEFAULT): 0, -EINVAL. */
int srcu_set_backlog_limit(struct srcu_struct *sp, unsigned long limit);

/* ---- Polled grace periods (never block) ------------------------------ */

/* A cookie that poll_state_synchronize_srcu() reports done once a full
 * grace period that began after this call has ended.  Starts nothing. */
unsigned long get_state_synchronize_srcu(struct srcu_struct *sp);
/* The same cookie, and that grace period will run (the worker runs it
 * when no updater does; from sp's own callback, once it returns). */
unsigned long start_poll_synchronize_srcu(struct srcu_struct *sp);
/* Has it ended?  Wrap-safe, except for a cookie held across (nearly) a
 * multiple of 2^(BITS_PER_LONG-2) grace periods (doc/api.md). */
bool poll_state_synchronize_srcu(struct srcu_struct *sp, unsigned long cookie);
/* A cookie that poll_state_synchronize_srcu() always reports done and
 * that no real one equals: for "nothing to wait for". */
#define SRCU_GET_STATE_COMPLETED 0x1ul
static inline unsigned long get_completed_synchronize_srcu(void)
{
	return SRCU_GET_STATE_COMPLETED;
}
/* Do two cookies name the same grace period?  (Plain equality, as in
 * the kernel: for finding a cookie already held.) */
static inline bool same_state_synchronize_srcu(unsigned long a, unsigned long b)
{
	return a == b;
}
/* At most this many distinct cookies are not yet done at any moment, to
 * size an array of them (the kernel's 2; doc/api.md says why). */
#define NUM_ACTIVE_SRCU_POLL_OLDSTATE 2

/* ---- Process-shared domains (doc/shared.md) -------------------------- */

/* A domain in a file that several processes map (memfd, shm_open(), a
 * file): the same read side in every process; a grace period in any of
 * them waits for sections in all of them; a process killed anywhere is
 * found dead and its sections ended, never a live one's. */

/* Bytes the file needs for this many reader slots (one per thread that
 * reads, all processes together); 0 if slots is 0 or too large. */
unsigned long srcu_shared_size(unsigned int slots);
/* Make fd (read-write; grown to the size, its bytes zeroed) a domain
 * named name (47 bytes kept), attached, in *spp.  0, -EINVAL, -EEXIST
 * (fd holds a domain, or another process is creating one: one creator
 * per file), -EPERM (writable by others, or owned by another user than
 * the caller and root; SRCU_SHARED_TRUST_ANY=1 lifts it), -ENOSPC (this
 * process has 8 attached), -ENOSYS
 * (no global membarrier), -EACCES (no /proc/self/task/<tid>/stat: no
 * identity), -EOPNOTSUPP (pages other than 4 KiB, or a copy of the
 * library's waiting flags not page-aligned), or the errno of a failed
 * ftruncate(), mmap() or fcntl(F_DUPFD_CLOEXEC). */
int init_srcu_struct_shared(int fd, unsigned int slots, const char *name,
			    struct srcu_struct **spp);
/* Attach from another process (fork children are attached already): 0,
 * -EINVAL (not a domain), -EPROTO (another layout, or made by a
 * process of another data model: 32/64-bit, byte order), -EADDRINUSE (its id
 * block is taken here), -EALREADY, -EXDEV (another pid or time
 * namespace), -ENOSPC (every slot held by a live process: dead ones'
 * are recovered first), -EBUSY (a pre-exec image of this process is
 * still attached), -EPERM (as above), -ENOSYS, -EACCES, -EOPNOTSUPP. */
int srcu_shared_attach(int fd, struct srcu_struct **spp);
/* Slots for up to threads threads of this process: 0, or -ENOSPC with
 * nothing reserved.  A thread past the reservation takes a free slot at
 * its first section; with none left the process aborts, saying so. */
int srcu_shared_reserve(struct srcu_struct *sp, unsigned int threads);
/* Detach (sp is unmapped): 0, -EBUSY while a thread of this process is
 * inside a section or an update-side call, runs a grace period or has
 * callbacks pending, -EINVAL. */
int srcu_shared_detach(struct srcu_struct *sp);
/* Is sp a shared domain attached in this process? */
bool srcu_shared(struct srcu_struct *sp);

/* ---- Diagnostics ----------------------------------------------------- */

#define SRCU_STALL_DEFAULT_MS 10000u
/* Report a grace period that waits for readers longer than ms (0: never),
 * then again after 3x, 7x, ... (doubling intervals): 0, -EINVAL. */
int srcu_set_stall_timeout(struct srcu_struct *sp, unsigned int ms);

#define SRCU_STALL_THREADS 16u         /* threads a report names at most */
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
	const struct srcu_stall_thread *threads;  /* the first SRCU_STALL_THREADS */
	unsigned long down_readers;   /* srcu_down_read() sections on idx (_fast ones too) */
	/* Shared domains: nonzero when this is not a stall but a recovery:
	 * process dead_pid died, and its dead_sections open sections were
	 * ended (its reader slots freed). */
	int dead_pid;
	unsigned long dead_sections;
};
/* Where reports go, process-wide (NULL: one line on stderr). */
void srcu_set_stall_handler(void (*fn)(const struct srcu_stall *s, void *arg), void *arg);
/* Report and abort on A-waits-for-B-waits-for-A across domains (off; on
 * with -DSRCU_DEADLOCK_DETECT=ON or SRCU_DEADLOCK_DETECT=1). */
void srcu_set_deadlock_detection(bool on);

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
	/* Process-wide, every domain together: the fence service (0 with
	 * fences; doc/api.md). */
	unsigned long fence_requests;     /* fences A and W asked for */
	unsigned long fence_membarriers;  /* membarriers run to serve them */
};
/* A snapshot of sp's counters: 0, or -EINVAL. */
int srcu_get_stats(struct srcu_struct *sp, struct srcu_stats *st);

/* "membarrier" (readers pay compiler barriers only) or "fence" (no
 * membarrier(2), or SRCU_BACKEND=fence: readers pay fences). */
const char *srcu_backend(void);
/* "MAJOR.MINOR.PATCH" of the library loaded. */
const char *srcu_version(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#include "srcu/layout.h"
#include "srcu/read.h"
#include "srcu/pointer.h"

#endif /* SRCU_H */
