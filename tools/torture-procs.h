/*
 * torture-procs.h: what the parts of srcu-torture --processes share
 * (torture-procs.c describes the mode).  Lowest first, each calling only
 * those above it in this list:
 *
 *   torture-procs-arena.c     the arena (the mapping every process of the
 *                             run shares), the domains, and the failures
 *                             as every process prints them
 *   torture-procs-recovery.c  the stall handler: recoveries of killed
 *                             processes, checked against the kills
 *   torture-procs-readers.c   the index flavour, the reader processes and
 *                             their forks
 *   torture-procs-chaos.c     the kills: a reader process SIGKILLed, its
 *                             replacement forked, grace periods checked
 *   torture-procs-writers.c   the torture process: the domains, the
 *                             writers, the chaos thread, the monitor's
 *                             hooks and the end of the run
 *   torture-procs.c           the supervisor: the torture process watched,
 *                             progress, the report (procs_main())
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TORTURE_PROCS_H
#define SRCU_TORTURE_PROCS_H

#include "srcu-torture.h"
#include "../src/torture.h"   /* the library's test-only hooks */

#define P_MAX_DOMAINS 4
#define P_KILLS_MAX   16384            /* a kill every 100 ms for 27 minutes */
#define P_MSGS        8                /* failures printed; the rest are counted */

enum { PROC_NONE, PROC_LIVE, PROC_KILLED, PROC_EXITED };

struct pproc {
	int pid, state;
	unsigned int start;    /* with pid, the process (see proc_start()) */
	int in_gp;             /* its thread 0 runs a grace period now */
	unsigned long gps;     /* grace periods its thread 0 ran */
	/* Per reader thread: after a kill, its successor's in the
	 * replacement process. */
	struct reader_stats t[P_MAX_THREADS];
};

struct pkill {
	int pid;
	unsigned int start;      /* with pid, the process: pids wrap (pid_max) */
	unsigned int recovered;  /* a bit per domain whose recovery was reported */
};

struct arena {
	struct torture_run run;    /* stop, failures, start time ... */
	unsigned long forks, kills, kills_inside, kills_in_gp, kills_young, zombies;
	unsigned long recoveries, recovered_sections, recoveries_exited, stalls;
	int64_t max_kill_gp_ns;
	unsigned long batches[P_MAX_DOMAINS];   /* each domain's GPs, at the end */
	unsigned int nkilled;
	struct pkill killed[P_KILLS_MAX];
	struct wstats w[P_MAX_WRITERS];
	struct pproc procs[P_MAX_PROCS];
	struct tobj obj[];
};

/* torture-procs-arena.c */
extern struct arena *A;
extern int ndoms;
extern struct srcu_struct *doms[P_MAX_DOMAINS];
/* Write a whole message with one write(2). */
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void procs_announce(unsigned long n, const char *msg);   /* ops->announce */
int arena_init(void);

/* torture-procs-recovery.c: libsrcu's torture point (at_point: the owner
 * word of the dead process reported next) and stall handler (on_report),
 * both set in the torture process and inherited by the readers. */
void at_point(enum srcu__torture_point p, void *arg);
void on_report(const struct srcu_stall *s, void *arg);

/* torture-procs-readers.c: the index flavour (the ops' publish, enter
 * and long_sleep); a reader process forked into slot (its pid, or -1);
 * a domain detached once this process holds no section of it. */
void idx_publish(struct writer *w, unsigned int i);
struct tobj *idx_enter(struct writer *w, unsigned int *seed, int depth, int *idx,
		       unsigned long *b0);
void idx_long_sleep(struct reader_stats *st, unsigned int *seed);
int fork_reader(int slot, unsigned int *seed);
void detach_idle(struct srcu_struct *sp);

/* torture-procs-chaos.c: the kills' thread (arg: its seed), until
 * procs_chaos_done is set. */
extern int procs_chaos_done;
void *procs_chaos_thread(void *arg);

/* torture-procs-writers.c: the torture process (never returns), and the
 * monitor's hooks it runs. */
__attribute__((noreturn)) void torture_process(void);
void procs_tick(void);
void procs_writer_hangs(int i, double secs);
void procs_chaos_hangs(double secs);

#endif /* SRCU_TORTURE_PROCS_H */
