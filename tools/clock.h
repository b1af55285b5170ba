/*
 * clock.h: the tools' clock (CLOCK_MONOTONIC), in nanoseconds and in
 * seconds, and a thread's CPU time for figure 1's idle read pairs.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TOOLS_CLOCK_H
#define SRCU_TOOLS_CLOCK_H

#include <errno.h>
#include <stdint.h>
#include <time.h>

static inline int64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleep ns, to a deadline on this clock, however many signals land
 * meanwhile.  Not nanosleep() restarted with the time it says remains:
 * that time counts the timer's slack (50 us by default), so under a
 * signal every 20 us (srcu-torture's storms) each restart asks for more
 * than the last and the sleep never ends. */
static inline void clock_sleep_ns(int64_t ns)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	t.tv_sec += (time_t)(ns / 1000000000);
	t.tv_nsec += (long)(ns % 1000000000);
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR)
		;
}

static inline double clock_now_s(void)
{
	return (double)clock_now_ns() / 1e9;
}

/* The calling thread's CPU time in seconds: what a loop cost the CPU it
 * ran on, without the time another program held that CPU (a read pair's
 * cost must not depend on what else the machine runs: issue 40).  Not
 * for loops whose cost is other threads' interrupts: with the kernel's
 * IRQ time accounting (and a hypervisor's exits) an interrupt's time is
 * not the interrupted thread's. */
static inline double clock_thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
