/*
 * bench_shared.h: srcu-bench's figure 11, a process-shared domain
 * (doc/shared.md) against a private one and a PTHREAD_PROCESS_SHARED
 * rwlock, with two processes.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_SHARED_H
#define SRCU_BENCH_SHARED_H

/* The figure's rows, in its order (also their names in the results). */
#define SHARED_NROWS 3
extern const char *const shared_row_name[SHARED_NROWS];

/* For the callgrind child (srcu-bench --instr-child): make the row named
 * row ready and warm (a shared domain in a memfd of its own for
 * "libsrcu-shared"), so that shared_instr_reads() then counts only its
 * pairs.  0, -EINVAL (no such row), or init_srcu_struct_shared()'s
 * error. */
int shared_instr_prepare(const char *row);
/* n pairs of figure 11's read loop on the row prepared. */
void shared_instr_reads(long n);

#endif
