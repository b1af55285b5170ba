/*
 * torture-shared.c: what srcu-torture --processes adds for issue 34
 * (doc/shared.md: one creator per file, recovery by the next attacher,
 * detach while a thread is inside, the trust boundary).
 *
 * The scenario process, forked by the supervisor beside the torture
 * process, runs rounds on scratch domains of their own files until the
 * run stops, one kind after the other, 100-300 ms apart:
 *
 *   creators (memfd)  2-4 children call init_srcu_struct_shared() at once
 *   creators (path)   on one file: a memfd they inherit (one open file),
 *                     or a 0600 file in /dev/shm (or /tmp) that each
 *                     opens by its path.  Exactly one gets 0, the others
 *                     -EEXIST; they attach, the creator holds a section,
 *                     and a synchronize_srcu() of another child must not
 *                     return before that section ended.  Catches two
 *                     creators both getting 0 (the format of the second
 *                     zeroed the first's live domain).
 *   crash-all         2-4 children attach to a domain of as many slots,
 *                     each holds a section, some also wait in
 *                     synchronize_srcu() in another thread; all are
 *                     SIGKILLed at once (one process group).  A fresh
 *                     process must attach (0: the attach recovers the
 *                     dead, the file being full) and its synchronize_srcu()
 *                     must end, with every dead section reported.  Catches
 *                     the attach that said -ENOSPC for ever once every
 *                     owner had died inside a section.
 *   detach-race       one child holds a section, a second runs a grace
 *                     period that waits for it, and in a third one thread
 *                     waits in synchronize_srcu() while another calls
 *                     srcu_shared_detach(): -EBUSY while the waiter is
 *                     inside (it cannot return before the section ends),
 *                     0 once it has returned.  Catches the detach that
 *                     unmapped the domain under a waiting caller.
 *
 * --cotenant (its own run, cotenant_main()): a co-tenant process maps a
 * shared domain's file and rewrites its words at random while victim
 * processes, attached to it, also run private domains with their own
 * readers and updaters and an age/poison oracle.  The private domains
 * must stay correct and live; the shared one may stall, and a victim may
 * abort over it (a misuse report), but a victim killed by SIGSEGV or
 * SIGBUS is a failure (memory outside the file was corrupted).  A
 * quarter of its writes aim at the domain's read-side words in the file
 * (slot_word, lock_word, srcu__reader_kind), with the word numbers of the
 * victims' private domains: a library whose inline read side took its
 * counter's word from the file would count a shared section's lock or
 * unlock in a private domain's counters, and a private grace period would
 * end under an open section (the oracle's "poisoned" or "aged").
 * Catches: the read side trusting the file's words.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "srcu-torture.h"
#include "../src/torture.h"   /* the library's test-only hooks */

#define S_MAXP      4          /* processes of a round */
#define S_KILLED    8
#define C_VICTIMS   8
#define C_PRIV      2          /* private domains per victim */
#define C_POOL      4          /* objects per private domain */

/* One round's meeting place (reset by the scenario process between
 * rounds, when none of its children is left).  Flags are plain words that
 * processes poll: each set with release, read with acquire (flag_set(),
 * flag_get()).  The oracle's "unlocking" flags are relaxed: the grace
 * period's guarantee itself is what orders them (a section's stores are
 * seen by whoever returns from a grace period that waited for it). */
struct round {
	int go, created, decided, winners, attached, inside, gp_called, unlocking;
	int release, t1_entered, t1_done, in_gp;
	int rc[S_MAXP];
	int killed[S_KILLED];
	int nkilled, expect_dead;
	unsigned long dead_reports, dead_sections;
	int bad_pid;
};

/* A victim's private domains, as the supervisor sees them. */
struct cvictim {
	int pid, state;                   /* 1 live, 0 none */
	unsigned long reads[C_PRIV], gps[C_PRIV], bad;
	int64_t progress_ns[C_PRIV];      /* the updater's last grace period */
};

struct shared_area {
	struct round r;
	/* scenarios */
	unsigned long creator_rounds[2], creators, crash_rounds, crash_killed, crash_in_gp;
	unsigned long crash_sections, detach_rounds, detach_ebusy, stall_reports;
	int64_t max_recover_ns;
	/* --cotenant */
	unsigned long cot_writes, cot_forks, cot_aborts, cot_refused, cot_shared_reads;
	unsigned long cot_shared_gps;
	struct cvictim v[C_VICTIMS];
	int created;
};

static struct shared_area *S;
static struct round *R;

static void flag_set(int *f, int v)
{
	/* Release: pairs with flag_get()'s acquire in the polling process. */
	__atomic_store_n(f, v, __ATOMIC_RELEASE);
}

static int flag_get(int *f)
{
	/* Acquire: pairs with flag_set()'s release. */
	return __atomic_load_n(f, __ATOMIC_ACQUIRE);
}

static int flag_add(int *f)
{
	/* Acq_rel: a counter of arrivals, read by flag_get() (acquire) in
	 * the polling process; it also orders the stores before it (the rc
	 * of a creator) for that reader. */
	return __atomic_fetch_add(f, 1, __ATOMIC_ACQ_REL);
}

/* Generous bounds: the machine may be loaded.  A child's own waits end
 * first (round_s()), then the scenario process's wait for the child. */
static double round_s(void)
{
	return cfg.stall_s + 15;
}

static double reap_s(void)
{
	return round_s() + 10;
}

int shared_setup(void)
{
	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
		return -1;
	R = &S->r;
	return 0;
}

/* Poll *f until it reaches v; false (and the child exits 1) after the
 * round's bound: the scenario process reports what did not happen. */
static void await(int *f, int v, const char *what)
{
	int64_t until = now_ns() + (int64_t)(round_s() * 1e9);

	while (flag_get(f) < v) {
		if (now_ns() > until) {
			torture_fail("scenario: process %d waited %.0f s for %s", (int)getpid(),
				     round_s(), what);
			_exit(1);
		}
		sleep_ns(MS / 2);
	}
}

/* Detach, retrying while -EBUSY (a grace period still needed: others'). */
static void detach_retry(struct srcu_struct *sp, const char *what)
{
	int64_t until = now_ns() + (int64_t)(round_s() * 1e9);
	int err;

	while ((err = srcu_shared_detach(sp)) == -EBUSY && now_ns() < until)
		sleep_ns(MS);
	if (err)
		torture_fail("scenario %s: srcu_shared_detach() in process %d returned %d", what,
			     (int)getpid(), err);
}

static pid_t fork_child(void (*fn)(int k, int n, int fd, const char *path), int k, int n,
			int fd, const char *path, pid_t pgrp)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		if (pgrp >= 0)
			setpgid(0, pgrp);
		fn(k, n, fd, path);
		_exit(0);
	}
	if (pid > 0 && pgrp >= 0)
		setpgid(pid, pgrp ? pgrp : pid);   /* both sides: no race */
	if (pid < 0)
		torture_fail("scenario: fork: %s", strerror(errno));
	return pid;
}

/* Wait for n children by the round's bound: each must exit 0. */
static void reap(pid_t *pids, int n, const char *what)
{
	int64_t until = now_ns() + (int64_t)(reap_s() * 1e9);

	for (int i = 0; i < n; i++) {
		int status = 0;
		pid_t r;

		if (pids[i] <= 0)
			continue;
		while ((r = waitpid(pids[i], &status, WNOHANG)) == 0 && now_ns() < until)
			sleep_ns(MS);
		if (r != pids[i]) {
			torture_fail("scenario %s: process %d did not finish in %.0f s: it hangs", what,
				     pids[i], reap_s());
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &status, 0);
		} else if (WIFSIGNALED(status)) {
			torture_fail("scenario %s: process %d died of signal %d (%s)", what, pids[i],
				     WTERMSIG(status), strsignal(WTERMSIG(status)));
		} else if (WEXITSTATUS(status) != 0 &&
			   !__atomic_load_n(&run->failures, __ATOMIC_RELAXED)) {
			torture_fail("scenario %s: process %d exited with status %d", what, pids[i],
				     WEXITSTATUS(status));
		}
	}
}

/* Recoveries reported in the scenario's processes: only of processes
 * the crash-all round killed. */
static void scen_on_report(const struct srcu_stall *s, void *arg)
{
	bool ours = false;

	(void)arg;
	if (!s->dead_pid) {
		__atomic_fetch_add(&S->stall_reports, 1, __ATOMIC_RELAXED);
		return;
	}
	for (int i = 0; i < __atomic_load_n(&R->nkilled, __ATOMIC_RELAXED); i++)
		ours |= R->killed[i] == s->dead_pid;
	if (!ours) {
		torture_fail("scenario: libsrcu reported process %d dead in domain %s with %lu "
			     "sections, but no scenario killed it", s->dead_pid, s->domain,
			     s->dead_sections);
		return;
	}
	__atomic_fetch_add(&R->dead_reports, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&R->dead_sections, s->dead_sections, __ATOMIC_RELAXED);
}

/* ---- creators ---- */

static void creator(int k, int n, int fd, const char *path)
{
	struct srcu_struct *sp = NULL;
	int err, idx;

	if (path && (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		torture_fail("scenario creators: open(%s): %s", path, strerror(errno));
		_exit(1);
	}
	flag_add(&R->go);
	await(&R->go, n, "the other creators");
	/* All at once, as near as the machine allows. */
	flag_add(&R->release);
	for (int64_t until = now_ns() + 50 * MS; flag_get(&R->release) < n && now_ns() < until;)
		sched_yield();
	err = init_srcu_struct_shared(fd, 8, "tcreate", &sp);
	R->rc[k] = err;
	if (err == 0)
		flag_add(&R->winners);
	flag_add(&R->decided);
	if (err == 0) {
		flag_set(&R->created, 1);
		idx = srcu_read_lock(sp);
		flag_set(&R->inside, 1);
		await(&R->decided, n, "every creator's answer");
		if (flag_get(&R->winners) != 1) {
			if (flag_add(&R->bad_pid) == 0)
				torture_fail("scenario creators (%s): %d of %d concurrent "
					     "init_srcu_struct_shared() calls on one file returned 0 "
					     "(one creator per file)", path ? "path" : "memfd",
					     flag_get(&R->winners), n);
			_exit(1);
		}
		await(&R->gp_called, 1, "a synchronize_srcu() of another process");
		sleep_ns(30 * MS);   /* the updater is waiting, if it can be */
		/* Relaxed: ordered by the grace period (struct round). */
		__atomic_store_n(&R->unlocking, 1, __ATOMIC_RELAXED);
		srcu_read_unlock(sp, idx);
		detach_retry(sp, "creators");
		return;
	}
	if (err != -EEXIST) {
		torture_fail("scenario creators (%s): init_srcu_struct_shared() in creator %d of %d "
			     "returned %d, neither 0 nor -EEXIST", path ? "path" : "memfd", k, n, err);
		_exit(1);
	}
	await(&R->created, 1, "the creator's domain");
	if ((err = srcu_shared_attach(fd, &sp)) != 0) {
		torture_fail("scenario creators: srcu_shared_attach() after the creator returned "
			     "returned %d", err);
		_exit(1);
	}
	if (flag_add(&R->attached) == 0) {
		await(&R->inside, 1, "the creator's section");
		flag_set(&R->gp_called, 1);
		synchronize_srcu(sp);
		if (!__atomic_load_n(&R->unlocking, __ATOMIC_RELAXED))
			torture_fail("scenario creators (%s): synchronize_srcu() in process %d returned "
				     "while the creator's section was open", path ? "path" : "memfd",
				     (int)getpid());
	}
	detach_retry(sp, "creators");
}

static void round_creators(unsigned int *seed, bool by_path)
{
	int n = 2 + (int)(rnd(seed) % (S_MAXP - 1)), fd = -1, winners = 0;
	pid_t pids[S_MAXP];
	char path[96] = "";

	if (by_path) {
		snprintf(path, sizeof(path), "%s/srcu-torture-%d-%lu",
			 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid(),
			 S->creator_rounds[1]);
		unlink(path);
	} else if ((fd = memfd_create("srcu-torture-creators", MFD_CLOEXEC)) < 0) {
		torture_fail("scenario creators: memfd_create: %s", strerror(errno));
		return;
	}
	for (int k = 0; k < n; k++)
		pids[k] = fork_child(creator, k, n, fd, by_path ? path : NULL, -1);
	reap(pids, n, by_path ? "creators (path)" : "creators (memfd)");
	for (int k = 0; k < n; k++)
		winners += flag_get(&R->decided) == n && R->rc[k] == 0;
	if (flag_get(&R->decided) == n && winners != 1 && !flag_get(&R->bad_pid))
		torture_fail("scenario creators (%s): %d of %d concurrent init_srcu_struct_shared() "
			     "calls on one file returned 0 (one creator per file)",
			     by_path ? "path" : "memfd", winners, n);
	if (by_path && unlink(path) != 0)
		torture_fail("scenario creators: unlink(%s): %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	bump(&S->creator_rounds[by_path]);
	__atomic_fetch_add(&S->creators, (unsigned long)n, __ATOMIC_RELAXED);
}

/* ---- crash of every attached process ---- */

static void *crash_gp(void *arg)
{
	flag_add(&R->in_gp);
	synchronize_srcu(arg);   /* waits for every section: until killed */
	return NULL;
}

static void crasher(int k, int n, int fd, const char *path)
{
	struct srcu_struct *sp = NULL;
	pthread_t t;
	int err;

	(void)path;
	if (k == 0) {
		err = init_srcu_struct_shared(fd, (unsigned int)n, "tcrash", &sp);
		if (!err)
			flag_set(&R->created, 1);
	} else {
		await(&R->created, 1, "the crash domain");
		err = srcu_shared_attach(fd, &sp);
	}
	if (err) {
		torture_fail("scenario crash-all: process %d of %d: %s returned %d", k, n,
			     k ? "srcu_shared_attach()" : "init_srcu_struct_shared()", err);
		_exit(1);
	}
	(void)srcu_read_lock(sp);   /* held until the SIGKILL */
	if (k % 2 == 1 && pthread_create(&t, NULL, crash_gp, sp) != 0)
		_exit(1);
	flag_add(&R->inside);
	sleep_ns((int64_t)(round_s() * 1e9));   /* killed long before */
	_exit(1);
}

/* The fresh process: attach to the file whose every process died. */
static void recoverer(int k, int n, int fd, const char *path)
{
	struct srcu_struct *sp = NULL;
	int64_t t0 = now_ns();
	int err;

	(void)k;
	(void)path;
	err = srcu_shared_attach(fd, &sp);
	if (err) {
		torture_fail("scenario crash-all: srcu_shared_attach() after all %d attached processes "
			     "were killed inside sections returned %d (%s): no recovery by the next "
			     "attacher", n, err, strerror(-err));
		_exit(1);
	}
	synchronize_srcu(sp);   /* bounded by reap() */
	store_max(&S->max_recover_ns, now_ns() - t0);
	if (__atomic_load_n(&R->dead_sections, __ATOMIC_RELAXED) != (unsigned long)n)
		torture_fail("scenario crash-all: %lu dead sections reported (%lu reports) after %d "
			     "processes were killed holding one each",
			     __atomic_load_n(&R->dead_sections, __ATOMIC_RELAXED),
			     __atomic_load_n(&R->dead_reports, __ATOMIC_RELAXED), n);
	detach_retry(sp, "crash-all");
}

static void round_crash(unsigned int *seed)
{
	int n = 2 + (int)(rnd(seed) % (S_MAXP - 1)), fd;
	pid_t pids[S_MAXP], pg = 0;

	if ((fd = memfd_create("srcu-torture-crash", MFD_CLOEXEC)) < 0) {
		torture_fail("scenario crash-all: memfd_create: %s", strerror(errno));
		return;
	}
	for (int k = 0; k < n; k++) {
		pids[k] = fork_child(crasher, k, n, fd, NULL, pg);
		if (k == 0)
			pg = pids[0];
		R->killed[k] = pids[k];
	}
	__atomic_store_n(&R->nkilled, n, __ATOMIC_RELAXED);
	{
		int64_t until = now_ns() + (int64_t)(round_s() * 1e9);

		while ((flag_get(&R->inside) < n || flag_get(&R->in_gp) < n / 2) &&
		       now_ns() < until)
			sleep_ns(MS / 2);
	}
	sleep_ns((int64_t)(rnd(seed) % 20) * MS);   /* the GPs go to sleep, or not */
	bump(&S->crash_rounds);
	__atomic_fetch_add(&S->crash_in_gp, (unsigned long)flag_get(&R->in_gp), __ATOMIC_RELAXED);
	kill(-pg, SIGKILL);   /* all at once */
	for (int k = 0; k < n; k++) {
		int status;

		waitpid(pids[k], &status, 0);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
			torture_fail("scenario crash-all: process %d ended by itself (status %#x) "
				     "before its kill", pids[k], status);
	}
	__atomic_fetch_add(&S->crash_killed, (unsigned long)n, __ATOMIC_RELAXED);
	pids[0] = fork_child(recoverer, 0, n, fd, NULL, -1);
	reap(pids, 1, "crash-all (the next attacher)");
	__atomic_fetch_add(&S->crash_sections, R->dead_sections, __ATOMIC_RELAXED);
	close(fd);
}

/* ---- detach racing synchronize ---- */

static __thread bool is_waiter;

static void detach_point(enum srcu__torture_point p, void *arg)
{
	(void)arg;
	if (p == SRCU_TORTURE_POINT_UPDATE_ENTERED && is_waiter)
		flag_set(&R->t1_entered, 1);
}

static void *waiter(void *arg)
{
	is_waiter = true;
	flag_set(&R->in_gp, 1);
	synchronize_srcu(arg);
	is_waiter = false;
	if (!__atomic_load_n(&R->unlocking, __ATOMIC_RELAXED))
		torture_fail("scenario detach-race: synchronize_srcu() returned while a section of "
			     "another process was open");
	flag_set(&R->t1_done, 1);
	return NULL;
}

static void racer(int k, int n, int fd, const char *path)
{
	struct srcu_struct *sp = NULL;
	int err, idx;

	(void)n;
	(void)path;
	if (k == 0) {
		if ((err = init_srcu_struct_shared(fd, 8, "tdetach", &sp)) == 0)
			flag_set(&R->created, 1);
	} else {
		await(&R->created, 1, "the detach domain");
		err = srcu_shared_attach(fd, &sp);
	}
	if (err) {
		torture_fail("scenario detach-race: process %d: attach or create returned %d", k, err);
		_exit(1);
	}
	if (k == 1) {   /* the reader */
		idx = srcu_read_lock(sp);
		flag_set(&R->inside, 1);
		await(&R->release, 1, "the detaching process's word");
		/* Relaxed: ordered by the grace period (struct round). */
		__atomic_store_n(&R->unlocking, 1, __ATOMIC_RELAXED);
		srcu_read_unlock(sp, idx);
	} else if (k == 2) {   /* another process's grace period */
		await(&R->inside, 1, "the reader's section");
		flag_set(&R->gp_called, 1);
		synchronize_srcu(sp);
		if (!__atomic_load_n(&R->unlocking, __ATOMIC_RELAXED))
			torture_fail("scenario detach-race: synchronize_srcu() returned while a "
				     "section of another process was open");
	} else {   /* k == 0: a waiter and a detacher */
		pthread_t t;
		int busy = 0;

		srcu__torture_point = detach_point;
		await(&R->gp_called, 1, "the other process's grace period");
		sleep_ns(2 * MS);
		if (pthread_create(&t, NULL, waiter, sp) != 0)
			_exit(1);
		/* Inside once the library's test point says so; a library
		 * without that point for shared domains (before issue 34) is
		 * judged 5 s after the waiter's call, long enough for it to
		 * be inside even on a loaded machine. */
		await(&R->in_gp, 1, "the waiter's call");
		for (int64_t until = now_ns() + 5000 * MS; !flag_get(&R->t1_entered) &&
		     now_ns() < until;)
			sleep_ns(MS / 2);
		/* The waiter cannot return while the reader's section is open:
		 * every detach until the release must say -EBUSY. */
		for (int i = 0; i < 4; i++) {
			err = srcu_shared_detach(sp);
			if (err != -EBUSY) {
				torture_fail("scenario detach-race: srcu_shared_detach() returned %d "
					     "while another thread of its process waited in "
					     "synchronize_srcu() (%s)", err,
					     err ? "" : "the domain was unmapped under the waiter");
				break;
			}
			busy++;
			sleep_ns(MS + (int64_t)(i * 3) * MS);
		}
		__atomic_fetch_add(&S->detach_ebusy, (unsigned long)busy, __ATOMIC_RELAXED);
		flag_set(&R->release, 1);
		pthread_join(t, NULL);
		srcu__torture_point = NULL;
		if (err != -EBUSY)
			return;   /* detached already */
	}
	detach_retry(sp, "detach-race");
}

static void round_detach(void)
{
	pid_t pids[3];
	int fd;

	if ((fd = memfd_create("srcu-torture-detach", MFD_CLOEXEC)) < 0) {
		torture_fail("scenario detach-race: memfd_create: %s", strerror(errno));
		return;
	}
	for (int k = 0; k < 3; k++)
		pids[k] = fork_child(racer, k, 3, fd, NULL, -1);
	reap(pids, 3, "detach-race");
	bump(&S->detach_rounds);
	close(fd);
}

/* The scenario process: rounds until the run stops. */
static __attribute__((noreturn)) void scenarios(void)
{
	unsigned int seed = cfg.seed * 2246822519u + 29;
	int64_t end = run->start_ns + (int64_t)(cfg.duration_s * 1e9);

	const char *only = getenv("SRCU_TORTURE_SCENARIOS");   /* "mcpd": a subset */

	srcu_set_stall_handler(scen_on_report, NULL);
	for (unsigned long n = 0; !stopping() && now_ns() < end; n++) {
		if (only && !strchr(only, "mcpd"[n % 4]))
			continue;
		memset(R, 0, sizeof(*R));
		switch (n % 4) {
		case 0: round_creators(&seed, false); break;
		case 1: round_crash(&seed); break;
		case 2: round_creators(&seed, true); break;
		default: round_detach(); break;
		}
		sleep_ns(100 * MS + (int64_t)(rnd(&seed) % 200) * MS);
	}
	_exit(0);
}

pid_t shared_start(void)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		setpgid(0, 0);
		scenarios();
	}
	if (pid > 0)
		setpgid(pid, pid);
	return pid;
}

/* After the run: the scenario process ends its round and exits. */
void shared_finish(pid_t pid)
{
	int64_t until = now_ns() + (int64_t)((round_s() * 2 + 5) * 1e9);
	int status = 0;
	pid_t r;

	if (pid <= 0)
		return;
	while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ns() < until)
		sleep_ns(5 * MS);
	if (r != pid) {
		torture_fail("the scenario process did not finish: it hangs");
		kill(-pid, SIGKILL);
		waitpid(pid, &status, 0);
	} else if (WIFSIGNALED(status)) {
		torture_fail("the scenario process died of signal %d (%s)", WTERMSIG(status),
			     strsignal(WTERMSIG(status)));
	}
}

void shared_report(void)
{
	printf("scenarios: %lu creator rounds on a memfd, %lu on a path (%lu creators); %lu "
	       "crash-all rounds (%lu processes killed, %lu of them in a grace period, %lu dead "
	       "sections recovered by the next attacher, within %.1f ms); %lu detach-race rounds "
	       "(%lu detaches -EBUSY under a waiter)\n", S->creator_rounds[0], S->creator_rounds[1],
	       S->creators, S->crash_rounds, S->crash_killed, S->crash_in_gp, S->crash_sections,
	       S->max_recover_ns / 1e6, S->detach_rounds, S->detach_ebusy);
}

void shared_json(FILE *f)
{
	fprintf(f, "  \"scenarios\": {\"creator_rounds_memfd\": %lu, \"creator_rounds_path\": %lu, "
		"\"creators\": %lu, \"crash_rounds\": %lu, \"crash_killed\": %lu, \"crash_in_gp\": %lu, "
		"\"crash_sections\": %lu, \"max_recover_ms\": %.1f, \"detach_rounds\": %lu, "
		"\"detach_ebusy\": %lu},\n", S->creator_rounds[0], S->creator_rounds[1], S->creators,
		S->crash_rounds, S->crash_killed, S->crash_in_gp, S->crash_sections,
		S->max_recover_ns / 1e6, S->detach_rounds, S->detach_ebusy);
}

/* ---- --cotenant ---- */

static int cot_fd;
static struct srcu_struct *cot_sp;   /* a victim's attachment, or NULL */

/* A private domain of a victim, with its objects (private memory). */
struct pobj {
	unsigned int magic, age, gen;
};

struct pdom {
	struct srcu_struct sp;
	unsigned int cur;                 /* the published object */
	struct pobj obj[C_POOL];
};

static struct pdom *pdoms;
static struct cvictim *me;
static int cot_stop;                  /* a victim: its threads end */

static void *priv_updater(void *arg)
{
	struct pdom *d = arg;
	int i = (int)(d - pdoms);
	unsigned int seed = (unsigned int)getpid() * 7919u + (unsigned int)i + 1;

	while (!__atomic_load_n(&cot_stop, __ATOMIC_RELAXED)) {
		unsigned int old = d->cur, nw = (old + 1) % C_POOL;
		struct pobj *o = &d->obj[old], *n = &d->obj[nw];

		/* nw was poisoned after the grace period that followed its
		 * retirement: no reader holds it. */
		__atomic_store_n(&n->gen, n->gen + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&n->age, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&n->magic, MAGIC_LIVE, __ATOMIC_RELAXED);
		/* Release: pairs with the reader's acquire load of cur. */
		__atomic_store_n(&d->cur, nw, __ATOMIC_RELEASE);
		__atomic_store_n(&o->age, 1, __ATOMIC_RELAXED);
		if (rnd(&seed) % 4 == 0)
			synchronize_srcu_expedited(&d->sp);
		else
			synchronize_srcu(&d->sp);
		/* No section that could have loaded old is left: the grace
		 * period orders these after their ends. */
		__atomic_store_n(&o->age, 2, __ATOMIC_RELAXED);
		__atomic_store_n(&o->magic, MAGIC_POISON, __ATOMIC_RELAXED);
		bump(&me->gps[i]);
		__atomic_store_n(&me->progress_ns[i], now_ns(), __ATOMIC_RELAXED);
		if (rnd(&seed) % 2)
			sleep_ns((int64_t)(rnd(&seed) % 500) * 1000);
	}
	return NULL;
}

static void priv_read(unsigned int *seed)
{
	int i = (int)(rnd(seed) % C_PRIV), idx, sidx = 0;
	struct pdom *d = &pdoms[i];
	bool nest = cot_sp && rnd(seed) % 4 == 0;
	unsigned int c, m0, m1, a1, g0, g1;
	struct pobj *o;

	if (nest)
		sidx = srcu_read_lock(cot_sp);   /* the disturbed domain, around */
	idx = srcu_read_lock(&d->sp);
	/* Acquire: pairs with the updater's release store of cur. */
	c = __atomic_load_n(&d->cur, __ATOMIC_ACQUIRE);
	o = &d->obj[c % C_POOL];
	m0 = __atomic_load_n(&o->magic, __ATOMIC_RELAXED);
	g0 = __atomic_load_n(&o->gen, __ATOMIC_RELAXED);
	switch (rnd(seed) % 4) {
	case 0: break;
	case 1: sched_yield(); break;
	case 2: sleep_ns((int64_t)(rnd(seed) % 200) * 1000); break;
	default: sleep_ns((int64_t)(rnd(seed) % 3000) * 1000); break;
	}
	m1 = __atomic_load_n(&o->magic, __ATOMIC_RELAXED);
	a1 = __atomic_load_n(&o->age, __ATOMIC_RELAXED);
	g1 = __atomic_load_n(&o->gen, __ATOMIC_RELAXED);
	srcu_read_unlock(&d->sp, idx);
	if (nest)
		srcu_read_unlock(cot_sp, sidx);
	bump(&me->reads[i]);
	if (m0 != MAGIC_LIVE || m1 != MAGIC_LIVE || a1 >= 2 || g0 != g1) {
		bump(&me->bad);
		torture_fail("cotenant: a reader of private domain %d in victim %d saw its object %s "
			     "inside its section: a grace period of a private domain ended early", i,
			     (int)getpid(), m1 == MAGIC_POISON || m0 == MAGIC_POISON ? "poisoned" :
			     g0 != g1 ? "reused" : a1 >= 2 ? "aged" : "corrupt");
	}
}

static void *priv_reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!__atomic_load_n(&cot_stop, __ATOMIC_RELAXED))
		priv_read(&seed);
	return NULL;
}

/* The shared domain's own traffic: sections and grace periods, whatever
 * becomes of them (never joined: they may hang in the disturbed domain). */
static void *shared_reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg | 1;

	while (!__atomic_load_n(&cot_stop, __ATOMIC_RELAXED)) {
		int idx = srcu_read_lock(cot_sp);

		if (rnd(&seed) % 8 == 0)
			sleep_ns((int64_t)(rnd(&seed) % 2000) * 1000);
		srcu_read_unlock(cot_sp, idx);
		bump(&S->cot_shared_reads);
	}
	return NULL;
}

static void *shared_updater(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&cot_stop, __ATOMIC_RELAXED)) {
		synchronize_srcu(cot_sp);
		bump(&S->cot_shared_gps);
		sleep_ns(MS);
	}
	return NULL;
}

static __attribute__((noreturn)) void victim(int slot, bool create)
{
	pthread_t upd[C_PRIV], rd[2], t;
	struct timespec dl;
	int err;

	me = &S->v[slot];
	if (create) {
		err = init_srcu_struct_shared(cot_fd, 16, "tcotenant", &cot_sp);
		if (err) {
			torture_fail("cotenant: init_srcu_struct_shared() returned %d", err);
			_exit(1);
		}
		flag_set(&S->created, 1);
	} else if ((err = srcu_shared_attach(cot_fd, &cot_sp)) != 0) {
		bump(&S->cot_refused);   /* the header was rewritten: private domains only */
		cot_sp = NULL;
	}
	if (cot_sp && srcu_shared_reserve(cot_sp, 3) != 0)
		bump(&S->cot_refused);
	pdoms = calloc(C_PRIV, sizeof(*pdoms));
	for (int i = 0; i < C_PRIV; i++) {
		if (!pdoms || init_srcu_struct(&pdoms[i].sp) != 0) {
			torture_fail("cotenant: init_srcu_struct() failed in victim %d", (int)getpid());
			_exit(1);
		}
		pdoms[i].obj[0].magic = MAGIC_LIVE;
		me->progress_ns[i] = now_ns();
		pthread_create(&upd[i], NULL, priv_updater, &pdoms[i]);
	}
	for (int k = 0; k < 2; k++)
		pthread_create(&rd[k], NULL, priv_reader, (void *)(uintptr_t)(getpid() * 31 + k));
	if (cot_sp) {
		pthread_create(&t, NULL, shared_reader, (void *)(uintptr_t)(getpid() * 17));
		pthread_create(&t, NULL, shared_updater, NULL);
	}
	while (!stopping())
		sleep_ns(10 * MS);
	__atomic_store_n(&cot_stop, 1, __ATOMIC_RELAXED);
	/* The private domains' threads must end; the readers' nested shared
	 * sections may hang, which is the shared domain's to do. */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += (time_t)round_s();
	for (int i = 0; i < C_PRIV; i++)
		if (pthread_timedjoin_np(upd[i], NULL, &dl) != 0) {
			torture_fail("cotenant: private domain %d's updater in victim %d did not "
				     "finish: its grace period hangs", i, (int)getpid());
			_exit(1);
		}
	for (int k = 0; k < 2; k++)
		if (pthread_timedjoin_np(rd[k], NULL, &dl) != 0)
			_exit(0);   /* stuck in a nested shared section */
	for (int i = 0; i < C_PRIV; i++)
		if ((err = cleanup_srcu_struct(&pdoms[i].sp)) != 0)
			torture_fail("cotenant: cleanup_srcu_struct() of private domain %d in victim %d "
				     "returned %d", i, (int)getpid(), err);
	_exit(0);
}

/* The domain's read-side words in the file (offset 256: slot_word,
 * lock_word, then srcu__reader_kind): a victim's private domain's slot
 * word and a lock word of it (ids from SRCU__ID_FIRST, in the order the
 * victims initialize them), or now and then a reader kind that this
 * domain does not have. */
static void rewrite_read_words(char *f, unsigned int *seed)
{
	uint16_t *words = (uint16_t *)(void *)(f + 256);
	unsigned int id = SRCU__ID_FIRST + rnd(seed) % (C_PRIV + 2);
	uint16_t w = (uint16_t)(id * SRCU__SLOT_WORDS);

	if (rnd(seed) % 8 == 0)
		__atomic_store_n((unsigned int *)(void *)(f + 260), 1 + rnd(seed) % 2, __ATOMIC_RELAXED);
	__atomic_store_n(&words[0], w, __ATOMIC_RELAXED);
	__atomic_store_n(&words[1], (uint16_t)(w + rnd(seed) % 2), __ATOMIC_RELAXED);
	bump(&S->cot_writes);
}

/* The co-tenant: rewrites the file's words, the read side's included. */
static __attribute__((noreturn)) void cotenant(void)
{
	unsigned long size = srcu_shared_size(16);
	unsigned int seed = cfg.seed * 2654435761u + 101;
	char *f = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, cot_fd, 0);

	if (f == MAP_FAILED) {
		torture_fail("cotenant: mmap of the domain's file: %s", strerror(errno));
		_exit(1);
	}
	while (!stopping()) {
		int nw = 1 + (int)(rnd(&seed) % 3);

		sleep_ns((int64_t)(1 + rnd(&seed) % 20) * MS);
		for (int w = 0; w < nw; w++) {
			unsigned long off;
			uint64_t v, cur;

			/* Mostly what attached processes use; the header and
			 * the name now and then (a new victim's attach then
			 * refuses the file). */
			unsigned int r = rnd(&seed) % 20;

			if (r >= 16) {
				rewrite_read_words(f, &seed);
				continue;
			}
			if (r == 0)
				off = (rnd(&seed) % 72) & ~7ul;                        /* header */
			else if (r == 1)
				off = 256 + 8 + ((rnd(&seed) % 56) & ~7ul);            /* name */
			else if (r < 6)
				off = 256 + 64 + ((rnd(&seed) % 192) & ~7ul);          /* update side */
			else if (r < 9)
				off = 4096 + ((rnd(&seed) % 4096) & ~7ul);             /* waits page */
			else if (r < 12)
				off = 8192 + (rnd(&seed) % 16) * 4096 + 2048 +         /* owner, state */
				      ((rnd(&seed) % 16) & ~7ul);
			else
				off = 8192 + (rnd(&seed) % 16) * 4096 +                /* counters */
				      ((rnd(&seed) % 256) & ~7ul);
			cur = __atomic_load_n((uint64_t *)(void *)(f + off), __ATOMIC_RELAXED);
			switch (rnd(&seed) % 8) {
			case 0: v = 0; break;
			case 1: v = ~0ull; break;
			case 2: v = cur + 1; break;
			case 3: v = cur - 1; break;
			case 4: v = (uint64_t)rnd(&seed) << 32 | rnd(&seed); break;
			case 5: v = cur ^ (1ull << (rnd(&seed) % 64)); break;
			case 6: v = (uint64_t)S->v[rnd(&seed) % C_VICTIMS].pid; break;
			default: v = __atomic_load_n((uint64_t *)(void *)(f + 8192 + 2048 +
					(rnd(&seed) % 16) * 4096), __ATOMIC_RELAXED); break; /* an owner */
			}
			__atomic_store_n((uint64_t *)(void *)(f + off), v, __ATOMIC_RELAXED);
			bump(&S->cot_writes);
		}
	}
	_exit(0);
}

static pid_t fork_victim(int slot, bool create)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		victim(slot, create);
	if (pid > 0) {
		__atomic_store_n(&S->v[slot].pid, (int)pid, __ATOMIC_RELAXED);
		__atomic_store_n(&S->v[slot].state, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < C_PRIV; i++)
			__atomic_store_n(&S->v[slot].progress_ns[i], now_ns(), __ATOMIC_RELAXED);
		bump(&S->cot_forks);
	}
	return pid;
}

/* A victim's end: 0, or an abort over the shared domain (allowed, and
 * replaced while the run goes on); a SIGSEGV or SIGBUS is memory outside
 * the file. */
static void victim_ended(int slot, int status)
{
	int pid = S->v[slot].pid;

	__atomic_store_n(&S->v[slot].state, 0, __ATOMIC_RELAXED);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) {
		bump(&S->cot_aborts);
	} else if (WIFSIGNALED(status)) {
		torture_fail("cotenant: victim %d died of signal %d (%s)%s", pid, WTERMSIG(status),
			     strsignal(WTERMSIG(status)),
			     WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGBUS ?
			     ": a co-tenant's writes to the file reached memory outside it" : "");
	} else if (WEXITSTATUS(status) != 0 && !__atomic_load_n(&run->failures, __ATOMIC_RELAXED)) {
		torture_fail("cotenant: victim %d exited with status %d", pid, WEXITSTATUS(status));
	}
}

static void cot_sum(struct totals *t)
{
	for (int s = 0; s < C_VICTIMS; s++)
		for (int i = 0; i < C_PRIV; i++) {
			t->reads += __atomic_load_n(&S->v[s].reads[i], __ATOMIC_RELAXED);
			t->gps += __atomic_load_n(&S->v[s].gps[i], __ATOMIC_RELAXED);
		}
}

static void cot_announce(unsigned long n, const char *msg)
{
	if (n < 8)
		fprintf(stderr, "srcu-torture: %s after %.2f s (pid %d): %s\n",
			n ? "failure" : "first failure", elapsed_s(), (int)getpid(), msg);
}

static void cot_progress_more(char *buf, size_t n)
{
	snprintf(buf, n, "  co-tenant writes %lu  victim aborts %lu", S->cot_writes, S->cot_aborts);
}

static void cot_report_more(const struct totals *t)
{
	unsigned long bad = 0;

	for (int s = 0; s < C_VICTIMS; s++)
		bad += S->v[s].bad;
	printf("cotenant: %lu words rewritten; %lu victims forked, %lu aborted over the shared "
	       "domain (allowed), %lu found it refused or full; shared domain: %lu sections, %lu "
	       "grace periods (anything goes); private domains: %lu reads, %lu grace periods, %lu "
	       "bad reads\n", S->cot_writes, S->cot_forks, S->cot_aborts, S->cot_refused,
	       S->cot_shared_reads, S->cot_shared_gps, t->reads, t->gps, bad);
}

static void cot_json_more(FILE *f, const struct totals *t)
{
	(void)t;
	fprintf(f, "  \"cotenant\": {\"writes\": %lu, \"victims\": %lu, \"aborts\": %lu, "
		"\"refused\": %lu, \"shared_reads\": %lu, \"shared_gps\": %lu},\n", S->cot_writes,
		S->cot_forks, S->cot_aborts, S->cot_refused, S->cot_shared_reads, S->cot_shared_gps);
}

static void cot_no_hang(int i, double secs)
{
	(void)i;
	(void)secs;
}

static const struct torture_ops cot_ops = {
	.announce = cot_announce, .writer_hangs = cot_no_hang,
	.chaos_stall_factor = 1e9, .sum = cot_sum, .progress_more = cot_progress_more,
	.report_more = cot_report_more, .json_more = cot_json_more,
};

/* --processes N --cotenant: N victims (at most C_VICTIMS) and the
 * co-tenant; the supervisor replaces victims that abort and watches the
 * private domains' grace periods (each must complete one within --stall
 * + 15 s: a hang). */
int cotenant_main(void)
{
	int nv = cfg.processes < C_VICTIMS ? cfg.processes : C_VICTIMS;
	int64_t end, limit = (int64_t)(round_s() * 1e9), next;
	pid_t cpid;

	ops = &cot_ops;
	cfg.writers = cfg.async_writers = cfg.poll_writers = 0;
	snprintf(run->backend, sizeof(run->backend), "%s", srcu_backend());
	if (shared_setup() != 0 || (cot_fd = memfd_create("srcu-torture-cotenant", 0)) < 0) {
		fprintf(stderr, "srcu-torture: cannot set up --cotenant: %s\n", strerror(errno));
		return 2;
	}
	printf("srcu-torture: --cotenant, backend %s, %.0f s, %d victims x %d private domains, "
	       "seed %u\n", srcu_backend(), cfg.duration_s, nv, C_PRIV, cfg.seed);
	snprintf(run->shape, sizeof(run->shape), "%d victims x %d private domains, a co-tenant",
		 nv, C_PRIV);
	run->start_ns = now_ns();
	end = run->start_ns + (int64_t)(cfg.duration_s * 1e9);
	next = run->start_ns;
	fork_victim(0, true);
	while (!flag_get(&S->created) && !stopping() && now_ns() < end)
		sleep_ns(MS);
	for (int s = 1; s < nv; s++)
		fork_victim(s, false);
	fflush(NULL);
	if ((cpid = fork()) == 0)
		cotenant();
	while (!stopping() && now_ns() < end) {
		int status;

		sleep_ns(20 * MS);
		if (now_ns() >= next) {
			progress_line();
			next += 3000 * MS;
		}
		for (int s = 0; s < nv; s++) {
			int pid = S->v[s].pid;

			if (S->v[s].state && waitpid(pid, &status, WNOHANG) == pid) {
				victim_ended(s, status);
				fork_victim(s, false);
				continue;
			}
			for (int i = 0; S->v[s].state && i < C_PRIV; i++)
				if (now_ns() - __atomic_load_n(&S->v[s].progress_ns[i],
							       __ATOMIC_RELAXED) > limit) {
					torture_fail("cotenant: private domain %d of victim %d completed no "
						     "grace period in %.0f s: it hangs", i, pid, round_s());
					kill(pid, SIGKILL);
				}
		}
	}
	torture_stop();
	for (int s = 0; s < nv; s++) {
		int64_t until = now_ns() + limit + 5 * 1000 * MS;
		int status, pid = S->v[s].pid;
		pid_t r;

		if (!S->v[s].state)
			continue;
		while ((r = waitpid(pid, &status, WNOHANG)) == 0 && now_ns() < until)
			sleep_ns(5 * MS);
		if (r == pid) {
			victim_ended(s, status);
		} else {
			torture_fail("cotenant: victim %d did not finish", pid);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
	}
	waitpid(cpid, NULL, 0);
	return torture_report();
}
