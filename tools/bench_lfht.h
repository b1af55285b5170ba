/*
 * bench_lfht.h: srcu-bench's figure 10, liburcu's cds_lfht on the libsrcu
 * flavour and on urcu-memb (built when liburcu-dev is present).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_LFHT_H
#define SRCU_BENCH_LFHT_H

void figure_lfht(int quick, int ncpu);

#endif
