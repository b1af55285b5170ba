/*
 * bench_instr.c: instructions per read pair, for figures 1 and 11:
 * srcu-bench runs itself under callgrind (--instr-child NAME), which
 * collects only the pairs of the peer or row named.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "bench_results.h"
#include "bench_shared.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif

#define INSTR_PAIRS 100000

/* In the child, under callgrind: collect only the peer's INSTR_PAIRS pairs
 * (figure 11's rows: "fig11:" and the row's name). */
int instr_child(const char *name)
{
	if (!strncmp(name, "fig11:", 6)) {
		if (shared_instr_prepare(name + 6) != 0)
			return 2;
#ifdef HAVE_CALLGRIND
		CALLGRIND_TOGGLE_COLLECT;
		shared_instr_reads(INSTR_PAIRS);
		CALLGRIND_TOGGLE_COLLECT;
#endif
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
#ifdef HAVE_CALLGRIND
		CALLGRIND_TOGGLE_COLLECT;
		p->reads(INSTR_PAIRS);
		CALLGRIND_TOGGLE_COLLECT;
#endif
		p->thread_offline();
		return 0;
	}
	return 2;
}

/* Can we count instructions?  Says why not, once. */
static int callgrind_usable(void)
{
	static int said;
	int ok = 1;

#ifndef HAVE_CALLGRIND
	if (!said)
		printf("note: instructions per pair need valgrind (apt-get install valgrind) at build time\n");
	ok = 0;
#else
	if (system("valgrind --version >/dev/null 2>&1") != 0) {
		if (!said)
			printf("note: instructions per pair skipped: install valgrind (apt-get install valgrind)\n");
		ok = 0;
	}
#endif
	said = 1;
	return ok;
}

/* Run ourselves under callgrind with --instr-child name: Ir per pair, or
 * 0 if that failed. */
static double callgrind_per_pair(const char *name, const char *self_path)
{
	char out[] = "/tmp/srcu-bench-cg-XXXXXX", cmd[8600], line[512];
	int fd = mkstemp(out);
	double ir = 0;
	FILE *f;

	if (fd < 0)
		return 0;
	close(fd);
	snprintf(cmd, sizeof(cmd), "valgrind --tool=callgrind --collect-atstart=no "
		 "--callgrind-out-file=%s '%s' --instr-child '%s' >/dev/null 2>&1",
		 out, self_path, name);
	if (system(cmd) == 0 && (f = fopen(out, "r"))) {
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "totals:", 7) || !strncmp(line, "summary:", 8))
				ir = atof(strchr(line, ':') + 1);
		fclose(f);
	}
	unlink(out);
	return ir / INSTR_PAIRS;
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

/* The same for figure 11's rows (its own read loops). */
void measure_shared_instructions(const char *self_path)
{
	char name[64];

	if (!callgrind_usable())
		return;
	for (int r = 0; r < SHARED_NROWS; r++) {
		double ir;

		snprintf(name, sizeof(name), "fig11:%s", shared_row_name[r]);
		ir = callgrind_per_pair(name, self_path);
		if (ir > 0)
			record("shared", shared_row_name[r], "instr_per_pair", ir, "instructions");
	}
}
