/*
 * kernel_shim.h: the non-SRCU kernel APIs that tests/test_kernel_port.c's
 * ports of kernel SRCU users need, mapped onto pthreads and GCC/C11
 * atomics.  Thin on purpose: each is the smallest userspace meaning of
 * the kernel's, and no SRCU call is made here; the ported code calls
 * libsrcu under the kernel's own SRCU names.  doc/kernel.md, "What had
 * to change in kernel code", lists what the ports changed.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TESTS_KERNEL_SHIM_H
#define SRCU_TESTS_KERNEL_SHIM_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "srcu.h"

/* ---- <linux/compiler.h>, <linux/bug.h>, <linux/kernel.h> ------------- */

#define READ_ONCE(x)     __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* A WARN is counted (the tests fail on any) and printed, as the kernel's
 * splat; it returns the condition. */
static int kernel_shim_warnings;
#define WARN_ON(cond) __extension__({ \
	int warn_on_ = !!(cond); \
	if (warn_on_) { \
		fprintf(stderr, "WARNING: %s:%d: WARN_ON(%s)\n", __FILE__, __LINE__, #cond); \
		__atomic_fetch_add(&kernel_shim_warnings, 1, __ATOMIC_RELAXED); \
	} \
	warn_on_; })
#define BUG() do { fprintf(stderr, "BUG at %s:%d\n", __FILE__, __LINE__); abort(); } while (0)

/* Userspace threads may always sleep. */
#define might_sleep() do { } while (0)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define likely(x)   __builtin_expect(!!(x), 1)

/* EINTR comes from <errno.h>; kernel functions return -EINTR, as here. */

/* ---- <linux/bitops.h> ------------------------------------------------ */

/* Atomic on an unsigned long word, as the kernel's.  Sequentially
 * consistent, which is stronger than the kernel's unordered
 * set_bit()/clear_bit()/test_bit(): the ported code gets the ordering it
 * needs from SRCU and the wait queue, and a stronger bitop hides nothing
 * the tests look for (a reader inside during a clobber). */
#define BITS_PER_LONG ((int)(sizeof(unsigned long) * 8))
#define BIT_WORD(nr)  ((nr) / BITS_PER_LONG)
#define BIT_MASK(nr)  (1ul << ((nr) % BITS_PER_LONG))

static inline void set_bit(long nr, unsigned long *addr)
{
	__atomic_fetch_or(addr + BIT_WORD(nr), BIT_MASK(nr), __ATOMIC_SEQ_CST);
}

static inline void clear_bit(long nr, unsigned long *addr)
{
	__atomic_fetch_and(addr + BIT_WORD(nr), ~BIT_MASK(nr), __ATOMIC_SEQ_CST);
}

static inline int test_bit(long nr, const unsigned long *addr)
{
	return (__atomic_load_n(addr + BIT_WORD(nr), __ATOMIC_SEQ_CST) & BIT_MASK(nr)) != 0;
}

static inline int test_and_set_bit(long nr, unsigned long *addr)
{
	return (__atomic_fetch_or(addr + BIT_WORD(nr), BIT_MASK(nr), __ATOMIC_SEQ_CST) &
		BIT_MASK(nr)) != 0;
}

#define smp_mb__after_atomic() srcu__full_fence()   /* libsrcu's, which -fsanitize=thread accepts */

/* ---- <linux/mutex.h> ------------------------------------------------- */

struct mutex { pthread_mutex_t m; };
#define DEFINE_MUTEX(name) struct mutex name = { PTHREAD_MUTEX_INITIALIZER }
static inline void mutex_init(struct mutex *lock) { pthread_mutex_init(&lock->m, NULL); }
static inline void mutex_lock(struct mutex *lock) { pthread_mutex_lock(&lock->m); }
static inline void mutex_unlock(struct mutex *lock) { pthread_mutex_unlock(&lock->m); }

/* ---- <linux/wait.h> -------------------------------------------------- */

/* A wait queue is a mutex and a condition variable.  wait_event*() test
 * cond under the mutex and wake_up_all() broadcasts under it, so a waker
 * that made cond true before wake_up_all() is never missed (the kernel's
 * prepare_to_wait()/set_current_state() dance). */
typedef struct wait_queue_head { pthread_mutex_t lock; pthread_cond_t cond; } wait_queue_head_t;

static inline void init_waitqueue_head(wait_queue_head_t *wq)
{
	pthread_mutex_init(&wq->lock, NULL);
	pthread_cond_init(&wq->cond, NULL);
}

static inline void wake_up_all(wait_queue_head_t *wq)
{
	pthread_mutex_lock(&wq->lock);
	pthread_cond_broadcast(&wq->cond);
	pthread_mutex_unlock(&wq->lock);
}

#define wait_event(wq, condition) do { \
	pthread_mutex_lock(&(wq).lock); \
	while (!(condition)) \
		pthread_cond_wait(&(wq).cond, &(wq).lock); \
	pthread_mutex_unlock(&(wq).lock); \
	} while (0)

/* No signal interrupts a wait here: always 0, never -ERESTARTSYS; the
 * callers' -EINTR paths stay, unreached. */
#define wait_event_interruptible(wq, condition) __extension__({ \
	might_sleep(); \
	wait_event(wq, condition); \
	0; })

/* ---- <linux/list.h>, <linux/rculist.h> ------------------------------- */

/*
 * The kernel's rculist reads ->next with rcu_dereference() (or _raw) and
 * publishes with rcu_assign_pointer().  Here the reads are libsrcu's
 * srcu_dereference() load (a dependency-ordered relaxed load, or acquire
 * under -DSRCU_DEREFERENCE_ACQUIRE), spelled srcu_dereference_check(p,
 * NULL, 1): a list helper cannot name the domain, so the checking build's
 * "inside a section of sp" test is off (condition 1), as the kernel's
 * _raw; the caller's srcu_read_lock() of the domain that protects the
 * list is what makes the walk safe.  Publishing is srcu_assign_pointer()
 * (a release store).  Neither names a domain: no SRCU call here.
 */
#define rcu_dereference_raw(p) srcu_dereference_check(p, NULL, 1)

struct list_head { struct list_head *next, *prev; };
#define LIST_HEAD_INIT(name) { &(name), &(name) }
#define LIST_HEAD(name) struct list_head name = LIST_HEAD_INIT(name)

static inline void INIT_LIST_HEAD(struct list_head *list)
{
	WRITE_ONCE(list->next, list);
	list->prev = list;
}

/* Updaters serialize among themselves (a mutex), as in the kernel. */
static inline void list_add_rcu(struct list_head *new, struct list_head *head)
{
	struct list_head *next = head->next;

	new->next = next;
	new->prev = head;
	srcu_assign_pointer(head->next, new);
	next->prev = new;
}

#define LIST_POISON2 ((struct list_head *)0x122)

/* ->next stays, for readers still on the entry; ->prev is poisoned. */
static inline void list_del_rcu(struct list_head *entry)
{
	entry->next->prev = entry->prev;
	WRITE_ONCE(entry->prev->next, entry->next);
	entry->prev = LIST_POISON2;
}

#define list_entry_rcu(ptr, type, member) container_of(rcu_dereference_raw(ptr), type, member)

/* The kernel's optional lockdep condition argument is not taken. */
#define list_for_each_entry_rcu(pos, head, member) \
	for (pos = list_entry_rcu((head)->next, __typeof__(*pos), member); \
	     &pos->member != (head); \
	     pos = list_entry_rcu(pos->member.next, __typeof__(*pos), member))

#endif
