/*
 * bench_callgrind.h: instructions per read pair, counted by callgrind
 * (figures 1 and 11).  srcu-bench runs itself under callgrind with
 * --instr-child NAME; the child collects only INSTR_PAIRS pairs of what
 * NAME names (bench_instr.c's instr_child()), and the parent divides.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_CALLGRIND_H
#define SRCU_BENCH_CALLGRIND_H

#define INSTR_PAIRS 100000

/* Can we count instructions?  Says why not, once. */
int callgrind_usable(void);
/* Run ourselves under callgrind with --instr-child name: Ir per pair, or
 * 0 if that failed. */
double callgrind_per_pair(const char *name, const char *self_path);
/* In the child: reads(INSTR_PAIRS), the only instructions collected
 * (without callgrind's header at build time, nothing runs). */
void callgrind_collect(void (*reads)(long n));

#endif
