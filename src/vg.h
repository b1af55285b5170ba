/*
 * vg.h: telling Valgrind's race detector Helgrind what it cannot
 * see: the grace period's ordering, and the library's own lock-free
 * words, which are correct by the argument of doc/design.md rather than by
 * locks.  Compiled in when Valgrind's headers are there at build time;
 * each request is a few no-op instructions outside Valgrind, and all of
 * them sit on slow paths.
 *
 * Under Helgrind (or DRD) the library picks the fence backend (backend.c):
 * every read-side call then runs out of line, where it is annotated.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_VG_H
#define SRCU_VG_H

/* Valgrind's client requests are asm: none in an SRCU_NO_ASM build. */
#if defined(__has_include) && !defined(SRCU_NO_ASM)
#if __has_include(<valgrind/helgrind.h>)
#define SRCU__HAVE_VALGRIND 1
#endif
#endif

#ifdef SRCU__HAVE_VALGRIND
#include <valgrind/helgrind.h>
/* Running under a Valgrind race detector (Helgrind or DRD, which preload
 * their own library): not under Callgrind or Memcheck, where srcu-bench
 * counts the fast path's instructions and the fast path must stay. */
#include <stdlib.h>
#include <string.h>
static inline int srcu__vg_running(void)
{
	const char *p = getenv("LD_PRELOAD");

	return RUNNING_ON_VALGRIND && p &&
	       (strstr(p, "vgpreload_helgrind") || strstr(p, "vgpreload_drd"));
}
/* Words the library orders itself (atomics, membarrier, the scans'
 * argument): not the tools' business. */
#define srcu__vg_quiet(addr, len) VALGRIND_HG_DISABLE_CHECKING((addr), (len))
/* Happens-before from a section's end (before) to the end of a grace
 * period that waited for it (after), on the same address. */
#define srcu__vg_before(addr) ANNOTATE_HAPPENS_BEFORE(addr)
#define srcu__vg_after(addr) ANNOTATE_HAPPENS_AFTER(addr)
#else
#define srcu__vg_running() 0
#define srcu__vg_quiet(addr, len) do { (void)(addr); (void)(len); } while (0)
#define srcu__vg_before(addr) do { (void)(addr); } while (0)
#define srcu__vg_after(addr) do { (void)(addr); } while (0)
#endif

#endif /* SRCU_VG_H */
