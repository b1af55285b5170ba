/*
 * srcu_kernel.h: the kernel's cleanup.h spelling of scoped SRCU sections,
 * for srcu only, so that kernel code using them compiles unchanged:
 *
 *	guard(srcu)(&ss);                  a section to the end of the block
 *	scoped_guard(srcu, &ss) { ... }    a section for that block
 *
 * They are <srcu.h>'s SRCU_GUARD() and SRCU_SCOPED_GUARD() (GNU C's cleanup
 * attribute; C only).  guard and scoped_guard are common words, so they
 * live here, out of <srcu.h>: include this header only where you want
 * them.  If a macro guard or scoped_guard is defined already (a kernel
 * compatibility layer of your own), this header leaves it alone; yours
 * must then handle the srcu class itself (SRCU_GUARD() does the work).
 *
 * Classes: srcu, srcu_fast and srcu_fast_notrace (srcu_read_lock_fast()
 * sections).  guard(name) expands to SRCU__KGUARD_<name>; any other name
 * fails to compile, naming SRCU__KGUARD_<name>.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_KERNEL_H
#define SRCU_KERNEL_H

#include "srcu.h"

#ifndef __cplusplus

#ifndef guard
#define guard(name) SRCU__KGUARD_##name
#endif
#ifndef scoped_guard
#define scoped_guard(name, ...) SRCU__KSCOPED_##name(__VA_ARGS__)
#endif

/* The srcu class: the kernel's DEFINE_LOCK_GUARD_1(srcu, ...), whose
 * constructor is srcu_read_lock() and destructor srcu_read_unlock(). */
#define SRCU__KGUARD_srcu(sp) SRCU_GUARD(sp)
#define SRCU__KSCOPED_srcu(sp) SRCU_SCOPED_GUARD(sp)
/* srcu_fast and srcu_fast_notrace: the kernel's (6.15, 6.17), with
 * srcu_read_lock_fast() and srcu_read_unlock_fast(). */
#define SRCU__KGUARD_srcu_fast(sp) SRCU_GUARD_FAST(sp)
#define SRCU__KSCOPED_srcu_fast(sp) SRCU_SCOPED_GUARD_FAST(sp)
#define SRCU__KGUARD_srcu_fast_notrace(sp) SRCU_GUARD_FAST(sp)
#define SRCU__KSCOPED_srcu_fast_notrace(sp) SRCU_SCOPED_GUARD_FAST(sp)

#endif /* !__cplusplus */

#endif /* SRCU_KERNEL_H */
