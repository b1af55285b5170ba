/*
 * bench_machine.c: figure 9 of srcu-bench.  A grace period's cost is set
 * by two system calls: membarrier(PRIVATE_EXPEDITED), which interrupts
 * every CPU running a thread of the process (so its cost depends on what
 * else runs), and the futex wake-up that hands a finished grace period to
 * a sleeping caller.  This figure measures both, raw, in this process:
 * on a virtual machine an interrupt to a running vCPU can cost twenty
 * times the call itself, and that, not libsrcu's code, bounds figures 2
 * and 4 whenever two threads of the process run at once.  Also the
 * run's header line: the machine's CPU, kernel and libsrcu's backend.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench.h"
#include "bench_results.h"
#include "clock.h"
#include "srcu.h"

static int stop;

static int membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

static void *spin_in_user_space(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		;
	return NULL;
}

/* Mean cost of one membarrier over secs, with another thread spinning on
 * a CPU (busy) or not. */
static double membarrier_us(double secs, int busy)
{
	pthread_t t;
	long n = 0;
	double t0, el;

	stop = 0;
	if (busy)
		pthread_create(&t, NULL, spin_in_user_space, NULL);
	usleep(10000);
	t0 = clock_now_s();
	do {
		membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
		n++;
	} while ((el = clock_now_s() - t0) < secs);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	if (busy)
		pthread_join(t, NULL);
	return el / (double)n * 1e6;
}

static unsigned int ball;   /* futex word: odd: the partner's turn */

static void futex_wait(unsigned int *w, unsigned int v)
{
	syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(unsigned int *w)
{
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *partner(void *arg)
{
	unsigned int v;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		v = __atomic_load_n(&ball, __ATOMIC_ACQUIRE);
		if (!(v & 1)) {
			futex_wait(&ball, v);
			continue;
		}
		__atomic_store_n(&ball, v + 1, __ATOMIC_RELEASE);
		futex_wake(&ball);
	}
	return NULL;
}

/* Mean round trip of a futex wake-up and the answering one, between two
 * threads that sleep in between. */
static double futex_round_trip_us(double secs)
{
	pthread_t t;
	long n = 0;
	double t0, el;

	stop = 0;
	ball = 0;
	pthread_create(&t, NULL, partner, NULL);
	usleep(10000);
	t0 = clock_now_s();
	do {
		unsigned int v = __atomic_add_fetch(&ball, 1, __ATOMIC_ACQ_REL);   /* odd */

		futex_wake(&ball);
		while (__atomic_load_n(&ball, __ATOMIC_ACQUIRE) == v)
			futex_wait(&ball, v);
		n++;
	} while ((el = clock_now_s() - t0) < secs);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ball, 1, __ATOMIC_ACQ_REL);
	futex_wake(&ball);
	pthread_join(t, NULL);
	return el / (double)n * 1e6;
}

/* WINDOWS windows of secs / WINDOWS each, one mean a window (a membarrier
 * or a round trip costs what the machine charges at that moment, and
 * that moves): median [min-max]. */
#define WINDOWS 5

static struct stat3 windows(double (*mean_us)(double secs, int arg), double secs, int arg)
{
	double v[WINDOWS];

	for (int i = 0; i < WINDOWS; i++)
		v[i] = mean_us(secs / WINDOWS, arg);
	return summarize(v, WINDOWS);
}

static double futex_window_us(double secs, int unused)
{
	(void)unused;
	return futex_round_trip_us(secs);
}

/* "label  median [min-max]" and the record. */
static void machine_row(const char *label, const char *peer, const char *metric,
			struct stat3 s, const char *note)
{
	printf("%-40s %8.2f [%6.2f-%6.2f]%s\n", label, s.med, s.lo, s.hi, note);
	record_stat("machine", peer, metric, s, "us");
}

void figure_machine(const struct bench_run *run)
{
	double secs = run->quick ? 0.2 : 1.0;
	char note[64];

	printf("\n(9) the machine: what the update side's system calls cost here (us; median"
	       " [min-max] of %d windows)\n", WINDOWS);
	if (srcu_backend()[0] == 'm') {   /* "membarrier": registered by libsrcu */
		struct stat3 idle = windows(membarrier_us, secs, 0);
		struct stat3 busy = windows(membarrier_us, secs, 1);

		machine_row("membarrier, no other thread running", "membarrier", "idle_us", idle, "");
		snprintf(note, sizeof(note), "   (%.1fx: the interrupt)", busy.med / idle.med);
		machine_row("membarrier, one other thread running", "membarrier", "one_running_us",
			    busy, note);
	}
	machine_row("futex wake-up and answer, round trip", "futex", "round_trip_us",
		    windows(futex_window_us, secs, 0), "");
}

/* The header line: which CPU, kernel and backend (the figures vary with them). */
void print_machine(const struct bench_run *run)
{
	char line[256], model[256] = "unknown", machine[512];
	struct utsname u;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "model name", 10) == 0) {
			char *c = strchr(line, ':');
			snprintf(model, sizeof(model), "%s", c ? c + 2 : line);
			model[strcspn(model, "\n")] = 0;
			break;
		}
	if (f)
		fclose(f);
	uname(&u);
	snprintf(machine, sizeof(machine), "srcu-bench: %s, %d CPUs, Linux %s, libsrcu backend %s%s%s",
		 model, run->ncpu, u.release, srcu_backend(), run->quick ? ", --quick" : "",
		 run->background_load ? ", --background-load (one CPU-bound process beside)" : "");
	set_machine_line(machine);
	printf("%s\n", machine);
}
