/*
 * peer_urcu_qsbr.c: liburcu's urcu-qsbr flavour.  Its read side is free
 * because threads announce quiescent states instead; a thread that blocks
 * must go offline first, so its readers may not sleep: a lower bound, not
 * a peer for sleepable readers.  Built only with liburcu-dev.
 *
 * SPDX-License-Identifier: MIT
 */
#define _LGPL_SOURCE
#include <urcu/urcu-qsbr.h>

#define URCU_FLAVOR qsbr
#define URCU_QUIESCENT() urcu_qsbr_quiescent_state()
#include "peer_urcu.h"

const struct peer peer_urcu_qsbr = {
	"urcu-qsbr", "liburcu urcu-qsbr (not sleepable: a lower bound)", 0,
	flavor_online, flavor_offline, flavor_reads, flavor_lock, flavor_unlock,
	urcu_qsbr_synchronize_rcu, urcu_qsbr_thread_offline, urcu_qsbr_thread_online,
};
