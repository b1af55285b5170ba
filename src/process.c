/*
 * process.c: the process's side of the library, at the top of the stack
 * (doc/design.md, "Layers"): its start-up (the constructor) and fork().
 * Nothing below calls up into this file: what a lower layer must do at
 * start-up or at a fork, this file asks of it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

static void fork_prepare(void);
static void fork_parent(void);
static void fork_child(void);

/* Before main(), and before the program's own constructors (priority
 * 101, the first a program may use: C++ static initializers and plain
 * constructors run after it, also when libsrcu.a is linked in).  Code that
 * runs earlier still (.preinit_array, an under-linked shared library's
 * constructor, a constructor of priority 101 that the linker places
 * first) may take sections: they run with fences, and the switch to
 * membarrier is safe under them (doc/design.md, "Start-up").  libsrcu.a
 * is one object, so this comes along whatever part of it a program uses. */
void srcu__process_startup(void) __attribute__((constructor(101))) SRCU__HIDDEN;
void srcu__process_startup(void)
{
	const char *dd = getenv("SRCU_DEADLOCK_DETECT");

	srcu__backend_init();
	srcu__domain_init();
	if (dd && *dd)
		srcu_set_deadlock_detection(strcmp(dd, "0") != 0);
	srcu__reader_init();
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* ---- fork: the registry lock is held across it ---- */

/* Every live domain, in id order (caller holds the registry lock).  The
 * empty branch first, so that an else after the loop's body cannot
 * attach to the filter. */
#define FOR_LIVE_DOMAINS(id) \
	for (id = SRCU__ID_FIRST; id < srcu__domain_id_high; id++) \
		if (!srcu__domain_table[id]) {} else
/* The same for the shared domains attached (their GP state is in the
 * file, the parent's and every other process's: only their call_srcu()
 * state is this process's). */
#define FOR_SHARED_DOMAINS(id) \
	for (id = SRCU__SHARED_ID_FIRST; id < SRCU__MAX_IDS; id += SRCU__SHARED_BLOCK_IDS) \
		if (!srcu__domain_table[id]) {} else

static void fork_prepare(void)
{
	unsigned int id;

	pthread_mutex_lock(&srcu__domain_registry_lock);
	FOR_LIVE_DOMAINS(id)
		srcu__async_fork_prepare(srcu__domain_table[id]);
	FOR_SHARED_DOMAINS(id)
		srcu__async_fork_prepare(srcu__domain_table[id]);
	srcu__reader_fork_prepare();   /* blocks this thread's signals */
	srcu__stall_fork_prepare();    /* innermost: released first */
}

static void fork_parent(void)
{
	unsigned int id;

	srcu__stall_fork_parent();
	srcu__reader_fork_end();
	FOR_LIVE_DOMAINS(id)
		srcu__async_fork_parent(srcu__domain_table[id]);
	FOR_SHARED_DOMAINS(id)
		srcu__async_fork_parent(srcu__domain_table[id]);
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

static void fork_child(void)
{
	unsigned int id;

	srcu__stall_fork_child();
	srcu__backend_fork_child();
	srcu__fence_fork_child();
	FOR_LIVE_DOMAINS(id) {
		srcu__gp_fork_child(srcu__domain_table[id]);
		srcu__async_fork_child(srcu__domain_table[id]);
	}
	FOR_SHARED_DOMAINS(id) {
		srcu__gp_fork_child_shared(srcu__domain_table[id]);
		srcu__async_fork_child(srcu__domain_table[id]);
	}
	srcu__reader_fork_child();
	srcu__shared_fork_child();
	srcu__reader_fork_end();   /* a handler's section may run now */
	pthread_mutex_unlock(&srcu__domain_registry_lock);
}

