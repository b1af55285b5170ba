/*
 * layout.h: the private part of struct srcu_struct, in the opaque area the
 * public header reserves (srcu__private, SRCU__PRIVATE_SIZE bytes from the
 * domain's second cache line).  Its groups are 64-byte lines, by who
 * writes them, and the assertions below keep them so: a layout comment
 * without one went stale before.  They are cache lines of their own when
 * the domain is 64-byte aligned (DEFINE_SRCU makes static ones so); the
 * type itself keeps malloc()'s alignment, so that a domain embedded in
 * any allocation stays valid C (a 64-byte-aligned type would not be, in
 * memory from malloc()).
 *
 * The library is built with -fno-strict-aliasing: this struct is reached
 * through the byte array's address.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_LAYOUT_H
#define SRCU_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "srcu.h"

struct srcu__async;

/* A 64-bit word that other threads access atomically: 8-byte aligned on
 * every ABI (i386 aligns uint64_t to 4 in structs, and a split word is
 * not single-copy atomic). */
typedef uint64_t srcu__u64 __attribute__((aligned(8)));
_Static_assert(__atomic_always_lock_free(sizeof(uint64_t), 0),
	       "64-bit atomics are lock-free: a shared domain's words are in a file "
	       "other processes map, where a lock of libatomic's would not be seen");

/* Each group is one 64-byte line on every word size: its fields, padded
 * by the union. */
#define SRCU__LINE_GROUP(line, fields) union { struct { fields }; char line[64]; }

struct srcu__domain {
	/* The runner's line: written by whoever holds gp_lock, once per
	 * step of a grace period; read by callers taking snapshots. */
	SRCU__LINE_GROUP(runner_line,
	/* 0 free; held: 1, or for a shared domain the holder process's
	 * owner word (shared_file.c: pid and start time, never reused), so
	 * that a waiter can find the holder dead and no other process can
	 * ever hold the same value.  64 bits on every word size. */
	srcu__u64 gp_lock;
	srcu__u64 gp_start_ns;        /* when the running GP began */
	unsigned long gp_seq;         /* ctr << 2 | state; release-stored */
	unsigned long gp_seq_needed;  /* furthest snapshot requested (atomic max) */
	unsigned long gp_exp_needed;  /* furthest snapshot requested expedited */
	unsigned long stat_checks;    /* full reader checks performed */
	unsigned long stat_sleeps;    /* futex sleeps while waiting for readers */
	unsigned long stat_exp_gps;   /* grace periods run expedited */
	);

	/* The waiters' line: what callers sleep or spin on, written once
	 * per GP end (with the GP's timing), so that waiting callers do not
	 * take the runner's line at every step. */
	SRCU__LINE_GROUP(waiters_line,
	unsigned int gp_event;        /* futex: bumped when the runner leaves (combine.h) */
	unsigned int gp_heavy;        /* the last check needed a membarrier */
	/* Update-side callers inside (srcu__gp_enter()), and a bit that
	 * cleanup_srcu_struct() holds while it decides (private domains). */
	unsigned int users;
	srcu__u64 stat_gp_ns_sum;     /* over the GPs run (runner) */
	srcu__u64 stat_gp_ns_max;
	unsigned long stat_gps_timed;
	/* GP_* flags of the running GP (runner; GP_PACING read by callers
	 * who expedite it), and the lock counts its first check summed. */
	unsigned int gp_flags;
	unsigned int gp_locks_seen;
	);

	/* srcu_down_read()/srcu_up_read() counters (shared, atomic RMW), and
	 * the rarely written rest: call_srcu(), diagnostics.  Zero means
	 * "the default" or "none yet". */
	SRCU__LINE_GROUP(rest_line,
	unsigned long down_lock[2];
	unsigned long down_unlock[2];
	struct srcu__async *async;    /* call_srcu() worker and queues, lazily */
	unsigned long backlog_limit;  /* 0: SRCU_BACKLOG_DEFAULT */
	unsigned int stall_ms;        /* 0: SRCU_STALL_DEFAULT_MS; ~0u: off */
	unsigned int stat_stalls;     /* stall reports made (runner) */
	);
};

/* What the assertions enforce: the private area starts on the domain's
 * second line, so the read-side words share no line with the update
 * side; each group starts a line of its own; the whole fits the area the
 * public header reserves (sizeof(struct srcu_struct) is in doc/abi.md). */
_Static_assert(offsetof(struct srcu_struct, srcu__private) == 64,
	       "the update side starts on the domain's second cache line");
_Static_assert(offsetof(struct srcu__domain, gp_event) == 64,
	       "the waiters' fields start a cache line of their own");
_Static_assert(offsetof(struct srcu__domain, down_lock) == 128,
	       "down/up counters and the rest start a cache line of their own");
_Static_assert(sizeof(struct srcu__domain) <= SRCU__PRIVATE_SIZE,
	       "the private layout fits SRCU__PRIVATE_SIZE");
_Static_assert(sizeof(struct srcu_struct) == 64 + SRCU__PRIVATE_SIZE,
	       "sizeof(struct srcu_struct) is the documented ABI size");

/* The private part of the srcu_struct at sp: a private domain's engine
 * state.  A shared domain's is in its file: srcu__dom() (internal.h). */
static inline struct srcu__domain *srcu__dom_area(struct srcu_struct *sp)
{
	return (struct srcu__domain *)(void *)sp->srcu__private;
}

#endif /* SRCU_LAYOUT_H */
