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

#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* A name fit for a message: printable (UTF-8 passes), NUL-terminated
 * within len. */
static bool printable(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return i > 0 && i < len;
}

#define PROBE_PAGE 4096u   /* the smallest page size */

/* Can the byte at p be read?  The kernel copies it into the pipe fd[1]:
 * write() fails with EFAULT where a load would fault. */
static bool byte_readable(const int fd[2], const char *p)
{
	char c;

	return write(fd[1], p, 1) == 1 && read(fd[0], &c, 1) == 1;
}

/*
 * Copy the string at p into buf (truncated to len - 1 bytes), if it can
 * be read and is printable.  p comes from a struct that may not be a
 * domain at all (an uninitialized malloc()'d one: garbage), so it is not
 * followed blindly: the first byte of each page it reaches is probed
 * first (a page is readable whole or not at all), and no byte past its
 * NUL is read.  Async-signal-safe.
 */
static bool probe_string(const char *p, char *buf, size_t len)
{
	int fd[2];
	size_t i;
	bool ok = true;

	if (pipe2(fd, O_CLOEXEC) != 0)
		return false;
	for (i = 0; i < len - 1; i++) {
		if ((i == 0 || ((uintptr_t)(p + i) & (PROBE_PAGE - 1)) == 0) &&
		    !(ok = byte_readable(fd, p + i)))
			break;
		buf[i] = ((const volatile char *)p)[i];
		if (!buf[i])
			break;
	}
	close(fd[0]);
	close(fd[1]);
	buf[i] = 0;
	return ok && printable(buf, len);
}

/* ---- names kept for domains that cleanup found busy ----
 *
 * A cleanup_srcu_struct() that says -EBUSY leaves the domain live, and
 * code ported from the kernel, whose cleanup returns nothing, frees it
 * anyway: free() overwrites its first words (glibc: the read-side words
 * and the name pointer).  The warnings that follow (a thread exiting
 * inside one of its sections, a stall) still know the domain by its
 * address: a copy of its name is kept here from the failed cleanup until
 * the address is bound again or cleaned up, and used once the domain's
 * words are no longer what they were.  Written under kept_lock; read
 * without a lock (messages may come from a signal handler's section),
 * each entry under its sequence word, odd while it is written. */
#define KEPT_NAMES 16
#define KEPT_LEN   41   /* a name's bytes kept, NUL included */
static struct kept_name {
	unsigned int seq;
	const struct srcu_struct *sp;   /* NULL: free */
	uint16_t slot_word;             /* sp's words at the failed cleanup */
	const char *name;
	char copy[KEPT_LEN];
} kept[KEPT_NAMES];
static unsigned int kept_next;          /* the entry to reuse when none is free */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static bool probe_string(const char *p, char *buf, size_t len);

/* Caller holds kept_lock: entry e's fields, between two steps of its
 * sequence word (odd while written). */
static void kept_write(struct kept_name *e, const struct srcu_struct *sp, const char *copy)
{
	store_relaxed(&e->seq, e->seq + 1);
	/* K1: pairs with K2 in kept_read(): a reader that sees a field
	 * written below sees the odd sequence too.  A full fence (a release
	 * fence would do; TSan builds refuse a bare thread fence). */
	srcu__smp_mb();
	store_relaxed(&e->sp, sp);
	store_relaxed(&e->slot_word, sp ? load_relaxed(&sp->slot_word) : 0);
	store_relaxed(&e->name, sp ? load_relaxed(&sp->name) : NULL);
	for (size_t i = 0; i < KEPT_LEN; i++)
		store_relaxed(&e->copy[i], copy ? copy[i] : 0);
	/* Pairs with the acquire load of seq in kept_read(): an even
	 * sequence read there comes with these fields. */
	store_release(&e->seq, e->seq + 1);
}

void srcu__report_keep_name(const struct srcu_struct *sp)
{
	char copy[KEPT_LEN];
	const char *n = load_acquire(&sp->name);
	struct kept_name *e = NULL;

	if (!n || !probe_string(n, copy, sizeof(copy)))
		return;   /* nothing to keep: it is named by its address anyway */
	pthread_mutex_lock(&kept_lock);
	for (unsigned int i = 0; i < KEPT_NAMES && !e; i++)
		if (kept[i].sp == sp)
			e = &kept[i];
	for (unsigned int i = 0; i < KEPT_NAMES && !e; i++)
		if (!kept[i].sp)
			e = &kept[i];
	if (!e)
		e = &kept[kept_next++ % KEPT_NAMES];
	kept_write(e, sp, copy);
	pthread_mutex_unlock(&kept_lock);
}

void srcu__report_forget_name(const struct srcu_struct *sp)
{
	pthread_mutex_lock(&kept_lock);
	for (unsigned int i = 0; i < KEPT_NAMES; i++)
		if (kept[i].sp == sp)
			kept_write(&kept[i], NULL, NULL);
	pthread_mutex_unlock(&kept_lock);
}

/* The name kept for sp, into copy, if one is and sp's words have changed
 * since (its memory freed, or reused). */
static bool kept_read(const struct srcu_struct *sp, char *copy)
{
	for (unsigned int i = 0; i < KEPT_NAMES; i++) {
		struct kept_name *e = &kept[i];
		unsigned int seq = load_acquire(&e->seq);
		bool changed;

		if ((seq & 1) || load_relaxed(&e->sp) != sp)
			continue;
		changed = load_relaxed(&sp->slot_word) != load_relaxed(&e->slot_word) ||
			  load_relaxed(&sp->name) != load_relaxed(&e->name);
		for (size_t j = 0; j < KEPT_LEN; j++)
			copy[j] = load_relaxed(&e->copy[j]);
		/* K2: pairs with K1 in kept_write(): the sequence unchanged
		 * after the fields were read means no write overlapped them.
		 * Full, as K1. */
		srcu__smp_mb();
		if (load_relaxed(&e->seq) == seq && changed && copy[0])
			return true;
	}
	return false;
}

/* sp's name, quoted or bare, or its address when it has none that can be
 * read: never a crash, whatever sp holds. */
static const char *name_of(const struct srcu_struct *sp, char *buf, size_t len, bool quoted)
{
	/* Acquire: pairs with the release in srcu_set_name() and
	 * init_srcu_struct_named(): the string is read as it was written. */
	const char *n = load_acquire(&sp->name);
	const char *pad = (const char *)sp->srcu__name_buf;
	char copy[SRCU__NAME_LEN - 2];   /* room for the quotes */

	if (kept_read(sp, copy)) {   /* freed after a busy cleanup, perhaps */
		snprintf(buf, len, quoted ? "'%s' (changed since cleanup_srcu_struct() said "
			 "-EBUSY: freed?)" : "%s", copy);
		return buf;
	}
	if (srcu__id_of(sp) >= SRCU__SHARED_ID_FIRST)
		n = NULL;   /* a shared domain's pointer is the file's: anyone's to forge */
	if (n && probe_string(n, copy, sizeof(copy)))
		n = copy;
	else if (!n && srcu__id_of(sp) >= SRCU__SHARED_ID_FIRST &&
		 printable(pad, sizeof(sp->srcu__name_buf)))   /* a shared domain's, in its file */
		n = pad;
	else
		n = NULL;
	if (n)
		snprintf(buf, len, quoted ? "'%s'" : "%s", n);
	else
		snprintf(buf, len, "srcu_struct@%p", (const void *)sp);
	return buf;
}

const char *srcu__report_name(const struct srcu_struct *sp, char *buf, size_t len)
{
	return name_of(sp, buf, len, true);
}

const char *srcu__report_bare_name(const struct srcu_struct *sp, char *buf, size_t len)
{
	return name_of(sp, buf, len, false);
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
	char msg[1024];

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

/* SIGABRT to the calling thread as the kernel names it, then abort().  A
 * child made by clone() or syscall(SYS_fork), one of the misuses that end
 * here, keeps its parent's thread id in the C library's descriptor, and
 * musl's abort() signals that id: the parent died in the child's place.
 * (glibc asks the kernel too.)  A handler that returns leaves abort() to
 * end the process. */
static __attribute__((noreturn)) void abort_this_thread(void)
{
	sigset_t abrt;

	sigemptyset(&abrt);
	sigaddset(&abrt, SIGABRT);
	pthread_sigmask(SIG_UNBLOCK, &abrt, NULL);
	syscall(SYS_tgkill, (long)syscall(SYS_getpid), (long)syscall(SYS_gettid), SIGABRT);
	abort();
}

void srcu__report_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("fatal", fmt, ap);
	va_end(ap);
	abort_this_thread();
}

/* ---- misuse found by the read side or the scans ---- */

void srcu__report_extra_unlock(struct srcu_struct *sp, const char *thread, int idx,
				const char *found, bool other_open)
{
	srcu__report_extra_unlock_held(sp, thread, idx, found, other_open, "");
}

void srcu__report_extra_unlock_held(struct srcu_struct *sp, const char *thread, int idx,
				     const char *found, bool other_open, const char *held)
{
	char n[SRCU__NAME_LEN], why[320];

	/* The likelier mistake, where the counts show it: a section open on
	 * the other index, whose unlock was given this one, or sections of
	 * other domains only, one of whose unlocks was given this domain. */
	if (other_open)
		snprintf(why, sizeof(why), "it holds a section of index %d: an unlock given the "
			 "other section's index?", idx ^ 1);
	else if (held[0])
		snprintf(why, sizeof(why), "it holds sections of domain %s, none of this one: an "
			 "unlock given the wrong domain?", held);
	else
		snprintf(why, sizeof(why), "an extra unlock, or one given the other section's "
			 "index; to end a section in another thread use "
			 "srcu_down_read()/srcu_up_read()");
	srcu__report_fatal("srcu_read_unlock() on domain %s by %s without a matching "
		    "srcu_read_lock() on index %d in that thread%s (%s)",
		    srcu__report_name(sp, n, sizeof(n)), thread, idx, found, why);
}

void srcu__report_extra_up(struct srcu_struct *sp, int idx, bool fast)
{
	const char *up = fast ? "srcu_up_read_fast" : "srcu_up_read";
	const char *down = fast ? "srcu_down_read_fast" : "srcu_down_read";
	char n[SRCU__NAME_LEN];

	srcu__report_fatal("%s() on domain %s more often than %s() on index %d, found by a "
		    "grace-period scan (an extra %s(), or one given another domain's "
		    "or a stale counter?)", up, srcu__report_name(sp, n, sizeof(n)), down, idx, up);
}
