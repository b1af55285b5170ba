/*
 * peer_urcu_bp.c: liburcu's urcu-bp ("bulletproof") flavour: no explicit
 * registration, readers pay a fence-free fast path, grace periods poll.
 * Built only with liburcu-dev.
 *
 * SPDX-License-Identifier: MIT
 */
#define _LGPL_SOURCE
#include <urcu/urcu-bp.h>

#define URCU_FLAVOR bp
#define URCU_NO_UNREGISTER
#include "peer_urcu.h"

const struct peer peer_urcu_bp = {
	"urcu-bp", "liburcu urcu-bp (no registration; polling grace periods)", 1,
	flavor_online, flavor_offline, flavor_reads, flavor_lock, flavor_unlock,
	urcu_bp_synchronize_rcu, NULL, NULL,
};
