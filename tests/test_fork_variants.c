/*
 * test_fork_variants: children made without the fork handlers: _Fork(),
 * clone() without CLONE_VM, syscall(SYS_fork) (doc/design.md, "Fork
 * variants").  Such a child is a copy of its parent that the library did
 * not see being made: the read side of private domains works there (on
 * the child's copy); the first count of a shared domain faults (SIGSEGV,
 * the slot pages are MADV_DONTFORK) or aborts (a thread's first section);
 * the update side and attach/reserve/detach abort naming the domain and
 * the mistake.  The handlers' fork() is test_fork's and test_shared_domain's.
 *
 * Bugs caught: a handler-less child counting in its parent's slot under
 * its parent's identity (after the parent died, recovery ended the
 * child's live sections); one taking a slot or the GP lock in its
 * parent's name; a private domain's grace period in such a child hanging
 * on a lock held by a thread it does not have, or failing with a
 * misleading "membarrier failed" message.
 */
#include "check.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#if defined(__SANITIZE_THREAD__)
#define UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define UNDER_TSAN 1
#endif
#endif

static struct srcu_struct *shared_a, *shared_b;   /* a: read before the forks, b: not */
static struct srcu_struct priv;

static void (*child_body)(void);

static int clone_entry(void *arg)
{
	(void)arg;
	child_body();
	_exit(0);
}

/* A child made by how ('F' _Fork(), 'C' clone(), 'S' syscall(SYS_fork))
 * runs body with its stderr captured.  Returns its wait status; out gets
 * what it said. */
static int run_child(char how, void (*body)(void), char *out, size_t len)
{
	static char stack[64 * 1024] __attribute__((aligned(16)));
	int p[2], status;
	size_t n = 0;
	pid_t pid;

	REQUIRE(pipe(p) == 0);
	fflush(NULL);
	child_body = body;
	if (how == 'C') {
		int saved = dup(2);

		dup2(p[1], 2);   /* the child inherits it; we get ours back */
		pid = clone(clone_entry, stack + sizeof(stack), SIGCHLD, NULL);
		dup2(saved, 2);
		close(saved);
	} else {
		if (how == 'F')
			pid = _Fork();
		else
#ifdef SYS_fork
			pid = (pid_t)syscall(SYS_fork);
#else
			pid = (pid_t)syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
#endif
		if (pid == 0) {
			dup2(p[1], 2);
			alarm(20);   /* a hang is a failure too */
			body();
			_exit(0);
		}
	}
	REQUIRE(pid > 0);
	close(p[1]);
	for (ssize_t r; n < len - 1 && (r = read(p[0], out + n, len - 1 - n)) > 0;)
		n += (size_t)r;
	out[n] = 0;
	close(p[0]);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	return status;
}

static const char *how_name(char how)
{
	return how == 'F' ? "_Fork()" : how == 'C' ? "clone()" : "syscall(SYS_fork)";
}

/* The child died of a fault (ASan reports a SEGV and exits 1). */
static void expect_fault(char how, const char *what, int status, const char *out)
{
	bool ok = (WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV) ||
		  (WIFEXITED(status) && WEXITSTATUS(status) != 0 && strstr(out, "SEGV"));

	if (!ok) {
		fprintf(stderr, "%s child, %s: wanted a fault, got status 0x%x; it said: %s\n",
			how_name(how), what, status, out);
		check_failures++;
	}
}

/* The child aborted, saying why and naming the domain. */
static void expect_abort(char how, const char *what, int status, const char *out,
			 const char *domain)
{
	bool ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT &&
		  strstr(out, "without fork()'s handlers") && strstr(out, domain);

	if (!ok) {
		fprintf(stderr, "%s child, %s: wanted an abort naming %s and the missing fork "
			"handlers, got status 0x%x; it said: %s\n", how_name(how), what, domain,
			status, out);
		check_failures++;
	}
}

static void expect_exit0(char how, const char *what, int status, const char *out)
{
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fprintf(stderr, "%s child, %s: wanted exit 0, got status 0x%x; it said: %s\n",
			how_name(how), what, status, out);
		check_failures++;
	}
}

/* ---- what the children do ---- */

static void read_shared_a(void)   /* its forking thread's slot page is absent */
{
	int idx = srcu_read_lock(shared_a);

	srcu_read_unlock(shared_a, idx);
}

static void read_shared_b(void)   /* a thread's first section: no slot in its name */
{
	int idx = srcu_read_lock(shared_b);

	srcu_read_unlock(shared_b, idx);
}

static void sync_shared(void)
{
	synchronize_srcu(shared_b);
}

static void detach_shared(void)
{
	(void)srcu_shared_detach(shared_b);
}

static void read_private(void)     /* works: the child's copy */
{
	int idx = srcu_read_lock(&priv);

	if (!srcu_read_lock_held(&priv))
		_exit(3);
	srcu_read_unlock(&priv, idx);
	if (srcu_read_lock_held(&priv))
		_exit(4);
}

static void sync_private(void)
{
	synchronize_srcu(&priv);
}

static void noop_cb(struct srcu_head *h)
{
	(void)h;
}

static void call_private(void)
{
	static struct srcu_head h;

	call_srcu(&priv, &h, noop_cb);
	srcu_barrier(&priv);
}

/* A fork() (with the handlers) of a handler-less child is no better. */
static void fork_then_sync(void)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		synchronize_srcu(&priv);
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		_exit(5);
	if (WIFSIGNALED(status))   /* not raise(): musl's names the parent's thread here */
		syscall(SYS_tgkill, (long)syscall(SYS_getpid), (long)syscall(SYS_gettid),
			WTERMSIG(status));
	_exit(WEXITSTATUS(status));
}

static void one_variant(char how)
{
	char out[4096];
	int st;

	st = run_child(how, read_shared_a, out, sizeof(out));
	expect_fault(how, "a section of a shared domain its thread had read", st, out);
	st = run_child(how, read_shared_b, out, sizeof(out));
	expect_abort(how, "a first section of a shared domain", st, out, "'fv-b'");
	st = run_child(how, sync_shared, out, sizeof(out));
	expect_abort(how, "synchronize_srcu() of a shared domain", st, out, "'fv-b'");
	st = run_child(how, detach_shared, out, sizeof(out));
	expect_abort(how, "srcu_shared_detach()", st, out, "'fv-b'");
	st = run_child(how, read_private, out, sizeof(out));
	expect_exit0(how, "a section of a private domain", st, out);
	st = run_child(how, sync_private, out, sizeof(out));
	expect_abort(how, "synchronize_srcu() of a private domain", st, out, "'fv-priv'");
	st = run_child(how, call_private, out, sizeof(out));
	expect_abort(how, "call_srcu() of a private domain", st, out, "'fv-priv'");
	st = run_child(how, fork_then_sync, out, sizeof(out));
	expect_abort(how, "synchronize_srcu() in its fork() child", st, out, "'fv-priv'");
}

int main(void)
{
	int fa = (int)syscall(SYS_memfd_create, "fv-a", 0);
	int fb = (int)syscall(SYS_memfd_create, "fv-b", 0);
	int idx;

#ifdef UNDER_TSAN
	printf("test_fork_variants: SKIP (ThreadSanitizer's runtime does not survive "
	       "_Fork() and clone() children)\n");
	return 77;
#endif
	/* qemu-user 7.2 returns 0 from madvise() without passing it on
	 * (linux-user/syscall.c: "a hint, so ignoring"): MADV_WIPEONFORK is
	 * never applied, the library's without-handlers word survives into
	 * every child, and no child made without the fork handlers is seen. */
	if (skip_if_emulated("test_fork_variants", "qemu-user ignores madvise(MADV_WIPEONFORK), "
			     "which the detection of _Fork()/clone()/SYS_fork children needs"))
		return 77;
	watchdog(60);
	REQUIRE(fa >= 0 && fb >= 0);
	REQUIRE(init_srcu_struct_shared(fa, 8, "fv-a", &shared_a) == 0);
	REQUIRE(init_srcu_struct_shared(fb, 8, "fv-b", &shared_b) == 0);
	REQUIRE(init_srcu_struct_named(&priv, "fv-priv") == 0);
	idx = srcu_read_lock(shared_a);   /* this thread's slot of a is mapped */
	srcu_read_unlock(shared_a, idx);
	idx = srcu_read_lock(&priv);
	srcu_read_unlock(&priv, idx);
	synchronize_srcu(&priv);
	one_variant('F');
	/* Bug caught on musl: its abort() in such a child signals the
	 * parent's thread id, cached in the descriptor the child inherits
	 * (the parent died instead); the library aborts through the
	 * kernel's own ids (report.c). */
	one_variant('C');
	one_variant('S');
	/* The parent goes on: its slots and GPs are its own. */
	synchronize_srcu(shared_a);
	synchronize_srcu(shared_b);
	synchronize_srcu(&priv);
	CHECK_EQ(srcu_shared_detach(shared_a), 0);
	CHECK_EQ(srcu_shared_detach(shared_b), 0);
	CHECK_EQ(cleanup_srcu_struct(&priv), 0);
	return check_report("test_fork_variants");
}
