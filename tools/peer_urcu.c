/*
 * peer_urcu.c: liburcu 0.13's urcu-memb flavour (membarrier: readers pay
 * compiler barriers, like libsrcu).  Built only with liburcu-dev.
 *
 * SPDX-License-Identifier: MIT
 */
#define _LGPL_SOURCE
#include <urcu/urcu-memb.h>

#define URCU_FLAVOR memb
#include "peer_urcu.h"

const struct peer peer_urcu_memb = {
	"urcu-memb", "liburcu urcu-memb (one global domain, registration)", 1,
	flavor_online, flavor_offline, flavor_reads, flavor_lock, flavor_unlock,
	urcu_memb_synchronize_rcu, NULL, NULL,
};
