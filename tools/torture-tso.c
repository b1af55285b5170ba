/*
 * torture-tso.c: srcu-torture's store buffer.  Fence A exists because a
 * reader's count may sit in its CPU's store buffer while the section's
 * loads run ahead of it (x86-TSO does exactly that); membarrier drains
 * every buffer at some point while it runs.  The real window is a few
 * nanoseconds, so no stress test sees a grace period whose fence is
 * missing or mistimed (busted-nofence, busted-earlyfence).  This file
 * makes the window as wide as a sleep: some sections "buffer" their lock
 * count, load the object, wait, and only then make the count visible,
 * unless a membarrier drained it first (the library calls back after
 * each membarrier, SRCU_TORTURE_POINT_MEMBARRIER, in the test-only build).
 *
 * That is the behaviour the algorithm must survive, not a new one: the
 * emulated reader fences (seq-cst) after announcing its buffered count,
 * as the store of a real one becomes visible in order, and a membarrier
 * that began after the announcement drains it before returning.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include "srcu-torture.h"
#include "../src/torture.h"

#define TSO_ENTRIES 64

enum { FREE, PENDING, DRAINING, VISIBLE };

struct buffered {
	int state;
	unsigned long *count;
};

static struct buffered buffer[TSO_ENTRIES];
static pid_t owner_pid;   /* a fork child's membarriers drain nothing */

/* Drain entry i if its count is buffered: the membarrier's fence on the
 * entry's thread, or the reader's own drain at the end of its delay.
 * Returns only once the count is visible: a real store buffer drains
 * in one step, but here the state and the count are two stores, and a
 * drainer may be preempted between them.  A pass that found DRAINING and
 * went on would let its membarrier return, and the grace period sum the
 * locks, without a count whose section loaded its object long before
 * (the reader's own drain, or a membarrier that the fence service's
 * patience fallback runs beside the lock holder's, and so beside its
 * drain).  So wait for whoever drains it; that thread blocks on nothing. */
static void drain(int i)
{
	int state = PENDING;

	if (__atomic_compare_exchange_n(&buffer[i].state, &state, DRAINING, false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(buffer[i].count, 1, __ATOMIC_SEQ_CST);
		__atomic_store_n(&buffer[i].state, VISIBLE, __ATOMIC_SEQ_CST);
		return;
	}
	while (state == DRAINING) {
		sched_yield();   /* the drainer may need this CPU */
		state = __atomic_load_n(&buffer[i].state, __ATOMIC_SEQ_CST);
	}
}

/* At each membarrier of the process (the library's hook points, as it
 * begins and before it returns), each thread gets one fence, at a point
 * of the adversary's choosing: for each entry, at random, as the
 * membarrier begins (then a count buffered after that point stays
 * buffered past the membarrier's end) or before it returns.  Membarriers
 * are mostly serialized by the fence service, but one whose caller ran
 * out of patience runs beside the lock holder's (drain() copes with
 * that); both points of one run on its thread. */
static void drain_all(enum srcu__torture_point p, void *arg)
{
	static __thread unsigned int seed;
	static __thread uint64_t at_end;   /* entries whose fence comes last */

	if (p != SRCU_TORTURE_POINT_MEMBARRIER || getpid() != owner_pid)
		return;
	if (!seed)
		seed = (unsigned int)(uintptr_t)&seed | 1;
	if (arg == NULL) {   /* begins */
		at_end = ((uint64_t)rnd(&seed) << 32) | rnd(&seed);
		for (int i = 0; i < TSO_ENTRIES; i++)
			if (!(at_end >> i & 1))
				drain(i);
		/* A slow membarrier (interrupts to busy CPUs take that long on
		 * a virtual machine): grace periods that ask meanwhile find it
		 * in flight, the case the fence service's rule is about. */
		if (rnd(&seed) % 2 == 0)
			sleep_ns(5000 + rnd(&seed) % 45000);
		return;
	}
	for (int i = 0; i < TSO_ENTRIES; i++)
		if (at_end >> i & 1)
			drain(i);
}

void tso_init(void)
{
	owner_pid = getpid();
	srcu__torture_point = drain_all;
}

static struct buffered *claim(void)
{
	for (int i = 0; i < TSO_ENTRIES; i++) {
		int free_state = FREE;

		if (__atomic_compare_exchange_n(&buffer[i].state, &free_state, VISIBLE, false,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
			return &buffer[i];
	}
	return NULL;
}

int tso_read_lock(struct srcu_struct *sp, void **obj, void **head, int64_t delay_ns)
{
	unsigned long *slots = (unsigned long *)srcu__slots;
	unsigned int w = __atomic_load_n(&sp->lock_word, __ATOMIC_RELAXED);
	struct buffered *b;
	sigset_t all, old;

	/* Only where the inline fast path would count, on a word already
	 * noted (a first lock notes, with a fence of its own). */
	if (!slots || w < SRCU__WORD_FIRST || !(slots[w] & SRCU__LOCK_NOTED) ||
	    !(b = claim())) {
		int idx = srcu_read_lock(sp);

		*obj = srcu_dereference(*head, sp);
		return idx;
	}
	/* The drain adds from another thread: no handler's section may
	 * count on this word meanwhile. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	b->count = &slots[w];
	__atomic_store_n(&b->state, PENDING, __ATOMIC_SEQ_CST);   /* the count, buffered */
	*obj = srcu_dereference(*head, sp);                       /* the load runs ahead */
	sleep_ns(delay_ns);
	drain((int)(b - buffer));   /* by itself, or wait for the membarrier adding it */
	__atomic_store_n(&b->state, FREE, __ATOMIC_SEQ_CST);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return (int)(w & 1);
}
