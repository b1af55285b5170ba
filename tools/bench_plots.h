/*
 * bench_plots.h: srcu-bench --plot DIR: one PNG per figure that ran.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_PLOTS_H
#define SRCU_BENCH_PLOTS_H

/* Writes DIR/figNN-<name>.png for each figure that ran, and DIR/plots.gp,
 * the gnuplot script that drew them (their data inline: it redraws them
 * alone); removes that name for each figure that did not run, and the
 * .dat files an older srcu-bench left.  The number of PNGs, 0 without
 * gnuplot. */
int write_plots(const char *dir);

#endif
