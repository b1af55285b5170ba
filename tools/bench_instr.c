/*
 * bench_instr.c: figure 1's instructions per read pair, and the child
 * that srcu-bench runs under callgrind for figures 1 and 11
 * (--instr-child NAME), which collects only the pairs of the peer or row
 * named (bench_callgrind.c runs it).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <string.h>

#include "bench.h"
#include "bench_callgrind.h"
#include "bench_results.h"
#include "bench_shared.h"

/* In the child, under callgrind: collect only the peer's INSTR_PAIRS pairs
 * (figure 11's rows: "fig11:" and the row's name). */
int instr_child(const char *name)
{
	if (!strncmp(name, "fig11:", 6)) {
		if (shared_instr_prepare(name + 6) != 0)
			return 2;
		callgrind_collect(shared_instr_reads);
		return 0;
	}
	const struct peer *found = NULL;

	FOR_PEERS(p)
		if (!strcmp(p->name, name))
			found = p;
	FOR_READ_VARIANTS(p)
		if (!strcmp(p->name, name))
			found = p;
	if (found) {
		const struct peer *p = found;

		p->thread_online();
		p->reads(1000);
		callgrind_collect(p->reads);
		p->thread_offline();
		return 0;
	}
	return 2;
}

static void instructions_of(const struct peer *p, const char *self_path)
{
	double ir = callgrind_per_pair(p->name, self_path);

	if (ir > 0)
		record("instructions", p->name, "per_pair", ir, "instructions");
}

/* Run ourselves under callgrind for each peer; record Ir / pair. */
void measure_instructions(const char *self_path)
{
	if (!callgrind_usable())
		return;
	FOR_PEERS(p) {
		if (p != &peer_srcu_exp)
			instructions_of(p, self_path);
		if (p == &peer_srcu)   /* its other read sides beside it, as in figure 1 */
			FOR_READ_VARIANTS(v)
				instructions_of(v, self_path);
	}
}
