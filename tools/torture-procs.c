/*
 * torture-procs.c: srcu-torture --processes N, the grace-period guarantee
 * of a process-shared domain (doc/shared.md) with readers in several
 * processes, which are SIGKILLed at random, inside their sections or not.
 *
 * Three kinds of process take part:
 *
 *   the supervisor   the process srcu-torture started in.  It attaches to
 *                    nothing: it maps the arena, forks the torture
 *                    process, prints progress from the arena, and the
 *                    report.  So a torture process that dies (a libsrcu
 *                    fatal error aborts it, and a busted flavour makes
 *                    one) or hangs is a failure that still gets its
 *                    report and its FAIL line.
 *   the torture      creates the shared domains (one memfd each), runs
 *   process          the writers (--writers synchronize, --async-writers
 *                    call_srcu, --poll-writers polled cookies, spread over
 *                    --domains, at most 4), the chaos thread and a
 *                    monitor, and forks the reader processes.
 *   reader           children of the torture process, attached by
 *   processes        inheritance; --readers threads each, in sections of
 *                    random length (nothing, microseconds, and 10-30 ms,
 *                    long enough for a waiting grace period to look for
 *                    dead owners).  Thread 0 now and then runs a grace
 *                    period itself, so that kills also land in grace
 *                    periods and on the GP lock.
 *
 * The arena is one more memfd, mapped MAP_SHARED by every process
 * (torture-procs-arena.c).  The pipeline (writers, the reader's section
 * and checks, the report) is torture-pipeline.c's; this mode publishes
 * objects by index, finds them in the arena and adds the processes'
 * statistics to the report.  A reader that finds its object poisoned, at
 * age 2 or more, or reused (its generation changed) inside its section,
 * or that saw two grace periods end inside one section, has caught a
 * grace period that did not wait for it.
 *
 * The chaos thread (off with --no-chaos; torture-procs-chaos.c) SIGKILLs
 * a random reader process every 100-500 ms and fails the run unless every
 * domain completes two grace periods within --stall seconds (default 5).
 * Recoveries are counted from the stall handler's reports
 * (torture-procs-recovery.c); one reported for a process that was never
 * killed is a failure: libsrcu took a live process for dead.
 *
 * The parts, and what each holds: torture-procs.h.  This file is the
 * supervisor: it watches the torture process and reports.
 *
 * Flavours: srcu, and busted-discardlive (every other process is taken
 * for dead, so a waiting grace period ends live readers' sections): the
 * reports name live processes and readers find their objects aged.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "torture-procs.h"

/* ---- the supervisor: progress, the end, the report ---- */

static void procs_sum(struct totals *t)
{
	for (int i = 0; i < cfg.processes; i++) {
		t->reader_gps += __atomic_load_n(&A->procs[i].gps, __ATOMIC_RELAXED);
		sum_readers(t, A->procs[i].t, cfg.readers);
	}
	for (unsigned int i = 0; i < A->nkilled; i++)
		t->killed_recovered += A->killed[i].recovered != 0;
}

static void procs_progress_more(char *buf, size_t n)
{
	snprintf(buf, n, "  kills %lu  recoveries %lu", A->kills, A->recoveries);
}

static void procs_report_rates(void)
{
	printf("grace periods completed per domain:");
	for (int d = 0; d < ndoms; d++)
		printf(" %lu", A->batches[d]);
	printf(" (shared by the writers' synchronize calls and the readers')\n");
}

static void procs_report_more(const struct totals *t)
{
	printf("processes: %lu forked, %lu killed (%lu inside a section, %lu in a grace period, "
	       "%lu just after their fork, %lu left zombies for a while)\n", A->forks, A->kills,
	       A->kills_inside, A->kills_in_gp, A->kills_young, A->zombies);
	printf("recoveries: %lu reported (for %lu of the killed processes, %lu sections ended; "
	       "%lu more of processes that exited as they were found); two grace periods of "
	       "every domain within %.1f ms of a kill\n", A->recoveries, t->killed_recovered,
	       A->recovered_sections, A->recoveries_exited, A->max_kill_gp_ns / 1e6);
	printf("poisoned reads %lu, aged reads %lu, reused reads %lu\n", t->poisoned, t->aged,
	       t->recycled);
	if (A->stalls)
		printf("stall reports: %lu\n", A->stalls);
	shared_report();
}

static void procs_json_more(FILE *f, const struct totals *t)
{
	fprintf(f, "  \"processes_stats\": {\"forks\": %lu, \"kills\": %lu, \"kills_inside\": %lu, "
		"\"kills_in_gp\": %lu, \"kills_young\": %lu, \"zombies\": %lu, \"recoveries\": %lu, "
		"\"killed_recovered\": %lu, \"recovered_sections\": %lu, \"recoveries_exited\": %lu, "
		"\"reader_gps\": %lu, \"long_sleeps\": %lu, \"max_kill_to_gps_ms\": %.1f, "
		"\"stalls\": %lu},\n", A->forks, A->kills, A->kills_inside, A->kills_in_gp,
		A->kills_young, A->zombies, A->recoveries, t->killed_recovered, A->recovered_sections,
		A->recoveries_exited, t->reader_gps, t->long_sleeps, A->max_kill_gp_ns / 1e6, A->stalls);
	fprintf(f, "  \"poisoned_reads\": %lu, \"aged_reads\": %lu, \"recycled_reads\": %lu,\n",
		t->poisoned, t->aged, t->recycled);
	shared_json(f);
}

/* A line for each concern, as thread_ops (torture-threads.c). */
static const struct torture_ops procs_ops = {
	.publish = idx_publish, .enter = idx_enter, .objects_shared = true,
	.stretch = { 40, 50, 55, 80, 90 }, .max_depth = 2, .long_sleep = idx_long_sleep,
	.announce = procs_announce,
	.writer_hangs = procs_writer_hangs, .chaos_hangs = procs_chaos_hangs,
	.chaos_stall_factor = 2, .chaos_stall_extra_s = 5, .tick = procs_tick,
	.sum = procs_sum, .progress_more = procs_progress_more, .report_rates = procs_report_rates,
	.report_more = procs_report_more, .json_more = procs_json_more,
};

/* Wait for the torture process, printing progress; then for the reader
 * processes it left (ours as the subreaper), killing what remains. */
static void supervise(pid_t tpid, pid_t spid)
{
	int64_t deadline = run->start_ns + (int64_t)((cfg.duration_s + 2 * cfg.stall_s + 30) * 1e9);
	int64_t next = run->start_ns, stopped_at = 0, waited;
	bool hung = false;
	int status = 0;
	pid_t r;

	while ((r = waitpid(tpid, &status, WNOHANG)) == 0) {
		int64_t now = now_ns();

		if (now >= next) {
			progress_line();
			next += 3000 * MS;
		}
		/* After a failure with --stop-on-fail, the torture process has
		 * a while to finish what it is doing. */
		if (!stopped_at && stopping())
			stopped_at = now;
		if (now > deadline ||
		    (stopped_at && now - stopped_at > (int64_t)((2 * cfg.stall_s + 15) * 1e9))) {
			torture_fail("the torture process did not finish: it hangs (killed after %.0f s)",
			      elapsed_s());
			kill(tpid, SIGKILL);
			waitpid(tpid, &status, 0);
			r = tpid;
			hung = true;
			break;
		}
		sleep_ns(20 * MS);
	}
	if (r == tpid && WIFSIGNALED(status) && !hung)
		torture_fail("the torture process died of signal %d (%s)%s", WTERMSIG(status),
		      strsignal(WTERMSIG(status)),
		      WTERMSIG(status) == SIGABRT ? ": a libsrcu fatal error, above" : "");
	else if (r == tpid && WIFEXITED(status) && WEXITSTATUS(status) != 0 && !run->failures)
		torture_fail("the torture process exited with status %d", WEXITSTATUS(status));
	torture_stop();
	shared_finish(spid);
	/* Orphaned readers see their parent gone within 10 ms, finish the
	 * sections in flight (30 ms at most) and exit. */
	for (waited = 0; waited < 3000; waited += 10) {
		while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (r < 0)   /* ECHILD: none left */
			return;
		sleep_ns(10 * MS);
	}
	for (int i = 0; i < cfg.processes; i++)
		if (A->procs[i].state == PROC_LIVE)
			kill(A->procs[i].pid, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

int procs_main(void)
{
	pid_t tpid, spid;

	if (cfg.cotenant) {
		if (arena_init() != 0)
			return 2;
		return cotenant_main();
	}
	ops = &procs_ops;
	ndoms = cfg.domains < P_MAX_DOMAINS ? cfg.domains : P_MAX_DOMAINS;
	cfg.domains = ndoms;
	if (arena_init() != 0 || shared_setup() != 0)
		return 2;
	run->start_ns = now_ns();
	snprintf(run->backend, sizeof(run->backend), "%s", srcu_backend());
	snprintf(run->shape, sizeof(run->shape), "%d processes x %d readers, %d writers, "
		 "%d shared domains", cfg.processes, cfg.readers, cfg.writers, ndoms);
	printf("srcu-torture: flavor %s, backend %s, %.0f s, %d processes x %d readers, "
	       "%d writers (+%d async, +%d poll), %d shared domains, expedited %.2f, seed %u, "
	       "reader delay %d/1000, kills %s\n", cfg.flavor_name, run->backend, cfg.duration_s,
	       cfg.processes, cfg.readers, cfg.writers, cfg.async_writers, cfg.poll_writers,
	       ndoms, cfg.expedited_ratio, cfg.seed, cfg.reader_delay_permille,
	       cfg.chaos ? "on" : "off");
	/* Reader processes orphaned by a torture process that died come to
	 * us, to be reaped. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	fflush(NULL);
	tpid = fork();
	if (tpid < 0) {
		fprintf(stderr, "srcu-torture: fork: %s\n", strerror(errno));
		return 2;
	}
	if (tpid == 0)
		torture_process();
	/* Issue 34's scenarios, on files of their own, beside the run. */
	spid = shared_start();
	supervise(tpid, spid);
	return torture_report();
}
