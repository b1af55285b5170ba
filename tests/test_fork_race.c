/*
 * test_fork_race: fork() racing cleanup_srcu_struct() of a domain whose
 * call_srcu() worker ran.  Links the test-only srcu_torture objects, whose
 * hook stops the fork handler between reading the domain's async state
 * and locking it, so that the race window is milliseconds wide.
 *
 * Bug caught: cleanup freed the async state outside the registry lock
 * while the fork handler (which holds that lock) had read the pointer
 * and was about to lock it: a use-after-free, reported by the ASan stage
 * of make check (without ASan it locks freed memory, silently or not).
 * Now cleanup detaches it under the registry lock and waits for the fork.
 */
#include "check.h"
#include "../src/torture.h"

static struct srcu_struct dom;
static int cleaning, cleaned, cleanup_err;

/* In fork_prepare(), per live domain: give a racing cleanup the time to
 * free the async state just read (it cannot, once it must take the
 * lock), then touch it as the handler's lock is about to: freed memory
 * there is ASan's heap-use-after-free (the lock itself is in libc, which
 * ASan does not instrument). */
static void at_point(enum srcu__torture_point p, void *async)
{
	if (p != SRCU_TORTURE_POINT_FORK_PREPARE || !async || !flag_get(&cleaning))
		return;
	for (int i = 0; i < 200 && !flag_get(&cleaned); i++)
		sleep_us(100);
	(void)*(volatile char *)async;
}

static void *cleaner(void *arg)
{
	(void)arg;
	cleanup_err = cleanup_srcu_struct(&dom);
	flag_set(&cleaned);
	return NULL;
}

static void noop_cb(struct srcu_head *h)
{
	(void)h;
}

static void race_once(void)
{
	struct srcu_head h;
	pthread_t t;
	int status;
	pid_t pid;

	REQUIRE(init_srcu_struct_named(&dom, "fork-race") == 0);
	call_srcu(&dom, &h, noop_cb);   /* the worker and its state exist */
	srcu_barrier(&dom);
	cleaned = 0;
	flag_set(&cleaning);
	t = spawn(cleaner, NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(0);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	join(t);
	__atomic_store_n(&cleaning, 0, __ATOMIC_SEQ_CST);
	CHECK_EQ(cleanup_err, 0);
}

int main(void)
{
	watchdog(60);
	srcu__torture_point = at_point;
	for (int i = 0; i < 5; i++)
		race_once();
	return check_report("test_fork_race");
}
