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

struct obj {
	int val;
};

/* A static domain: bound at its first use, as DEFINE_SRCU's are (GenMC
 * cannot run init_srcu_struct()'s memset of a struct: doc/verification.md). */
DEFINE_STATIC_SRCU(dom);
static struct obj *_Atomic cur;

static void *reader(void *arg)
{
	int idx;
	struct obj *p;

	verify_thread_start((int)(intptr_t)arg);
	idx = srcu_read_lock(&dom);
	p = atomic_load_explicit(&cur, memory_order_acquire);
	assert(p->val == 1);   /* a plain read: races with the poisoning */
	srcu_read_unlock(&dom, idx);
	verify_thread_end(false);
	return NULL;
}

static void update(void)
{
	struct obj *n = malloc(sizeof(*n)), *old;

	n->val = 1;
	old = atomic_exchange_explicit(&cur, n, memory_order_release);
	synchronize_srcu(&dom);
	old->val = 0;   /* poison: a reader still inside reads it */
	free(old);
}

int main(void)
{
	pthread_t r[READERS];
	struct obj *first = malloc(sizeof(*first));

	srcu__process_startup();
	first->val = 1;
	atomic_store_explicit(&cur, first, memory_order_relaxed);
	verify_bind(&dom);
	for (int i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, (void *)(intptr_t)(i + 1));
	update();
	for (int i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	free(atomic_load_explicit(&cur, memory_order_relaxed));
	return 0;
}
