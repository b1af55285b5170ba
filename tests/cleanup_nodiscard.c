/*
 * cleanup_nodiscard: a dropped cleanup_srcu_struct() result must not
 * compile (-Werror), in C and in C++.  The kernel's cleanup returns
 * nothing, so code ported as is drops ours, frees a domain it said was
 * busy (-EBUSY) and corrupts silently.  Bug caught: cleanup_srcu_struct()
 * without warn_unused_result / [[nodiscard]].  Compiled only (ctest);
 * with -DSRCU_KEEP_RESULT it must compile.
 *
 * SPDX-License-Identifier: MIT
 */
#include <srcu.h>

int retire(struct srcu_struct *sp);

int retire(struct srcu_struct *sp)
{
#ifdef SRCU_KEEP_RESULT
	return cleanup_srcu_struct(sp);
#else
	cleanup_srcu_struct(sp);   /* the kernel's habit: the result dropped */
	return 0;
#endif
}
