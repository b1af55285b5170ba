/*
 * torture-chaos.c: what srcu-torture runs beside its readers and writers
 * to shake the library's other paths while the guarantee is checked:
 *
 *   - domain churn: domains created, held by a reader, synchronized and
 *     destroyed while the run goes on (ids are reused);
 *   - thread churn: short-lived reader threads come and go;
 *   - fork: a child uses the domains and must finish, though another
 *     thread was inside a section of one of them when it forked;
 *   - signals: delivered continuously to the writers, which are mostly
 *     blocked in synchronize_srcu*() (it must not return early: the
 *     pipeline check would see it);
 *   - a reader thread that exits inside its section: the library must
 *     report it on stderr and grace periods must go on (the monitor's
 *     deadline catches a hang);
 *   - signal storm (--signal-storm): the signaller's handler runs a
 *     checked read-side section, every 20 us, in the writers (mostly in
 *     synchronize_srcu*(): its "inside my own section?" check must not be
 *     fooled), and storm threads aim a timer at themselves from before
 *     their first section to after their exit (record creation, nesting,
 *     sleeping sections and the exit path, all interrupted);
 *   - fork storm (--fork-storm): a fork() every 2-5 ms, mostly while a
 *     call_srcu() worker is part-way through a batch of slow callbacks;
 *     the child runs srcu_barrier(), and a callback that runs twice, in
 *     the child or the parent, fails the run;
 *   - call_srcu() chains (torture-chain.c): callbacks that hand their
 *     object on to another domain at a small backlog limit, polled
 *     calls, srcu_barrier(), and cleanup with re-init racing them;
 *   - init_srcu_struct() failure: the id space is exhausted on purpose,
 *     -ENOMEM is checked, then every domain is cleaned up (nothing may
 *     leak: the ASan run's LeakSanitizer would say so).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "srcu-torture.h"

struct chaos_stats chaos;

static pthread_t chaos_threads[8];
static int nchaos;
static pthread_t signal_targets[64];
static int nsignal_targets;
static unsigned long signals_handled;
/* The mode's checked section (chaos_start()'s read_once). */
static void (*read_once)(unsigned int *seed);

/* ---- init_srcu_struct() failure: exhaust the id space ---- */

void chaos_exhaust_ids(void)
{
	size_t cap = 1u << 16, n = 0, i;
	struct srcu_struct *d = calloc(cap + 1, sizeof(*d));
	int err = 0;

	if (!d) {
		torture_fail("no memory for the id-exhaustion check");
		return;
	}
	while (n <= cap && (err = init_srcu_struct(&d[n])) == 0)
		n++;
	chaos.ids_exhausted_at = n;
	if (err != -ENOMEM)
		torture_fail("init_srcu_struct() with every id in use returned %d, not -ENOMEM", err);
	if (cleanup_srcu_struct(&d[n]) != -EINVAL)
		torture_fail("cleanup_srcu_struct() of a domain whose init failed did not say -EINVAL");
	for (i = 0; i < n; i++)
		if (cleanup_srcu_struct(&d[i]) != 0)
			torture_fail("cleanup_srcu_struct() of idle domain %zu failed", i);
	if (init_srcu_struct(&d[0]) != 0 || cleanup_srcu_struct(&d[0]) != 0)
		torture_fail("ids were not reusable after the id-exhaustion check");
	free(d);
}

/* ---- domain churn ---- */

struct held {
	struct srcu_struct *dom;
	int64_t hold_ns;
	int inside, may_leave, leaving;
};

static void *hold_section(void *arg)
{
	struct held *h = arg;
	int live_token = live_open(now_ns());
	int idx = srcu_read_lock(h->dom);

	__atomic_store_n(&h->inside, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&h->may_leave, __ATOMIC_SEQ_CST))
		sleep_ns(20000);
	sleep_ns(h->hold_ns);
	__atomic_store_n(&h->leaving, 1, __ATOMIC_SEQ_CST);
	srcu_read_unlock(h->dom, idx);
	live_close(live_token);
	return NULL;
}

static void churn_one_domain(unsigned int *seed)
{
	struct srcu_struct *d = malloc(sizeof(*d));
	struct held h = { .dom = d, .hold_ns = 1000 + rnd(seed) % 2000000 };
	pthread_t th;
	bool exp;
	int err, t;

	if (!d || (err = init_srcu_struct(d)) != 0) {
		torture_fail("init_srcu_struct() of a churned domain failed");
		free(d);
		return;
	}
	srcu_set_name(d, "churn");
	pthread_create(&th, NULL, hold_section, &h);
	while (!__atomic_load_n(&h.inside, __ATOMIC_SEQ_CST))
		sleep_ns(20000);
	err = cleanup_srcu_struct(d);
	if (err != -EBUSY)
		torture_fail("cleanup_srcu_struct() with a reader inside returned %d, not -EBUSY", err);
	__atomic_store_n(&h.may_leave, 1, __ATOMIC_SEQ_CST);
	exp = rnd(seed) % 2 == 0;
	t = live_gp_begin(exp ? "synchronize_srcu_expedited() on a churned domain" :
			  "synchronize_srcu() on a churned domain", -1);
	if (exp)
		synchronize_srcu_expedited(d);
	else
		synchronize_srcu(d);
	live_gp_end(t);
	if (!__atomic_load_n(&h.leaving, __ATOMIC_SEQ_CST))
		torture_fail("synchronize_srcu() on a churned domain returned while its reader was inside");
	pthread_join(th, NULL);
	err = cleanup_srcu_struct(d);
	if (err != 0)
		torture_fail("cleanup_srcu_struct() of an idle churned domain returned %d", err);
	free(d);
	__atomic_fetch_add(&chaos.domains_churned, 1, __ATOMIC_RELAXED);
}

/* ---- thread churn ---- */

static void *transient_reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	for (int i = 0; i < 20; i++)
		read_once(&seed);
	return NULL;   /* holding nothing: its record goes back to the pool */
}

static void *thread_churn(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		pthread_t t;

		if (pthread_create(&t, NULL, transient_reader,
				   (void *)(uintptr_t)rnd(&seed)) == 0) {
			pthread_join(t, NULL);
			__atomic_fetch_add(&chaos.threads_churned, 1, __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

/* ---- fork ---- */

/* Held by another thread most of the time, so that fork() catches it
 * inside: in the child that section must not exist.  (The run's own
 * domains may have srcu_down_read() sections open, which stay open in
 * the child, so the child does not wait for their grace periods.) */
static struct srcu_struct fork_dom;

static void *fork_dom_reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		int idx = srcu_read_lock(&fork_dom);

		sleep_ns(1000 + rnd(&seed) % 2000000);
		srcu_read_unlock(&fork_dom, idx);
	}
	return NULL;
}

static void fork_child_work(void)
{
	struct srcu_struct *dom = writers[0].dom, fresh;
	int idx;

	alarm(20);   /* a hang in the child shows as a failure, not a hung run */
	idx = srcu_read_lock(dom);
	srcu_read_unlock(dom, idx);
	synchronize_srcu(&fork_dom);
	synchronize_srcu_expedited(&fork_dom);
	if (init_srcu_struct(&fresh) != 0)
		_exit(3);
	idx = srcu_read_lock(&fresh);
	srcu_read_unlock(&fresh, idx);
	synchronize_srcu_expedited(&fresh);
	_exit(cleanup_srcu_struct(&fresh) == 0 ? 0 : 4);
}

/* Fork; the child runs child() (which exits), the parent fails the run
 * with why unless the child exited with status 0. */
static void fork_and_check(void (*child)(void), const char *why)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0)
		child();
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		torture_fail("%s (status %#x)", why, status);
	__atomic_fetch_add(&chaos.forks, 1, __ATOMIC_RELAXED);
}

/* ---- a reader that exits inside its section ---- */

static void *exit_inside(void *arg)
{
	(void)srcu_read_lock(arg);
	return NULL;   /* leaves the section open: the library must say so */
}

/* Capture stderr around the exit so that the report can be checked, then
 * pass what was captured on to the real stderr. */
static void inject_exit_inside(void)
{
	char buf[8192];
	size_t len = 0;
	ssize_t n;
	int saved = dup(2), p[2], live_token;
	pthread_t t;

	if (saved < 0 || pipe(p) != 0)
		return;
	fflush(stderr);
	dup2(p[1], 2);
	close(p[1]);
	/* Its section, for the oracle: from before the thread starts until
	 * it is joined (its exit ended the section). */
	live_token = live_open(now_ns());
	pthread_create(&t, NULL, exit_inside, writers[0].dom);
	pthread_join(t, NULL);
	live_close(live_token);
	live_token = live_gp_begin("synchronize_srcu() after a thread exited inside", -1);
	synchronize_srcu(writers[0].dom);   /* the abandoned section was ended */
	live_gp_end(live_token);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	while (len < sizeof(buf) - 1 && (n = read(p[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	buf[len] = 0;
	fputs(buf, stderr);
	if (strstr(buf, "exited inside") && strstr(buf, "torture-0"))
		chaos.exit_inside_reported = true;
	else
		torture_fail("a thread that exited inside a section of torture-0 was not reported");
}

/* ---- signals to updaters, and the signal storm ---- */

static unsigned long storm_bad_magic, storm_bad_age;

/* A read-side section inside a signal handler: only async-signal-safe
 * calls (the read side is), the object checked as a reader would, any
 * failure noted in atomics and reported by chaos_stop(). */
static void handler_section(void)
{
	static __thread unsigned int seed;
	struct writer *w;
	struct tobj *p;
	int idx;

	if (!seed)
		seed = (unsigned int)(uintptr_t)&seed | 1;
	w = &writers[rnd(&seed) % (unsigned int)(cfg.writers + cfg.async_writers +
						 cfg.poll_writers)];
	idx = srcu_read_lock(w->dom);
	p = srcu_dereference(w->head, w->dom);
	if (__atomic_load_n(&p->magic, __ATOMIC_RELAXED) != MAGIC_LIVE)
		__atomic_fetch_add(&storm_bad_magic, 1, __ATOMIC_RELAXED);
	else if (__atomic_load_n(&p->age, __ATOMIC_RELAXED) > 1)
		__atomic_fetch_add(&storm_bad_age, 1, __ATOMIC_RELAXED);
	srcu_read_unlock(w->dom, idx);
	__atomic_fetch_add(&chaos.handler_sections, 1, __ATOMIC_RELAXED);
}

static void on_signal(int sig)
{
	(void)sig;
	__atomic_fetch_add(&signals_handled, 1, __ATOMIC_RELAXED);
	torture_in_handler++;
	if (cfg.signal_storm)
		handler_section();
	torture_in_handler--;
}

/* musl names the thread a SIGEV_THREAD_ID event targets; glibc has it
 * only as the internal union member (older glibc: no macro). */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

/* A timer that sends SIGUSR1 to the calling thread every period_ns. */
static bool storm_timer_start(timer_t *t, int64_t period_ns)
{
	struct itimerspec its = { { 0, period_ns }, { 0, period_ns } };
	struct sigevent ev;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev.sigev_notify_thread_id = gettid();
	if (timer_create(CLOCK_MONOTONIC, &ev, t) != 0)
		return false;
	if (timer_settime(*t, 0, &its, NULL) != 0) {
		timer_delete(*t);
		return false;
	}
	return true;
}

struct stormed {
	timer_t timer;
	bool armed;
	unsigned int seed;
};

/* Under its own storm from before its first section to after its exit
 * (the storm loop deletes the timer once it has joined the thread). */
static void *stormed_reader(void *arg)
{
	struct stormed *st = arg;

	st->armed = storm_timer_start(&st->timer, 20 * 1000);
	for (int i = 0; i < 20 && !stopping(); i++)
		read_once(&st->seed);
	return NULL;
}

static void *storm_loop(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		struct stormed st = { .seed = rnd(&seed) };
		pthread_t t;

		if (pthread_create(&t, NULL, stormed_reader, &st) != 0)
			continue;
		pthread_join(t, NULL);
		if (st.armed)
			timer_delete(st.timer);
		__atomic_fetch_add(&chaos.threads_churned, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void storm_check(void)
{
	if (storm_bad_magic)
		torture_fail("%lu sections in signal handlers found their object poisoned",
			     storm_bad_magic);
	if (storm_bad_age)
		torture_fail("%lu sections in signal handlers found their object too old",
			     storm_bad_age);
}

void chaos_note_writer(pthread_t t)
{
	if (nsignal_targets < 64)
		signal_targets[nsignal_targets++] = t;
}

static void *signaller(void *arg)
{
	(void)arg;
	while (!stopping()) {
		for (int i = 0; i < nsignal_targets; i++)
			pthread_kill(signal_targets[i], SIGUSR1);
		sleep_ns(cfg.signal_storm ? 20 * 1000 : 200 * 1000);
	}
	return NULL;
}

/* ---- the fork storm ---- */

/* Its own domain: the run's domains may hold srcu_down_read() sections
 * at the fork, which stay open in the child, so a child could not wait
 * for their grace periods.  A producer queues rounds of slow callbacks on
 * it, so that most forks land while the worker is part-way through a
 * batch; each callback counts its runs, and a count above one, in the
 * parent or in a child after its srcu_barrier(), is a failure. */
#define STORM_CBS 32

struct storm_cb {
	struct srcu_head rh;
	int runs;
};

static struct srcu_struct storm_dom;
static struct storm_cb storm_cbs[STORM_CBS];

static void storm_cb_run(struct srcu_head *h)
{
	struct storm_cb *c = (struct storm_cb *)h;

	c->runs++;
	sleep_ns(50 * 1000);   /* the worker stays part-way through a batch */
}

static int storm_runs_above(int max)
{
	int n = 0;

	for (int i = 0; i < STORM_CBS; i++)
		n += storm_cbs[i].runs > max;
	return n;
}

static void *storm_producer(void *arg)
{
	(void)arg;
	while (!stopping()) {
		memset(storm_cbs, 0, sizeof(storm_cbs));
		for (int i = 0; i < STORM_CBS; i++)
			call_srcu(&storm_dom, &storm_cbs[i].rh, storm_cb_run);
		srcu_barrier(&storm_dom);
		if (storm_runs_above(1) || storm_runs_above(0) != STORM_CBS)
			torture_fail("fork storm: a round's callbacks did not each run once");
	}
	return NULL;
}

/* The child finishes what it inherited: nothing may run twice. */
static void fork_storm_child(void)
{
	alarm(20);   /* a hang in the child shows as a failure */
	srcu_barrier(&storm_dom);
	_exit(storm_runs_above(1) ? 5 : 0);
}

static void *fork_storm(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!stopping()) {
		sleep_ns(2000000 + (int64_t)(rnd(&seed) % 3000000));
		fork_and_check(fork_storm_child,
			       "a fork-storm child ran a callback twice, or hung");
	}
	return NULL;
}

/* ---- the chaos thread: domains, forks and the exit inside ---- */

static void *chaos_main(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;
	int64_t next_fork = now_ns() + 500L * 1000 * 1000;
	bool exit_done = false;

	while (!stopping()) {
		__atomic_store_n(&run->chaos_progress_ns, now_ns(), __ATOMIC_RELAXED);
		churn_one_domain(&seed);
		if (!cfg.no_fork && now_ns() >= next_fork) {
			fork_and_check(fork_child_work, "a forked child could not use libsrcu");
			next_fork = now_ns() + 1500L * 1000 * 1000;
		}
		if (!exit_done && chaos.domains_churned >= 20) {
			inject_exit_inside();
			exit_done = true;
		}
	}
	return NULL;
}

void chaos_start(void (*section)(unsigned int *seed))
{
	struct sigaction sa;

	read_once = section;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;   /* no SA_RESTART: blocked calls see EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	run->chaos_progress_ns = now_ns();
	if (init_srcu_struct(&fork_dom) != 0)
		torture_fail("init_srcu_struct() of the fork domain failed");
	srcu_set_name(&fork_dom, "fork");
	pthread_create(&chaos_threads[nchaos++], NULL, fork_dom_reader, (void *)(uintptr_t)cfg.seed);
	pthread_create(&chaos_threads[nchaos++], NULL, chaos_main, (void *)(uintptr_t)cfg.seed);
	pthread_create(&chaos_threads[nchaos++], NULL, thread_churn, (void *)(uintptr_t)(cfg.seed + 1));
	pthread_create(&chaos_threads[nchaos++], NULL, signaller, NULL);
	if (cfg.signal_storm)
		for (uintptr_t i = 0; i < 2; i++)
			pthread_create(&chaos_threads[nchaos++], NULL, storm_loop,
				       (void *)(uintptr_t)(cfg.seed + 7 + i));
	if (cfg.fork_storm) {
		if (init_srcu_struct_named(&storm_dom, "fork-storm") != 0)
			torture_fail("init_srcu_struct() of the fork-storm domain failed");
		pthread_create(&chaos_threads[nchaos++], NULL, storm_producer, NULL);
		pthread_create(&chaos_threads[nchaos++], NULL, fork_storm,
			       (void *)(uintptr_t)(cfg.seed + 11));
	}
	chain_start();
}

void chaos_stop(void)
{
	chain_stop();
	for (int i = 0; i < nchaos; i++)
		pthread_join(chaos_threads[i], NULL);
	chaos.signals = __atomic_load_n(&signals_handled, __ATOMIC_RELAXED);
	storm_check();
	if (cfg.fork_storm && cleanup_srcu_struct(&storm_dom) != 0)
		torture_fail("cleanup_srcu_struct() of the idle fork-storm domain failed");
	if (cleanup_srcu_struct(&fork_dom) != 0)
		torture_fail("cleanup_srcu_struct() of the idle fork domain failed");
}
