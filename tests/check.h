/*
 * check.h: the tests' tiny harness.  Typed assertions that print both
 * values, a per-test watchdog (a test that hangs fails with a message
 * instead of stalling ctest), thread helpers (a grace period in a thread,
 * a section held open in one) and a death-test helper that runs code in
 * a child process and checks how it died and what it said.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_TESTS_CHECK_H
#define SRCU_TESTS_CHECK_H

#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "srcu.h"
#include "../tools/clock.h"

static int check_failures;

#define CHECK(cond) \
	do { if (!(cond)) { fprintf(stderr, "%s:%d: CHECK(%s) failed\n", \
		__FILE__, __LINE__, #cond); check_failures++; } } while (0)

#define CHECK_EQ(a, b) \
	do { long long a_ = (long long)(a), b_ = (long long)(b); \
	     if (a_ != b_) { fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
		__FILE__, __LINE__, #a, #b, a_, b_); check_failures++; } } while (0)

#define CHECK_LT(a, b) \
	do { long long a_ = (long long)(a), b_ = (long long)(b); \
	     if (!(a_ < b_)) { fprintf(stderr, "%s:%d: %s < %s failed: %lld >= %lld\n", \
		__FILE__, __LINE__, #a, #b, a_, b_); check_failures++; } } while (0)

/* Fatal variant: stop the test at once. */
#define REQUIRE(cond) \
	do { if (!(cond)) { fprintf(stderr, "%s:%d: REQUIRE(%s) failed\n", \
		__FILE__, __LINE__, #cond); exit(1); } } while (0)

static inline long long now_ns(void)
{
	return clock_now_ns();   /* tools/clock.h: the tools' one clock */
}

/* Sleeps to a deadline, whatever signals land (tools/clock.h says why). */
static inline void sleep_ms(long ms)
{
	clock_sleep_ns(ms * 1000000LL);
}

static inline void sleep_us(long us)
{
	clock_sleep_ns(us * 1000LL);
}

/* A plain flag that one thread raises and another waits for. */
static inline void flag_set(int *f) { __atomic_store_n(f, 1, __ATOMIC_SEQ_CST); }
static inline int flag_get(int *f) { return __atomic_load_n(f, __ATOMIC_SEQ_CST); }
static inline void flag_wait(int *f)
{
	while (!flag_get(f))
		sleep_us(50);
}

static inline pthread_t spawn(void *(*fn)(void *), void *arg)
{
	pthread_t t;

	REQUIRE(pthread_create(&t, NULL, fn, arg) == 0);
	return t;
}

/* A reader that holds a section of h.sp open until told:
 * spawn(hold_thread, &h) raises h.inside once inside, and leaves when
 * h.release is raised. */
struct hold_arg {
	struct srcu_struct *sp;
	int inside, release;
};

static inline void *hold_thread(void *arg)
{
	struct hold_arg *h = arg;
	int idx = srcu_read_lock(h->sp);

	flag_set(&h->inside);
	flag_wait(&h->release);
	srcu_read_unlock(h->sp, idx);
	return NULL;
}

static inline void join(pthread_t t)
{
	REQUIRE(pthread_join(t, NULL) == 0);
}

/* A grace period in a thread of its own: spawn(sync_thread, &a) raises
 * a.started, runs synchronize_srcu(a.sp) and raises a.done once it
 * returned. */
struct sync_arg {
	struct srcu_struct *sp;
	int started, done;
};

static inline void *sync_thread(void *arg)
{
	struct sync_arg *a = arg;

	flag_set(&a->started);
	synchronize_srcu(a->sp);
	flag_set(&a->done);
	return NULL;
}

/* A memfd for a process-shared domain's file (doc/shared.md), and a
 * domain created in it: either failing fails the test (the error said). */
/* The state letter of thread tid of this process ('S': asleep), from
 * /proc; '?' when /proc does not say. */
static inline char thread_state(int tid)
{
	char path[64], buf[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	f = fopen(path, "r");
	if (!f)
		return '?';
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : '?';
}

static inline int new_memfd(void)
{
	int fd = (int)syscall(SYS_memfd_create, "srcu-test", 0);

	REQUIRE(fd >= 0);
	return fd;
}

static inline struct srcu_struct *shared_create(int fd, unsigned int slots, const char *name)
{
	struct srcu_struct *sp = NULL;
	int err = init_srcu_struct_shared(fd, slots, name, &sp);

	if (err)
		fprintf(stderr, "init_srcu_struct_shared: %d (%s)\n", err, strerror(-err));
	REQUIRE(err == 0 && sp);
	return sp;
}

static void watchdog_fired(int sig)
{
	(void)sig;
	static const char msg[] = "watchdog: test hung (a grace period that never ends?)\n";
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	_exit(2);
}

/*
 * Cross-architecture runs (doc/testing.md): ctest runs a cross build's
 * tests under qemu-user and tells each test so in SRCU_TEST_EXEC_PREFIX,
 * the emulator's command line ("qemu-aarch64 -L /usr/aarch64-linux-gnu"),
 * through which a test execs its own binaries (no binfmt_misc is assumed).
 * Empty or unset: the test runs natively.  SRCU_TEST_TIMEOUT_SCALE (an
 * integer, default 1) stretches the watchdogs as ctest's timeouts are.
 */
static inline const char *test_exec_prefix(void)
{
	const char *p = getenv("SRCU_TEST_EXEC_PREFIX");

	return p && *p ? p : NULL;
}

static inline bool test_emulated(void)
{
	return test_exec_prefix() != NULL;
}

/* True (and a SKIP line with the reason) when emulated: the caller skips
 * the case, which still runs on every native build. */
static inline bool skip_if_emulated(const char *what, const char *why)
{
	if (!test_emulated())
		return false;
	printf("SKIP under emulation (%s): %s: %s\n", test_exec_prefix(), what, why);
	fflush(stdout);
	return true;
}

/* execv() of a binary of this build, through the emulator when there is
 * one: argv[0] is the program itself.  Returns only on failure. */
static inline int test_execv(const char *path, char *const argv[])
{
	const char *prefix = test_exec_prefix();
	char buf[512], *words[32];
	int n = 0, i;

	if (!prefix)
		return execv(path, argv);
	snprintf(buf, sizeof(buf), "%s", prefix);
	for (char *w = strtok(buf, " "); w && n < 16; w = strtok(NULL, " "))
		words[n++] = w;
	words[n++] = (char *)path;
	for (i = 1; argv[i] && n < 31; i++)
		words[n++] = argv[i];
	words[n] = NULL;
	return execvp(words[0], words);
}

static inline unsigned int test_timeout_scale(void)
{
	const char *s = getenv("SRCU_TEST_TIMEOUT_SCALE");
	int k = s ? atoi(s) : 1;

	return k > 1 ? (unsigned int)k : 1;
}

/* Fail the whole test if it runs longer than seconds (times the scale). */
static inline void watchdog(unsigned int seconds)
{
	signal(SIGALRM, watchdog_fired);
	alarm(seconds * test_timeout_scale());
}

/*
 * Run fn in a child process with stderr captured.  Returns true if the
 * child was killed by SIGABRT and its stderr contains every string of
 * the NULL-terminated list.
 */
static inline bool dies_saying(void (*fn)(void), ...)
{
	int pipefd[2];
	char out[4096];
	size_t len = 0;
	int status;
	pid_t pid;
	va_list ap;
	const char *want;
	bool ok;

	REQUIRE(pipe(pipefd) == 0);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		signal(SIGALRM, SIG_DFL);
		alarm(20);   /* a hang is a failure too */
		fn();
		_exit(0);    /* survived: not the expected death */
	}
	close(pipefd[1]);
	for (;;) {
		ssize_t n = read(pipefd[0], out + len, sizeof(out) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = 0;
	close(pipefd[0]);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
	if (!ok)
		fprintf(stderr, "child did not abort (status 0x%x); it said: %s\n", status, out);
	va_start(ap, fn);
	while ((want = va_arg(ap, const char *)) != NULL) {
		if (!strstr(out, want)) {
			fprintf(stderr, "child's message lacks \"%s\"; it said: %s\n", want, out);
			ok = false;
		}
	}
	va_end(ap);
	return ok;
}

/* Capture what this process writes to stderr between begin and end. */
struct captured { int saved_fd; FILE *file; char text[4096]; };

static inline void capture_stderr_begin(struct captured *c)
{
	fflush(stderr);
	c->file = tmpfile();
	REQUIRE(c->file);
	c->saved_fd = dup(2);
	dup2(fileno(c->file), 2);
}

static inline const char *capture_stderr_end(struct captured *c)
{
	size_t n;

	fflush(stderr);
	dup2(c->saved_fd, 2);
	close(c->saved_fd);
	rewind(c->file);
	n = fread(c->text, 1, sizeof(c->text) - 1, c->file);
	c->text[n] = 0;
	fclose(c->file);
	return c->text;
}

static inline int check_report(const char *name)
{
	if (check_failures) {
		printf("%s: FAIL (%d checks failed, backend %s)\n", name, check_failures,
		       srcu_backend());
		return 1;
	}
	printf("%s: PASS (backend %s)\n", name, srcu_backend());
	return 0;
}

#endif
