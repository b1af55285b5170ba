/*
 * torture-procs-writers.c: srcu-torture --processes' torture process, the
 * one that runs the writers.  It creates the shared domains (one memfd
 * each), runs the writers (--writers synchronize, --async-writers
 * call_srcu, --poll-writers polled cookies, spread over --domains, at
 * most 4), the chaos thread and a monitor, and forks the reader
 * processes; at the end, it stops the kills, then the readers and the
 * writers, and detaches cleanly.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "torture-procs.h"

/* Every reader process still alive ends (asked through the arena), with
 * status 0. */
static void reap_readers(void)
{
	int64_t deadline = now_ns() + (int64_t)((cfg.stall_s + 5) * 1e9);

	for (int i = 0; i < cfg.processes; i++) {
		int pid = A->procs[i].pid, status = 0;
		pid_t r;

		if (A->procs[i].state != PROC_LIVE)
			continue;
		while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ns() < deadline)
			sleep_ns(MS);
		if (r != pid) {
			torture_fail("reader process %d did not finish when asked to", pid);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			torture_fail("reader process %d ended with status %#x", pid, status);
		}
		__atomic_store_n(&A->procs[i].state, PROC_EXITED, __ATOMIC_RELEASE);
	}
}

/* Writers that cannot be joined hang in a grace period: the run ends
 * here (the supervisor reports). */
static void hang_exit(void)
{
	torture_stop();
	for (int i = 0; i < cfg.processes; i++)
		if (A->procs[i].state == PROC_LIVE)
			kill(A->procs[i].pid, SIGKILL);
	_exit(1);
}

/* Join t by the absolute (CLOCK_REALTIME) deadline; past it, t hangs. */
static void join_or_hang(pthread_t t, const char *who, const struct timespec *deadline)
{
	if (pthread_timedjoin_np(t, NULL, deadline) != 0) {
		torture_fail("%s did not finish: it hangs", who);
		hang_exit();
	}
}

/* One deadline for all the joins of the end of the run: --stall from now. */
static struct timespec join_deadline(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)cfg.stall_s + 1;
	return ts;
}

static void *finish_domains(void *arg)
{
	(void)arg;
	for (int d = 0; d < ndoms; d++) {
		synchronize_srcu(doms[d]);
		A->batches[d] = srcu_batches_completed(doms[d]);
		detach_idle(doms[d]);
	}
	return NULL;
}

/* ---- the monitor's hooks (the torture process) ---- */

/* Each domain's grace periods, for the report. */
void procs_tick(void)
{
	for (int d = 0; d < ndoms; d++)
		__atomic_store_n(&A->batches[d], srcu_batches_completed(doms[d]), __ATOMIC_RELAXED);
}

void procs_writer_hangs(int i, double secs)
{
	torture_fail("writer %d made no progress for %.1f s (%lu kills so far): a grace period "
		     "hangs", i, secs, A->kills);
	hang_exit();
}

/* A kill's wait for grace periods fails the run itself after --stall;
 * much longer (the ops' limit) is a fork or waitid that hangs. */
void procs_chaos_hangs(double secs)
{
	torture_fail("the chaos thread made no progress for %.1f s", secs);
	hang_exit();
}

/* The shared domains, one memfd each, named tshm-<d>. */
static void shared_domains_init(void)
{
	unsigned int slots = (unsigned int)(cfg.processes * (cfg.readers + 1) * 4 + 16);
	char name[16];
	int err;

	for (int d = 0; d < ndoms; d++) {
		int fd = memfd_create("srcu-torture-domain", MFD_CLOEXEC);

		snprintf(name, sizeof(name), "tshm-%d", d);
		err = fd < 0 ? -errno : init_srcu_struct_shared(fd, slots, name, &doms[d]);
		if (err) {
			torture_fail("init_srcu_struct_shared(%u slots) returned %d (%s)", slots, err,
				     strerror(-err));
			exit(2);
		}
		close(fd);   /* the library keeps its own */
	}
}

__attribute__((noreturn)) void torture_process(void)
{
	unsigned int seed = cfg.seed * 2654435761u + 17;
	struct timespec deadline;
	pthread_t chaos_t;
	char who[48];

	srcu__torture_flavor = cfg.flavor;
	srcu__torture_point = at_point;   /* inherited by the reader processes */
	run->torture_pid = (int)getpid();
	snprintf(run->backend, sizeof(run->backend), "%s", srcu_backend());
	srcu_set_stall_handler(on_report, NULL);
	shared_domains_init();
	writers_init(doms, ndoms);
	for (int i = 0; i < nwriters; i++)
		pthread_create(&writers[i].thread, NULL, torture_writer, &writers[i]);
	for (int i = 0; i < cfg.processes; i++)
		fork_reader(i, &seed);
	run->chaos_progress_ns = now_ns();
	if (cfg.chaos)
		pthread_create(&chaos_t, NULL, procs_chaos_thread, (void *)(uintptr_t)(cfg.seed + 5));
	torture_monitor();
	/* Kills end first, while the writers still run the grace periods
	 * that a kill waits for; then readers and writers end. */
	if (cfg.chaos) {
		__atomic_store_n(&procs_chaos_done, 1, __ATOMIC_RELEASE);
		deadline = join_deadline();
		join_or_hang(chaos_t, "the chaos thread", &deadline);
	}
	torture_stop();
	reap_readers();
	deadline = join_deadline();
	for (int i = 0; i < nwriters; i++) {
		snprintf(who, sizeof(who), "writer %d", i);
		join_or_hang(writers[i].thread, who, &deadline);
	}
	/* Everyone else has gone: one more grace period on each domain, and
	 * a clean detach.  Not after a failure: a broken flavour leaves
	 * counts that no grace period gets past. */
	if (!__atomic_load_n(&run->failures, __ATOMIC_SEQ_CST)) {
		pthread_t t;

		deadline = join_deadline();
		pthread_create(&t, NULL, finish_domains, NULL);
		join_or_hang(t, "the last grace period", &deadline);
	}
	exit(0);
}
