/*
 * stall.c: what a grace period that waits too long for its readers says
 * about it: stall warnings that name the threads holding it up, and
 * (when enabled) cross-domain deadlock detection.
 *
 * Both run only in a grace period that sleeps on readers (gp.c's
 * sleep_until_done()), whose futex sleep gets their deadlines: nothing
 * here touches a fast path.  Below gp.c: it reads the reader records
 * (who holds a section, who waits on which domain) and the domain's
 * fields, and calls nothing above it.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEADLOCK_PROBE_NS (100 * 1000 * 1000L)   /* between deadlock probes */

#ifdef SRCU_DEADLOCK_DETECT_DEFAULT
int srcu__stall_deadlock_detect = 1;
#else
int srcu__stall_deadlock_detect;
#endif

static void (*stall_fn)(const struct srcu_stall *s, void *arg);
static void *stall_arg;
static pthread_mutex_t stall_fn_lock = PTHREAD_MUTEX_INITIALIZER;

void srcu_set_stall_handler(void (*fn)(const struct srcu_stall *s, void *arg), void *arg)
{
	pthread_mutex_lock(&stall_fn_lock);
	stall_fn = fn;
	stall_arg = arg;
	pthread_mutex_unlock(&stall_fn_lock);
}

/* fork(): the handler's lock is held across it (lifecycle.c's handlers,
 * innermost of their locks), so that no child inherits it locked by a
 * thread the child does not have, which would hang its next stall report
 * and srcu_set_stall_handler().  Held only to copy two words, never
 * while the handler runs: fork() waits for no report. */
void srcu__stall_fork_prepare(void)
{
	pthread_mutex_lock(&stall_fn_lock);
}

void srcu__stall_fork_parent(void)
{
	pthread_mutex_unlock(&stall_fn_lock);
}

/* The child's only thread took it in prepare: its to release. */
void srcu__stall_fork_child(void)
{
	pthread_mutex_unlock(&stall_fn_lock);
}

int srcu_set_stall_timeout(struct srcu_struct *sp, unsigned int ms)
{
	if (!sp)
		return -EINVAL;
	(void)srcu__domain_check(sp, "srcu_set_stall_timeout");
	store_relaxed(&srcu__dom(sp)->stall_ms, ms ? ms : ~0u);
	return 0;
}

void srcu_set_deadlock_detection(bool on)
{
	store_relaxed(&srcu__stall_deadlock_detect, on ? 1 : 0);
}

/* ---- who holds a section, who waits on which domain ---- */


/* "name" of thread tid from /proc, or "" */
static void thread_name(int tid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	f = fopen(path, "r");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

/* Threads holding sections of sp's index idx: at most max described in
 * th, the count returned.  On an up/down domain a thread holds the
 * sections it began and no thread has ended (more downs than ups); one
 * with more ups than downs ended sections others began, which *ended
 * counts (the report says so: they were handed over). */
static unsigned int holders(struct srcu_struct *sp, int idx, struct srcu_stall_thread *th,
			   unsigned int max, unsigned long *ended)
{
	unsigned int id = srcu__id_of(sp), n = 0;
	bool updown = srcu__reader_updown(id);
	struct srcu__record *r;

	*ended = 0;
	for (r = load_acquire(&srcu__reader_records); r; r = r->next) {
		struct srcu__slot *s = &r->slots[id];
		int tid = load_acquire(&r->tid);
		long open = srcu__slot_open_on(s, idx);

		if (tid && updown && open < 0)
			*ended += (unsigned long)-open;
		if (!tid || open == 0 || (updown && open < 0))
			continue;
		if (n < max) {
			th[n].tid = tid;
			thread_name(tid, th[n].name, sizeof(th[n].name));
		}
		n++;
	}
	return n;
}

void srcu__stall_set_waiting_on(struct srcu_struct *sp)
{
	struct srcu__record *me = srcu__reader_self_record();

	if (me)
		store_release(&me->waiting_on, sp ? srcu__id_of(sp) : 0);
}

#define CYCLE_MAX 16

struct cycle_search {
	unsigned int start;
	unsigned int depth;
	struct srcu__record *who[CYCLE_MAX];   /* who[i] holds dom[i], waits dom[i+1] */
	unsigned int dom[CYCLE_MAX + 1];
	unsigned char seen[SRCU__MAX_IDS / 8];
};

static bool cycle_from(struct cycle_search *c, unsigned int id)
{
	struct srcu__record *r;

	if (c->depth == CYCLE_MAX)
		return false;
	c->seen[id / 8] |= (unsigned char)(1u << (id % 8));
	for (r = load_acquire(&srcu__reader_records); r; r = r->next) {
		unsigned int next = load_acquire(&r->waiting_on);

		if (!next || !load_acquire(&r->tid) || !srcu__reader_record_holds(r, id))
			continue;
		c->who[c->depth] = r;
		c->dom[c->depth] = id;
		c->dom[c->depth + 1] = next;
		c->depth++;
		if (next == c->start)
			return true;
		if (!(c->seen[next / 8] & (1u << (next % 8))) && cycle_from(c, next))
			return true;
		c->depth--;
	}
	return false;
}

/* Is there a domain reachable from id along "a thread holding a section
 * of D waits on D'" edges that leads back to id?  Fills the cycle's
 * description into buf. */
static bool find_cycle(unsigned int id, char *buf, size_t len)
{
	struct cycle_search *c = calloc(1, sizeof(*c));
	size_t n = 0;
	bool found;

	if (!c)
		return false;
	c->start = id;
	pthread_mutex_lock(&srcu__domain_registry_lock);   /* domain names stay put */
	found = cycle_from(c, id);
	for (unsigned int i = 0; found && i < c->depth && n < len; i++) {
		char a[SRCU__NAME_LEN], b[SRCU__NAME_LEN], t[16];
		int tid = load_relaxed(&c->who[i]->tid);

		thread_name(tid, t, sizeof(t));
		n += (size_t)snprintf(buf + n, len - n, "%sthread %d (%s) inside domain %s waits "
				      "for domain %s", i ? "; " : "", tid, t[0] ? t : "?",
				      srcu__report_name(srcu__domain_table[c->dom[i]], a, sizeof(a)),
				      srcu__report_name(srcu__domain_table[c->dom[i + 1]], b, sizeof(b)));
	}
	pthread_mutex_unlock(&srcu__domain_registry_lock);
	free(c);
	return found;
}

/* ---- the watch ---- */

void srcu__stall_watch_init(struct srcu_struct *sp, struct srcu__stall_watch *w)
{
	struct srcu__domain *d = srcu__dom(sp);
	unsigned int ms = load_relaxed(&d->stall_ms);
	int64_t start = (int64_t)load_relaxed(&d->gp_start_ns);

	if (!ms)
		ms = SRCU_STALL_DEFAULT_MS;
	w->interval_ns = (int64_t)ms * 1000000;
	w->next_ns = ms == ~0u ? -1 : start + w->interval_ns;
	w->probe_ns = load_relaxed(&srcu__stall_deadlock_detect) ? srcu__backend_now_ns() + DEADLOCK_PROBE_NS : -1;
	w->report = 0;
	w->cycle_seen = false;
}

int64_t srcu__stall_deadline(const struct srcu__stall_watch *w)
{
	return srcu__backend_earliest(w->next_ns, w->probe_ns);
}

/* ---- stall reports ---- */

/* An up/down domain's sections that were handed over, for the default
 * report: ended by threads that did not begin them (live ones), and left
 * by exited threads to the domain's shared counters (their net count,
 * reader.c's hand_over_updown()). */
struct handed_over {
	unsigned long ended;
	long exited;
};

/* The default handler's line; name: the domain as messages name it. */
static void default_report(const struct srcu_stall *s, const char *name,
			   const struct handed_over *h)
{
	char line[1024];
	size_t n;

	n = (size_t)snprintf(line, sizeof(line),
			     "srcu: grace period of domain %s stalled for %.1f s waiting for "
			     "readers of index %d (report %u):", name, s->waited_s,
			     s->idx, s->report);
	for (unsigned int i = 0; i < s->nthreads && i < 16 && n < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s thread %d (%s)",
				      i ? "," : "", s->threads[i].tid,
				      s->threads[i].name[0] ? s->threads[i].name : "?");
	if (s->nthreads > 16 && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, " and %u more",
				      s->nthreads - 16);
	if (s->down_readers && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "%s %lu %s section(s)",
				      s->nthreads ? ";" : "", s->down_readers,
				      "srcu_down_read() or srcu_down_read_fast()");
	if (h && h->ended && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "; %lu section(s) handed over: "
				      "begun in one thread, ended by another", h->ended);
	if (h && h->exited > 0 && n < sizeof(line))
		n += (size_t)snprintf(line + n, sizeof(line) - n, "; %ld section(s) handed over by "
				      "exited threads, to be ended by others", h->exited);
	if (!s->nthreads && !s->down_readers && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, " no reader left (about to end)");
	srcu__report_warn("%s", line);
}

/* To the program's handler, or to the default one, whose messages name
 * sp as every message does (quoted; s->domain is bare). */
static void deliver(struct srcu_struct *sp, const struct srcu_stall *s,
		    const struct handed_over *h)
{
	void (*fn)(const struct srcu_stall *, void *);
	char name[SRCU__NAME_LEN];
	void *arg;

	pthread_mutex_lock(&stall_fn_lock);
	fn = stall_fn;
	arg = stall_arg;
	pthread_mutex_unlock(&stall_fn_lock);
	if (fn) {
		fn(s, arg);
		return;
	}
	srcu__report_name(sp, name, sizeof(name));
	if (s->dead_pid && s->dead_sections)
		srcu__report_warn("srcu: domain %s: process %d died inside %lu read-side "
			   "critical section(s); they are treated as ended and its reader "
			   "slots are free", name, s->dead_pid, s->dead_sections);
	else if (s->dead_pid)
		srcu__report_warn("srcu: domain %s: process %d died attached (outside any "
			   "read-side critical section); its reader slots are free",
			   name, s->dead_pid);
	else
		default_report(s, name, h);
}

void srcu__stall_report_dead(struct srcu_struct *sp, int pid, unsigned long sections)
{
	char name[SRCU__NAME_LEN];
	struct srcu_stall s;

	memset(&s, 0, sizeof(s));
	s.domain = srcu__report_bare_name(sp, name, sizeof(name));
	s.idx = srcu__cur_idx(sp);
	s.dead_pid = pid;
	s.dead_sections = sections;
	deliver(sp, &s, NULL);
}

static void report_stall(struct srcu_struct *sp, int idx, struct srcu__stall_watch *w,
			 int64_t now)
{
	struct srcu__domain *d = srcu__dom(sp);
	struct srcu_stall_thread th[SRCU_STALL_THREADS];
	char name[SRCU__NAME_LEN];
	struct handed_over h = { 0, 0 };
	struct srcu_stall s;

	memset(&s, 0, sizeof(s));
	s.domain = srcu__report_bare_name(sp, name, sizeof(name));
	s.idx = idx;
	s.waited_s = (double)(now - (int64_t)load_relaxed(&d->gp_start_ns)) / 1e9;
	s.report = ++w->report;
	s.nthreads = holders(sp, idx, th, SRCU_STALL_THREADS, &h.ended);
	s.threads = th;
	s.down_readers = load_acquire(&d->down_lock[idx]) - load_acquire(&d->down_unlock[idx]);
	if (srcu__reader_updown(srcu__id_of(sp))) {   /* every thread's sections may be anyone's */
		h.exited = (long)s.down_readers;
		s.down_readers = srcu__reader_updown_open(sp, idx);
	}
	deliver(sp, &s, &h);
	/* Counted once made: a caller that sees the count sees the report
	 * (the default one is written by then). */
	store_relaxed(&d->stat_stalls, load_relaxed(&d->stat_stalls) + 1);
}

/* ---- deadlock probes ---- */

static void probe_deadlock(struct srcu_struct *sp, struct srcu__stall_watch *w)
{
	char cycle[512];
	bool found = find_cycle(srcu__id_of(sp), cycle, sizeof(cycle));

	/* Twice in a row, 100 ms apart: a thread seen between its section
	 * and its synchronize is not taken for a deadlock. */
	if (found && w->cycle_seen)
		srcu__report_fatal("deadlock between SRCU domains: %s; each waits for a "
			    "read-side section that ends only after its own wait", cycle);
	w->cycle_seen = found;
}

void srcu__stall_check(struct srcu_struct *sp, int idx, struct srcu__stall_watch *w)
{
	int64_t now = srcu__backend_now_ns();

	if (w->next_ns >= 0 && now >= w->next_ns) {
		report_stall(sp, idx, w, now);
		w->interval_ns *= 2;   /* backoff: T, 3T, 7T, ... after the GP began */
		w->next_ns = now + w->interval_ns;
	}
	if (w->probe_ns >= 0 && now >= w->probe_ns) {
		probe_deadlock(sp, w);
		w->probe_ns = now + DEADLOCK_PROBE_NS;
	}
}
