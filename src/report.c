/*
 * report.c: messages about misuse.  Every message names the domain and,
 * where a thread is involved, the thread, so that the mistake can be found
 * from the log alone.  Fatal messages abort(): they report misuse that
 * would otherwise deadlock or corrupt a domain.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *srcu__report_name(const struct srcu_struct *sp, char *buf, size_t len)
{
	const char *n = load_relaxed(&sp->name);

	if (n)
		snprintf(buf, len, "'%s'", n);
	else if (load_relaxed(&sp->slot_word) / SRCU__SLOT_WORDS >= SRCU__SHARED_ID_FIRST &&
		 sp->srcu__pad[0])   /* a shared domain keeps its name in the file */
		snprintf(buf, len, "'%.*s'", (int)sizeof(sp->srcu__pad) - 1,
			 (const char *)sp->srcu__pad);
	else
		snprintf(buf, len, "srcu_struct@%p", (const void *)sp);
	return buf;
}

int srcu__report_gettid(void)
{
	return (int)syscall(SYS_gettid);
}

const char *srcu__report_thread(char *buf, size_t len)
{
	char name[32] = "";

	pthread_getname_np(pthread_self(), name, sizeof(name));
	snprintf(buf, len, "thread %d (%s)", srcu__report_gettid(), name[0] ? name : "?");
	return buf;
}

static void vreport(const char *level, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* One write, so that concurrent messages do not interleave. */
	fprintf(stderr, "libsrcu: %s: %s\n", level, msg);
	fflush(stderr);
}

void srcu__report_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning", fmt, ap);
	va_end(ap);
}

void srcu__report_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal", fmt, ap);
	va_end(ap);
	abort();
}

/* ---- misuse found by the read side or the scans ---- */

void srcu__report_extra_unlock(struct srcu_struct *sp, const char *thread, int idx,
				const char *found)
{
	char n[SRCU__NAME_LEN];

	srcu__report_fatal("srcu_read_unlock() on domain %s by %s without a matching "
		    "srcu_read_lock() in that thread (index %d)%s; to end a section in "
		    "another thread use srcu_down_read()/srcu_up_read()",
		    srcu__report_name(sp, n, sizeof(n)), thread, idx, found);
}

void srcu__report_extra_up(struct srcu_struct *sp, int idx)
{
	char n[SRCU__NAME_LEN];

	srcu__report_fatal("srcu_up_read() on domain %s more often than srcu_down_read() on "
		    "index %d, found by a grace-period scan (an srcu_up_read() given the "
		    "other section's index?)", srcu__report_name(sp, n, sizeof(n)), idx);
}
