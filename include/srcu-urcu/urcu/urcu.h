/*
 * urcu/urcu.h of libsrcu's liburcu drop-in: the flavour liburcu's
 * <urcu.h> selects.  liburcu picks memb unless RCU_MB or RCU_SIGNAL is
 * defined; the drop-in has memb only, and stops the compile for the others.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_URCU_DROPIN_URCU_URCU_H
#define SRCU_URCU_DROPIN_URCU_URCU_H
#if defined(RCU_MB)
#error "libsrcu's liburcu drop-in provides liburcu's memb flavour only: RCU_MB (liburcu-mb) is not provided; leave RCU_MB undefined, or build this program against liburcu itself (doc/urcu.md)"
#elif defined(RCU_SIGNAL)
#error "libsrcu's liburcu drop-in provides liburcu's memb flavour only: RCU_SIGNAL (liburcu-signal) is not provided; leave RCU_SIGNAL undefined, or build this program against liburcu itself (doc/urcu.md)"
#endif
#include <urcu/urcu-memb.h>
#endif
