/*
 * srcu-torture: prove the grace-period guarantee by trying hard to break
 * it, in the manner of the kernel's rcutorture.
 *
 * Writers publish objects with srcu_assign_pointer(), retire the previous
 * one (pipeline age 1) and, after each synchronize_srcu*(), age every
 * retired object by one; at age PIPE_LEN an object is poisoned and reused
 * (never freed, so a stale access reads poison instead of faulting).
 * Readers enter a section, dereference a writer's object and check it
 * while they stretch the section every way a user could (spin, yield,
 * sleep up to 10 ms, nest, overlap, hand a srcu_down_read() section to
 * another thread).  Inside a section an object's age can be at most 1, it
 * cannot be reused, and at most one grace period can complete: anything
 * else is a failure.  The pipeline is torture-pipeline.c's, the report
 * torture-report.c's; the modes (torture-threads.c, torture-procs.c) add
 * what is their own (see srcu-torture.h).
 *
 *   srcu-torture [--duration S] [--readers N] [--writers N] [--domains N]
 *                [--async-writers N] [--poll-writers N]
 *                [--expedited-ratio R] [--seed X] [--flavor F] [--json FILE]
 *                [--reader-delay PERMILLE] [--stop-on-fail] [--no-chaos]
 *                [--stall S] [--signal-storm] [--fork-storm] [--processes N]
 *                [--no-fork] [--liveness-margin S]
 *
 * Writers: --writers call synchronize_srcu*(); --async-writers (default 1)
 * retire through call_srcu(), whose callback poisons; --poll-writers
 * (default 1) keep cookies from start_poll/get_state_synchronize_srcu()
 * and poison once poll_state_synchronize_srcu() says so.
 *
 * Chaos (on unless --no-chaos, see torture-chaos.c) adds, with
 * --signal-storm, read-side sections in signal handlers every ~20 us on
 * the writers and on short-lived reader threads (their first section and
 * their exit under fire), and with --fork-storm a fork() every few ms
 * whose child must finish the callbacks it inherited exactly once.
 * --no-fork leaves chaos's forks out (qemu-user 7.2 asserts when the
 * child of a multithreaded fork creates a thread; tools/CMakeLists.txt
 * passes it on cross runs under emulation); --fork-storm is refused then.
 *
 * --processes N (torture-procs.c) runs a process-shared domain instead:
 * N reader processes of --readers threads (default 2) each, objects in a
 * shared mapping, and, unless --no-chaos, a reader process SIGKILLed every
 * 100-500 ms; --stall (default 5 there) bounds the wait for grace periods
 * after each kill.  --signal-storm and --fork-storm do not apply there.
 *
 * Liveness (torture-live.c, threads mode): every grace-period wait must
 * end within 3 x the longest section open meanwhile + --liveness-margin
 * (default 3 s); a watchdog reports those in flight too.  Chaos's
 * call_srcu() chains (torture-chain.c) add each callback's wait, polled
 * cookies and srcu_barrier() calls to what it judges.
 *
 * Flavours: srcu (the library as built), busted-nosync, busted-onescan,
 * busted-nofence, busted-cbnowait, busted-earlypoll, busted-earlyfence,
 * busted-latejoin (deliberately broken grace periods, fences, callbacks
 * and cookies: the test of the test), busted-handovernowake and
 * busted-paceunbounded (grace periods that never end: caught by the
 * liveness oracle; the second with the membarrier backend only), with
 * --processes busted-discardlive (live processes taken for dead), and
 * busted-freeatcall, a bug of the tool's own: torture-chain.c frees an
 * object when it calls call_srcu() instead of in its last callback.  Exit
 * status 0 only without failure; the last line is PASS or FAIL: <reason>.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "srcu-torture.h"
#include "../src/torture.h"   /* the library's test-only hooks */

/* ---- options ---- */

static const struct { const char *name; int flavor, tool; } flavors[] = {
	{ "srcu", SRCU_TORTURE_CORRECT, TOOL_CORRECT },
	{ "busted-nosync", SRCU_TORTURE_NOSYNC, TOOL_CORRECT },
	{ "busted-onescan", SRCU_TORTURE_ONESCAN, TOOL_CORRECT },
	{ "busted-nofence", SRCU_TORTURE_NOFENCE, TOOL_CORRECT },
	{ "busted-cbnowait", SRCU_TORTURE_CBNOWAIT, TOOL_CORRECT },
	{ "busted-earlypoll", SRCU_TORTURE_EARLYPOLL, TOOL_CORRECT },
	{ "busted-earlyfence", SRCU_TORTURE_EARLYFENCE, TOOL_CORRECT },
	{ "busted-discardlive", SRCU_TORTURE_DISCARDLIVE, TOOL_CORRECT },   /* --processes only */
	{ "busted-latejoin", SRCU_TORTURE_LATEJOIN, TOOL_CORRECT },
	{ "busted-handovernowake", SRCU_TORTURE_HANDOVERNOWAKE, TOOL_CORRECT },
	{ "busted-paceunbounded", SRCU_TORTURE_PACEUNBOUNDED, TOOL_CORRECT },   /* membarrier backend */
	/* The tool's own bug (the library as built): its chain check fails. */
	{ "busted-freeatcall", SRCU_TORTURE_CORRECT, TOOL_FREEATCALL },
};

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: srcu-torture [--duration S] [--readers N] [--writers N] [--domains N]\n"
		"                    [--async-writers N] [--poll-writers N]\n"
		"                    [--expedited-ratio R] [--seed X] [--flavor F] [--json FILE]\n"
		"                    [--reader-delay PERMILLE] [--stop-on-fail] [--no-chaos] [--stall S]\n"
		"                    [--signal-storm] [--fork-storm] [--processes N] [--no-fork]\n"
		"                    [--cotenant]\n"
		"                    [--liveness-margin S]\n"
		"flavors: srcu busted-nosync busted-onescan busted-nofence busted-cbnowait\n"
		"         busted-earlypoll busted-earlyfence busted-latejoin\n"
		"         busted-handovernowake busted-paceunbounded\n"
		"         busted-discardlive (--processes)\n"
		"         busted-freeatcall (the tool's own bug; threads mode with chaos)\n");
	exit(status);
}

static void parse_flavor(const char *s)
{
	for (size_t i = 0; i < sizeof(flavors) / sizeof(flavors[0]); i++)
		if (!strcmp(s, flavors[i].name)) {
			cfg.flavor = flavors[i].flavor;
			cfg.tool_busted = flavors[i].tool;
			cfg.flavor_name = flavors[i].name;
			return;
		}
	fprintf(stderr, "srcu-torture: unknown flavor '%s'\n", s);
	usage(2);
}

static void parse_options(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "duration", required_argument, 0, 'd' },
		{ "readers", required_argument, 0, 'r' },
		{ "writers", required_argument, 0, 'w' },
		{ "domains", required_argument, 0, 'D' },
		{ "async-writers", required_argument, 0, 'A' },
		{ "poll-writers", required_argument, 0, 'P' },
		{ "expedited-ratio", required_argument, 0, 'e' },
		{ "seed", required_argument, 0, 's' },
		{ "flavor", required_argument, 0, 'f' },
		{ "json", required_argument, 0, 'j' },
		{ "reader-delay", required_argument, 0, 'R' },
		{ "stop-on-fail", no_argument, 0, 'S' },
		{ "no-chaos", no_argument, 0, 'C' },
		{ "stall", required_argument, 0, 'T' },
		{ "signal-storm", no_argument, 0, 'G' },
		{ "fork-storm", no_argument, 0, 'F' },
		{ "processes", required_argument, 0, 'p' },
		{ "no-fork", no_argument, 0, 'N' },
		{ "cotenant", no_argument, 0, 'c' },
		{ "liveness-margin", required_argument, 0, 'L' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 },
	};
	bool stall_set = false;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'd': cfg.duration_s = atof(optarg); break;
		case 'r': cfg.readers = atoi(optarg); break;
		case 'w': cfg.writers = atoi(optarg); break;
		case 'D': cfg.domains = atoi(optarg); break;
		case 'A': cfg.async_writers = atoi(optarg); break;
		case 'P': cfg.poll_writers = atoi(optarg); break;
		case 'e': cfg.expedited_ratio = atof(optarg); break;
		case 's': cfg.seed = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'f': parse_flavor(optarg); break;
		case 'j': cfg.json = optarg; break;
		case 'R': cfg.reader_delay_permille = atoi(optarg); break;
		case 'S': cfg.stop_on_fail = true; break;
		case 'C': cfg.chaos = false; break;
		case 'G': cfg.signal_storm = true; break;
		case 'F': cfg.fork_storm = true; break;
		case 'T': cfg.stall_s = atof(optarg); stall_set = true; break;
		case 'p': cfg.processes = atoi(optarg); break;
		case 'N': cfg.no_fork = true; break;
		case 'c': cfg.cotenant = true; break;
		case 'L': cfg.liveness_margin_s = atof(optarg); break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (cfg.processes < 0 || cfg.processes > P_MAX_PROCS ||
	    (cfg.processes && (cfg.readers > P_MAX_THREADS ||
			       cfg.writers + cfg.async_writers + cfg.poll_writers > P_MAX_WRITERS))) {
		fprintf(stderr, "srcu-torture: --processes takes 1..%d processes of up to %d "
			"readers, and up to %d writers in all\n", P_MAX_PROCS, P_MAX_THREADS,
			P_MAX_WRITERS);
		usage(2);
	}
	if (cfg.cotenant && !cfg.processes) {
		fprintf(stderr, "srcu-torture: --cotenant needs --processes\n");
		usage(2);
	}
	if (cfg.flavor == SRCU_TORTURE_DISCARDLIVE && !cfg.processes) {
		fprintf(stderr, "srcu-torture: busted-discardlive breaks shared domains only: "
			"it needs --processes\n");
		usage(2);
	}
	if (cfg.tool_busted && (cfg.processes || !cfg.chaos)) {
		fprintf(stderr, "srcu-torture: busted-freeatcall breaks chaos's call_srcu() "
			"chains: it needs the threads mode with chaos\n");
		usage(2);
	}
	if (cfg.no_fork && (cfg.fork_storm || cfg.processes)) {
		fprintf(stderr, "srcu-torture: --no-fork leaves out --fork-storm and --processes\n");
		usage(2);
	}
	if (cfg.processes) {
		/* Threads per reader process; and a kill's grace periods are
		 * due within a second (doc/shared.md): 5 s is a hang. */
		if (!cfg.readers)
			cfg.readers = 2;
		if (!stall_set)
			cfg.stall_s = 5;
	}
	if (!cfg.readers) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		cfg.readers = n > 1 ? (int)(2 * n) : 2;
	}
	if (cfg.writers < 1 || cfg.domains < 1 || cfg.readers < 1 || cfg.duration_s <= 0 ||
	    cfg.async_writers < 0 || cfg.poll_writers < 0 ||
	    cfg.expedited_ratio < 0 || cfg.expedited_ratio > 1 || cfg.liveness_margin_s <= 0 ||
	    cfg.reader_delay_permille < 0 || cfg.reader_delay_permille > 1000)
		usage(2);
	if (cfg.domains > cfg.writers)
		cfg.domains = cfg.writers;   /* a domain without a writer tests nothing */
	if (!cfg.seed)
		cfg.seed = 1;
}

int main(int argc, char **argv)
{
	parse_options(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	return cfg.processes ? procs_main() : threads_main();
}
