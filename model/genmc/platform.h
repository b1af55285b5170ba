/*
 * model/genmc/platform.h: the C library and kernel calls the engine makes,
 * as GenMC can run them.  GenMC interprets the program (LLVM IR) under a
 * memory model; it has its own stdlib.h, pthread.h, unistd.h and
 * stdatomic.h, models malloc/free, mutexes and condition variables, and
 * nothing else of the system.  Each stand-in below replaces a call GenMC
 * lacks by what that call means to the engine; none touches the
 * algorithm (src/ is included unchanged by engine.h, backend.c replaces
 * src/backend.c).  doc/verification.md lists every bend.
 *
 * Included before the sources: the system headers first (their
 * declarations stay as they are), then the macros that send the calls
 * here.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_VERIFY_PLATFORM_H
#define SRCU_VERIFY_PLATFORM_H

/* GenMC's pthread.h defines the pthread types its own way: glibc's
 * definitions of them (bits/pthreadtypes.h, through <time.h> and
 * <signal.h>) must not follow.  Signals: none are sent in these runs, so
 * <signal.h> is replaced by the little the engine names (below). */
#define _BITS_PTHREADTYPES_COMMON_H 1
#define __have_pthread_attr_t 1
#define _SIGNAL_H 1

#include <assert.h>
#include <errno.h>
#include <genmc.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* No constructors: GenMC reads the constructor table's memory for a
 * global laid out after it (a mutex came back locked, holding the
 * constructor's priority).  The harness calls srcu__process_startup(),
 * process.c's constructor, itself. */
#define constructor(priority) cold

/* ---- threads: an index per thread, for gettid() and the exit hook ---- */

/* The harness numbers its threads (verify_thread_start()); the main
 * thread is 0.  Thread-local, as the engine's own TLS: each thread
 * reads only its own copy, which GenMC supports. */
static __thread int verify_tid;

/* Thread-local arrays (src/internal.h): GenMC keeps only scalars and
 * pointers thread-local, so each is a table indexed by thread number. */
#define VERIFY_THREADS 8
#define SRCU__TLS_ARRAY(type, name, n) static type name[VERIFY_THREADS][n]
#define SRCU__TLS_AT(name, i) ((name)[verify_tid][i])

/* The dense record table (src/internal.h): one word of reader-set bits
 * per domain, not 64, and message buffers of 8 bytes: GenMC's start-up
 * time grows with the globals' sizes, and each byte of a frame's object
 * that the code zeroes is an event of every execution. */
#define SRCU__DENSE_RECORDS 64
#define SRCU__NAME_LEN 8
#define SRCU__THREAD_LEN 8
/* A waiter's spin (src/combine.c) takes no look at the event: it goes
 * straight to its sleep, the futex wait below, which returns once the
 * event moves, as the spin would.  A look that saw the event move would
 * lead to the same next step; a spin that sees nothing is the path that
 * sleeps, the one whose wake-up can be lost, so every run takes it.  Why
 * not 16 looks: GenMC 0.11 takes a loop whose iterations store nothing
 * for a spin loop that can end only when what it reads changes, blocks
 * it at its second iteration, and keeps that block after it revisits the
 * iteration's read with a value that ends the loop: a second updater's
 * wait was reported as never ending although its read had seen the event
 * move. */
#define SRCU__SPIN_LOOKS 0

/* ---- memory: mmap() from a zeroed arena ---- */

/* The engine maps anonymous memory (reader records: a thread's slot
 * table) and relies on it being zero.  GenMC models malloc() but not
 * mmap(), and runs a memset() only of a known type and length: the
 * mappings come from a static arena, whose initial zeros cost no events.
 * Never unmapped (a scenario is short).  Files (shared domains) are not
 * mapped here: no scenario makes one. */
#define VERIFY_ARENA_BYTES (4 * 540 * 1024)
static char verify_arena[VERIFY_ARENA_BYTES] __attribute__((aligned(4096)));
static atomic_size_t verify_arena_used;

static inline void *verify_mmap(size_t len, int fd)
{
	size_t at;

	if (fd >= 0)
		return MAP_FAILED;
	len = (len + 4095) & ~(size_t)4095;
	at = atomic_fetch_add_explicit(&verify_arena_used, len, memory_order_relaxed);
	if (at + len > VERIFY_ARENA_BYTES)
		return MAP_FAILED;
	return verify_arena + at;
}
#define mmap(addr, len, prot, flags, fd, off) verify_mmap((len), (fd))
#define munmap(addr, len) 0
#define madvise(addr, len, advice) (-1)   /* no MADV_WIPEONFORK: no fork here */
#define mprotect(addr, len, prot) 0

static inline void *verify_calloc(size_t n, size_t size)
{
	void *p = malloc(n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}
#define calloc(n, size) verify_calloc((n), (size))

/* GenMC turns a memset() of a typed struct into stores of its fields,
 * except that it stores a double field as an integer, which its own
 * module check then rejects.  The two structs with doubles (the stats
 * and a stall report, neither on a checked path) are zeroed a byte at a
 * time instead. */
struct srcu_stats;
struct srcu_stall;
static inline void *verify_memset_bytes(void *d, int c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((volatile unsigned char *)d)[i] = (unsigned char)c;
	return d;
}
#define memset(d, c, n) (_Generic((d), struct srcu_stats *: 1, struct srcu_stall *: 1, \
					 default: 0) ? verify_memset_bytes((d), (c), (n)) \
						     : __builtin_memset((d), (c), (n)))

/* ---- the kernel: the few calls the engine makes outside backend.c ---- */

/* syscall() is variadic, which GenMC cannot call: only the two the
 * engine makes on its checked paths, gettid and getpid; others fail. */
static inline long verify_syscall(long nr)
{
	if (nr == SYS_gettid)
		return 1000 + verify_tid;
	if (nr == SYS_getpid)
		return 1000;
	errno = ENOSYS;
	return -1;
}
#define syscall(nr, ...) verify_syscall(nr)
/* The engine formats a report only where it found a misuse or an
 * inconsistency; GenMC cannot call a variadic function, so a report is
 * an assertion violation, the report's format its text. */
#define snprintf(buf, len, fmt, ...) (assert(!fmt), 0)
#define getpid() 1000
#define sched_yield() 0
/* Signals: none are sent in these runs, so masking them changes nothing. */
typedef struct { unsigned long bits; } sigset_t;
#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2
#define SIGABRT 6
#define pthread_sigmask(how, set, old) 0
#define sigfillset(set) 0
#define sigemptyset(set) 0
#define sigaddset(set, sig) 0
#define pthread_getname_np(t, buf, len) ((buf)[0] = 0, 0)
#define pthread_setname_np(t, name) 0
#define getenv(name) ((char *)NULL)
#define pthread_atfork(a, b, c) 0   /* no fork() here */
#define sysconf(name) 4096L
static inline int verify_clock_gettime(struct timespec *ts);
#define clock_gettime(clk, ts) verify_clock_gettime(ts)
#define nanosleep(req, rem) 0

/* ---- condition variables, thread-exit keys: GenMC's own, or a table ---- */

typedef __VERIFIER_cond_t pthread_cond_t;
typedef long pthread_condattr_t;
#define pthread_cond_init(c, a) __VERIFIER_cond_init((c), NULL)
#define pthread_cond_destroy(c) __VERIFIER_cond_destroy(c)
#define pthread_cond_wait(c, m) verify_cond_wait((c), (m))
#define pthread_cond_signal(c) __VERIFIER_cond_signal(c)
#define pthread_cond_broadcast(c) __VERIFIER_cond_bcast(c)
/* A timed wait that wakes at its deadline: as a spurious wake-up, which
 * every caller already handles. */
#define pthread_cond_timedwait(c, m, ts) (pthread_mutex_unlock(m), pthread_mutex_lock(m), ETIMEDOUT)
#define pthread_condattr_init(a) 0
#define pthread_condattr_setclock(a, clk) 0
#define pthread_condattr_destroy(a) 0

static inline int verify_cond_wait(__VERIFIER_cond_t *c, pthread_mutex_t *m)
{
	(void)c;
	/* A wait that returns at once (a spurious wake-up: the callers loop
	 * on their condition), without the lock for a moment. */
	pthread_mutex_unlock(m);
	pthread_mutex_lock(m);
	return 0;
}

/* Thread-exit hooks: one destructor per key, this thread's value in its
 * own row; the harness's threads call verify_thread_exit() as their last
 * step, where pthread would run the destructors. */
typedef unsigned int pthread_key_t;
#define VERIFY_KEYS 4
static void (*verify_key_dtor[VERIFY_KEYS])(void *);
static int verify_keys;
static void *verify_key_value[VERIFY_THREADS][VERIFY_KEYS];   /* [thread][key] */

static inline int verify_key_create(pthread_key_t *k, void (*dtor)(void *))
{
	if (verify_keys == VERIFY_KEYS)
		return EAGAIN;
	verify_key_dtor[verify_keys] = dtor;
	*k = verify_keys++;
	return 0;
}
#define pthread_key_create(k, d) verify_key_create((k), (d))
#define pthread_setspecific(k, v) (verify_key_value[verify_tid][(k)] = (void *)(v), 0)
#define pthread_getspecific(k) (verify_key_value[verify_tid][(k)])

static inline void verify_thread_exit(void)
{
	for (int k = 0; k < verify_keys; k++) {
		void *v = verify_key_value[verify_tid][k];

		verify_key_value[verify_tid][k] = NULL;
		if (v && verify_key_dtor[k])
			verify_key_dtor[k](v);
	}
}

#endif /* SRCU_VERIFY_PLATFORM_H */
