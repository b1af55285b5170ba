/*
 * srcu/pointer.h: srcu_dereference() and the other pointer macros of
 * <srcu.h> (the kernel's rcu_dereference(), rcu_assign_pointer(), ...;
 * liburcu's urcu/pointer.h), included by it.  Do not include it
 * yourself.  The ordering argument is in doc/design.md
 * ("srcu_dereference(): acquire or dependency").
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU__POINTER_H
#define SRCU__POINTER_H

#ifndef SRCU_H
#error "include <srcu.h>, not <srcu/pointer.h>"
#endif

#include "layout.h"
#include "sanitizer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* srcu_dereference()'s load (doc/design.md, "srcu_dereference(): acquire
 * or dependency").  By default a relaxed load, whose address dependency
 * orders the reader's loads through the pointer on every CPU Linux runs
 * on but Alpha (the kernel's READ_ONCE() and liburcu's rcu_dereference()):
 * a plain ldr on arm64, a plain ld on POWER.  -DSRCU_DEREFERENCE_ACQUIRE
 * makes it an acquire load (ldar, lwsync), which also orders loads that
 * do not depend on the pointer.  ThreadSanitizer knows no dependencies:
 * its builds always acquire, so that it sees the publication. */
#if defined(SRCU_DEREFERENCE_ACQUIRE) || defined(SRCU__TSAN) || defined(__alpha__)
#define SRCU__DEREF_ORDER __ATOMIC_ACQUIRE
#else
#define SRCU__DEREF_ORDER __ATOMIC_RELAXED
#endif

/* The checking build (-DSRCU_DEBUG before including <srcu.h>): a
 * srcu_dereference() outside every section of its domain in this thread,
 * or a _check()/_protected() one whose condition fails too, reports its
 * call site and aborts (the kernel's lockdep splat).  Without it the
 * condition is type-checked, never evaluated (the kernel's "0 && (c)",
 * which unlike sizeof counts as a use for -Wunused-function), and nothing
 * is added. */
SRCU__API __attribute__((noreturn, cold))
void srcu__debug_deref_fail(struct srcu_struct *sp, const char *macro, const char *file,
			    int line, const char *expr, const char *cond);
#ifdef SRCU_DEBUG
#define SRCU__DEBUG_CHECK(sp, c, macro, expr, cond) do { \
	struct srcu_struct *srcu__dsp_ = (sp); \
	if (!(c) && !srcu_read_lock_held(srcu__dsp_)) \
		srcu__debug_deref_fail(srcu__dsp_, macro, __FILE__, __LINE__, expr, cond); \
	} while (0)
#define SRCU__DEBUG_COND(c, macro, expr, cond) do { \
	if (!(c)) \
		srcu__debug_deref_fail(0, macro, __FILE__, __LINE__, expr, cond); \
	} while (0)
#else
#define SRCU__DEBUG_CHECK(sp, c, macro, expr, cond) do { \
	(void)(sp); (void)(0 && (c)); } while (0)
#define SRCU__DEBUG_COND(c, macro, expr, cond) do { (void)(0 && (c)); } while (0)
#endif

/* srcu_dereference(), srcu_dereference_check(), srcu_dereference_protected(),
 * srcu_access_pointer(), srcu_assign_pointer() and srcu_replace_pointer()
 * (<srcu.h>).  Each evaluates p and sp once; c is evaluated only by the
 * checking build. */
#define SRCU__DEREF_LOAD(p) \
	__extension__({ __typeof__(p) srcu__p_ = __atomic_load_n(&(p), SRCU__DEREF_ORDER); \
			SRCU__HG_CONSUME(&(p)); srcu__p_; })
#define SRCU__DEREFERENCE(p, ...) \
	__extension__({ SRCU__DEBUG_CHECK((__VA_ARGS__), 0, "srcu_dereference", #p, 0); \
			SRCU__DEREF_LOAD(p); })
#define SRCU__DEREFERENCE_CHECK(p, sp, ...) \
	__extension__({ SRCU__DEBUG_CHECK(sp, (__VA_ARGS__), "srcu_dereference_check", #p, \
					  #__VA_ARGS__); \
			SRCU__DEREF_LOAD(p); })
/* Update side: the caller's lock orders it, a plain load as the kernel's. */
#define SRCU__DEREFERENCE_PROTECTED(p, ...) \
	__extension__({ SRCU__DEBUG_COND((__VA_ARGS__), "srcu_dereference_protected", #p, \
					 #__VA_ARGS__); \
			(p); })
/* Not for dereferencing: the value, loaded once (READ_ONCE()). */
#define SRCU__ACCESS_POINTER(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define SRCU__ASSIGN_POINTER(p, ...) \
	__extension__({ __typeof__(p) srcu__v_ = (__VA_ARGS__); \
			SRCU__HG_PUBLISH(&(p)); \
			__atomic_store_n(&(p), srcu__v_, __ATOMIC_RELEASE); srcu__v_; })
/* The kernel's rcu_replace_pointer(): the protected load, then the
 * assignment; p evaluated once. */
#define SRCU__REPLACE_POINTER(p, v, ...) \
	__extension__({ __typeof__(p) *srcu__pp_ = &(p), srcu__old_; \
			SRCU__DEBUG_COND((__VA_ARGS__), "srcu_replace_pointer", #p, #__VA_ARGS__); \
			srcu__old_ = *srcu__pp_; \
			(void)SRCU__ASSIGN_POINTER(*srcu__pp_, v); srcu__old_; })

#ifdef __cplusplus
}
#endif
#endif /* SRCU__POINTER_H */
