/*
 * torture.h: test-only hooks for tools/srcu-torture.
 *
 * Compiled in only when SRCU_TORTURE is defined, which only the
 * never-installed srcu_torture objects is.  The installed libraries contain
 * none of this.  The flavours are deliberately broken variants of the
 * algorithm, so that the torture test can prove it catches them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TORTURE_H
#define SRCU_TORTURE_H

enum srcu__torture_flavor {
	SRCU_TORTURE_CORRECT = 0,
	SRCU_TORTURE_NOSYNC,    /* synchronize_srcu*() returns at once */
	SRCU_TORTURE_ONESCAN,   /* the GP skips SCAN1, the stale-reader wait */
	SRCU_TORTURE_NOFENCE,   /* the GP's scans run without fence A */
	SRCU_TORTURE_EARLYFENCE,/* fence A shared with the membarrier in flight */
	SRCU_TORTURE_CBNOWAIT,  /* call_srcu()'s worker runs callbacks at once */
	SRCU_TORTURE_EARLYPOLL, /* a polled cookie is done one GP early */
	SRCU_TORTURE_DISCARDLIVE,/* shared domains: every other process is
				  * taken for dead, its open sections ended */
	SRCU_TORTURE_LATEJOIN,  /* a synchronize caller that arrives during a
				 * GP's first check joins that GP (its snapshot
				 * is the running GP's end when gp_seq reads
				 * SCAN1: model/srcu.pml's LATEJOIN).  Caught as
				 * a reader's object at pipeline age 2 (a GP
				 * ended inside its section), only when the
				 * runner is preempted between the first check's
				 * sums and its next state store while a reader
				 * begins and a caller arrives: 4-25 s with
				 * tools/CMakeLists.txt's workload (1 domain,
				 * 1 reader, 8 writers, all expedited) */
	SRCU_TORTURE_HANDOVERNOWAKE,/* an exiting thread hands its up/down
				 * imbalance over without waking the grace
				 * period that sleeps on it (issue 33's first
				 * liveness bug): a GP whose check overlapped
				 * the hand-over sleeps until its stall timer */
	SRCU_TORTURE_PACEUNBOUNDED,/* a paced GP re-reads the process's pacing
				 * gap after each sleep, uncapped, and no
				 * membarrier run meanwhile serves it: while
				 * another domain issues membarriers, a normal
				 * GP waits as long as that goes on */
};

/* Points in the library where a test may stop a thread, to open a race
 * window that is otherwise nanoseconds wide. */
enum srcu__torture_point {
	SRCU_TORTURE_POINT_FORK_PREPARE,  /* fork handler: sp->async read, not
					   * yet locked; arg: it (or NULL) */
	SRCU_TORTURE_POINT_FENCE_BEGUN,   /* fence.c: a membarrier marked
					   * running, not yet issued; arg: NULL */
	SRCU_TORTURE_POINT_MEMBARRIER,    /* backend.c: a membarrier is about
					   * to run (arg: NULL) or has run, before
					   * it returns (arg: non-NULL) */
	SRCU_TORTURE_POINT_UPDATE_ENTERED,/* gp.c: an update-side call has
					   * entered the domain (arg: it) */
	SRCU_TORTURE_POINT_CLEANUP_CLOSED,/* lifecycle.c: cleanup has closed
					   * the domain to callers (arg: it) */
	SRCU_TORTURE_POINT_FORK_CHILD,    /* reader.c: a fork child's handler,
					   * before it touches any record; arg: NULL */
	SRCU_TORTURE_POINT_CLAIM_FREE,    /* shared_file.c: claim_free() has taken a free
					   * slot (owner CAS), no more; arg: &slot */
	SRCU_TORTURE_POINT_CLAIM_DEAD,    /* shared_file.c: claim_dead() has marked a dead
					   * owner's slot claiming; arg: &slot */
	SRCU_TORTURE_POINT_DEAD_REPORT,   /* gp.c: a dead process's recovery is
					   * about to be reported (in the same
					   * thread, next); arg: its uint64_t owner
					   * word (pid and start time) */
	SRCU_TORTURE_POINT_PACE,          /* fence.c: srcu__fence_paced_until() has
					   * its answer; arg: int64_t *, which the
					   * hook may change (a pacing gap of a
					   * test's choosing) */
	SRCU_TORTURE_POINT_HANDOVER,      /* reader.c: an exiting thread's up/down
					   * imbalance is half handed over (the
					   * first count moved, not the second),
					   * registry lock held; arg: NULL */
	SRCU_TORTURE_POINT_GP_SLEEP,      /* gp.c: a GP is about to sleep on its
					   * readers (sleep_until_done()); arg: sp */
	SRCU_TORTURE_POINT_CREATE_CLAIMED,/* shared_domain.c: this creator owns the
					   * file (claim_creation()), before it
					   * formats it; arg: the header */
	SRCU_TORTURE_POINT_PROC_STAT,     /* shared_file.c: a stat file that names
					   * a process (this one or another) was read;
					   * arg: struct srcu__torture_stat, whose pid
					   * and start the hook may change, as an
					   * emulator answering the open itself would */
	SRCU_TORTURE_POINT_ASYNC_GOT,     /* async.c: call_srcu() or
					   * start_poll_synchronize_srcu() holds the
					   * domain's async state (async_get()), not
					   * yet locked; arg: the domain */
};

/* What shared_file.c read from a stat file: the path, its field 1 (pid)
 * and field 22 (start time). */
struct srcu__torture_stat {
	const char *path;
	int pid;
	unsigned long long start;
};

#ifdef SRCU_TORTURE
/* Set before the first grace period; read by gp.c. */
extern int srcu__torture_flavor;
#define SRCU__BUSTED(f) (srcu__torture_flavor == SRCU_TORTURE_##f)
/* Called at each point when set (tests only), with what the code holds
 * there (the point's comment says what). */
extern void (*srcu__torture_point)(enum srcu__torture_point p, void *arg);
#define SRCU__TORTURE_POINT(p, arg) \
	do { if (srcu__torture_point) srcu__torture_point(SRCU_TORTURE_POINT_##p, (arg)); } while (0)
#else
#define SRCU__BUSTED(f) 0
#define SRCU__TORTURE_POINT(p, arg) do { } while (0)
#endif

#endif /* SRCU_TORTURE_H */
