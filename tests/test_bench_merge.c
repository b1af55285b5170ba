/*
 * test_bench_merge.c: srcu-bench's merge of its rounds (merge_rounds(),
 * tools/bench_results.c), on values chosen here: each value becomes the
 * median of its rounds (the mean of the middle two for an even count),
 * its spread the extremes of every round's own spread or value, and a
 * value measured in one round only keeps that value.
 * Bug caught: a merge that kept the first or the last round's value, or
 * one round's spread, or took the upper middle of an even count (srcu-bench's
 * bench_check sees a real run's rounds, whose order is chance: a merge
 * that kept the last round passed it whenever that round was the middle).
 * rounds_held() counts, after the merge, the rounds whose own value met a
 * bound (figure 12's "held in k of N rounds"); bug caught: counting the
 * merged median, or a round's spread rows, as rounds.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>

#include "../tools/bench_results.h"
#include "check.h"

static int near(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

#define EXPECT(metric, want) \
	CHECK(near(lookup("fig", "peer", metric), want))

int main(void)
{
	/* Three rounds of "m" (values 3, 2, 1: the median neither first nor
	 * last; rounds 0 and 1 with spreads of their own, which hold the
	 * extremes), "once" in the first round only, four of "even". */
	static const double m[] = { 3, 2, 1 }, even[] = { 4, 1, 3, 2 };

	for (int k = 0; k < 4; k++) {
		set_round(k);
		if (k < 3)
			record("fig", "peer", "m", m[k], "x");
		if (k == 0)
			record_spread("fig", "peer", "m", 2.5, 3.25, "x");
		if (k == 1)
			record_spread("fig", "peer", "m", 0.5, 2.5, "x");
		if (k == 0)
			record("fig", "peer", "once", 7, "x");
		record("fig", "peer", "even", even[k], "x");
		CHECK(near(lookup("fig", "peer", "even"), even[k]));   /* this round's */
	}
	merge_rounds();
	EXPECT("m", 2);
	EXPECT("m_min", 0.5);
	EXPECT("m_max", 3.25);
	EXPECT("once", 7);
	EXPECT("once_min", 7);
	EXPECT("once_max", 7);
	EXPECT("even", 2.5);
	EXPECT("even_min", 1);
	EXPECT("even_max", 4);
	/* One value a key: the rounds' rows are gone. */
	{
		int rows = 0;

		for (int i = 0; result_at(i); i++)
			rows++;
		CHECK(rows == 9);
	}
	{
		int n, held;

		held = rounds_held("fig", "peer", "m", 1, 2, &n);   /* 3, 2, 1 >= 2 */
		CHECK(n == 3 && held == 2);
		held = rounds_held("fig", "peer", "even", 0, 2, &n);   /* 4, 1, 3, 2 <= 2 */
		CHECK(n == 4 && held == 2);
		held = rounds_held("fig", "peer", "once", 1, 8, &n);
		CHECK(n == 1 && held == 0);
		held = rounds_held("fig", "peer", "absent", 1, 0, &n);
		CHECK(n == 0 && held == 0);
	}
	return check_report("test_bench_merge");
}
