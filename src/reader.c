/*
 * reader.c: per-thread reader records and the read side's slow paths.
 *
 * A record holds one thread's lock/unlock counts for every domain it has
 * used: dir[id >> 7] points to a 4 KiB chunk of 128 slots, allocated the
 * first time the thread uses a domain in that range.  Records are created
 * lazily (no registration), reached through initial-exec TLS, and kept on
 * an append-only registry list that grace-period scans walk without a
 * lock.  A record is never freed: when its thread exits it goes on a free
 * list, counts intact, and the next new thread reuses it.  Counts only
 * grow, and an exiting thread's counts are balanced first, so the sums a
 * scan computes stay exact across thread exit and reuse.
 *
 * Invariants:
 *  - Only the owning thread writes a record's counters and dir[].
 *  - A record's ->next is set before the record is published, and never
 *    changes; the list head is published with a release store.
 *  - Memory: 4 KiB + 64 B per record (peak concurrent threads), plus
 *    32 B per (thread, domain) in 4 KiB chunks of 128 consecutive ids.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

__thread struct srcu__reader *srcu__self __attribute__((tls_model("initial-exec")));
struct srcu__gp_wait srcu__gp_waits[SRCU__MAX_IDS];
struct srcu__record *srcu__records;

static struct srcu__record *free_records;   /* under srcu__registry_lock */
static pthread_key_t exit_key;

static void reader_exit(void *arg);

void srcu__readers_init(void)
{
	if (pthread_key_create(&exit_key, reader_exit) != 0)
		srcu__fatal("pthread_key_create() failed: no thread-exit hook");
}

static struct srcu__record *record_of(struct srcu__reader *pub)
{
	return (struct srcu__record *)pub;   /* pub is the first member */
}

/* A zeroed record linked into the registry. Caller holds the lock. */
static struct srcu__record *record_new(void)
{
	struct srcu__record *r = aligned_alloc(64, (sizeof(*r) + 63) & ~(size_t)63);

	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->next = srcu__records;
	/* Pairs with the acquire loads of the head in the scans: they see a
	 * complete record, with ->next set. */
	store_release(&srcu__records, r);
	return r;
}

static struct srcu__record *attach(void)
{
	struct srcu__record *r;
	char t[64];

	pthread_mutex_lock(&srcu__registry_lock);
	r = free_records;
	if (r)
		free_records = r->next_free;
	else
		r = record_new();
	if (r)
		r->tid = srcu__gettid();
	pthread_mutex_unlock(&srcu__registry_lock);
	if (!r)
		srcu__fatal("%s: out of memory for its reader record (4 KiB)",
			    srcu__thread_desc(t, sizeof(t)));
	pthread_setspecific(exit_key, r);
	srcu__self = &r->pub;
	return r;
}

static void chunk_attach(struct srcu__record *r, unsigned int c)
{
	struct srcu__chunk *ch;
	char t[64];

	if (r->pub.dir[c])
		return;
	ch = aligned_alloc(4096, sizeof(*ch));
	if (!ch)
		srcu__fatal("%s: out of memory for reader counters (4 KiB)",
			    srcu__thread_desc(t, sizeof(t)));
	memset(ch, 0, sizeof(*ch));
	/* Pairs with the acquire load of dir[] in the scans: zeroed counts
	 * are visible before the chunk is. */
	store_release(&r->pub.dir[c], ch);
}

int srcu__read_lock_slow(struct srcu_struct *sp)
{
	unsigned int id = srcu__domain_id(sp, "srcu_read_lock");
	struct srcu__record *r = srcu__self ? record_of(srcu__self) : attach();

	chunk_attach(r, id >> SRCU__CHUNK_SHIFT);
	return srcu_read_lock(sp);   /* the fast path now succeeds */
}

void srcu__read_unlock_slow(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__domain_id(sp, "srcu_read_unlock");
	char n[SRCU__NAME_LEN], t[64];

	if ((unsigned int)idx > 1)
		srcu__fatal("srcu_read_unlock() on domain %s by %s: index %d is not "
			    "one that srcu_read_lock() returns (0 or 1)",
			    srcu__name(sp, n, sizeof(n)), srcu__thread_desc(t, sizeof(t)), idx);
	(void)id;
	srcu__fatal("srcu_read_unlock() on domain %s by %s without a matching "
		    "srcu_read_lock() in this thread (index %d); to end a section "
		    "in another thread use srcu_down_read()/srcu_up_read()",
		    srcu__name(sp, n, sizeof(n)), srcu__thread_desc(t, sizeof(t)), idx);
}

void srcu__wake_gp(unsigned int id)
{
	/* Seq-cst RMW: orders our unlock count before the bump, so that a
	 * grace period that sees the bump also sees the count (it loads the
	 * futex word with acquire before its scan). */
	__atomic_fetch_add(&srcu__gp_waits[id].wake_seq, 1, __ATOMIC_SEQ_CST);
	srcu__futex_wake(&srcu__gp_waits[id].wake_seq, 1);
}

/* ---- sums for the grace-period scans ---- */

static unsigned long sum_counts(struct srcu_struct *sp, int idx, bool locks)
{
	unsigned int id = load_relaxed(&sp->id);
	unsigned int c = id >> SRCU__CHUNK_SHIFT, i = id & (SRCU__CHUNK_SLOTS - 1);
	unsigned long sum = load_acquire(locks ? &sp->down_lock[idx] : &sp->down_unlock[idx]);
	struct srcu__record *r;

	for (r = load_acquire(&srcu__records); r; r = r->next) {
		struct srcu__chunk *ch = load_acquire(&r->pub.dir[c]);
		struct srcu__slot *s;

		if (!ch)
			continue;
		s = &ch->slot[i];
		/* Acquire on the unlock counts pairs with the release in
		 * srcu_read_unlock(): the section happens before what the
		 * grace period's caller does next. */
		sum += load_acquire(locks ? &s->lock[idx] : &s->unlock[idx]);
	}
	return sum;
}

unsigned long srcu__sum_locks(struct srcu_struct *sp, int idx)
{
	return sum_counts(sp, idx, true);
}

unsigned long srcu__sum_unlocks(struct srcu_struct *sp, int idx)
{
	return sum_counts(sp, idx, false);
}

bool srcu__self_in_reader(struct srcu_struct *sp)
{
	struct srcu__slot *s = srcu__my_slot(load_relaxed(&sp->id));

	if (!s)
		return false;
	return s->lock[0] + s->lock[1] != s->unlock[0] + s->unlock[1];
}

/* ---- srcu_down_read / srcu_up_read: shared counters, atomic RMW ---- */

int srcu_down_read(struct srcu_struct *sp)
{
	int idx;

	(void)srcu__domain_id(sp, "srcu_down_read");
	idx = (int)(load_relaxed(&sp->idx) & 1);
	__atomic_fetch_add(&sp->down_lock[idx], 1, __ATOMIC_SEQ_CST);
	srcu__mb_after_rmw();  /* B: as in srcu_read_lock(), pairs with A */
	return idx;
}

void srcu_up_read(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__domain_id(sp, "srcu_up_read");
	char n[SRCU__NAME_LEN];

	if ((unsigned int)idx > 1)
		srcu__fatal("srcu_up_read() on domain %s: index %d is not one that "
			    "srcu_down_read() returns (0 or 1)",
			    srcu__name(sp, n, sizeof(n)), idx);
	/* Counts only grow, so more unlocks than locks is a certain bug. */
	if ((long)(load_relaxed(&sp->down_lock[idx]) - load_relaxed(&sp->down_unlock[idx])) <= 0)
		srcu__fatal("srcu_up_read() on domain %s without a matching "
			    "srcu_down_read() (index %d)", srcu__name(sp, n, sizeof(n)), idx);
#if !(defined(__x86_64__) || defined(__i386__))
	__atomic_thread_fence(__ATOMIC_SEQ_CST);  /* C */
#endif
	/* C and W: the locked RMW is a full fence on x86. */
	__atomic_fetch_add(&sp->down_unlock[idx], 1, __ATOMIC_SEQ_CST);
	srcu__mb_after_rmw();
	/* sp may be freed from here on. */
	if (load_relaxed(&srcu__gp_waits[id].waiting) == (unsigned int)idx + 1)
		srcu__wake_gp(id);
}

/* ---- thread exit and fork ---- */

/* End the sections a dead thread left open in one slot, as its unlocks
 * would have.  Caller holds srcu__registry_lock, so the domain cannot be
 * unbound (and freed) before the wake-up is done. */
static void end_abandoned(struct srcu__slot *s, unsigned int id, int idx, bool report)
{
	unsigned long open = s->lock[idx] - s->unlock[idx];
	struct srcu_struct *sp = srcu__domains[id];
	char n[SRCU__NAME_LEN], t[64];

	if (!open)
		return;
	if (report)
		srcu__warn("%s exited inside %lu read-side critical section(s) of "
			   "domain %s; they are treated as ended",
			   srcu__thread_desc(t, sizeof(t)), open,
			   sp ? srcu__name(sp, n, sizeof(n)) : "(cleaned up)");
	store_release(&s->unlock[idx], s->lock[idx]);
	if (load_relaxed(&srcu__gp_waits[id].waiting) == (unsigned int)idx + 1)
		srcu__wake_gp(id);
}

static void record_end_all(struct srcu__record *r, bool report)
{
	unsigned int c, i;

	for (c = 0; c < SRCU__DIR_SIZE; c++) {
		struct srcu__chunk *ch = r->pub.dir[c];

		if (!ch)
			continue;
		for (i = 0; i < SRCU__CHUNK_SLOTS; i++) {
			end_abandoned(&ch->slot[i], c * SRCU__CHUNK_SLOTS + i, 0, report);
			end_abandoned(&ch->slot[i], c * SRCU__CHUNK_SLOTS + i, 1, report);
		}
	}
}

static void record_release(struct srcu__record *r)
{
	r->tid = 0;
	r->next_free = free_records;
	free_records = r;
}

static void reader_exit(void *arg)
{
	struct srcu__record *r = arg;

	pthread_mutex_lock(&srcu__registry_lock);
	record_end_all(r, true);
	record_release(r);
	pthread_mutex_unlock(&srcu__registry_lock);
	srcu__self = NULL;
}

/* In the child of fork(): the other threads are gone.  Their open sections
 * end with them (silently: they are still running in the parent).  Caller
 * holds srcu__registry_lock. */
void srcu__readers_after_fork_child(void)
{
	struct srcu__record *self = srcu__self ? record_of(srcu__self) : NULL;
	struct srcu__record *r;

	free_records = NULL;
	for (r = srcu__records; r; r = r->next) {
		if (r == self)
			continue;
		record_end_all(r, false);
		record_release(r);
	}
	if (self)
		self->tid = srcu__gettid();
}
