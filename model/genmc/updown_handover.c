/*
 * updown_handover.c: a fast up/down section handed across threads, its
 * down's thread exiting first.  The reader thread opens the section
 * (srcu_down_read_fast()), publishes its counter, reads the object and
 * exits, and its exit hook moves its imbalance to the domain (reader.c's
 * hand_over_updown(), then fence W (moved)); another thread ends the
 * section (srcu_up_read_fast()).  The updater's synchronize_srcu() must
 * wait for the up, and end once it has happened: a grace period asleep on
 * a section that ended at a thread's exit, with nobody to wake it, is
 * GenMC's liveness violation (a wait that can never end), and a late read
 * is its use of a freed object.
 *
 * SPDX-License-Identifier: MIT
 */
#include "engine.h"

struct obj {
	int val;
};

DEFINE_STATIC_SRCU_FAST_UPDOWN(dom);
static struct obj *_Atomic cur;
static struct srcu_ctr *_Atomic handed;

static void *down_thread(void *arg)
{
	struct srcu_ctr *scp;
	struct obj *p;

	verify_thread_start((int)(intptr_t)arg);
	scp = srcu_down_read_fast(&dom);
	p = atomic_load_explicit(&cur, memory_order_acquire);
	assert(p->val == 1);
	atomic_store_explicit(&handed, scp, memory_order_release);
	verify_thread_end(true);   /* exits inside: the imbalance moves */
	return NULL;
}

static void *up_thread(void *arg)
{
	struct srcu_ctr *scp;

	verify_thread_start((int)(intptr_t)arg);
	while (!(scp = atomic_load_explicit(&handed, memory_order_acquire)))
		;
	srcu_up_read_fast(&dom, scp);
	verify_thread_end(false);
	return NULL;
}

int main(void)
{
	pthread_t d, u;
	struct obj *first = malloc(sizeof(*first)), *n = malloc(sizeof(*n)), *old;

	srcu__process_startup();
	first->val = 1;
	n->val = 1;
	atomic_store_explicit(&cur, first, memory_order_relaxed);
	verify_bind(&dom);
	pthread_create(&d, NULL, down_thread, (void *)1);
	pthread_create(&u, NULL, up_thread, (void *)2);
	old = atomic_exchange_explicit(&cur, n, memory_order_release);
	synchronize_srcu(&dom);
	old->val = 0;
	free(old);
	pthread_join(d, NULL);
	pthread_join(u, NULL);
	free(atomic_load_explicit(&cur, memory_order_relaxed));
	return 0;
}
