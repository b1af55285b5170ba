/*
 * urcu/urcu-bp.h of libsrcu's liburcu drop-in: liburcu's bp flavour
 * (liburcu-bp) is not provided; the drop-in has liburcu's default
 * flavour, memb, only.  This header stops the compile, naming what is
 * missing, rather than let the program mix the drop-in with another RCU
 * library unnoticed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_URCU_DROPIN_URCU_URCU_BP_H
#define SRCU_URCU_DROPIN_URCU_URCU_BP_H
#error "libsrcu's liburcu drop-in has liburcu's memb flavour only (<urcu.h>, <urcu/urcu-memb.h>): <urcu/urcu-bp.h>, the bp flavour (liburcu-bp), is not provided; build this program against liburcu itself (doc/urcu.md)"
#endif
