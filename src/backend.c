/*
 * backend.c: the asymmetric fence, and process start-up.
 *
 * Readers pay only compiler barriers; the grace period pays for both
 * sides with membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which makes
 * every running thread of the process execute a full fence before it
 * returns (threads not running pass through the scheduler, a full fence
 * too).  That is the userspace synchronize_sched() of the 2006 article.
 *
 * Where membarrier is missing (old kernels, seccomp filters) or
 * SRCU_BACKEND=fence is set, readers use real fences instead and the
 * "heavy" fence is an ordinary one.  The choice is made once, by the
 * library's constructor (process.c), before main() and the program's
 * constructors.  srcu__backend_fence_mode starts at 1, so a reader that
 * runs before the constructor uses fences; it changes to membarrier under
 * such readers safely (reader.c's fence T, doc/design.md "Start-up").
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int srcu__backend_fence_mode = 1;   /* see internal.h */

/* A word on a page the kernel wipes in every child of this process
 * (MADV_WIPEONFORK, Linux 4.14): 1 from the constructor on, and set again
 * by the fork handler, so that it reads 0 in a child made without the
 * handlers (_Fork(), clone() without CLONE_VM, syscall(SYS_fork)), at no
 * cost.  NULL: not known (before the constructor, or an older kernel).
 * inherited_bad: the prepare handler ran in such a child, whose own
 * children are copies of a copy (the handlers do not mend them). */
unsigned int *srcu__backend_with_handlers;
static bool inherited_bad;

static void with_handlers_init(void)
{
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		return;
	if (madvise(m, 4096, MADV_WIPEONFORK) != 0) {
		munmap(m, 4096);
		return;
	}
	*(unsigned int *)m = 1;
	store_relaxed(&srcu__backend_with_handlers, (unsigned int *)m);
}

void srcu__backend_fork_prepare(void)
{
	inherited_bad = srcu__backend_unforked_child();
}

static int membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

/* Register for private expedited membarrier; true on success. */
static bool membarrier_register(void)
{
	int cmds = membarrier(MEMBARRIER_CMD_QUERY);

	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return false;
	return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

static bool fences_requested(void)
{
	const char *b = getenv("SRCU_BACKEND");

	return b && strcmp(b, "fence") == 0;
}

/* Choose the backend, once, before main() (process.c's constructor). */
void srcu__backend_init(void)
{
	srcu__vg_quiet(&srcu__backend_fence_mode, sizeof(srcu__backend_fence_mode));
	with_handlers_init();
	/* Under Helgrind, fences: it sees neither membarrier nor the inline
	 * fast path, and the out-of-line one is annotated (vg.h). */
	/* Release: registered before any thread reads "membarrier" (acquire
	 * in reader.c's fast_path_on() and in fence.c) and so counts without
	 * fences, or has a grace period issue membarriers. */
	if (!fences_requested() && !srcu__vg_running() && membarrier_register())
		store_release(&srcu__backend_fence_mode, 0);
	/* else stay at 1: the reader fast paths use fences. */
}

/* The child of fork() must register again before it may rely on
 * membarrier; it has one thread, so a fallback to fences is safe here. */
void srcu__backend_fork_child(void)
{
	if (srcu__backend_with_handlers && !inherited_bad)
		store_relaxed(srcu__backend_with_handlers, 1u);   /* the kernel wiped it */
	if (!load_relaxed(&srcu__backend_fence_mode) && !membarrier_register())
		store_relaxed(&srcu__backend_fence_mode, 1);
}

void srcu__backend_membarrier(void)
{
	SRCU__TORTURE_POINT(MEMBARRIER, NULL);   /* srcu-torture: its store buffer */
	/* Every thread of the process executes a full fence; pairs with the
	 * compiler barriers B, C and W in include/srcu/read.h (fence.c shares one
	 * among the callers of fences A and W). */
	if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0)
		srcu__report_fatal("membarrier(PRIVATE_EXPEDITED) failed after registration: %s",
			    strerror(errno));
	SRCU__TORTURE_POINT(MEMBARRIER, (void *)1);
}

int srcu__backend_register_global(void)
{
	int cmds = membarrier(MEMBARRIER_CMD_QUERY);

	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) ||
	    membarrier(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) != 0)
		return -ENOSYS;
	return 0;
}

void srcu__backend_membarrier_global(void)
{
	/* Every running thread of every registered process (each process
	 * attached to a shared domain registers) executes a full fence;
	 * pairs with B, C and W in include/srcu/read.h in those processes. */
	if (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) != 0)
		srcu__report_fatal("membarrier(GLOBAL_EXPEDITED) failed after registration: %s",
			    strerror(errno));
}

const char *srcu_version(void)
{
	return SRCU_VERSION_STRING;
}

const char *srcu_backend(void)
{
	return load_relaxed(&srcu__backend_fence_mode) ? "fence" : "membarrier";
}

/* The futex call that takes a timespec of the C library's struct
 * timespec.  A 32-bit program built with a 64-bit time_t
 * (-D_TIME_BITS=64) passes 64-bit seconds, which only futex_time64 reads;
 * plain futex reads the native long. */
#if defined(SYS_futex_time64) && !defined(__LP64__)
#define FUTEX_TIMED_CALL (sizeof(time_t) > sizeof(long) ? SYS_futex_time64 : SYS_futex)
#else
#define FUTEX_TIMED_CALL SYS_futex
#endif

int srcu__backend_futex_wait(unsigned int *addr, unsigned int val, int64_t deadline_ns,
			     bool pshared)
{
	/* FUTEX_PRIVATE_FLAG for words only this process uses. */
	int private = pshared ? 0 : FUTEX_PRIVATE_FLAG;
	struct timespec ts = { (time_t)(deadline_ns / 1000000000), (long)(deadline_ns % 1000000000) };
	long r;

	/* No deadline, or one past what a 32-bit time_t holds: wait on. */
	if (deadline_ns < 0 || (int64_t)ts.tv_sec != deadline_ns / 1000000000)
		r = syscall(SYS_futex, addr, FUTEX_WAIT | private, val, NULL, NULL, 0);
	else   /* BITSET: an absolute CLOCK_MONOTONIC deadline */
		r = syscall(FUTEX_TIMED_CALL, addr, FUTEX_WAIT_BITSET | private, val, &ts, NULL,
			    FUTEX_BITSET_MATCH_ANY);
	if (r == 0 || errno == EAGAIN)
		return 0;
	return errno == ETIMEDOUT || errno == EINTR ? -errno : 0;
}


/* CLOCK_MONOTONIC in nanoseconds, 64 bits on every word size (a 32-bit
 * long would wrap every 4.3 s). */
int64_t srcu__backend_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void srcu__backend_futex_wake(unsigned int *addr, int n, bool pshared)
{
	syscall(SYS_futex, addr, pshared ? FUTEX_WAKE : FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}
