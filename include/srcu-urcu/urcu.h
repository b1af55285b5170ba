/*
 * urcu.h of libsrcu's liburcu drop-in: liburcu's default flavour (memb)
 * on libsrcu-urcu, under liburcu's header name.
 *
 * This directory is found first when a program is built with the drop-in's
 * pkg-config modules (liburcu, liburcu-memb, liburcu-cds: doc/urcu.md,
 * "Switching with one variable"), so `#include <urcu.h>` gets this file and
 * the program runs on srcu_urcu_domain without a source change.  The
 * headers of liburcu's data structures (urcu/rculfhash.h, urcu/list.h,
 * urcu/wfcqueue.h, ...) are not here: they pass through to liburcu's own,
 * which the modules name after this directory.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_URCU_DROPIN_URCU_H
#define SRCU_URCU_DROPIN_URCU_H
#include <urcu/urcu.h>
#endif
