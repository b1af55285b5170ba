/*
 * torture_hook.h: force-included (-include) before everything else by the
 * never-installed torture build (srcu_torture objects and what links it), so
 * that srcu/read.h's inline srcu_read_lock() gets the reader delay of
 * tools/srcu-torture in its stale-index window.  The installed header
 * carries only the empty default.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TORTURE_HOOK_H
#define SRCU_TORTURE_HOOK_H

extern void (*srcu__torture_reader_delay)(void);
#define SRCU__READ_LOCK_HOOK() \
	do { if (srcu__torture_reader_delay) srcu__torture_reader_delay(); } while (0)

#endif
