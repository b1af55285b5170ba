/*
 * bench_callgrind.c: the callgrind runs behind figures 1 and 11's
 * instructions per pair (bench_callgrind.h), below both figures.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_callgrind.h"

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define HAVE_CALLGRIND 1
#endif

void callgrind_collect(void (*reads)(long n))
{
#ifdef HAVE_CALLGRIND
	CALLGRIND_TOGGLE_COLLECT;
	reads(INSTR_PAIRS);
	CALLGRIND_TOGGLE_COLLECT;
#else
	(void)reads;
#endif
}

/* Can we count instructions?  Says why not, once. */
int callgrind_usable(void)
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
double callgrind_per_pair(const char *name, const char *self_path)
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
