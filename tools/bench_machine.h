/*
 * bench_machine.h: srcu-bench's figure 9, what this machine charges for
 * the update side's tools, so that figures 2 and 4 can be read.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_MACHINE_H
#define SRCU_BENCH_MACHINE_H

void figure_machine(int quick);

#endif
