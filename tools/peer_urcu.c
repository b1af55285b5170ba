/*
 * peer_urcu.c: liburcu 0.13's urcu-memb flavour, read side inlined
 * (_LGPL_SOURCE) as its own documentation recommends for speed.  Built
 * only when liburcu-dev is installed.
 *
 * SPDX-License-Identifier: MIT
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>

#include "peers.h"

static void memb_reads(long n)
{
	for (long i = 0; i < n; i++) {
		urcu_memb_read_lock();
		__asm__ __volatile__("" ::: "memory");
		urcu_memb_read_unlock();
	}
}

static int memb_lock(void) { urcu_memb_read_lock(); return 0; }
static void memb_unlock(int t) { (void)t; urcu_memb_read_unlock(); }

const struct peer peer_urcu_memb = {
	"urcu-memb", "liburcu 0.13 urcu-memb (one global domain, registration)", 0,
	urcu_memb_register_thread, urcu_memb_unregister_thread, memb_reads,
	memb_lock, memb_unlock, urcu_memb_synchronize_rcu,
};
