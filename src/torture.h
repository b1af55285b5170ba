/*
 * torture.h: test-only hooks for tools/srcu-torture.
 *
 * Compiled in only when SRCU_TORTURE is defined, which only the
 * never-installed libsrcu_torture.a is.  The installed libraries contain
 * none of this.  The flavours are deliberately broken variants of the
 * algorithm, so that the torture test can prove it catches them.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TORTURE_H
#define SRCU_TORTURE_H

enum srcu__torture_flavor {
	SRCU_TORTURE_CORRECT = 0,
	SRCU_TORTURE_NOSYNC,    /* synchronize_srcu*() returns at once */
	SRCU_TORTURE_ONESCAN,   /* the GP skips SCAN1, the stale-reader wait */
	SRCU_TORTURE_NOFENCE,   /* the GP's scans run without fence A */
	SRCU_TORTURE_CBNOWAIT,  /* call_srcu()'s worker runs callbacks at once */
	SRCU_TORTURE_EARLYPOLL, /* a polled cookie is done one GP early */
};

#ifdef SRCU_TORTURE
/* Set before the first grace period; read by gp.c. */
extern int srcu__torture_flavor;
#define SRCU__BUSTED(f) (srcu__torture_flavor == SRCU_TORTURE_##f)
#else
#define SRCU__BUSTED(f) 0
#endif

#endif /* SRCU_TORTURE_H */
