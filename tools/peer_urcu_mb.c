/*
 * peer_urcu_mb.c: liburcu's urcu-mb flavour (a full fence in every read
 * lock and unlock).  Built only with liburcu-dev.
 *
 * SPDX-License-Identifier: MIT
 */
#define _LGPL_SOURCE
#include <urcu/urcu-mb.h>

#define URCU_FLAVOR mb
#include "peer_urcu.h"

const struct peer peer_urcu_mb = {
	"urcu-mb", "liburcu urcu-mb (fences in the read side)", 1,
	flavor_online, flavor_offline, flavor_reads, flavor_lock, flavor_unlock,
	urcu_mb_synchronize_rcu, NULL, NULL,
};
