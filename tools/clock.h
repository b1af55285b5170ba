/*
 * clock.h: the tools' one clock (CLOCK_MONOTONIC), in nanoseconds and in
 * seconds.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TOOLS_CLOCK_H
#define SRCU_TOOLS_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline double clock_now_s(void)
{
	return (double)clock_now_ns() / 1e9;
}

#endif
