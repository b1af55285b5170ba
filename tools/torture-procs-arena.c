/*
 * torture-procs-arena.c: srcu-torture --processes' arena, one memfd
 * mapped MAP_SHARED by every process of the run: the objects, one
 * published object per writer, the statistics, the failure count and the
 * first failure's text, the table of reader processes and the pids
 * killed.  Objects are published by index, never by pointer, as in a
 * file that processes map at different addresses.  And how every process
 * prints a failure.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "torture-procs.h"

/* The arena (arena_init()), and the shared domains (made by the torture
 * process before it forks the readers, which inherit them). */
struct arena *A;
int ndoms;
struct srcu_struct *doms[P_MAX_DOMAINS];

/* Write a whole message with one write(2): every process prints, and a
 * reader process is the child of a multithreaded fork, where stdio's
 * locks may have been held by another thread at the fork. */
void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	if (n > 0 && write(2, line, (size_t)n) < 0)
		return;
}

/* Every process prints failures: the first few, then a count. */
void procs_announce(unsigned long n, const char *msg)
{
	(void)n;
	n = __atomic_fetch_add(&A->run.messages, 1, __ATOMIC_RELAXED);
	if (n < P_MSGS)
		say("srcu-torture: %s after %.2f s (pid %d): %s\n",
		    n ? "failure" : "first failure", elapsed_s(), (int)getpid(), msg);
	else if (n == P_MSGS)
		say("srcu-torture: further failures are counted, not printed\n");
}

/* The arena: every process of the run maps it (MAP_SHARED). */
int arena_init(void)
{
	int fd = memfd_create("srcu-torture-arena", MFD_CLOEXEC);
	size_t size = sizeof(struct arena) +
		      (size_t)(cfg.writers + cfg.async_writers + cfg.poll_writers) *
		      PER_WRITER * sizeof(struct tobj);

	if (fd < 0 || ftruncate(fd, (off_t)size) != 0 ||
	    (A = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
		fprintf(stderr, "srcu-torture: cannot make the shared arena: %s\n", strerror(errno));
		return -1;
	}
	close(fd);
	run = &A->run;
	pipeline_setup(A->obj, A->w);
	return 0;
}
