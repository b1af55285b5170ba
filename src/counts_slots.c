/*
 * A process-shared domain's readers: the slots of its file, one per
 * reader thread of any attached process (shared_file.c; doc/shared.md).
 * The implementation of counts.h that gp.c asks for every shared domain.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <unistd.h>

#include "counts.h"

static unsigned int block_of(struct srcu_struct *sp)
{
	return srcu__shm_block(srcu__id_of(sp));
}

/* Every process's readers count in the file's slots: sum them all;
 * other processes' threads always need fence A. */
static void slots_sum_unlocks(struct srcu_struct *sp, struct srcu__scan *scan)
{
	scan->others = true;
	scan->shm_slots = srcu__shm_sum_unlocks(block_of(sp), scan->unlocks);
}

/* The lock sum of idx over the first n slots; each: each slot's balance
 * checked from the same loads, as a record's is. */
static unsigned long add_slot_locks(struct srcu_struct *sp, int idx, unsigned int n, bool each)
{
	unsigned int b = block_of(sp), bad = 0;
	unsigned long sum = srcu__shm_sum_locks(b, idx, n, &bad);

	if (SRCU__UNLIKELY(bad && each) &&
	    srcu__slot_extra_confirmed(srcu__shm_counters(b, bad - 1), idx, true)) {
		uint64_t owner = load_relaxed(&srcu__shm_owner_of(b, bad - 1)->owner);
		char t[SRCU__THREAD_LEN];

		snprintf(t, sizeof(t), "a thread of process %d (reader slot %u)",
			 srcu__shm_owner_pid(owner), bad - 1);
		srcu__report_extra_unlock(sp, t, idx, SRCU__SCAN_FOUND, false);
	}
	return sum;
}

static void slots_sum_locks(struct srcu_struct *sp, const struct srcu__scan *scan,
			    unsigned long locks[2], bool each)
{
	for (int idx = 0; idx < 2; idx++)
		locks[idx] += add_slot_locks(sp, idx, scan->shm_slots, each);
}

static void slots_check_balance(struct srcu_struct *sp, int idx)
{
	(void)add_slot_locks(sp, idx, srcu__shm_slots_high(block_of(sp)), true);
}

static long slots_open_everywhere(struct srcu_struct *sp, int idx)
{
	unsigned int b = block_of(sp), bad = 0;
	unsigned long u = load_acquire(&srcu__dom(sp)->down_unlock[idx]), l, su[2] = { 0, 0 };

	(void)srcu__shm_sum_unlocks(b, su);
	u += su[idx];
	srcu__fence_heavy_global();   /* A: as in gp.c's fence_a(), against B and C everywhere */
	l = load_acquire(&srcu__dom(sp)->down_lock[idx]);
	l += srcu__shm_sum_locks(b, idx, srcu__shm_slots_high(b), &bad);
	return srcu__count_signed(srcu__count_diff(l, u));
}

/* The process's identity, which a waiter in another process can find
 * dead, and which no other process ever has (a waiter that read it, then
 * found it dead, cannot take over from a live process that happens to
 * hold the lock by the time of its CAS). */
static uint64_t slots_lock_token(struct srcu_struct *sp)
{
	char n[SRCU__NAME_LEN];
	uint64_t me = srcu__shm_self();

	if (!me)   /* a fork child that cannot read its own /proc entry */
		srcu__report_fatal("process %d cannot run a grace period of shared domain %s: "
			    "it cannot read /proc/self/task/<pid>/stat, its identity there",
			    (int)getpid(), srcu__report_name(sp, n, sizeof(n)));
	return me;
}

/* This process's readers count on its handle's copy of the index
 * (doc/shared.md, "Whose words the reader counts at"). */
static void slots_flipped(struct srcu_struct *sp)
{
	srcu__shm_index_refresh(block_of(sp));
}

static unsigned int slots_recover_dead(struct srcu_struct *sp, struct srcu__shm_dead *dead)
{
	return srcu__shm_recover(block_of(sp), dead, SRCU__DEAD_REPORTS_MAX);
}

const struct srcu__counts srcu__counts_slots = {
	.shared = true, .sum_unlocks = slots_sum_unlocks, .sum_locks = slots_sum_locks,
	.check_balance = slots_check_balance, .open_everywhere = slots_open_everywhere,
	.lock_token = slots_lock_token, .flipped = slots_flipped, .holder_dead = srcu__shm_owner_dead,
	.recover_dead = slots_recover_dead };
