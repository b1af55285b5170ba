/*
 * gp_guarantee.c: the grace-period guarantee.  READERS reader threads
 * each read the published object inside a section; an updater replaces
 * it, waits with synchronize_srcu() and poisons and frees the old one.
 * A reader whose section began before the grace period and is still
 * running when it ends reads a poisoned or freed object: GenMC reports
 * the assertion, the race on the plain read against the poisoning store,
 * or the use after free.
 *
 * SPDX-License-Identifier: MIT
 */
#include "engine.h"

#ifndef READERS
#define READERS 1
#endif
/* Updaters (main and UPDATERS - 1 more threads, each replacing the
 * object and freeing the one it took out) and sections per reader. */
#ifndef UPDATERS
#define UPDATERS 1
#endif
#ifndef SECTIONS
#define SECTIONS 1
#endif
/* Variants: EXIT_HOOKS (the reader thread's exit hook runs, as pthread
 * would run it), EXPEDITED (synchronize_srcu_expedited()), FAST
 * (srcu_read_lock_fast()), NESTED (a section inside the section), POLLED
 * (a cookie taken before the grace period must poll as done after it),
 * POLL_BESIDE (the updater runs no grace period: another thread's serves
 * its cookie, or the old object stays; with NO_WAIT it polls once, at
 * once, not after that thread's synchronize_srcu() returned, whose
 * domain leave would otherwise order the poll after the whole GP). */
#ifndef EXIT_HOOKS
#define EXIT_HOOKS false
#endif

struct obj {
	int val;
};

/* A static domain: bound at its first use, as DEFINE_SRCU's are (GenMC
 * cannot run init_srcu_struct()'s memset of a struct: doc/verification.md). */
DEFINE_STATIC_SRCU(dom);
static struct obj *_Atomic cur;

static void read_section(void)
{
	struct obj *p;
#ifdef FAST
	struct srcu_ctr *scp = srcu_read_lock_fast(&dom);
#else
	int idx = srcu_read_lock(&dom);
#endif
#ifdef NESTED
	int inner = srcu_read_lock(&dom);
#endif
	p = atomic_load_explicit(&cur, memory_order_acquire);
	/* A membarrier's IPI may land between any two accesses of the
	 * section, not only at the read side's barriers: here, between the
	 * load of the pointer and the read through it (backend.c). */
	verify_ipi_point();
	assert(p->val == 1);   /* a plain read: races with the poisoning */
#ifdef NESTED
	srcu_read_unlock(&dom, inner);
#endif
#ifdef FAST
	srcu_read_unlock_fast(&dom, scp);
#else
	srcu_read_unlock(&dom, idx);
#endif
}

static void *reader(void *arg)
{
	verify_thread_start((int)(intptr_t)arg);
	for (int i = 0; i < SECTIONS; i++)
		read_section();
	verify_thread_end(EXIT_HOOKS);
	return NULL;
}

#ifdef POLL_BESIDE
/* Another thread's grace period, which the updater's cookie may count on:
 * it runs one and says so (relaxed: no order from this flag). */
static atomic_int beside_done;

static void *gp_beside(void *arg)
{
	verify_tid = (int)(intptr_t)arg;
	synchronize_srcu(&dom);
	atomic_store_explicit(&beside_done, 1, memory_order_relaxed);
	return NULL;
}
#endif

static void update(void)
{
	struct obj *n = malloc(sizeof(*n)), *old;

	n->val = 1;
	old = atomic_exchange_explicit(&cur, n, memory_order_release);
#if defined(POLL_BESIDE)
	/* The updater runs no grace period: its cookie is served by the one
	 * beside, or not at all (then the old object stays). */
	unsigned long cookie = get_state_synchronize_srcu(&dom);

#ifndef NO_WAIT   /* NO_WAIT: one poll at once, in any state of the GP beside */
	while (!atomic_load_explicit(&beside_done, memory_order_relaxed))
		;
#endif
	if (!poll_state_synchronize_srcu(&dom, cookie))
		return;
#elif defined(POLLED)
	unsigned long cookie = get_state_synchronize_srcu(&dom);

	synchronize_srcu(&dom);
	assert(poll_state_synchronize_srcu(&dom, cookie));
#elif defined(EXPEDITED)
	synchronize_srcu_expedited(&dom);
#else
	synchronize_srcu(&dom);
#endif
	old->val = 0;   /* poison: a reader still inside reads it */
	free(old);
}

#if defined(RECLAIM) || defined(IDLE_READER)
/* A reader that read before the update.  RECLAIM: it exited, its record
 * is released, and the reader that runs beside the update claims it.
 * IDLE_READER: its record stays owned (a live thread that reads no
 * more), so each check sees another thread's record and runs A as a
 * membarrier, through the fence service, which serves its callers together. */
static void *earlier_reader(void *arg)
{
	verify_thread_start((int)(intptr_t)arg);
	read_section();
#ifdef RECLAIM
	verify_thread_end(true);
#else
	verify_thread_end(false);
#endif
	return NULL;
}
#define FIRST_READER 2
#else
#define FIRST_READER 1
#endif

#ifdef VERIFY_SWITCH
/* The library's constructor, late: the backend moves from fences to
 * membarrier while the reader and the grace period run. */
static void *constructor_thread(void *arg)
{
	verify_tid = (int)(intptr_t)arg;
	verify_backend_switch();
	return NULL;
}
#endif

/* A second updater: no reader sections, so no IPI need land in it (the
 * model gives it none: fewer fences than the kernel's, never more). */
static void *updater(void *arg)
{
	verify_tid = (int)(intptr_t)arg;
	update();
	return NULL;
}

int main(void)
{
	pthread_t r[READERS], u[UPDATERS];
	struct obj *first = malloc(sizeof(*first));

	srcu__process_startup();
#ifdef PAST_DENSE
	/* The reader's record is past the dense table (as the 4097th
	 * thread's is): no reader-set bit, no note (N), always walked from
	 * the list.  The 64 records before it are taken by no thread. */
	srcu__reader_count = SRCU__DENSE_RECORDS;
#endif
	first->val = 1;
	atomic_store_explicit(&cur, first, memory_order_relaxed);
	verify_bind(&dom);
#if defined(RECLAIM) || defined(IDLE_READER)
	pthread_t e;

	pthread_create(&e, NULL, earlier_reader, (void *)1);
	pthread_join(e, NULL);
#endif
	for (int i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, (void *)(intptr_t)(i + FIRST_READER));
	for (int i = 1; i < UPDATERS; i++)
		pthread_create(&u[i], NULL, updater, (void *)(intptr_t)(READERS + FIRST_READER - 1 + i));
#ifdef POLL_BESIDE
	pthread_t b;

	pthread_create(&b, NULL, gp_beside, (void *)(intptr_t)(READERS + FIRST_READER - 1 + UPDATERS));
#endif
#ifdef VERIFY_SWITCH
	pthread_t c;

	pthread_create(&c, NULL, constructor_thread,
		       (void *)(intptr_t)(READERS + FIRST_READER - 1 + UPDATERS));
#endif
	update();
	for (int i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	for (int i = 1; i < UPDATERS; i++)
		pthread_join(u[i], NULL);
#ifdef VERIFY_SWITCH
	pthread_join(c, NULL);
#endif
#ifdef POLL_BESIDE
	pthread_join(b, NULL);
#endif
	free(atomic_load_explicit(&cur, memory_order_relaxed));
	return 0;
}
