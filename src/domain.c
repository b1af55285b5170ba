/*
 * domain.c: domain ids.  Each live domain owns a small integer id,
 * its slot in every thread's counter table (reader.c).  Ids are handed
 * out lowest-first so that the tables stay dense, and reused after
 * cleanup_srcu_struct(); a domain that is used after its cleanup holds
 * SRCU__ID_DEAD, which sends every fast path to a slow path that reports.
 *
 * Statically initialized domains (SRCU_INITIALIZER) hold SRCU__ID_UNSET
 * and get their id on first use, from any entry point.
 *
 * Locking: srcu__domain_registry_lock guards the id bitmap and srcu__domain_table[].
 * It is held only for short bookkeeping, never while waiting for readers,
 * so fork() may take it (process.c's fork handlers do).  init and
 * cleanup, which drive the layers above, live in lifecycle.c.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <errno.h>
#include <string.h>

pthread_mutex_t srcu__domain_registry_lock = PTHREAD_MUTEX_INITIALIZER;
struct srcu_struct *srcu__domain_table[SRCU__MAX_IDS];

#define ID_WORD_BITS 64u
/* Private domains take ids below the shared blocks (SRCU__SHARED_ID_FIRST). */
#define ID_WORDS (SRCU__SHARED_ID_FIRST / ID_WORD_BITS)
/* Under the registry lock.  The sentinel ids are never free. */
static uint64_t id_used[ID_WORDS] = { (1ull << SRCU__ID_FIRST) - 1 };
static unsigned int id_first_free_word;  /* search hint */
unsigned int srcu__domain_id_high = SRCU__ID_FIRST;

/* Lowest free id, or -1. Caller holds srcu__domain_registry_lock. */
static int id_alloc(void)
{
	unsigned int w;

	for (w = id_first_free_word; w < ID_WORDS; w++) {
		if (id_used[w] != UINT64_MAX) {
			unsigned int bit = (unsigned int)__builtin_ctzll(~id_used[w]);
			unsigned int id = w * ID_WORD_BITS + bit;

			id_used[w] |= 1ull << bit;
			id_first_free_word = w;
			/* Relaxed atomic: read without the registry lock
			 * (reader.c's record_open()); a thread that counted
			 * on the id read its word after this (fence N). */
			if (id >= srcu__domain_id_high)
				store_relaxed(&srcu__domain_id_high, id + 1);
			return (int)id;
		}
	}
	return -1;
}

static void id_free(unsigned int id)
{
	id_used[id / ID_WORD_BITS] &= ~(1ull << (id % ID_WORD_BITS));
	if (id / ID_WORD_BITS < id_first_free_word)
		id_first_free_word = id / ID_WORD_BITS;
}

/* Point sp's read-side words at id's slot, index 0.  Nothing is published
 * through them (a reader's slow path re-reads them under the registry
 * lock); release only orders the table entry before.  The slot word goes
 * first: an unlock that sees it stale takes the slow path. */
static void domain_set_id(struct srcu_struct *sp, unsigned int id)
{
	store_release(&sp->slot_word, (uint16_t)(id * SRCU__SLOT_WORDS));
	store_release(&sp->lock_word, (uint16_t)(id * SRCU__SLOT_WORDS));
}

/* sp's id, read with acquire: its srcu__domain_table[] entry is set before. */
static unsigned int id_acquire(struct srcu_struct *sp)
{
	return load_acquire(&sp->slot_word) / SRCU__SLOT_WORDS;
}

/* Bind sp to a fresh id. Caller holds srcu__domain_registry_lock. */
static int domain_bind(struct srcu_struct *sp)
{
	int id = id_alloc();

	if (id < 0)
		return -ENOMEM;
	srcu__vg_quiet(sp, sizeof(*sp));   /* the GP engine's words: atomics */
	srcu__report_forget_name(sp);      /* one kept for the memory's last domain */
	/* Atomic: read without the registry lock (relaxed: after the id's
	 * acquire, which pairs with domain_set_id()'s release). */
	store_relaxed(&srcu__domain_table[id], sp);
	domain_set_id(sp, (unsigned int)id);
	return 0;
}

/* Is sp a live domain?  Its words may be garbage (an uninitialized
 * struct): they name an id below SRCU__MAX_IDS whatever they hold, and only
 * a live domain at this very address is that id's entry.  Stable under
 * srcu__domain_registry_lock; without it, as of the loads. */
bool srcu__domain_live(struct srcu_struct *sp)
{
	unsigned int id = id_acquire(sp);

	return id >= SRCU__ID_FIRST && load_relaxed(&srcu__domain_table[id]) == sp;
}

static SRCU__NORETURN void report_bad_id(struct srcu_struct *sp, bool dead,
					 const char *who)
{
	char n[SRCU__NAME_LEN];

	if (dead)
		srcu__report_fatal("%s() on domain %s after cleanup_srcu_struct() "
			    "(or srcu_shared_detach(), or a failed init_srcu_struct())",
			    who, srcu__report_name(sp, n, sizeof(n)));
	srcu__report_fatal("%s() on domain %s, which was never initialized "
		    "(call init_srcu_struct() or use SRCU_INITIALIZER)",
		    who, srcu__report_name(sp, n, sizeof(n)));
}

int srcu__domain_init_bind(struct srcu_struct *sp, unsigned int kind)
{
	int err;

	pthread_mutex_lock(&srcu__domain_registry_lock);
	if (srcu__domain_live(sp)) {
		pthread_mutex_unlock(&srcu__domain_registry_lock);
		return -EEXIST;
	}
	memset(sp, 0, sizeof(*sp));
	sp->srcu__reader_kind = kind;   /* before the id is published */
	err = domain_bind(sp);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
	if (err)
		domain_set_id(sp, SRCU__ID_DEAD);
	return err;
}

unsigned int srcu__domain_check(struct srcu_struct *sp, const char *who)
{
	unsigned int id;

	if (!sp)
		srcu__report_fatal("%s() called with a NULL domain", who);
	id = id_acquire(sp);
	if (id >= SRCU__ID_FIRST) {
		if (load_relaxed(&srcu__domain_table[id]) != sp)
			report_bad_id(sp, false, who);
		return id;
	}
	if (id != SRCU__ID_UNSET)
		report_bad_id(sp, id == SRCU__ID_DEAD, who);
	return id;
}

unsigned int srcu__domain_id(struct srcu_struct *sp, const char *who)
{
	unsigned int id = srcu__domain_check(sp, who);

	if (id != SRCU__ID_UNSET)
		return id;
	pthread_mutex_lock(&srcu__domain_registry_lock);
	if (srcu__id_of(sp) == SRCU__ID_UNSET && domain_bind(sp) != 0) {
		char n[SRCU__NAME_LEN];

		pthread_mutex_unlock(&srcu__domain_registry_lock);
		srcu__report_fatal("%s(): no domain id left for static domain %s "
			    "(%u domains are live)", who, srcu__report_name(sp, n, sizeof(n)),
			    SRCU__SHARED_ID_FIRST - SRCU__ID_FIRST);
	}
	id = srcu__id_of(sp);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
	return id;
}

/* Unbind sp from its id. The caller holds sp's gp_lock and has checked
 * that no reader is inside (lifecycle.c's cleanup). */
void srcu__domain_unbind(struct srcu_struct *sp, unsigned int id)
{
	pthread_mutex_lock(&srcu__domain_registry_lock);
	store_relaxed(&srcu__domain_table[id], NULL);
	id_free(id);
	domain_set_id(sp, SRCU__ID_DEAD);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
	srcu__report_forget_name(sp);
}

unsigned int srcu__domain_peek(struct srcu_struct *sp)
{
	return id_acquire(sp);
}

void srcu__domain_retire_unused(struct srcu_struct *sp)
{
	domain_set_id(sp, SRCU__ID_DEAD);
}

void srcu__domain_attach_shared(struct srcu_struct *sp, unsigned int id)
{
	pthread_mutex_lock(&srcu__domain_registry_lock);
	srcu__vg_quiet(sp, sizeof(*sp));
	store_release(&srcu__domain_table[id], sp);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

void srcu__domain_detach_shared(unsigned int id)
{
	pthread_mutex_lock(&srcu__domain_registry_lock);
	store_release(&srcu__domain_table[id], NULL);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

void srcu__domain_init(void)
{
	srcu__vg_quiet(srcu__domain_table, sizeof(srcu__domain_table));
}
