/*
 * bench_plots.h: srcu-bench --plot DIR: one PNG per figure that ran.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_PLOTS_H
#define SRCU_BENCH_PLOTS_H

/* Writes DIR/figNN-<name>.png (with its .dat files and plots.gp) for each
 * figure that ran, and removes that name for each that did not; the
 * number of PNGs, 0 without gnuplot. */
int write_plots(const char *dir);

#endif
