/*
 * srcu-torture.h: what the parts of srcu-torture share.
 *
 * Lowest first: each file calls only the files above it in this list
 * (tests/layers_check.sh checks it, ctest layers_check.torture).
 *
 *   torture-config.c    the configuration (torture-config.h), its defaults
 *   torture-run.c       the run's state, its clock, its stop and failures
 *   torture-tso.c       a store buffer for lock counts, drained by membarrier
 *   torture-live.c      the liveness oracle (every grace period ends within
 *                       a bound), its watchdog, and the workload it judges
 *   torture-pipeline.c  the one pipeline: objects, writers, the reader's
 *                       section and checks
 *   torture-report.c    totals, progress lines, the report, the JSON and
 *                       the monitor
 *   torture-chain.c     chaos's call_srcu() chains across domains at a small
 *                       backlog limit, polled calls, srcu_barrier() and
 *                       cleanup with re-init racing them (issue 35)
 *   torture-chaos.c     everything that runs beside the threads mode's
 *                       readers and writers: domain and thread churn, fork,
 *                       signals to blocked updaters, a reader that exits
 *                       inside its section, id exhaustion
 *   torture-threads.c   the default mode: objects published by pointer,
 *                       readers in threads (nested, overlapping, handed off)
 *   torture-shared.c    issue 34's scenarios beside --processes, and
 *                       --cotenant
 *   torture-procs*.c    --processes: objects published by index in a
 *                       shared mapping, readers in processes that are
 *                       SIGKILLed at random, and their supervision (its
 *                       parts: torture-procs.h)
 *   srcu-torture.c      options, and the choice of mode
 *
 * The pipeline is the kernel rcutorture's, by concept: one implementation
 * of the writers, the reader's checks and the report, and a table of
 * operations (struct torture_ops) for what a mode does its own way.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TORTURE_TOOL_H
#define SRCU_TORTURE_TOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "srcu.h"
#include "torture-config.h"

#define PIPE_LEN   10               /* an object is poisoned and reused at this age */
#define PER_WRITER (PIPE_LEN + 2)   /* a writer's objects: current + retired + one spare */
#define HIST       (PIPE_LEN + 1)   /* histogram buckets; the last holds the rest */
#define OBJ_NIL    (~0u)            /* the end of an object list */
#define MAGIC_LIVE   0x5AFE0B1Eu
#define MAGIC_POISON 0xDEADBEEFu
#define MS         ((int64_t)1000 * 1000)

/* A published object, objs[i].  age: 0 while current, 1 once replaced, +1
 * after each grace period that its writer waits for after that.  Writers'
 * lists link objects by index: so they do in a shared mapping, where a
 * pointer would mean nothing to another process. */
struct tobj {
	unsigned int magic, age;
	unsigned int gen;        /* bumped at each publication: a reuse shows */
	unsigned int next;       /* its writer's free or retired list */
	unsigned long cookie;    /* poll writers: the GP that frees it */
};

/* How a writer waits for the grace period that frees an object. */
enum writer_kind { WRITER_SYNC, WRITER_ASYNC, WRITER_POLL };

/* What a writer shows the monitor and the report (in the shared mapping
 * with --processes, where the supervisor reads it). */
struct wstats {
	unsigned int head;       /* index flavour: the published object */
	int kind;
	unsigned long gps;       /* sync: GPs; async: callbacks run; poll: cookies done */
	int64_t last_progress_ns, max_gp_ns;
};

struct writer {
	int index;
	enum writer_kind kind;
	struct srcu_struct *dom;
	struct tobj *head;       /* pointer flavour: the published object */
	unsigned int cur;        /* the published object (only this writer stores it) */
	unsigned int free, retired;
	unsigned int recycled;   /* async: back from callbacks (atomic stack) */
	struct wstats *st;
	pthread_t thread;
};

/* One reader thread's statistics, written by that thread only. */
struct reader_stats {
	unsigned long reads, poisoned, aged, recycled, long_sleeps;
	unsigned long pipe[HIST], batch[HIST];
	int64_t max_section_ns;
	int inside;              /* in a section now: for the kill statistics */
};

/* What every process of the run sees (with --processes, in the shared
 * mapping: any process may fail the run, the supervisor reports). */
struct torture_run {
	int stop;                /* everyone: finish up */
	int torture_pid;         /* the process that runs the writers */
	int64_t start_ns;
	char backend[16];
	char shape[96];          /* readers, writers and domains, for the report */
	unsigned long failures, messages;
	double first_failure_s;
	char first_failure[256];
	int64_t chaos_progress_ns;  /* the chaos thread's heartbeat */
};

/* Sums over the run, for the progress lines and the report. */
struct totals {
	unsigned long reads, gps, callbacks, cookies, pipe[HIST], batch[HIST];
	unsigned long poisoned, aged, recycled, long_sleeps;
	unsigned long reader_gps, killed_recovered;   /* --processes */
	int64_t max_section_ns, max_gp_ns;
};

/* What a mode does its own way; the pipeline does the rest. */
struct torture_ops {
	/* Objects, published by pointer or by index. */
	void (*publish)(struct writer *w, unsigned int i);
	/* Enter a section of w's domain (*idx), note its batches (*b0) and
	 * find w's object: NULL (a failure) if it is not one. */
	struct tobj *(*enter)(struct writer *w, unsigned int *seed, int depth, int *idx,
			      unsigned long *b0);
	bool objects_shared;     /* only the writers' process may free them */
	/* How a section is stretched: cumulative percentages of nothing,
	 * spin, yield, sleep and long sleep; the rest nests, to max_depth. */
	unsigned char stretch[5];
	int max_depth;
	void (*long_sleep)(struct reader_stats *st, unsigned int *seed);
	/* Failures and hangs (the hooks end the run). */
	void (*announce)(unsigned long n, const char *msg);
	void (*writer_hangs)(int i, double secs);
	void (*chaos_hangs)(double secs);
	double chaos_stall_factor, chaos_stall_extra_s;   /* its limit: of --stall */
	void (*tick)(void);      /* each round of the monitor */
	bool monitor_progress;   /* the monitor prints the progress lines */
	/* The report: the mode's statistics and lines. */
	void (*sum)(struct totals *t);
	void (*progress_more)(char *buf, size_t n);
	void (*report_rates)(void);
	void (*report_more)(const struct totals *t);
	void (*json_more)(FILE *f, const struct totals *t);
};

extern const struct torture_ops *ops;
extern struct torture_run *run;
extern struct writer *writers;
extern int nwriters;             /* all kinds */
extern struct wstats *wstats;    /* wstats[i]: writer i's */
extern struct tobj *objs;
extern unsigned int nobjs;

/* Per-thread random numbers (xorshift32, never 0). */
static inline unsigned int rnd(unsigned int *s)
{
	unsigned int x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

/* Counters have one writer each; others read them as they run. */
static inline void bump(unsigned long *c)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
}

static inline void store_max(int64_t *m, int64_t v)
{
	int64_t cur = __atomic_load_n(m, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(m, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

/* torture-run.c: the state above, the clock, the stop and the failures. */
int64_t now_ns(void);
void sleep_ns(int64_t ns);
/* Short sleeps common, long ones still happen (doubling with chance 1/2). */
void sleep_log_uniform(unsigned int *seed, int64_t min_ns, int64_t max_ns);
double elapsed_s(void);
bool stopping(void);
void torture_stop(void);
/* Record a failure: counted, the first one's reason kept for the report. */
void torture_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The test-only delay between a reader's index load and its count. */
void torture_reader_delay(void);
/* Nonzero while this thread runs a signal handler of the tool's: no
 * reader delay there (torture_reader_delay()). */
extern __thread int torture_in_handler;

/* torture-pipeline.c */
/* Objects and writer statistics live where the mode puts them. */
void pipeline_setup(struct tobj *o, struct wstats *ws);
void writers_init(struct srcu_struct *const *doms, int ndoms);
void writers_free(void);
void *torture_writer(void *arg);
/* Reader checks and sections; st NULL: counted in the shared stray stats. */
void check_obj(struct reader_stats *st, const struct tobj *p, unsigned int gen0,
	       const char *when);
void record_section(struct reader_stats *st, const struct tobj *p, unsigned long batches,
		    int64_t start);
void torture_read_section(struct reader_stats *st, unsigned int *seed, int depth);
void stretch_section(struct reader_stats *st, unsigned int *seed, int depth);
void stray_sum(struct totals *t);
/* Add n readers' statistics (s[0..n-1]) to t. */
void sum_readers(struct totals *t, const struct reader_stats *s, int n);

/* torture-report.c */
void progress_line(void);
int torture_report(void);
void torture_monitor(void);

/* torture-threads.c: the run without --processes; the exit status. */
int threads_main(void);

/* torture-chaos.c */
struct chaos_stats {
	unsigned long domains_churned, threads_churned, forks, signals;
	unsigned long handler_sections;   /* signal storm: sections in handlers */
	unsigned long ids_exhausted_at;   /* domains initialised before -ENOMEM */
	bool exit_inside_reported;
};
extern struct chaos_stats chaos;
void chaos_exhaust_ids(void);             /* before the run's domains exist */
/* section: one complete, checked read-side section of the mode's on a
 * random writer's object (torture-threads.c), which the churned and the
 * stormed reader threads run. */
void chaos_start(void (*section)(unsigned int *seed));
void chaos_stop(void);
void chaos_note_writer(pthread_t t);      /* a thread to send signals to */

/* torture-tso.c: sections whose lock count is buffered for delay_ns
 * while the section's first load runs ahead, unless a membarrier drains
 * it (falls back to srcu_read_lock() where it cannot emulate). */
void tso_init(void);
int tso_read_lock(struct srcu_struct *sp, void **obj, void **head, int64_t delay_ns);

/* torture-live.c: the liveness oracle (threads mode).  Sections: a token
 * from live_open(start) (-1: untracked), to live_close() when the section
 * has ended.  Grace-period waits: a token from live_gp_begin(what, who)
 * (who: a writer's index, or -1), to live_gp_end() once it returned. */
struct live_stats {
	unsigned long waits, failures, untracked;
	unsigned long pairs, handovers_held, handovers_slept_on, paced_gps, expedite_current;
	int64_t longest_wait_ns;
	bool load;               /* the workload ran (with chaos) */
};
extern struct live_stats live;
int live_open(int64_t start);
void live_close(int token);
int live_gp_begin(const char *what, int who);
void live_gp_end(int token);
/* The watchdog (hang: what ends a run whose wait is past its bound once
 * it stops) and, with load, the workload; then, after torture_stop(),
 * the workload's end, and, once every thread is joined, the watchdog's. */
void live_start(void (*hang)(void), bool load);
void live_stop_load(void);
void live_stop(void);

/* torture-chain.c (threads mode, with chaos): chain_setup() before any
 * thread (it installs a torture point), chain_start() with chaos, and
 * chain_stop() after torture_stop(), while the watchdog still runs. */
struct chain_stats {
	unsigned long calls, hops, handoffs, chains_done, callbacks, cookies, barriers, reads;
	unsigned long bad_reads, backlog_blocked, backlog_overruns;
	unsigned long cleanups_ok, cleanups_busy, cleanup_skipped, held_calls, drain_rounds;
};
extern struct chain_stats chain;
void chain_setup(void);
void chain_start(void);
void chain_stop(void);
void chain_report(void);
void chain_json(FILE *f);

/* torture-procs.c: the whole run with --processes (cfg.readers threads in
 * each of cfg.processes reader processes); the exit status. */
#define P_MAX_PROCS   64
#define P_MAX_THREADS 16
#define P_MAX_WRITERS 32
int procs_main(void);

/* torture-shared.c: issue 34's scenarios beside a --processes run (a
 * process of their own, forked by the supervisor: concurrent creators,
 * crash of every attached process, detach racing synchronize), and the
 * --cotenant run (the whole run, its exit status). */
int shared_setup(void);
pid_t shared_start(void);
void shared_finish(pid_t pid);
void shared_report(void);
void shared_json(FILE *f);
int cotenant_main(void);

#endif /* SRCU_TORTURE_TOOL_H */
