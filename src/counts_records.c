/*
 * A private domain's readers: this process's reader records
 * (reader.c), walked through the dense owner table and the domain's
 * reader set, then the list past the table.  The implementation of
 * counts.h that gp.c asks for every private domain.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "counts.h"

static unsigned int dense_records(const struct srcu__scan *scan)
{
	return scan->records < SRCU__DENSE_RECORDS ? scan->records : SRCU__DENSE_RECORDS;
}

/* Report record r's extra unlock on index idx, found by a scan and
 * confirmed (a section that began after the check's fence can show its
 * unlock before its lock): out of the scans' loops, which it would
 * otherwise weigh down. */
static __attribute__((noinline, cold)) void report_extra(struct srcu_struct *sp,
							   struct srcu__record *r, int idx)
{
	char t[32];

	if (!srcu__slot_extra_confirmed(srcu__record_slot(r, srcu__id_of(sp)), idx, false))
		return;
	snprintf(t, sizeof(t), "thread %d", load_relaxed(&r->tid));
	srcu__reader_report_extra_unlock(sp, r, t, idx, SRCU__SCAN_FOUND);
}

/* Record r's lock counts of both indices, added to locks[], each read
 * after its unlock count (acquire: the unlock loads stay first).  A
 * slot's four counters share a cache line: the second index costs no
 * extra miss.  each: the thread's own balance is checked from the same
 * loads; fewer locks than unlocks there is misuse or a section begun
 * after A seen unlock first, and report_extra() tells them apart. */
static inline void add_locks(struct srcu_struct *sp, unsigned int id, struct srcu__record *r,
			     unsigned long locks[2], bool each)
{
	struct srcu__slot *s = srcu__record_slot(r, id);
	unsigned long u0 = load_acquire(&s->unlock[0]), u1 = load_acquire(&s->unlock[1]);
	unsigned long l0 = srcu__count(load_acquire(&s->lock[0]));
	unsigned long l1 = srcu__count(load_acquire(&s->lock[1]));

	locks[0] += l0;
	locks[1] += l1;
	if (!each)
		return;
	if (SRCU__UNLIKELY(srcu__open(l0, u0) < 0))
		report_extra(sp, r, 0);
	if (SRCU__UNLIKELY(srcu__open(l1, u1) < 0))
		report_extra(sp, r, 1);
}

/* The records past the dense table, from r on: no owner table, no
 * reader set; every walk reads them all. */
static inline struct srcu__record *past_dense(struct srcu__record *r)
{
	while (r && r->index < SRCU__DENSE_RECORDS)
		r = r->next;
	return r;
}

#define for_each_past_dense(r) \
	for ((r) = past_dense(load_acquire(&srcu__reader_records)); (r); (r) = past_dense((r)->next))

/* Dense record i if it is owned (acquire on the owner pairs with its
 * release in set_owner(), reader.c: seen free, seen balanced), else NULL. */
static inline struct srcu__record *owned_dense(unsigned int i)
{
	return load_acquire(&srcu__reader_owner[i]) ? load_acquire(&srcu__reader_dense[i]) : NULL;
}

static void add_unlocks(unsigned long sum[2], struct srcu__record *r, unsigned int id)
{
	/* Acquire: the unlock sums are read before fence A and the lock
	 * sums (the compiler and the CPU keep these loads first). */
	struct srcu__slot *s = srcu__record_slot(r, id);

	sum[0] += load_acquire(&s->unlock[0]);
	sum[1] += load_acquire(&s->unlock[1]);
}

/* The owned records of the domain's reader set, from the dense owner
 * table: a free record costs one int, not a miss on its page.  A record
 * not in the set holds no open section of this domain that began before
 * this check (its counts are balanced, or its first count's note, fence
 * N, orders the section after the check's start; doc/design.md, "Reader
 * sets").  Also notes whether a thread other than the caller owns one:
 * if none does, no other thread can be inside a section that this check
 * must see (doc/design.md, "The lone updater"). */
static void sum_dense_unlocks(unsigned int id, struct srcu__scan *scan)
{
	struct srcu__record *r, *me = srcu__reader_self_record();
	unsigned int i, w, n = dense_records(scan);

	/* The loop's sums, the counted bits and "others" are locals,
	 * written to scan once per word: a walk of N records spends its
	 * time on their pages, not on stores to scan. */
	for (w = 0; w * SRCU__WORD_BITS < n; w++) {
		/* Acquire: pairs with Q, the release that clears an exiting
		 * thread's bit (reader.c's forget_domains()). */
		unsigned long bits = load_acquire(&srcu__reader_noted(id)[w]);
		unsigned long counted = 0, sum[2] = { 0, 0 };
		bool others = false;

		for (; bits; bits &= bits - 1) {
			i = w * SRCU__WORD_BITS + (unsigned int)__builtin_ctzl(bits);
			if (i >= n || !(r = owned_dense(i)))
				continue;
			counted |= bits & -bits;   /* i's bit */
			others |= r != me;
			add_unlocks(sum, r, id);
		}
		scan->counted[w] = counted;
		scan->others |= others;
		scan->unlocks[0] += sum[0];
		scan->unlocks[1] += sum[1];
	}
}

/* Records past the dense table: no reader set, always counted, and
 * each one not the caller's counts as another thread's, free or not.
 * Its ->tid cannot say "free": the load may return a release's 0 while
 * the unlock sum reads counts of the thread that claimed the record
 * since (its counting stores are relaxed), and a check that took it for
 * free ran A as a local fence, missed that thread's lock and saw an
 * unlock without a lock (GenMC: doc/verification.md). */
static void sum_list_unlocks(unsigned int id, struct srcu__scan *scan)
{
	struct srcu__record *r, *me = srcu__reader_self_record();

	for_each_past_dense(r) {
		scan->others |= r != me;
		add_unlocks(scan->unlocks, r, id);
	}
}

static void records_sum_unlocks(struct srcu_struct *sp, struct srcu__scan *scan)
{
	unsigned int id = srcu__id_of(sp);

	scan->records = load_acquire(&srcu__reader_count);
	sum_dense_unlocks(id, scan);
	if (scan->records > SRCU__DENSE_RECORDS)
		sum_list_unlocks(id, scan);
}

/*
 * The lock sums of both indices, over exactly the records that the same
 * check's unlock sum counted, in one pass: a record's counters share a
 * line, and a second pass would pay each record's page (a TLB miss,
 * after fence A's membarrier) again.  A record taken since (or created
 * since) holds readers that began after the taker's fence in
 * my_record(), so after this check began.
 */
static void records_sum_locks(struct srcu_struct *sp, const struct srcu__scan *scan,
			      unsigned long locks[2], bool each)
{
	unsigned int w, n = dense_records(scan), id = srcu__id_of(sp);
	struct srcu__record *r;

	for (w = 0; w * SRCU__WORD_BITS < n; w++) {
		unsigned long sum[2] = { 0, 0 };   /* a local: kept in registers */

		for (unsigned long bits = scan->counted[w]; bits; bits &= bits - 1) {
			unsigned int i = w * SRCU__WORD_BITS + (unsigned int)__builtin_ctzl(bits);

			r = load_relaxed(&srcu__reader_dense[i]);   /* seen by the unlock sum */
			add_locks(sp, id, r, sum, each);
		}
		locks[0] += sum[0];
		locks[1] += sum[1];
	}
	if (scan->records > SRCU__DENSE_RECORDS)
		for_each_past_dense(r)
			add_locks(sp, id, r, locks, each);
}

/* Every owned record, through the owner table as the scans read it (a
 * free record costs four bytes there, not a miss on its page; the list
 * of every record ever made, walked at each wake-up, was measured
 * against it: doc/runs/history.md, "Wake-up after thread churn").  Not only
 * the domain's reader set: an inline unlock by a thread that never
 * locked this domain counts in its own record without noting it, and
 * that extra unlock is what must be found.  Both indices are checked
 * (add_locks() reads both): idx only says which one a GP waits on. */
static void records_check_balance(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__id_of(sp), n = load_acquire(&srcu__reader_count);
	unsigned int dense = n < SRCU__DENSE_RECORDS ? n : SRCU__DENSE_RECORDS;
	unsigned long unused[2] = { 0, 0 };
	struct srcu__record *r;

	(void)idx;
	for (unsigned int i = 0; i < dense; i++)
		if ((r = owned_dense(i)))
			add_locks(sp, id, r, unused, true);
	if (n > SRCU__DENSE_RECORDS)   /* free or not: ->tid may be stale */
		for_each_past_dense(r)
			add_locks(sp, id, r, unused, true);
}

static long records_open_everywhere(struct srcu_struct *sp, int idx)
{
	unsigned long u = srcu__reader_unlocks_everywhere(sp, idx);

	srcu__fence_heavy();   /* A: as in gp.c's fence_a(), against B and C */
	return srcu__count_signed(srcu__count_diff(srcu__reader_locks_everywhere(sp, idx), u));
}

/* One process: any nonzero token. */
static uint64_t records_lock_token(struct srcu_struct *sp)
{
	(void)sp;
	return 1;
}

/* The inline read side reads the domain's own lock word: nothing to do. */
static void records_flipped(struct srcu_struct *sp)
{
	(void)sp;
}

/* The holder is a thread of this process, alive while the process is. */
static bool records_holder_dead(uint64_t token)
{
	(void)token;
	return false;
}

/* A thread that dies takes its process with it: no dead reader to
 * recover (an exiting thread's sections are ended at its exit). */
static unsigned int records_recover_dead(struct srcu_struct *sp, struct srcu__shm_dead *dead)
{
	(void)sp;
	(void)dead;
	return 0;
}

const struct srcu__counts srcu__counts_records = {
	.shared = false, .sum_unlocks = records_sum_unlocks, .sum_locks = records_sum_locks,
	.check_balance = records_check_balance, .open_everywhere = records_open_everywhere,
	.lock_token = records_lock_token, .flipped = records_flipped, .holder_dead = records_holder_dead,
	.recover_dead = records_recover_dead };
