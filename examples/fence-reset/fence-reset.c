/*
 * fence-reset: the scenario of the i915 commit that made SRCU a reset
 * lock ("an uber-complex mutex, optimised for reads, with the overhead
 * pushed to the rare reset path"), runnable.
 *
 * A simulated device has 16 fence registers.  Client threads fault in
 * pages: enter the gate, pin a register, check that it holds its pattern
 * while sleeping a little inside, unpin, leave.  A hang-check thread
 * resets the device at random intervals: the reset clobbers every
 * register with garbage, then restores them.  A client that ever sees
 * garbage, or a reset that finds a register pinned, is a violation.
 *
 *   fence-reset [--lock srcu|rwlock|both] [--clients N] [--duration S]
 *               [--inside-us N]
 *
 * --inside-us: the longest sleep inside (default 50; 0 for CPU-only
 * sections, where the rwlock's shared reader count shows).
 *
 * With --lock rwlock the same program uses a writer-preferring
 * pthread_rwlock instead; both (the default) runs them side by side.
 * Exit status 1 if any violation was seen.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "srcu_gate.h"

#define NREGS   16
#define GARBAGE 0xBADBADBADul
#define MAX_RESETS 100000

struct fence_reg {
	unsigned long value;     /* the register: its pattern, or garbage mid-reset */
	int pins;
};

static struct fence_reg regs[NREGS];
static struct srcu_gate gate;
static pthread_rwlock_t rwlock;
static int use_rwlock, stop, inside_us = 50;
static unsigned long violations;
static long reset_ns[MAX_RESETS];
static int resets;

static unsigned long pattern(int r)
{
	return 0xFE4CE000ul + (unsigned long)r;
}

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void violation(const char *what, int r)
{
	if (__atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED) < 5)
		fprintf(stderr, "fence-reset: VIOLATION: %s (register %d)\n", what, r);
}

/* ---- the two locks, behind one interface ---- */

static int enter(void)
{
	if (use_rwlock)
		return pthread_rwlock_rdlock(&rwlock), 0;
	return srcu_gate_enter(&gate);
}

static void leave(int tag)
{
	if (use_rwlock)
		pthread_rwlock_unlock(&rwlock);
	else
		srcu_gate_exit(&gate, tag);
}

/* The reset: exclusive access to every register. */
static int clobber_and_restore(void *arg)
{
	int r;

	(void)arg;
	for (r = 0; r < NREGS; r++) {
		if (__atomic_load_n(&regs[r].pins, __ATOMIC_RELAXED))
			violation("reset found the register pinned", r);
		__atomic_store_n(&regs[r].value, GARBAGE, __ATOMIC_RELAXED);
	}
	sleep_us(100);                      /* the hardware takes its time */
	for (r = 0; r < NREGS; r++)
		__atomic_store_n(&regs[r].value, pattern(r), __ATOMIC_RELAXED);
	return 0;
}

static void reset_device(void)
{
	if (use_rwlock) {
		pthread_rwlock_wrlock(&rwlock);
		clobber_and_restore(NULL);
		pthread_rwlock_unlock(&rwlock);
	} else {
		srcu_gate_reset(&gate, clobber_and_restore, NULL);
	}
}

/* ---- threads ---- */

static void check_reg(int r)
{
	if (__atomic_load_n(&regs[r].value, __ATOMIC_RELAXED) != pattern(r))
		violation("client saw garbage in its pinned register", r);
}

static void *client(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	long ops = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int tag = enter(), r = rand_r(&seed) % NREGS;

		__atomic_fetch_add(&regs[r].pins, 1, __ATOMIC_RELAXED);
		check_reg(r);
		if (inside_us)
			sleep_us(1 + rand_r(&seed) % inside_us);   /* the page fault's I/O */
		check_reg(r);
		__atomic_fetch_sub(&regs[r].pins, 1, __ATOMIC_RELAXED);
		leave(tag);
		ops++;
	}
	return (void *)ops;
}

static void *hangcheck(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED) && resets < MAX_RESETS) {
		long t0;

		sleep_us(2000 + rand_r(&seed) % 8000);
		t0 = now_ns();
		reset_device();
		reset_ns[resets++] = now_ns() - t0;
	}
	return NULL;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static double run(int rwlock_mode, int clients, double seconds)
{
	pthread_rwlockattr_t attr;
	pthread_t t[64], hc;
	long ops = 0;
	int i;

	use_rwlock = rwlock_mode;
	stop = resets = 0;
	for (i = 0; i < NREGS; i++)
		regs[i].value = pattern(i);
	if (srcu_gate_init(&gate) != 0)
		exit(2);
	pthread_rwlockattr_init(&attr);   /* fair to the reset: writers first */
#ifdef __GLIBC__   /* a glibc extension; musl's rwlock has no kinds */
	pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
#endif
	pthread_rwlock_init(&rwlock, &attr);
	for (i = 0; i < clients; i++)
		pthread_create(&t[i], NULL, client, (void *)(uintptr_t)(i + 1));
	pthread_create(&hc, NULL, hangcheck, (void *)(uintptr_t)99);
	sleep_us((long)(seconds * 1e6));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < clients; i++) {
		void *n;

		pthread_join(t[i], &n);
		ops += (long)n;
	}
	pthread_join(hc, NULL);
	qsort(reset_ns, (size_t)resets, sizeof(long), cmp_long);
	printf("%-7s %2d clients %12.0f ops/s %6d resets   reset latency p50 %8.1f us  p99 %8.1f us\n",
	       rwlock_mode ? "rwlock" : "srcu", clients, ops / seconds, resets,
	       resets ? reset_ns[resets / 2] / 1e3 : 0.0,
	       resets ? reset_ns[resets * 99 / 100] / 1e3 : 0.0);
	pthread_rwlock_destroy(&rwlock);
	if (srcu_gate_destroy(&gate) != 0)
		exit(2);
	return ops / seconds;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lock", required_argument, 0, 'l' },
		{ "clients", required_argument, 0, 'c' },
		{ "duration", required_argument, 0, 'd' },
		{ "inside-us", required_argument, 0, 'i' },
		{ 0, 0, 0, 0 },
	};
	const char *lock = "both";
	double seconds = 3, srcu_ops = 0, rw_ops = 0;
	int clients = 8, c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l': lock = optarg; break;
		case 'c': clients = atoi(optarg); break;
		case 'd': seconds = atof(optarg); break;
		case 'i': inside_us = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: fence-reset [--lock srcu|rwlock|both] "
				"[--clients N] [--duration S] [--inside-us N]\n");
			return 2;
		}
	}
	if (clients < 1 || clients > 64 || seconds <= 0 || inside_us < 0)
		return 2;
	if (strcmp(lock, "rwlock"))
		srcu_ops = run(0, clients, seconds);
	if (strcmp(lock, "srcu"))
		rw_ops = run(1, clients, seconds);
	if (srcu_ops && rw_ops)
		printf("srcu_gate / pthread_rwlock throughput: %.2fx\n", srcu_ops / rw_ops);
	printf("violations: %lu\n", violations);
	return violations ? 1 : 0;
}
