/*
 * Where a domain's readers count, behind one interface: the questions a
 * grace period asks of them (sum the unlocks, sum the locks, check each
 * reader's balance, which heavy fence reaches them, whose lock token,
 * recover the dead).  Two implementations: this process's reader records
 * (counts_records.c: private domains) and a shared domain's file slots
 * (counts_slots.c).  The grace-period code (gp.c) asks through
 * srcu__counts_of() and does not know which one answers; a model
 * checker's harness can put its own behind the same seam.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_COUNTS_H
#define SRCU_COUNTS_H

#include "internal.h"

/* What one check's unlock sum counted, so that its lock sum counts the
 * same readers: owned records (a free record's counts are balanced and
 * still: doc/design.md, "Free records"; records past
 * SRCU__DENSE_RECORDS are always counted), or the file's first
 * shm_slots slots. */
struct srcu__scan {
	/* Not zeroed: the unlock sum writes every word its lock sum reads. */
	unsigned long counted[SRCU__NOTED_WORDS];
	unsigned int records;          /* srcu__reader_count when it began */
	bool others;   /* a reader that is not the caller: fence A needs a membarrier */
	unsigned long unlocks[2];      /* the unlock sum of each index */
	unsigned long down_unlocks[2]; /* srcu_up_read() counts in it */
	unsigned int shm_slots;        /* shared: how many slots the unlock sum read */
};

/* How a report of an extra unlock found by a scan says so. */
#define SRCU__SCAN_FOUND ", found by a grace-period scan"

struct srcu__counts {
	/* Readers in other processes: fence A and W are the global
	 * membarrier, futexes are shared, the GP lock names a process. */
	bool shared;
	/* Add both indices' unlock sums to scan->unlocks (acquire, each
	 * count; the caller has put the down counters there), noting what
	 * the lock sum must count and whether another thread may read. */
	void (*sum_unlocks)(struct srcu_struct *sp, struct srcu__scan *scan);
	/* Add both indices' lock sums, over what scan counted, to locks[]
	 * (read after fence A).  each: check each counted reader's own
	 * balance in the same pass (its counters are on the line the sum
	 * reads), and report an extra unlock (SRCU__SCAN_FOUND) that
	 * srcu__slot_extra_confirmed() confirms; an up/down
	 * domain's readers have none of their own (gp.c checks the sums). */
	void (*sum_locks)(struct srcu_struct *sp, const struct srcu__scan *scan,
			  unsigned long locks[2], bool each);
	/* Check every reader's balance on idx, in the domain's reader set or
	 * not (an unlock of a thread that never locked the domain counts in
	 * its own slot unnoted); report an extra unlock, confirmed. */
	void (*check_balance)(struct srcu_struct *sp, int idx);
	/* Sections of idx open over every reader and the domain's down/up
	 * counters, whatever the reader sets: unlocks, the heavy fence (A),
	 * locks.  Negative: an up without its down. */
	long (*open_everywhere)(struct srcu_struct *sp, int idx);
	/* The GP lock's token for this caller (nonzero). */
	uint64_t (*lock_token)(struct srcu_struct *sp);
	/* This process flipped sp's index: its readers take the new one. */
	void (*flipped)(struct srcu_struct *sp);
	/* Is the GP lock's holder, named by token, dead (and so to be taken
	 * over)? */
	bool (*holder_dead)(uint64_t token);
	/* Balance and free dead processes' readers (caller holds gp_lock);
	 * how many of them dead[] (SRCU__DEAD_REPORTS_MAX) holds to report. */
	unsigned int (*recover_dead)(struct srcu_struct *sp, struct srcu__shm_dead *dead);
};

SRCU__HIDDEN extern const struct srcu__counts srcu__counts_records;
SRCU__HIDDEN extern const struct srcu__counts srcu__counts_slots;

/* sp's readers: chosen by its id, which is fixed for the domain's life. */
static inline const struct srcu__counts *srcu__counts_of(struct srcu_struct *sp)
{
	return SRCU__UNLIKELY(srcu__id_shared(srcu__id_of(sp))) ? &srcu__counts_slots
							      : &srcu__counts_records;
}

#endif /* SRCU_COUNTS_H */
