/*
 * fence_service.c: the fence service (src/fence.c) serving two callers
 * with shared membarriers, against a thread that runs without fences.
 *
 * Each caller i stores x[i], asks for a heavy fence (srcu__fence_heavy():
 * FS, a read of the service's seq, then either the membarrier it runs
 * itself under the lock (FM), the one another caller runs for it, or,
 * past its patience, its own without the lock; FE after), and reads y.
 * The plain thread stores y and reads x[0] and x[1] with no fence between,
 * as a reader's count and its section's accesses run on the membarrier
 * backend; a membarrier's IPI may land before, between and after them
 * (backend.c's IPI model).  For each caller, as for a membarrier it ran
 * itself, the store-buffering outcome is forbidden: the caller reads
 * y == 0 and the plain thread reads x[i] == 0 (a check that misses a
 * reader's lock count while the reader misses the update).  The bug this
 * catches: a caller that counts on a membarrier which began before its
 * store was visible (FS removed, or the service's rule broken), so that
 * the IPI landed in the plain thread before the store.  Every caller's
 * wait must end (GenMC's liveness check): a lost wake-up in the service
 * is a wait that never ends.
 *
 * SPDX-License-Identifier: MIT
 */
#include "engine.h"

#define CALLERS 2

static atomic_int x[CALLERS], y;
static int caller_saw_y[CALLERS], plain_saw_x[CALLERS];

static void *caller(void *arg)
{
	int i = (int)(intptr_t)arg - 1;

	verify_tid = i + 1;   /* no sections: no IPI lands here (backend.c) */
	atomic_store_explicit(&x[i], 1, memory_order_relaxed);
	srcu__fence_heavy();
	caller_saw_y[i] = atomic_load_explicit(&y, memory_order_relaxed);
	return NULL;
}

static void *plain(void *arg)
{
	verify_thread_start((int)(intptr_t)arg);
	verify_ipi_point();
	atomic_store_explicit(&y, 1, memory_order_relaxed);
	srcu__barrier();   /* a compiler barrier, as the read side's */
	verify_ipi_point();
	for (int i = 0; i < CALLERS; i++)
		plain_saw_x[i] = atomic_load_explicit(&x[i], memory_order_relaxed);
	verify_thread_end(false);   /* the last landing point */
	return NULL;
}

int main(void)
{
	pthread_t c[CALLERS], p;

	srcu__process_startup();
	pthread_create(&p, NULL, plain, (void *)(intptr_t)(CALLERS + 1));
	for (int i = 0; i < CALLERS; i++)
		pthread_create(&c[i], NULL, caller, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < CALLERS; i++)
		pthread_join(c[i], NULL);
	pthread_join(p, NULL);
	for (int i = 0; i < CALLERS; i++)
		assert(caller_saw_y[i] == 1 || plain_saw_x[i] == 1);
	return 0;
}
