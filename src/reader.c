/*
 * reader.c: per-thread reader records, the read side's slow paths,
 * srcu_down_read()/srcu_up_read(), and thread exit.  The layers above read
 * the records (gp.c's sums, stall.c's holders) through srcu__reader_records and
 * srcu__reader_record_holds(); process.c drives the fork child's part.
 *
 * A record holds one thread's lock/unlock counts for every domain, in a
 * flat table indexed by domain id: an mmap()ed reservation of
 * SRCU__MAX_IDS slots and the spill slot (srcu.h; 516 KiB of address
 * space, the last page only ever touched by a garbage domain's unlock)
 * that gets memory one 4 KiB
 * page (128 ids) at a time, as the thread first counts in it.  Records are
 * created lazily (no registration), reached through initial-exec TLS, and
 * kept on an append-only registry list that grace-period scans walk
 * without a lock.  A record is never freed: when its thread exits it is
 * released (->tid = 0), counts intact, and a new thread claims it.  Counts
 * only grow, and an exiting thread's counts are balanced first, so the
 * sums a scan computes stay exact across thread exit and reuse.
 *
 * Invariants:
 *  - Only the owning thread writes a record's counters.
 *  - A record's ->slots and ->next are set before the record is
 *    published, and never change; the head is published with release.
 *  - With the fence backend srcu__slots stays NULL, so every read-side
 *    call comes here and counts with locked RMWs.
 *  - Async-signal-safe: a thread's first section (in a signal handler
 *    too) takes no lock and calls no malloc: a record is claimed with a
 *    CAS on ->tid or created with mmap() (the record in its own table's
 *    unused sentinel slots) and pushed with a CAS, with the
 *    thread's signals blocked meanwhile, so that a handler's first section
 *    cannot claim a second record under the interrupted one.
 *  - Memory: per record (peak concurrent threads) 4 KiB per range of 128
 *    domain ids the thread has used, the record itself included: 32 B
 *    per (thread, domain) when ids are dense, which lowest-first
 *    allocation keeps them.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

__thread struct srcu__slot *srcu__slots SRCU__TLS_FAST;
static __thread struct srcu__record *self;
/* Page-aligned: each shared block's page of it is mapped from the
 * domain's file (shared_domain.c), so that a waiting GP's flag reaches readers
 * in every process. */
unsigned int srcu__gp_waits[SRCU__TABLE_WORDS] __attribute__((aligned(4096)));
struct srcu__record *srcu__reader_records;
int srcu__reader_owner[SRCU__DENSE_RECORDS];
struct srcu__record *srcu__reader_dense[SRCU__DENSE_RECORDS];
unsigned int srcu__reader_count;
/* SRCU__MAX_IDS reader sets, 8 MiB of zero pages: a page gets memory
 * when one of its 8 domains notes a reader.  Static, not mmap()ed in the
 * constructor: a statically linked program may lack the constructor. */
unsigned long srcu__reader_noted_map[SRCU__MAX_IDS * SRCU__NOTED_WORDS];

/* The thread-exit hook's key: created by the constructor, or by the first
 * record made before it ran (a section in an earlier constructor).
 * exit_key_state: KEY_NONE, KEY_MAKING (one thread creates it), KEY_READY. */
static pthread_key_t exit_key;
static int exit_key_state;
#define KEY_NONE   0
#define KEY_MAKING 1
#define KEY_READY  2
/* Destructor rounds this thread's hook has run (reader_exit()), and
 * whether it has ended the thread's sections for good. */
static __thread unsigned int exit_rounds;
static __thread bool exit_done;

static void reader_exit(void *arg);
static void wake_if_waited(unsigned int id, int idx);

/* The exit key, made once by whichever thread comes first.  Made early
 * (the constructor runs first of the program's), it is among the
 * process's first keys, whose values glibc keeps in the thread descriptor
 * and sets without allocating (my_record() may run in a handler).
 * pthread_key_create() takes no lock in glibc; the caller's signals are
 * blocked (my_record()) or no section can run yet (the constructor), so
 * no handler of this thread spins on KEY_MAKING. */
static pthread_key_t exit_key_get(void)
{
	int st = load_acquire(&exit_key_state);

	if (st == KEY_READY)
		return exit_key;
	if (st == KEY_NONE &&
	    __atomic_compare_exchange_n(&exit_key_state, &st, KEY_MAKING, false,
					__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		if (pthread_key_create(&exit_key, reader_exit) != 0)
			srcu__report_fatal("pthread_key_create() failed: no thread-exit hook");
		store_release(&exit_key_state, KEY_READY);   /* exit_key before the state */
		return exit_key;
	}
	while (load_acquire(&exit_key_state) != KEY_READY)
		srcu__cpu_relax();   /* another thread is making it */
	return exit_key;
}

void srcu__reader_init(void)
{
	(void)exit_key_get();
	srcu__vg_quiet(srcu__reader_noted_map, sizeof(srcu__reader_noted_map));
	srcu__vg_quiet(srcu__gp_waits, sizeof(srcu__gp_waits));
	srcu__vg_quiet(&srcu__reader_records, sizeof(srcu__reader_records));
	srcu__vg_quiet(&srcu__reader_count, sizeof(srcu__reader_count));
	srcu__vg_quiet(srcu__reader_owner, sizeof(srcu__reader_owner));
	srcu__vg_quiet(srcu__reader_dense, sizeof(srcu__reader_dense));
}

/* The ids' slots and the spill slot: a garbage domain's counts stay in
 * the thread's own table (srcu.h). */
#define SLOTS_BYTES ((size_t)SRCU__TABLE_WORDS * sizeof(unsigned long))
_Static_assert(SRCU__TABLE_WORDS > UINT16_MAX + 1 + 2,
	       "a 16-bit word plus an unlock's offset (idx + 2) is in the table, and so "
	       "word + idx in srcu__gp_waits[], as long");

/* The record lives in its own table, in the slots of the sentinel ids,
 * which no count ever touches: no allocation beyond the mapping, and the
 * page it is on is the one the thread's first domains count in anyway. */
_Static_assert(sizeof(struct srcu__record) <= SRCU__ID_FIRST * sizeof(struct srcu__slot),
	       "a reader record must fit in the sentinel ids' slots");


/* The dense copy of r's owner, which the scans read instead of walking
 * the list (records past SRCU__DENSE_RECORDS have none).  Set after
 * ->tid is claimed and before fence R; cleared, with release, after the
 * counts are balanced and before ->tid is: a scan that sees 0 skips a
 * record that is free or whose new owner has not yet passed R, which
 * the argument at R covers either way. */
static void set_owner(struct srcu__record *r, int tid)
{
	if (r->index < SRCU__DENSE_RECORDS)
		store_release(&srcu__reader_owner[r->index], tid);
}

/* A new record owned by tid, pushed on the registry.  mmap() is
 * async-signal-safe, malloc() is not. */
static struct srcu__record *record_new(int tid)
{
	/* Address space only: pages get memory when first written. */
	void *m = mmap(NULL, SLOTS_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct srcu__record *r, *head;

	if (m == MAP_FAILED)
		return NULL;
	srcu__vg_quiet(m, SLOTS_BYTES);   /* counts: owner-written, scanned */
	r = m;
	r->slots = m;   /* == r: srcu__record_slot() counts on it */
	r->index = __atomic_fetch_add(&srcu__reader_count, 1, __ATOMIC_RELAXED);
	r->tid = tid;
	set_owner(r, tid);
	if (r->index < SRCU__DENSE_RECORDS)   /* release: a complete record */
		store_release(&srcu__reader_dense[r->index], r);
	head = load_relaxed(&srcu__reader_records);
	do
		r->next = head;
	while (!__atomic_compare_exchange_n(&srcu__reader_records, &head, r, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	/* The release pairs with the acquire loads of the head in the scans:
	 * they see a complete record, ->slots, ->next and ->tid set. */
	return r;
}

/* A released record, now owned by tid, or NULL.  The acquire pairs with
 * the release of ->tid = 0 in record_release(): the counts this thread
 * goes on from are the ones the last owner balanced. */
static struct srcu__record *record_claim(int tid)
{
	struct srcu__record *r;

	for (r = load_acquire(&srcu__reader_records); r; r = r->next) {
		int free_tid = 0;

		if (load_relaxed(&r->tid) == 0 &&
		    __atomic_compare_exchange_n(&r->tid, &free_tid, tid, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			set_owner(r, tid);
			return r;
		}
	}
	return NULL;
}

/* Let this thread's sections take the inline fast path, if the backend
 * is membarrier: true then.  The backend may have changed from fences to
 * membarrier since this thread's record was made (a section that ran
 * before the library's constructor), so this runs at a thread's first
 * section and again on the slow path.  Signal-safe: a handler that gets
 * here too stores the same pointer. */
static bool fast_path_on(struct srcu__record *r)
{
	/* Acquire pairs with the release in srcu__backend_init(): registered
	 * for membarrier before any thread counts without fences. */
	if (load_acquire(&srcu__backend_fence_mode))
		return false;
	if (!srcu__slots) {
		/* T: pairs with the full fence before a grace period's check
		 * reads the backend (S at the GP's start, then its fence
		 * A in srcu__fence_heavy()): a check that read "fence" and so
		 * ran a local fence A cannot see this thread's fence-free
		 * counts, but this thread read "membarrier" after it, so its
		 * sections, all after this fence, see everything before that
		 * check (read-to-write causality with full fences on both
		 * sides; doc/design.md, "Start-up"). */
		srcu__mb(T);
		srcu__slots = r->slots;   /* the inline fast path may run now */
	}
	return true;
}

/* The calling thread's record, claimed or created on first use.
 * Async-signal-safe.  Signals are blocked while it runs, so a handler's
 * section either finds self set or ran before this call began. */
static struct srcu__record *my_record(void)
{
	struct srcu__record *r = self;
	sigset_t all, old;
	int tid;

	if (r)
		return r;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	/* A handler between the look above and the block may have run this
	 * thread's first section: use its record.  An atomic load, or the
	 * compiler reuses the first (self's address never escapes). */
	r = __atomic_load_n(&self, __ATOMIC_RELAXED);
	if (r) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return r;
	}
	tid = srcu__report_gettid();
	r = record_claim(tid);
	if (!r)
		r = record_new(tid);
	if (!r) {
		char t[SRCU__THREAD_LEN];

		srcu__report_fatal("%s: out of memory for its reader record",
			    srcu__report_thread(t, sizeof(t)));
	}
	/* R: pairs with the full fence before a check (S at the GP's start,
	 * or A of the check before): a check whose unlock sum saw this record
	 * free (or not yet listed) skips it in its lock sum too, so this
	 * thread's sections must see everything published before that check
	 * began. */
	srcu__mb(R);
	pthread_setspecific(exit_key_get(), r);
	self = r;
	(void)fast_path_on(r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r;
}

/* Fence backend: the count is a locked RMW, a full fence (B, or C and W).
 * Returns the word's new value. */
static unsigned long count_mb(unsigned long *c)
{
	unsigned long v;

#if !defined(SRCU__ASM_X86)
	if (srcu__mb_kept(BC))
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
	v = __atomic_add_fetch(c, 1, __ATOMIC_SEQ_CST);
	if (srcu__mb_kept(BC))
		srcu__mb_after_rmw();
	return v;
}

/* The private page a shared block's slot is mapped over: the counters of
 * the block's first id, which are the first of their page. */
static void *shared_page(struct srcu__record *r, unsigned int b)
{
	return &r->slots[srcu__shm_block_id(b)];
}

static SRCU__NORETURN void report_no_slot(unsigned int id)
{
	struct srcu_struct *sp = load_relaxed(&srcu__domain_table[id]);
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];

	if (!sp)
		srcu__report_fatal("%s: a read-side section of a shared domain (id %u) that "
			    "this process has not attached (srcu_shared_attach())",
			    srcu__report_thread(t, sizeof(t)), id);
	srcu__report_fatal("%s: no reader slot left in shared domain %s for process %d: "
		    "every slot is taken (srcu_shared_reserve() reserves them ahead; "
		    "srcu_shared_size() sizes the file for more)",
		    srcu__report_thread(t, sizeof(t)), srcu__report_name(sp, n, sizeof(n)),
		    (int)getpid());
}

/* A thread's first section of shared domain id in a child made without
 * the fork handlers: it would take a slot in its parent's name. */
static SRCU__NORETURN void report_unforked(unsigned int id)
{
	struct srcu_struct *sp = load_relaxed(&srcu__domain_table[id]);
	char n[SRCU__NAME_LEN];

	srcu__report_fatal(SRCU__UNFORKED_FMT, (int)getpid(), "srcu_read_lock()",
			   sp ? srcu__report_name(sp, n, sizeof(n)) : "(shared)");
}

/* The calling thread's first section of shared block b: map a slot of the
 * file over its private page, and move there what the fast path counted
 * on that page (the lock that got us here, and the sections of any
 * handler that ran before the mapping).  Signals are blocked by the
 * caller, so the page changes under no handler's feet. */
static void shared_map(struct srcu__record *r, unsigned int id, unsigned int b)
{
	struct srcu__slot *s = &r->slots[id], moved = *s;
	int slot;

	if (!srcu__shm_att[b].hdr)
		report_no_slot(id);
	if (srcu__backend_unforked_child())
		report_unforked(id);
	/* Marked before the slot is taken and mapped: a fork() by another
	 * thread meanwhile finds the mark, and the child gives the page back
	 * to private memory (srcu__reader_fork_child()). */
	store_relaxed(&r->shm_slot[b], SRCU__SHM_MAPPING);
	slot = srcu__shm_map_slot(b, shared_page(r, b));
	if (slot < 0)
		report_no_slot(id);
	/* s is the file's slot now: the owner adds its counts, locks first
	 * (a scan between the two sees the sections open, never ended).
	 * Atomic loads: other processes' scans and recovery access these
	 * words; the claim's acquire (claim_free(), claim_for_thread())
	 * makes the values read here the last owner's balanced ones. */
	for (int idx = 0; idx < 2; idx++)
		store_relaxed(&s->lock[idx],
			      load_relaxed(&s->lock[idx]) + srcu__count(moved.lock[idx]));
	for (int idx = 0; idx < 2; idx++)
		store_release(&s->unlock[idx], load_relaxed(&s->unlock[idx]) + moved.unlock[idx]);
	store_relaxed(&r->shm_slot[b], (unsigned int)slot + 1);
}

/* A lock of shared domain id found its word not noted: the thread's first
 * on that index.  Map the slot if this is the first of the block, then
 * note the word, so that later locks count straight on.  Shared domains
 * have no reader sets: their scans sum the file's slots. */
static void note_shared(unsigned int id, unsigned long *lock_word)
{
	struct srcu__record *r = self;
	unsigned int b = srcu__shm_block(id);
	int saved_errno = errno;   /* a lock does not change errno (a handler's neither) */
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (!load_relaxed(&r->shm_slot[b]))
		shared_map(r, id, b);
	/* N (shared): the section's count in the file before its accesses,
	 * as seen by a scan in any process (B after the return pairs with
	 * A; this full fence also covers the fence backend). */
	srcu__mb(N);
	__atomic_fetch_or(lock_word, SRCU__LOCK_NOTED, __ATOMIC_RELAXED);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved_errno;
}

/* Put the calling thread's record in domain id's reader set, then mark
 * the lock word noted.  Async-signal-safe (a handler's section that
 * interrupts the caller between its count and this call finds the word
 * not yet noted too, and notes it before its own section). */
static void note_reader(unsigned int id, unsigned long *lock_word)
{
	struct srcu__record *r = self;
	unsigned int i = r->index;

	if (srcu__id_shared(id)) {
		note_shared(id, lock_word);
		return;
	}

	if (i < SRCU__DENSE_RECORDS)
		__atomic_fetch_or(srcu__reader_noted_word(id, i), srcu__reader_noted_bit(i),
				  __ATOMIC_RELAXED);
	/* N: pairs with the full fence a check runs before it reads the
	 * reader set (S at the GP's start, or A of the check before): a check
	 * that did not see this note leaves the record out of both its sums,
	 * so the section this lock opens, whose count it may miss, must see
	 * everything published before that check began (store buffering with
	 * fences on both sides, as at R). */
	srcu__mb(N);
	__atomic_fetch_or(lock_word, SRCU__LOCK_NOTED, __ATOMIC_RELAXED);
}

/* The reader kinds' names, of a domain and of a section, for the
 * message below. */
static const char *domain_kind_name(unsigned int kind)
{
	switch (kind) {
	case SRCU__KIND_ANY:
		return "normal (srcu_read_lock() or srcu_read_lock_fast(): DEFINE_SRCU or "
		       "init_srcu_struct())";
	case SRCU__KIND_FAST:
		return "fast (srcu_read_lock_fast(): DEFINE_SRCU_FAST or init_srcu_struct_fast())";
	case SRCU__KIND_FAST_UPDOWN:
		return "fast up/down (srcu_down_read_fast(): DEFINE_SRCU_FAST_UPDOWN or "
		       "init_srcu_struct_fast_updown())";
	default:
		return "unknown (a corrupt domain?)";
	}
}

/* A section's kind (SRCU__KIND_*), as messages name it and its lock. */
static const struct {
	const char *name, *lock;
} section_kinds[] = {
	[SRCU__KIND_ANY] = { "normal (srcu_read_lock())", "srcu_read_lock" },
	[SRCU__KIND_FAST] = { "fast (srcu_read_lock_fast())", "srcu_read_lock_fast" },
	[SRCU__KIND_FAST_UPDOWN] = { "fast up/down (srcu_down_read_fast())", "srcu_down_read_fast" },
};

static unsigned int section_kind(unsigned int kind)
{
	return kind < sizeof(section_kinds) / sizeof(section_kinds[0]) ? kind : SRCU__KIND_ANY;
}

static const char *section_kind_name(unsigned int kind)
{
	return section_kinds[section_kind(kind)].name;
}

/* May a section of kind `used` enter a domain of kind `kind`?  A normal
 * domain takes fast sections too (they are the same count); the up/down
 * kind is its domain's alone, and its domain takes no other, because
 * the per-thread balance checks are off there. */
static bool kind_allows(unsigned int kind, unsigned int used)
{
	return kind == used || (kind == SRCU__KIND_ANY && used == SRCU__KIND_FAST);
}

/* Abort when a section of kind `used` (SRCU__KIND_ANY for
 * srcu_read_lock()'s) enters sp, whose kind does not allow it.  Called
 * off the fast path only: slow paths and a thread's first count of an
 * index (the kernel WARNs once; here it is fatal, as every misuse). */
static void check_kind(struct srcu_struct *sp, unsigned int used, const char *op)
{
	unsigned int kind = load_relaxed(&sp->srcu__reader_kind);
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];

	if (kind_allows(kind, used))
		return;
	srcu__report_fatal("%s() on domain %s by %s: the domain's reader kind is %s, "
			   "this section's is %s", op, srcu__report_name(sp, n, sizeof(n)),
			   srcu__report_thread(t, sizeof(t)), domain_kind_name(kind),
			   section_kind_name(used));
}

/* The domain bound to id, or NULL (none bound, e.g. a garbage domain's
 * spill slot). */
static struct srcu_struct *domain_of_id(unsigned int id)
{
	return id < SRCU__MAX_IDS ? load_relaxed(&srcu__domain_table[id]) : NULL;
}

/* check_kind() on the domain of word's id, if one is bound. */
static void check_word_kind(unsigned int word, unsigned int used, const char *op)
{
	struct srcu_struct *sp = domain_of_id(word / SRCU__SLOT_WORDS);

	if (sp)
		check_kind(sp, used, op);
}

bool srcu__reader_updown(unsigned int id)
{
	struct srcu_struct *sp = domain_of_id(id);

	return sp && load_relaxed(&sp->srcu__reader_kind) == SRCU__KIND_FAST_UPDOWN;
}

static const char *lock_op(unsigned int kind)
{
	return section_kinds[section_kind(kind)].lock;
}

/* The checking build's report (<srcu/read.h>, srcu__debug_kind()): a
 * section of a kind sp does not take, found at its lock.  The domain is
 * checked first (after cleanup, never initialized); the kind cannot
 * change while it is live, so check_kind() aborts. */
void srcu__debug_kind_fail(struct srcu_struct *sp, unsigned int used)
{
	(void)srcu__domain_id(sp, lock_op(used));
	check_kind(sp, used, lock_op(used));
}

void srcu__read_lock_note(unsigned int word)
{
	srcu__read_lock_note_kind(word, SRCU__KIND_ANY);
}

void srcu__read_lock_note_kind(unsigned int word, unsigned int kind)
{
	check_word_kind(word, kind, lock_op(kind));
	note_reader(word / SRCU__SLOT_WORDS, (unsigned long *)srcu__slots + word);
}

/* The slow path of srcu_read_lock() and of the fast kinds' locks: the
 * index counted on.  The inline callers make the fast ones' counter
 * from it. */
static int read_lock_slow(struct srcu_struct *sp, unsigned int used)
{
	const char *op = lock_op(used);
	unsigned int id = srcu__domain_id(sp, op);
	struct srcu__record *r = my_record();
	bool fast;
	int idx;

	check_kind(sp, used, op);
	fast = fast_path_on(r);   /* after it, as inline: load the index, count */
	idx = srcu__cur_idx(sp);
	if (fast) {
		/* The fast path's count, in the word the inline lock would
		 * have taken from sp's lock word.  A shared domain's handle
		 * sends every lock here: its index is the file's, its slot
		 * word this process's own (internal.h, srcu__shm_att). */
		srcu__lock_word_kind((unsigned long *)srcu__slots,
				     id * SRCU__SLOT_WORDS + (unsigned int)idx, used);   /* B */
		return idx;
	}
	SRCU__READ_LOCK_HOOK();
	if ((long)count_mb(&r->slots[id].lock[idx]) >= 0)   /* B: pairs with A */
		note_reader(id, &r->slots[id].lock[idx]);
	return idx;
}

int srcu__read_lock_slow(struct srcu_struct *sp)
{
	return read_lock_slow(sp, SRCU__KIND_ANY);
}

int srcu__read_lock_kind_slow(struct srcu_struct *sp, unsigned int kind)
{
	return read_lock_slow(sp, kind);
}

/* srcu_up_read_fast()'s slow path: a section the slow path counted
 * (word 2 | idx), the calling thread's first count in this domain or of
 * this index (its record, its place in the reader set), or the fence
 * backend.  The unlock counts in the caller's own slot, noted first, so
 * that every later scan reads it (one that misses it only waits longer:
 * a missed unlock never ends a grace period early). */
void srcu__up_read_fast_slow(struct srcu_struct *sp, unsigned int word)
{
	unsigned int id = srcu__domain_id(sp, "srcu_up_read_fast");
	int idx = (int)(word & 1);
	struct srcu__record *r;
	unsigned long *lock;

	check_kind(sp, SRCU__KIND_FAST_UPDOWN, "srcu_up_read_fast");
	r = my_record();
	lock = &r->slots[id].lock[idx];
	if ((long)load_relaxed(lock) >= 0)
		note_reader(id, lock);
	if (fast_path_on(r)) {
		/* C and W: srcu_read_unlock()'s, inline. */
		srcu__unlock_word((unsigned long *)srcu__slots, id * SRCU__SLOT_WORDS + (unsigned int)idx);
		return;
	}
	srcu__hb_section_end(id, idx);
	count_mb(&r->slots[id].unlock[idx]);   /* C and W (fence backend) */
	wake_if_waited(id, idx);               /* sp may be freed from here on */
}

/* No open section on index idx of the caller's slot s: unlocks read
 * first, in their own statement (the acquire orders the lock load after). */
static bool unlock_unmatched(struct srcu__slot *s, int idx)
{
	unsigned long u = load_acquire(&s->unlock[idx]);

	return srcu__open(load_relaxed(&s->lock[idx]), u) == 0;
}

void srcu__read_unlock_slow(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__domain_id(sp, "srcu_read_unlock");
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];
	struct srcu__slot *s;

	if ((unsigned int)idx > 1)
		srcu__report_fatal("srcu_read_unlock() on domain %s by %s: index %d is not "
			    "one that srcu_read_lock() returns (0 or 1)",
			    srcu__report_name(sp, n, sizeof(n)), srcu__report_thread(t, sizeof(t)), idx);
	if (!self && exit_done)
		return;   /* a section the exit hook has already reported and ended */
	s = self ? &self->slots[id] : NULL;
	/* Unlocks first: a signal handler's section between the two loads
	 * raises both counts, so the lock count read second is still the
	 * larger when this unlock has its lock.  The acquire keeps the
	 * compiler from swapping the loads. */
	if (!s || unlock_unmatched(s, idx))
		srcu__reader_report_extra_unlock(sp, self, srcu__report_thread(t, sizeof(t)), idx, "");
	srcu__hb_section_end(id, idx);
	count_mb(&s->unlock[idx]);           /* C and W (fence backend) */
	wake_if_waited(id, idx);             /* sp may be freed from here on */
}

void srcu__wake_gp(unsigned int id)
{
	if (srcu__id_shared(id)) {
		/* This process's readers leave the index the GP waits for. */
		srcu__shm_index_refresh(srcu__shm_block(id));
		/* No GP sleeps: nothing to wake.  One that sets its flag now
		 * sees our count (its fence W after the flag, our W before
		 * these loads: store buffering). */
		if (!((load_relaxed(srcu__gp_waiting(id, 0)) | load_relaxed(srcu__gp_waiting(id, 1))) &
		      SRCU__WAIT_SLEEPING))
			return;
	}
	/* Seq-cst RMW: orders our unlock count before the bump, so that a
	 * grace period that sees the bump also sees the count (it loads the
	 * futex word with acquire before its scan). */
	__atomic_fetch_add(srcu__gp_wake_seq(id), 1, __ATOMIC_SEQ_CST);
	/* A shared domain's GP may sleep in another process. */
	srcu__backend_futex_wake(srcu__gp_wake_seq(id), 1, srcu__id_shared(id));
}

/* After an out-of-line unlock of index idx of domain id (sp may already
 * be freed): wake the grace period that sleeps waiting for that index. */
static void wake_if_waited(unsigned int id, int idx)
{
	if (load_relaxed(srcu__gp_waiting(id, idx)))
		srcu__wake_gp(id);
}

/* ---- who holds what: reader threads, open sections, misuse reports ---- */

unsigned int srcu__reader_threads(struct srcu_struct *sp)
{
	unsigned int id = srcu__id_of(sp), n = 0;
	struct srcu__record *r;

	if (srcu__id_shared(id)) {   /* this process's threads with a slot */
		for (r = load_acquire(&srcu__reader_records); r; r = r->next)
			n += load_acquire(&r->tid) && load_relaxed(&r->shm_slot[srcu__shm_block(id)]);
		return n;
	}
	/* A record in the domain's reader set was noted by its present
	 * owner (release forgets); one past the dense table has no set and
	 * may count a previous owner's reads. */
	for (r = load_acquire(&srcu__reader_records); r; r = r->next) {
		struct srcu__slot *s = &r->slots[id];
		unsigned int i = r->index;

		if (!load_acquire(&r->tid))
			continue;
		if (i < SRCU__DENSE_RECORDS ?
		    (load_acquire(srcu__reader_noted_word(id, i)) & srcu__reader_noted_bit(i)) != 0 :
		    (load_relaxed(&s->lock[0]) | load_relaxed(&s->lock[1])) != 0)
			n++;
	}
	return n;
}

static unsigned long slot_locks(struct srcu__slot *s)
{
	return srcu__count(load_acquire(&s->lock[0])) + srcu__count(load_acquire(&s->lock[1]));
}

/* Sections open in another thread's slot s, both indices (negative: more
 * unlocks than locks).  Unlocks first, as the scans read them. */
static long slot_open(struct srcu__slot *s)
{
	unsigned long u = load_acquire(&s->unlock[0]) + load_acquire(&s->unlock[1]);

	return srcu__count_signed(srcu__count_diff(slot_locks(s), u));
}

/* The same for the calling thread's own slot, where a signal handler's
 * section may run between any two loads: it raises a lock and an unlock
 * count, so a lock sum that did not move across the unlock sum means no
 * handler section overlapped the reading (a moved one: read again).  The
 * acquires keep the compiler from reordering the loads. */
static long own_open(struct srcu__slot *s)
{
	unsigned long l, u;

	do {
		l = slot_locks(s);
		u = load_acquire(&s->unlock[0]) + load_acquire(&s->unlock[1]);
	} while (slot_locks(s) != l);
	return srcu__count_signed(srcu__count_diff(l, u));
}

/* Does r's thread hold a section of domain id? (from another thread)
 * In an up/down domain a thread's slot may count more ups than downs
 * (it ended sections others began): it holds none. */
bool srcu__reader_record_holds(struct srcu__record *r, unsigned int id)
{
	long open = slot_open(&r->slots[id]);

	return srcu__reader_updown(id) ? open > 0 : open != 0;
}

/* Name in buf the domains other than id of which r's thread holds
 * sections (the first four, then how many more; "" if none), for the
 * report of an unlock of id without its lock: given the wrong domain? */
static const char *held_elsewhere(struct srcu__record *r, unsigned int id, char *buf, size_t len)
{
	unsigned int high = load_relaxed(&srcu__domain_id_high), n = 0;
	size_t at = 0;

	buf[0] = 0;
	for (unsigned int i = SRCU__ID_FIRST; i < SRCU__MAX_IDS; i++) {
		char name[SRCU__NAME_LEN];

		if (i == high)   /* then the shared blocks' ids */
			i = SRCU__SHARED_ID_FIRST;
		if (i == id || !domain_of_id(i) || !srcu__reader_record_holds(r, i))
			continue;
		if (n++ < 4 && at < len)
			at += (size_t)snprintf(buf + at, len - at, "%s%s", n > 1 ? ", " : "",
					       srcu__report_name(domain_of_id(i), name, sizeof(name)));
	}
	if (n > 4 && at < len)
		snprintf(buf + at, len - at, " and %u more", n - 4);
	return buf;
}

void srcu__reader_report_extra_unlock(struct srcu_struct *sp, struct srcu__record *r,
				      const char *thread, int idx, const char *found)
{
	unsigned int id = srcu__id_of(sp);
	char held[256] = "";

	srcu__report_extra_unlock_held(sp, thread, idx, found,
				       r && srcu__slot_open_on(&r->slots[id], idx ^ 1) > 0,
				       r ? held_elsewhere(r, id, held, sizeof(held)) : held);
}

bool srcu__reader_self_inside(struct srcu_struct *sp)
{
	struct srcu__slot *s;
	long open;

	/* An up/down section may be ended by another thread while this one
	 * waits for a grace period: no wait on oneself to report. */
	if (!self || srcu__reader_updown(srcu__id_of(sp)))
		return false;
	s = &self->slots[srcu__id_of(sp)];
	open = own_open(s);
	if (open < 0) {
		char t[SRCU__THREAD_LEN];
		int idx = srcu__slot_open_on(s, 0) < 0 ? 0 : 1;

		srcu__reader_report_extra_unlock(sp, self, srcu__report_thread(t, sizeof(t)), idx, "");
	}
	return open > 0;
}

/* Is any srcu_down_read() section open on a normal domain's shared
 * counters?  Unlocks read first, as in srcu_up_read(). */
static bool down_open(struct srcu_struct *sp)
{
	struct srcu__domain *d = srcu__dom(sp);

	for (int idx = 0; idx < 2; idx++) {
		unsigned long u = load_acquire(&d->down_unlock[idx]);

		if ((long)(load_acquire(&d->down_lock[idx]) - u) > 0)
			return true;
	}
	return false;
}

/* Is any section of up/down domain sp open (maybe the caller's)? */
static bool updown_any_open(struct srcu_struct *sp)
{
	return srcu__reader_updown_open(sp, 0) + srcu__reader_updown_open(sp, 1) > 0;
}

bool srcu__reader_maybe_inside(struct srcu_struct *sp)
{
	if (srcu__reader_updown(srcu__id_of(sp)))
		return updown_any_open(sp);
	return srcu__reader_self_inside(sp) || down_open(sp);
}

bool srcu_read_lock_held(struct srcu_struct *sp)
{
	/* False for a domain never used, cleaned up, or not a domain.  An
	 * up/down domain's sections belong to no thread (one may begin it and
	 * another end it): true while any is open, which may be the caller's,
	 * as lockdep answers when it cannot tell. */
	if (!sp || !srcu__domain_live(sp))
		return false;
	if (srcu__reader_updown(srcu__id_of(sp)))
		return updown_any_open(sp);
	return srcu__reader_self_inside(sp);
}

/* The checking build's report (<srcu/pointer.h>, SRCU_DEBUG): a pointer
 * loaded where nothing protects it.  Internal; exported for the header. */
void srcu__debug_deref_fail(struct srcu_struct *sp, const char *macro, const char *file,
			    int line, const char *expr, const char *cond)
{
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];

	srcu__report_thread(t, sizeof(t));
	if (!sp)
		srcu__report_fatal("%s(%s, %s) at %s:%d by %s: the condition is false "
			    "(the update side does not hold p)", macro, expr, cond, file, line, t);
	if (cond)
		srcu__report_fatal("%s(%s, ..., %s) at %s:%d by %s outside any section of "
			    "domain %s, and the condition is false", macro, expr, cond, file,
			    line, t, srcu__report_name(sp, n, sizeof(n)));
	srcu__report_fatal("%s(%s) at %s:%d by %s outside any section of domain %s "
		    "(srcu_read_lock() it first; srcu_down_read() sections belong to no "
		    "thread: use srcu_dereference_check(p, sp, 1) there)", macro, expr, file,
		    line, t, srcu__report_name(sp, n, sizeof(n)));
}

/* The calling thread's record, or NULL before its first section. */
struct srcu__record *srcu__reader_self_record(void)
{
	return self;
}

/* ---- srcu_down_read / srcu_up_read: shared counters, atomic RMW ---- */

int srcu_down_read(struct srcu_struct *sp)
{
	int idx;

	(void)srcu__domain_id(sp, "srcu_down_read");
	check_kind(sp, SRCU__KIND_ANY, "srcu_down_read");
	idx = srcu__cur_idx(sp);
	SRCU__READ_LOCK_HOOK();
	__atomic_fetch_add(&srcu__dom(sp)->down_lock[idx], 1, __ATOMIC_SEQ_CST);
	srcu__mb_after_rmw();  /* B: as in srcu_read_lock(), pairs with A */
	return idx;
}

void srcu_up_read(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__domain_id(sp, "srcu_up_read");
	char n[SRCU__NAME_LEN];

	check_kind(sp, SRCU__KIND_ANY, "srcu_up_read");
	if ((unsigned int)idx > 1)
		srcu__report_fatal("srcu_up_read() on domain %s: index %d is not one that "
			    "srcu_down_read() returns (0 or 1)",
			    srcu__report_name(sp, n, sizeof(n)), idx);
	/* Counts only grow, and every up_read is counted after its
	 * down_read.  Read the unlocks first: the acquire makes every lock
	 * behind them visible, and ours is not among them, so locks exceed
	 * them unless this up_read has no down_read.  (The other order races
	 * with sections that start and end between the two loads.) */
	unsigned long unlocks = load_acquire(&srcu__dom(sp)->down_unlock[idx]);

	if ((long)(load_relaxed(&srcu__dom(sp)->down_lock[idx]) - unlocks) <= 0)
		srcu__report_fatal("srcu_up_read() on domain %s without a matching "
			    "srcu_down_read() on index %d (an extra srcu_up_read(), or one given "
			    "the other section's index)", srcu__report_name(sp, n, sizeof(n)), idx);
	srcu__hb_section_end(id, idx);
	count_mb(&srcu__dom(sp)->down_unlock[idx]);     /* C and W, as in srcu_read_unlock() */
	wake_if_waited(id, idx);             /* sp may be freed from here on */
}

/* ---- thread exit and fork ---- */

/* Counts of index idx of domain id moved to the ended side of the sums
 * by someone other than the reader's own unlock (a dead thread's sections
 * ended, an exiting thread's up/down imbalance handed over): wake the
 * grace period that may sleep on them, as an unlock does.  A check that
 * overlapped the move may have read part of it and counted an ended
 * section as open; it went to sleep, and only this wakes it. */
static void counts_moved(unsigned int id, int idx)
{
	/* W (moved): pairs with the fence after a GP sets its waiting flag
	 * in sleep_until_done(), as W in srcu_read_unlock() does: either the
	 * GP's scan sees the moved counts or this load sees the flag.  A
	 * full fence: with the fence backend the GP's side is a plain fence,
	 * not a membarrier, and a store then a load may otherwise reorder. */
	srcu__mb(W);
	wake_if_waited(id, idx);
}

/* End the sections a dead thread left open in one slot, as its unlocks
 * would have.  Caller holds srcu__domain_registry_lock, so the domain cannot be
 * unbound (and freed) before the wake-up is done. */
static void end_abandoned(struct srcu__slot *s, unsigned int id, int idx, bool report)
{
	unsigned long open = srcu__count_diff(srcu__count(s->lock[idx]), s->unlock[idx]);
	struct srcu_struct *sp = srcu__domain_table[id];
	char n[SRCU__NAME_LEN], t[SRCU__THREAD_LEN];

	if (!open)
		return;
	if (report)
		srcu__report_warn("%s exited inside %lu read-side critical section(s) of "
			   "domain %s; they are treated as ended",
			   srcu__report_thread(t, sizeof(t)), open,
			   sp ? srcu__report_name(sp, n, sizeof(n)) : "(cleaned up)");
	srcu__hb_section_end(id, idx);
	store_release(&s->unlock[idx], s->unlock[idx] + open);
	counts_moved(id, idx);
}

/* An unlock without its lock, found when a slot's sections are ended:
 * reported before either index is balanced, so that a section still open
 * on the other index tells which mistake it likely was. */
static void check_balance(struct srcu__slot *s, unsigned int id)
{
	struct srcu_struct *sp = srcu__domain_table[id];
	char t[SRCU__THREAD_LEN];

	for (int idx = 0; sp && idx < 2; idx++)
		if (srcu__slot_open_on(s, idx) < 0)
			srcu__report_extra_unlock(sp, srcu__report_thread(t, sizeof(t)), idx,
						  ", found at thread exit",
						  srcu__slot_open_on(s, idx ^ 1) > 0);
}

/* A thread of an up/down domain ends: its slot may hold sections other
 * threads will end (more downs than ups) or the ends of sections others
 * began (more ups than downs), and the record is about to be skipped by
 * the scans.  Its imbalance moves to the domain's shared down/up
 * counters (which srcu_down_read() does not use on such a domain), so
 * that the sums over every thread stay what they were.  In each order
 * below a scan in between sees at most more sections open, never fewer:
 * the count that adds to the unlock side comes last, with release,
 * pairing with the scans' acquire loads (it carries the first count
 * with it).  Caller holds srcu__domain_registry_lock and owns the slot. */
static void hand_over_updown(struct srcu__slot *s, unsigned int id)
{
	struct srcu__domain *d = srcu__dom(srcu__domain_table[id]);

	for (int idx = 0; idx < 2; idx++) {
		long open = srcu__slot_open_on(s, idx);

		if (open > 0) {          /* begun here, to be ended elsewhere */
			__atomic_fetch_add(&d->down_lock[idx], (unsigned long)open,
					   __ATOMIC_SEQ_CST);
			SRCU__TORTURE_POINT(HANDOVER, NULL);
			store_release(&s->unlock[idx], s->unlock[idx] + (unsigned long)open);
		} else if (open < 0) {   /* ended here, begun elsewhere */
			store_relaxed(&s->lock[idx], s->lock[idx] + (unsigned long)-open);
			SRCU__TORTURE_POINT(HANDOVER, NULL);
			__atomic_fetch_add(&d->down_unlock[idx], (unsigned long)-open,
					   __ATOMIC_SEQ_CST);
		}
		/* A check between the two counts saw the sections open (both
		 * orders add to the open side first): it may be asleep now. */
		if (open != 0 && !SRCU__BUSTED(HANDOVERNOWAKE))
			counts_moved(id, idx);
	}
}

unsigned long srcu__reader_unlocks_everywhere(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__id_of(sp);
	unsigned long u = load_acquire(&srcu__dom(sp)->down_unlock[idx]);

	for (struct srcu__record *r = load_acquire(&srcu__reader_records); r; r = r->next)
		u += load_acquire(&srcu__record_slot(r, id)->unlock[idx]);
	return u;
}

unsigned long srcu__reader_locks_everywhere(struct srcu_struct *sp, int idx)
{
	unsigned int id = srcu__id_of(sp);
	unsigned long l = load_acquire(&srcu__dom(sp)->down_lock[idx]);

	for (struct srcu__record *r = load_acquire(&srcu__reader_records); r; r = r->next)
		l += srcu__count(load_acquire(&srcu__record_slot(r, id)->lock[idx]));
	return l;
}

/* Sections of up/down domain sp open on idx, as a hint ("maybe
 * inside": srcu_read_lock_held(), call_srcu()'s wait for room, stall
 * reports): a check's two sums without its fence.  Every up is read
 * before every down: a section handed across threads (its down counted
 * in one record, its up in another) whose up is read shows its down
 * too, whichever record the walk reaches first; walked record by
 * record, an up read before its down's record was reached cancelled
 * another open section (x86 too).  Every record, owned or not: a
 * hand-over moves counts without changing the totals, and a record
 * released between the two walks keeps its downs in the second. */
unsigned long srcu__reader_updown_open(struct srcu_struct *sp, int idx)
{
	unsigned long ups = srcu__reader_unlocks_everywhere(sp, idx);
	long open = srcu__count_signed(srcu__count_diff(srcu__reader_locks_everywhere(sp, idx), ups));

	return open > 0 ? (unsigned long)open : 0;
}

/* cleanup_srcu_struct() of an up/down domain, no section open, before
 * it leaves its id: every thread's slot of the id balanced again, so
 * that the next domain bound to the id starts from balanced slots (its
 * per-thread checks would report another thread's ups as its own
 * mistakes).  The sums do not change: the slots' imbalances add up to
 * the shared counters', which go with the domain.  Writes other threads'
 * slots, which nobody counts in now: no section of a domain being cleaned
 * up may run; the registry lock orders this with exiting threads' hand-
 * overs (their slots are balanced already, then).  It wakes nobody: no
 * grace period can be running or asleep (cleanup holds gp_lock), and no
 * later one of this domain can begin (it is leaving its id). */
void srcu__reader_rebalance(unsigned int id)
{
	pthread_mutex_lock(&srcu__domain_registry_lock);
	for (struct srcu__record *r = srcu__reader_records; r; r = r->next) {
		struct srcu__slot *s = &r->slots[id];

		for (int idx = 0; idx < 2; idx++) {
			long open = srcu__slot_open_on(s, idx);

			if (open > 0)
				store_release(&s->unlock[idx], s->unlock[idx] + (unsigned long)open);
			else if (open < 0)
				store_release(&s->lock[idx], s->lock[idx] + (unsigned long)-open);
		}
	}
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

static void end_slot(struct srcu__slot *s, unsigned int id, bool report)
{
	if (srcu__reader_updown(id)) {
		hand_over_updown(s, id);
		return;
	}
	check_balance(s, id);
	end_abandoned(s, id, 0, report);
	end_abandoned(s, id, 1, report);
}

static void record_end_all(struct srcu__record *r, bool report)
{
	for (unsigned int id = SRCU__ID_FIRST; id < srcu__domain_id_high; id++)
		end_slot(&r->slots[id], id, report);
	/* Shared slots stay mapped in the record, and owned by this
	 * process, for the thread that claims the record next. */
	for (unsigned int b = 0; b < SRCU__SHARED_BLOCKS; b++) {
		unsigned int id = srcu__shm_block_id(b);

		if (!load_relaxed(&r->shm_slot[b]))
			continue;
		end_slot(&r->slots[id], id, report);
	}
}

/* A record about to be released leaves every reader set, and its lock
 * words lose their NOTED bits, so that the thread that claims it next
 * notes the domains it reads itself: reader sets follow live threads,
 * not the record's history.  (Records past SRCU__DENSE_RECORDS have no
 * bits, keep NOTED, and are always scanned.)  Its counts are balanced: a scan that still
 * counts it, or no longer does, sums the same.  Caller holds the registry
 * lock (no id is bound or released meanwhile) and is the owner. */
static void forget_domains(struct srcu__record *r)
{
	unsigned long bit = srcu__reader_noted_bit(r->index);
	unsigned int id;

	if (r->index >= SRCU__DENSE_RECORDS)
		return;
	for (id = SRCU__ID_FIRST; id < srcu__domain_id_high; id++) {
		unsigned long *set = srcu__reader_noted_word(id, r->index);

		if (!(load_relaxed(set) & bit))
			continue;
		store_relaxed(&r->slots[id].lock[0], srcu__count(r->slots[id].lock[0]));
		store_relaxed(&r->slots[id].lock[1], srcu__count(r->slots[id].lock[1]));
		/* Q: release, pairs with the acquire of the set word in a
		 * scan (counts_records.c): a check that no longer finds the
		 * bit skips the record and, with no other reader, fences only
		 * itself (A local), so the bit's clearing must carry every
		 * access of this thread's last sections with it (forbids: a
		 * section's load that a weakly ordered CPU satisfies after the
		 * clear is seen, reading memory the grace period freed). */
		__atomic_fetch_and(set, ~bit, srcu__order(Q, __ATOMIC_RELEASE));
	}
}

/* After its counts were balanced: the releases pair with the acquires in
 * the scans' loads of the dense owner (seen free, seen balanced), in the
 * list walks' ->tid loads, and in record_claim(). */
static void record_release(struct srcu__record *r)
{
	forget_domains(r);
	set_owner(r, 0);
	store_release(&r->tid, 0);
}

/* Does the calling thread, the owner of r, hold any section? */
static bool record_open(struct srcu__record *r)
{
	unsigned int high = load_relaxed(&srcu__domain_id_high);

	for (unsigned int id = SRCU__ID_FIRST; id < high; id++)
		if (own_open(&r->slots[id]) != 0 && !srcu__reader_updown(id))
			return true;
	for (unsigned int b = 0; b < SRCU__SHARED_BLOCKS; b++)
		if (load_relaxed(&r->shm_slot[b]) &&
		    own_open(&r->slots[srcu__shm_block_id(b)]) != 0)
			return true;
	return false;
}

/* The thread-exit hook, a pthread key destructor.  Another key's
 * destructor may still end a section of this thread (a guard object kept
 * in thread-specific data unlocks there, legally, in the same thread), and
 * it may run after this one in the same round: while sections are open
 * and rounds are left, the hook sets its value again, which asks for
 * another round, and keeps the record live meanwhile.  In its last round
 * (the one before glibc's last) it ends what is still open, with a report.
 *
 * Then signals are blocked to the thread's end, not restored: a handler's
 * section while the record is balanced and released would count on a
 * record that another thread may claim next, and one after it would claim
 * a record that no destructor releases any more (the thread is past its
 * last destructor round). */
static void reader_exit(void *arg)
{
	struct srcu__record *r = arg;
	sigset_t all;

	/* The last round is not ours: the sanitizers' runtimes end the
	 * thread in it (their keys come first), after which a mutex lock
	 * crashes.  So the sections end by the round before. */
	if (++exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS - 1 && record_open(r)) {
		pthread_setspecific(exit_key, r);
		return;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	self = NULL;
	srcu__slots = NULL;
	exit_done = true;
	pthread_mutex_lock(&srcu__domain_registry_lock);
	record_end_all(r, true);
	record_release(r);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

/* Record r's page of shared block b back to private, zeroed memory; keep
 * gives the counts to copy there (a fork child's own open sections, whose
 * unlocks are to come, taken before the fork: the page itself may be
 * absent, or the parent's to count in), or NULL. */
static void unmap_shared(struct srcu__record *r, unsigned int b, const struct srcu__slot *keep)
{
	struct srcu__slot copy;
	void *page = shared_page(r, b);

	if (keep) {
		copy = *keep;
		if (slot_open(&copy) > 0) {
			struct srcu_struct *sp = srcu__domain_table[srcu__shm_block_id(b)];
			char n[SRCU__NAME_LEN];

			srcu__report_warn("fork() inside a read-side critical section of shared "
				   "domain %s: the child's copy of the section is not waited "
				   "for by other processes' grace periods",
				   sp ? srcu__report_name(sp, n, sizeof(n)) : "(detached)");
		}
	}
	if (mmap(page, SRCU__SHM_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
		srcu__report_fatal("cannot unmap a shared domain's reader slot: %s", strerror(errno));
	if (keep)
		*(struct srcu__slot *)page = copy;
	store_relaxed(&r->shm_slot[b], 0);
}

bool srcu__reader_shared_idle(unsigned int b)
{
	unsigned int id = srcu__shm_block_id(b);

	for (struct srcu__record *r = load_acquire(&srcu__reader_records); r; r = r->next)
		if (load_relaxed(&r->shm_slot[b]) && slot_open(&r->slots[id]) != 0)
			return false;
	return true;
}

void srcu__reader_unmap_shared(unsigned int b)
{
	pthread_mutex_lock(&srcu__domain_registry_lock);
	for (struct srcu__record *r = srcu__reader_records; r; r = r->next)
		if (load_relaxed(&r->shm_slot[b]))
			unmap_shared(r, b, NULL);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

/* ---- fork ---- */

/* What the forking thread held open in each shared block at the fork,
 * as counts (locks: the open sections, unlocks 0), and its signal mask.
 * Written by the prepare handler under the registry lock, which is held
 * until each side's handler is done. */
static struct srcu__slot fork_open[SRCU__SHARED_BLOCKS];
static sigset_t fork_mask;

/* The open sections of the calling thread's slot s, per index.  Its
 * signals are blocked: no handler's section moves the counts meanwhile,
 * and nobody else writes them. */
static void own_open_counts(const struct srcu__slot *s, struct srcu__slot *open)
{
	for (int idx = 0; idx < 2; idx++) {
		open->lock[idx] = srcu__count_diff(srcu__count(load_relaxed(&s->lock[idx])),
						   load_relaxed(&s->unlock[idx]));
		open->unlock[idx] = 0;
	}
}

/*
 * The prepare handler (registry lock held).  The child must not read the
 * forking thread's slot pages: they are MAP_SHARED with the parent, which
 * goes on counting in them the moment fork() returns (and they are
 * MADV_DONTFORK: the child has no page there).  Only this thread writes
 * its slots, so its open sections are taken here; with its signals
 * blocked until its handler is done, no handler's section can begin
 * between this and the fork, or in the child before its slot pages are
 * private again (one that began earlier has ended: its counts balance).
 */
void srcu__reader_fork_prepare(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &fork_mask);
	srcu__backend_fork_prepare();
	memset(fork_open, 0, sizeof(fork_open));
	/* A child made without the handlers has no slot pages to read. */
	if (!self || srcu__backend_unforked_child())
		return;
	for (unsigned int b = 0; b < SRCU__SHARED_BLOCKS; b++) {
		unsigned int m = load_relaxed(&self->shm_slot[b]);

		/* Never SRCU__SHM_MAPPING here: shared_map() runs with
		 * this thread's signals blocked, so no fork interrupts it. */
		if (m && m != SRCU__SHM_MAPPING)
			own_open_counts(&self->slots[srcu__shm_block_id(b)], &fork_open[b]);
	}
}

void srcu__reader_fork_end(void)
{
	pthread_sigmask(SIG_SETMASK, &fork_mask, NULL);
}

/* In the child of fork(): the other threads are gone.  Their open sections
 * end with them (silently: they are still running in the parent).  Caller
 * holds srcu__domain_registry_lock.  First of all, every shared slot page
 * goes back to private memory, read by no one: those slots are the
 * parent's (the child takes its own at its next section), and the pages
 * are not there (MADV_DONTFORK).  The forking thread's page gets what it
 * held open at the fork, taken by the prepare handler. */
void srcu__reader_fork_child(void)
{
	struct srcu__record *r;

	SRCU__TORTURE_POINT(FORK_CHILD, NULL);
	for (r = srcu__reader_records; r; r = r->next)
		for (unsigned int b = 0; b < SRCU__SHARED_BLOCKS; b++)
			if (r->shm_slot[b])
				unmap_shared(r, b, r == self ? &fork_open[b] : NULL);
	for (r = srcu__reader_records; r; r = r->next) {
		if (r == self)
			continue;
		record_end_all(r, false);
		record_release(r);
	}
	if (self) {
		store_relaxed(&self->tid, srcu__report_gettid());
		set_owner(self, self->tid);
	}
	if (load_relaxed(&srcu__backend_fence_mode))
		srcu__slots = NULL;   /* the child fell back to fences */
}
