/*
 * bench_call.h: srcu-bench figure 8 (tools/bench_call.c).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_CALL_H
#define SRCU_BENCH_CALL_H

#include "bench.h"

#define CALL_OBJ_BYTES 64          /* each object freed by a callback */
#define CALL_CAP       2000000L    /* stop queueing here: 128 MB waiting */

struct call_figures {
	double rate;                /* callbacks/s, no reader in the way: */
	double rate_lo, rate_hi;    /* median [min-max] of its windows */
	double peak_objs;           /* most objects waiting at once, then */
	double asleep_peak_objs;    /* ... while a reader sleeps inside */
	int asleep_capped;          /* the producer stopped at CALL_CAP */
	/* libsrcu only: ns a call, median [min-max] of its windows */
	struct stat3 ns_get_state, ns_poll, ns_start_poll;
};

void bench_call_srcu(double secs, struct call_figures *f);
#ifdef HAVE_URCU
void bench_call_rcu(double secs, struct call_figures *f);
#endif

#endif
