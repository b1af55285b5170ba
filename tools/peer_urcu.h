/*
 * peer_urcu.h: one liburcu flavour as a srcu-bench peer, read side
 * inlined (_LGPL_SOURCE) as liburcu's documentation recommends for speed.
 * A flavour's file defines URCU_FLAVOR (memb, mb, qsbr, bp), includes its
 * <urcu/urcu-FLAVOR.h>, then this file.
 *
 * SPDX-License-Identifier: MIT
 */
#include "peers.h"

#define URCU_CAT2(a, b, c) a##b##c
#define URCU_CAT(a, b, c) URCU_CAT2(a, b, c)
#define URCU_FN(name) URCU_CAT(urcu_, URCU_FLAVOR, _##name)

#ifndef URCU_QUIESCENT
#define URCU_QUIESCENT() do { } while (0)
#endif

static void flavor_reads(long n)
{
	for (long i = 0; i < n; i++) {
		URCU_FN(read_lock)();
		__asm__ __volatile__("" ::: "memory");
		URCU_FN(read_unlock)();
	}
	URCU_QUIESCENT();   /* qsbr: readers must announce quiescent states */
}

static int flavor_lock(void) { URCU_FN(read_lock)(); return 0; }
static void flavor_unlock(int t) { (void)t; URCU_FN(read_unlock)(); URCU_QUIESCENT(); }
static void flavor_online(void) { URCU_FN(register_thread)(); }
#ifdef URCU_NO_UNREGISTER   /* bp: the thread's exit unregisters it */
static void flavor_offline(void) { }
#else
static void flavor_offline(void) { URCU_FN(unregister_thread)(); }
#endif
