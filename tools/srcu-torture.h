/*
 * srcu-torture.h: what the parts of srcu-torture share.
 *
 *   srcu-torture.c   options, the object pipeline, readers, writers,
 *                    the monitor and the report
 *   torture-chaos.c  everything that runs beside them: domain and thread
 *                    churn, fork, signals to blocked updaters, a reader
 *                    that exits inside its section, id exhaustion
 *   torture-tso.c    a store buffer for lock counts, drained by membarrier
 *   torture-procs.c  --processes: a process-shared domain, readers in
 *                    processes that are SIGKILLed at random
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TORTURE_TOOL_H
#define SRCU_TORTURE_TOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "srcu.h"

#define PIPE_LEN 10   /* an object is poisoned and reused at this age */
#define MAGIC_LIVE   0x5AFE0B1Eu
#define MAGIC_POISON 0xDEADBEEFu

/* A published object.  age: 0 while current, 1 once replaced, +1 after
 * each grace period that its writer waits for after that. */
struct tobj {
	unsigned int magic;
	unsigned int age;
	struct tobj *next;   /* writer's retired or free list */
	struct srcu_head rh; /* async writers: retired through call_srcu() */
	struct writer *owner;
	unsigned long cookie;/* poll writers: the GP that frees it */
};

/* How a writer waits for the grace period that frees an object. */
enum writer_kind { WRITER_SYNC, WRITER_ASYNC, WRITER_POLL };

struct writer {
	int index;
	enum writer_kind kind;
	struct tobj *recycled;          /* async: back from callbacks (atomic stack) */
	struct srcu_struct *dom;
	struct tobj *head;              /* srcu_assign_pointer()/srcu_dereference() */
	struct tobj pool[PIPE_LEN + 2]; /* current + retired + one spare */
	struct tobj *free, *retired;
	unsigned long gps;              /* synchronize calls completed */
	long last_progress_ns;
	pthread_t thread;
};

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
	double stall_s;              /* a writer without progress this long: FAIL */
	int processes;               /* reader processes (torture-procs.c); 0: one process */
};

extern struct torture_config cfg;
extern struct writer *writers;
extern struct srcu_struct *domains;

/* Per-thread random numbers (xorshift32, never 0). */
static inline unsigned int rnd(unsigned int *s)
{
	unsigned int x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

long now_ns(void);
void sleep_ns(long ns);
bool stopping(void);
/* Record a failure: counted, the first one's reason kept for the report. */
void torture_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Failures so far, without the lock (a fork child may read it). */
unsigned long torture_failures(void);
/* One complete, checked read-side section on a random writer's object. */
void torture_read_once(unsigned int *seed);

/* torture-chaos.c */
struct chaos_stats {
	unsigned long domains_churned, threads_churned, forks, signals;
	unsigned long handler_sections;   /* signal storm: sections in handlers */
	unsigned long ids_exhausted_at;   /* domains initialised before -ENOMEM */
	bool exit_inside_reported;
	long last_progress_ns;            /* the chaos thread's heartbeat */
};
extern struct chaos_stats chaos;
void chaos_exhaust_ids(void);             /* before the run's domains exist */
void chaos_start(void);
void chaos_stop(void);
void chaos_note_writer(pthread_t t);      /* a thread to send signals to */

/* torture-tso.c: sections whose lock count is buffered for delay_ns
 * while the section's first load runs ahead, unless a membarrier drains
 * it (falls back to srcu_read_lock() where it cannot emulate). */
void tso_init(void);
int tso_read_lock(struct srcu_struct *sp, void **obj, void **head, long delay_ns);

/* torture-procs.c: the whole run with --processes (cfg.readers threads in
 * each of cfg.processes reader processes); the exit status. */
#define P_MAX_PROCS   64
#define P_MAX_THREADS 16
#define P_MAX_WRITERS 32
int procs_main(void);

/* srcu-torture.c's JSON pieces, shared by both modes. */
void torture_json_hist(FILE *f, const unsigned long *h);
void torture_json_close(FILE *f, const char *result);

#endif /* SRCU_TORTURE_TOOL_H */
