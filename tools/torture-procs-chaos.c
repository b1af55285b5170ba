/*
 * torture-procs-chaos.c: srcu-torture --processes' chaos thread (off
 * with --no-chaos), in the torture process.  It SIGKILLs a random reader
 * process every 100-500 ms (now and then one just forked, in its first
 * sections), reaps it at once or leaves it a zombie for a while, forks a
 * replacement, and fails the run unless every domain completes two grace
 * periods within --stall seconds (default 5): the second began after the
 * kill, so it had to end the dead reader's sections.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "torture-procs.h"

int procs_chaos_done;             /* the torture process: stop killing */

/* Reader processes that died without being killed: a crash. */
static void reap_unexpected(unsigned int *seed)
{
	for (int i = 0; i < cfg.processes; i++) {
		int pid = A->procs[i].pid, status;

		if (A->procs[i].state != PROC_LIVE || waitpid(pid, &status, WNOHANG) != pid)
			continue;
		torture_fail("reader process %d ended by itself (status %#x)", pid, status);
		__atomic_store_n(&A->procs[i].state, PROC_EXITED, __ATOMIC_RELEASE);
		if (!stopping())
			fork_reader(i, seed);
	}
}

static int random_live_slot(unsigned int *seed)
{
	int start = (int)(rnd(seed) % (unsigned int)cfg.processes);

	for (int n = 0; n < cfg.processes; n++) {
		int i = (start + n) % cfg.processes;

		if (__atomic_load_n(&A->procs[i].state, __ATOMIC_ACQUIRE) == PROC_LIVE)
			return i;
	}
	return -1;
}

/* SIGKILL the reader process in slot, fork its replacement, and check
 * that every domain's grace periods go on: two must complete, the second
 * of which began after the kill and so had to end the dead sections.
 * keep_zombie: dead, not reaped (reaped after the next kill); !wait_gps:
 * the replacement is to be killed at once (the next kill checks). */
static bool kill_reader(int slot, bool keep_zombie, bool wait_gps, unsigned int *seed)
{
	struct pproc *p = &A->procs[slot];
	int pid = p->pid, inside = 0, in_gp = __atomic_load_n(&p->in_gp, __ATOMIC_RELAXED);
	unsigned long b0[P_MAX_DOMAINS];
	unsigned int n = A->nkilled;
	siginfo_t si;
	long t0;

	if (n >= P_KILLS_MAX)
		return false;   /* no room to remember it: no more kills */
	for (int k = 0; k < cfg.readers; k++)
		inside |= __atomic_load_n(&p->t[k].inside, __ATOMIC_RELAXED);
	/* Marked before the signal: a recovery can only follow the death. */
	A->killed[n].pid = pid;
	A->killed[n].start = __atomic_load_n(&p->start, __ATOMIC_RELAXED);
	__atomic_store_n(&A->nkilled, n + 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&p->state, PROC_KILLED, __ATOMIC_SEQ_CST);
	for (int d = 0; d < ndoms; d++)
		b0[d] = srcu_batches_completed(doms[d]);
	t0 = now_ns();
	kill(pid, SIGKILL);
	/* Wait for the death (WNOWAIT leaves a zombie), so that the
	 * replacement never shares the slot's statistics with it. */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si, WEXITED | (keep_zombie ? WNOWAIT : 0)) != 0)
		torture_fail("waitid() for killed reader process %d: %s", pid, strerror(errno));
	else if (si.si_code != CLD_KILLED || si.si_status != SIGKILL)
		torture_fail("reader process %d ended by itself (code %d, status %d) before its kill",
		      pid, si.si_code, si.si_status);
	bump(&A->kills);
	if (inside)
		bump(&A->kills_inside);
	if (in_gp)
		bump(&A->kills_in_gp);
	if (keep_zombie)
		bump(&A->zombies);
	fork_reader(slot, seed);
	for (int d = 0; wait_gps && d < ndoms; d++) {
		while (srcu_batches_completed(doms[d]) - b0[d] < 2) {
			if (stopping())   /* --stop-on-fail: writers end */
				return false;
			if (now_ns() - t0 > (int64_t)(cfg.stall_s * 1e9)) {
				torture_fail("domain tshm-%d completed no grace period in %.0f s after reader "
				      "process %d was killed%s", d, cfg.stall_s, pid,
				      inside ? " inside a section" : "");
				return false;
			}
			sleep_ns(MS / 2);
		}
	}
	store_max(&A->max_kill_gp_ns, now_ns() - t0);
	return true;
}

void *procs_chaos_thread(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;
	int zombie = 0;

	while (!__atomic_load_n(&procs_chaos_done, __ATOMIC_ACQUIRE) && !stopping()) {
		int64_t until = now_ns() + 100 * MS + (int64_t)(rnd(&seed) % 400) * MS;
		bool keep = rnd(&seed) % 2;
		int slot;

		__atomic_store_n(&run->chaos_progress_ns, now_ns(), __ATOMIC_RELAXED);
		while (now_ns() < until && !__atomic_load_n(&procs_chaos_done, __ATOMIC_ACQUIRE) &&
		       !stopping())
			sleep_ns(5 * MS);
		if (__atomic_load_n(&procs_chaos_done, __ATOMIC_ACQUIRE) || stopping())
			break;
		reap_unexpected(&seed);
		slot = random_live_slot(&seed);
		if (slot < 0)
			continue;
		if (rnd(&seed) % 8 == 0) {
			/* One just forked: killed in its first sections, its
			 * slot reservation or its first slot mapping. */
			kill_reader(slot, false, false, &seed);
			sleep_ns((int64_t)(rnd(&seed) % 3000) * 1000);
			bump(&A->kills_young);
		}
		if (!kill_reader(slot, keep, true, &seed))
			break;
		if (zombie)   /* the previous kill's zombie, reaped only now */
			waitpid(zombie, NULL, 0);
		zombie = keep ? A->killed[A->nkilled - 1].pid : 0;
	}
	if (zombie)
		waitpid(zombie, NULL, 0);
	return NULL;
}
