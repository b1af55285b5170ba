/*
 * torture-config.h: srcu-torture's configuration, the options of the run
 * (torture-config.c holds it, with its defaults; srcu-torture.c's main
 * fills it from the command line before anything runs).  The lowest
 * unit of the tool: every part reads cfg, and cfg calls nothing.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TORTURE_CONFIG_H
#define SRCU_TORTURE_CONFIG_H

#include <stdbool.h>

struct torture_config {
	double duration_s;
	int readers, writers, domains;
	int async_writers, poll_writers;   /* beside the synchronize writers */
	double expedited_ratio;
	unsigned int seed;
	int flavor;
	const char *flavor_name;
	const char *json;
	int reader_delay_permille;   /* chance that a lock is delayed in the window */
	bool stop_on_fail;
	bool chaos;                  /* churn, fork, signals, exit-inside */
	bool signal_storm;           /* chaos: sections in signal handlers */
	bool fork_storm;             /* chaos: fork() every few ms */
	bool no_fork;                /* chaos: no fork() at all (qemu-user) */
	double stall_s;              /* a writer without progress this long: FAIL */
	int processes;               /* reader processes (torture-procs.c); 0: threads */
	double liveness_margin_s;    /* the oracle's margin (torture-live.c) */
	bool cotenant;               /* --processes: a co-tenant rewrites the file */
	int tool_busted;             /* a bug of the tool's own (enum tool_busted) */
};

/* Flavours that break the tool, not the library: the test of its checks. */
enum tool_busted {
	TOOL_CORRECT = 0,
	TOOL_FREEATCALL,         /* torture-chain.c frees at call_srcu(), not in the callback */
};

extern struct torture_config cfg;

#endif /* SRCU_TORTURE_CONFIG_H */
