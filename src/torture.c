/*
 * torture.c: storage for the test-only hooks of torture.h (built into
 * srcu_torture objects only).
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

int srcu__torture_flavor;
void (*srcu__torture_reader_delay)(void);
void (*srcu__torture_point)(enum srcu__torture_point p, void *arg);
