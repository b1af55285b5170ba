/*
 * urcu/urcu-mb.h of libsrcu's liburcu drop-in: liburcu's mb flavour
 * (liburcu-mb) is not provided; the drop-in has liburcu's default
 * flavour, memb, only.  This header stops the compile, naming what is
 * missing, rather than let the program mix the drop-in with another RCU
 * library unnoticed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_URCU_DROPIN_URCU_URCU_MB_H
#define SRCU_URCU_DROPIN_URCU_URCU_MB_H
#error "libsrcu's liburcu drop-in has liburcu's memb flavour only (<urcu.h>, <urcu/urcu-memb.h>): <urcu/urcu-mb.h>, the mb flavour (liburcu-mb), is not provided; build this program against liburcu itself (doc/urcu.md)"
#endif
