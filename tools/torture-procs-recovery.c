/*
 * torture-procs-recovery.c: srcu-torture --processes' stall handler.
 * Recoveries are counted from the stall handler's reports (dead_pid), in
 * whichever process runs the grace period; a recovery reported for a
 * process that was never killed (and has not exited) is a failure:
 * libsrcu took a live process for dead.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "torture-procs.h"


/* The owner word (pid and start time) of the dead process whose recovery
 * is reported next in this thread (libsrcu's test-only hook: the report
 * itself carries only the pid). */
static __thread uint64_t reported_owner;

void at_point(enum srcu__torture_point p, void *arg)
{
	if (p == SRCU_TORTURE_POINT_DEAD_REPORT)
		reported_owner = *(const uint64_t *)arg;
}

/* The start time of the dead process a report names, 0 if unknown. */
static unsigned int reported_start(int pid)
{
	uint64_t o = reported_owner;

	reported_owner = 0;
	return (int)((uint32_t)o & 0x7fffffffu) == pid ? (unsigned int)(o >> 32) : 0;
}

/* Does the process (pid, start) match the one remembered as (rpid,
 * rstart)?  An unknown start time matches by pid alone. */
static bool same_process(int pid, unsigned int start, int rpid, unsigned int rstart)
{
	return pid == rpid && (!start || !rstart || start == rstart);
}

static int domain_index(const char *name)
{
	const char *p = name ? strstr(name, "tshm-") : NULL;

	return p ? atoi(p + 5) : -1;
}

/* The killed process (pid, start): newest first, so that an unknown
 * start time finds the pid's latest holder. */
static struct pkill *find_killed(int pid, unsigned int start)
{
	unsigned int n = __atomic_load_n(&A->nkilled, __ATOMIC_ACQUIRE);

	for (unsigned int i = n; i-- > 0;)
		if (same_process(pid, start, __atomic_load_n(&A->killed[i].pid, __ATOMIC_RELAXED),
				 __atomic_load_n(&A->killed[i].start, __ATOMIC_RELAXED)))
			return &A->killed[i];
	return NULL;
}

/* What the arena says of (pid, start), if it is one of our reader
 * processes now. */
static int reader_state(int pid, unsigned int start)
{
	for (int i = 0; i < cfg.processes; i++)
		if (same_process(pid, start, __atomic_load_n(&A->procs[i].pid, __ATOMIC_ACQUIRE),
				 __atomic_load_n(&A->procs[i].start, __ATOMIC_ACQUIRE)))
			return __atomic_load_n(&A->procs[i].state, __ATOMIC_ACQUIRE);
	return PROC_NONE;
}

/* The chaos thread marks a process killed before it sends SIGKILL, so a
 * recovery for a pid not marked is one of a process we did not kill.
 * Only one that exited on its own (at the end, racing its own detach,
 * which frees its slots) may show up, with no section open. */
void on_report(const struct srcu_stall *s, void *arg)
{
	int d = domain_index(s->domain), st;
	unsigned int start = reported_start(s->dead_pid);
	struct pkill *k;

	(void)arg;
	if (!s->dead_pid) {
		bump(&A->stalls);
		say("srcu-torture: grace period of domain %s stalled for %.1f s on index %d "
		    "(%u threads, report %u)\n", s->domain, s->waited_s, s->idx, s->nthreads,
		    s->report);
		return;
	}
	k = find_killed(s->dead_pid, start);
	if (k) {
		unsigned int bit = d >= 0 && d < 32 ? 1u << d : 0;

		__atomic_fetch_add(&A->recoveries, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&A->recovered_sections, s->dead_sections, __ATOMIC_RELAXED);
		if (__atomic_fetch_or(&k->recovered, bit, __ATOMIC_RELAXED) & bit)
			torture_fail("the recovery of killed process %d in domain %s was reported twice",
			      s->dead_pid, s->domain);
		return;
	}
	st = reader_state(s->dead_pid, start);
	if (st == PROC_EXITED && !s->dead_sections) {
		__atomic_fetch_add(&A->recoveries_exited, 1, __ATOMIC_RELAXED);
		return;
	}
	if (st == PROC_LIVE || s->dead_pid == run->torture_pid)
		torture_fail("libsrcu took live process %d for dead: it ended %lu of its read-side "
		      "sections in domain %s", s->dead_pid, s->dead_sections, s->domain);
	else
		torture_fail("libsrcu reported process %d dead in domain %s with %lu open sections, "
		      "but srcu-torture never killed it", s->dead_pid, s->domain, s->dead_sections);
}
