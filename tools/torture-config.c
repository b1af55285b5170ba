/*
 * torture-config.c: srcu-torture's configuration and its defaults (the
 * options: srcu-torture.c).
 *
 * SPDX-License-Identifier: MIT
 */
#include "torture-config.h"
#include "../src/torture.h"   /* the library's flavours */

struct torture_config cfg = {
	.duration_s = 60, .readers = 0, .writers = 4, .domains = 2,
	.async_writers = 1, .poll_writers = 1,
	.expedited_ratio = 0.25, .seed = 1, .flavor = SRCU_TORTURE_CORRECT,
	.flavor_name = "srcu", .reader_delay_permille = 20, .chaos = true,
	.stall_s = 30, .liveness_margin_s = 3,
};
