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
#include <unistd.h>

#include "srcu-torture.h"

struct chaos_stats chaos;

static pthread_t chaos_threads[4];
static int nchaos;
static pthread_t signal_targets[64];
static int nsignal_targets;
static unsigned long signals_handled;

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
	long hold_ns;
	int inside, may_leave, leaving;
};

static void *hold_section(void *arg)
{
	struct held *h = arg;
	int idx = srcu_read_lock(h->dom);

	__atomic_store_n(&h->inside, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&h->may_leave, __ATOMIC_SEQ_CST))
		sleep_ns(20000);
	sleep_ns(h->hold_ns);
	__atomic_store_n(&h->leaving, 1, __ATOMIC_SEQ_CST);
	srcu_read_unlock(h->dom, idx);
	return NULL;
}

static void churn_one_domain(unsigned int *seed)
{
	struct srcu_struct *d = malloc(sizeof(*d));
	struct held h = { .dom = d, .hold_ns = 1000 + rnd(seed) % 2000000 };
	pthread_t t;
	int err;

	if (!d || (err = init_srcu_struct(d)) != 0) {
		torture_fail("init_srcu_struct() of a churned domain failed");
		free(d);
		return;
	}
	srcu_set_name(d, "churn");
	pthread_create(&t, NULL, hold_section, &h);
	while (!__atomic_load_n(&h.inside, __ATOMIC_SEQ_CST))
		sleep_ns(20000);
	err = cleanup_srcu_struct(d);
	if (err != -EBUSY)
		torture_fail("cleanup_srcu_struct() with a reader inside returned %d, not -EBUSY", err);
	__atomic_store_n(&h.may_leave, 1, __ATOMIC_SEQ_CST);
	if (rnd(seed) % 2)
		synchronize_srcu(d);
	else
		synchronize_srcu_expedited(d);
	if (!__atomic_load_n(&h.leaving, __ATOMIC_SEQ_CST))
		torture_fail("synchronize_srcu() on a churned domain returned while its reader was inside");
	pthread_join(t, NULL);
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
		torture_read_once(&seed);
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

static void fork_once(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return;
	if (pid == 0)
		fork_child_work();
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		torture_fail("a forked child could not use libsrcu (status %#x)", status);
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
	int saved = dup(2), p[2];
	pthread_t t;

	if (saved < 0 || pipe(p) != 0)
		return;
	fflush(stderr);
	dup2(p[1], 2);
	close(p[1]);
	pthread_create(&t, NULL, exit_inside, writers[0].dom);
	pthread_join(t, NULL);
	synchronize_srcu(writers[0].dom);   /* the abandoned section was ended */
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

/* ---- signals to updaters ---- */

static void on_signal(int sig)
{
	(void)sig;
	__atomic_fetch_add(&signals_handled, 1, __ATOMIC_RELAXED);
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
		sleep_ns(200 * 1000);
	}
	return NULL;
}

/* ---- the chaos thread: domains, forks and the exit inside ---- */

static void *chaos_main(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;
	long next_fork = now_ns() + 500L * 1000 * 1000;
	bool exit_done = false;

	while (!stopping()) {
		__atomic_store_n(&chaos.last_progress_ns, now_ns(), __ATOMIC_RELAXED);
		churn_one_domain(&seed);
		if (now_ns() >= next_fork) {
			fork_once();
			next_fork = now_ns() + 1500L * 1000 * 1000;
		}
		if (!exit_done && chaos.domains_churned >= 20) {
			inject_exit_inside();
			exit_done = true;
		}
	}
	return NULL;
}

void chaos_start(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;   /* no SA_RESTART: blocked calls see EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	chaos.last_progress_ns = now_ns();
	if (init_srcu_struct(&fork_dom) != 0)
		torture_fail("init_srcu_struct() of the fork domain failed");
	srcu_set_name(&fork_dom, "fork");
	pthread_create(&chaos_threads[nchaos++], NULL, fork_dom_reader, (void *)(uintptr_t)cfg.seed);
	pthread_create(&chaos_threads[nchaos++], NULL, chaos_main, (void *)(uintptr_t)cfg.seed);
	pthread_create(&chaos_threads[nchaos++], NULL, thread_churn, (void *)(uintptr_t)(cfg.seed + 1));
	pthread_create(&chaos_threads[nchaos++], NULL, signaller, NULL);
}

void chaos_stop(void)
{
	for (int i = 0; i < nchaos; i++)
		pthread_join(chaos_threads[i], NULL);
	chaos.signals = __atomic_load_n(&signals_handled, __ATOMIC_RELAXED);
	if (cleanup_srcu_struct(&fork_dom) != 0)
		torture_fail("cleanup_srcu_struct() of the idle fork domain failed");
}
