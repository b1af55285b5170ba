/*
 * srcu/sanitizer.h: what <srcu.h>'s inline code tells ThreadSanitizer and
 * Helgrind about orderings they cannot see, included by it.  Do not
 * include it yourself.  Nothing here costs anything in other builds.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU__SANITIZER_H
#define SRCU__SANITIZER_H

#ifndef SRCU_H
#error "include <srcu.h>, not <srcu/sanitizer.h>"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ThreadSanitizer cannot see the grace period's ordering (membarrier, or
 * the library's uninstrumented code), and would call a callback's free()
 * and a reader's access a race.  In a program built with -fsanitize=thread
 * each unlock therefore releases on its domain index's waiting flag, and
 * the library (through a weak reference, so that a plain libsrcu.so works)
 * acquires both of a domain's flags when a grace period has ended for a
 * caller or a callback: happens-before from every section the GP waited
 * for to what follows it.  Nothing is added to other builds. */
#if defined(__SANITIZE_THREAD__)
#define SRCU__TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SRCU__TSAN 1
#endif
#endif
#ifdef SRCU__TSAN
void __tsan_release(void *addr);
#define SRCU__TSAN_RELEASE(addr) __tsan_release((void *)(addr))
#else
#define SRCU__TSAN_RELEASE(addr) do { } while (0)
#endif

/* Helgrind does not see C11 release/acquire: a program built with
 * -DSRCU_HELGRIND tells it that publishing a pointer happens before a
 * reader's use of it (the library annotates its grace periods itself).
 * Needs Valgrind's headers; no cost outside Valgrind worth measuring. */
#ifdef SRCU_HELGRIND
#include <valgrind/helgrind.h>
#define SRCU__HG_PUBLISH(pp) do { \
	ANNOTATE_BENIGN_RACE_SIZED((pp), sizeof(*(pp)), "SRCU-protected pointer"); \
	ANNOTATE_HAPPENS_BEFORE(pp); } while (0)
#define SRCU__HG_CONSUME(pp) ANNOTATE_HAPPENS_AFTER(pp)
#else
#define SRCU__HG_PUBLISH(pp) do { } while (0)
#define SRCU__HG_CONSUME(pp) do { } while (0)
#endif

#ifdef __cplusplus
}
#endif
#endif /* SRCU__SANITIZER_H */
