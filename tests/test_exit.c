/*
 * test_exit: threads that exit inside their read-side sections while an
 * updater runs grace periods back to back.  The exit path ends the
 * sections as their unlocks would have, and must wake a grace period
 * that went to sleep waiting for them.
 *
 * Bug caught: the exit path stored the balancing unlock count and then
 * read the GP's waiting flag with no full fence between (the fence
 * backend's GP pairs with a plain fence, not a membarrier).  Store-load
 * reordering let both sides miss each other: the GP slept on with
 * balanced sums until the stall timer (forever with stall warnings off).
 * Here the stall timeout is 1 s and every report with no reader left is
 * a lost wake-up.  (Not 100 ms: under ASan on a loaded machine a reader
 * descheduled inside its few-microsecond section for 100 ms, leaving just
 * as the report was made, once looked like one.)  Before the fix this fired within 10-60 s of a
 * similar loop; this test runs 5 s (13 lost wake-ups in a 30 s run before the fix, so it
 * catches the bug most of the time), srcu-torture runs longer.
 *
 * Also: a section that a later pthread key destructor of the same thread
 * ends (tsd_guard_unlocks()).
 *
 * Usage: test_exit [seconds]
 */
#include "check.h"

#include <fcntl.h>

static struct srcu_struct dom;
static int stop;
static unsigned long gps, stalls, lost_wakeups;

static void on_stall(const struct srcu_stall *s, void *arg)
{
	(void)arg;
	__atomic_fetch_add(&stalls, 1, __ATOMIC_RELAXED);
	if (!s->nthreads && !s->down_readers)
		__atomic_fetch_add(&lost_wakeups, 1, __ATOMIC_RELAXED);
}

static void *updater(void *arg)
{
	(void)arg;
	while (!flag_get(&stop)) {
		synchronize_srcu(&dom);
		__atomic_fetch_add(&gps, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* Enter, hold for a few microseconds (around the GP's spin before it
 * sleeps), exit without unlocking. */
static void *exit_inside(void *arg)
{
	long long until = now_ns() + (long long)(uintptr_t)arg;

	(void)srcu_read_lock(&dom);
	while (now_ns() < until)
		;
	return NULL;
}

/* ---- a section that a later key destructor ends ----
 *
 * Bug caught: a guard object kept in thread-specific data, whose
 * destructor unlocks (same thread, legal), ran after libsrcu's exit hook
 * in the same destructor round: the hook had already ended the section,
 * and the unlock aborted the process ("without a matching
 * srcu_read_lock()").  The hook now waits for later rounds while
 * sections are open, and ends (and reports) only what is left. */
static DEFINE_SRCU(guard_dom);
static pthread_key_t guard_key;   /* made after libsrcu's: its destructor runs later */
static int guard_unlocked;

static void guard_unlock(void *arg)
{
	srcu_read_unlock(&guard_dom, (int)(uintptr_t)arg - 1);
	flag_set(&guard_unlocked);
}

static void *guard_thread(void *arg)
{
	(void)arg;
	pthread_setspecific(guard_key, (void *)(uintptr_t)(srcu_read_lock(&guard_dom) + 1));
	return NULL;
}

/* In a child (the bug aborts): the destructor's unlock neither aborts nor
 * is reported as an exit inside a section, and a grace period ends. */
static void tsd_guard_unlocks(void)
{
	struct captured c;
	int st;
	pid_t pid = fork();

	REQUIRE(pid >= 0);
	if (pid == 0) {
		REQUIRE(pthread_key_create(&guard_key, guard_unlock) == 0);
		capture_stderr_begin(&c);
		join(spawn(guard_thread, NULL));
		synchronize_srcu(&guard_dom);
		if (*capture_stderr_end(&c))
			fprintf(stderr, "guard child said: %s", c.text);
		_exit(!flag_get(&guard_unlocked) ? 3 : strstr(c.text, "exited inside") ? 4 : 0);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	CHECK_EQ(st, 0);   /* 3: no unlock; 4: reported as an exit inside; else a signal */
}

int main(int argc, char **argv)
{
	long long run_ns = (argc > 1 ? atoll(argv[1]) : 5) * 1000000000LL;
	long long end = now_ns() + run_ns;
	unsigned long threads = 0;
	unsigned int seed = 1;
	int saved_err, devnull;
	pthread_t u;

	watchdog((unsigned int)(run_ns / 1000000000LL) + 60);
	tsd_guard_unlocks();
	REQUIRE(init_srcu_struct_named(&dom, "exit-test") == 0);
	srcu_set_stall_timeout(&dom, 1000);
	srcu_set_stall_handler(on_stall, NULL);
	/* Each exit inside a section is reported on stderr: thousands. */
	fflush(stderr);
	saved_err = dup(2);
	devnull = open("/dev/null", O_WRONLY);
	REQUIRE(saved_err >= 0 && devnull >= 0);
	dup2(devnull, 2);
	u = spawn(updater, NULL);
	while (now_ns() < end) {
		long hold_ns = 5000 + (long)(rand_r(&seed) % 40000);

		join(spawn(exit_inside, (void *)(uintptr_t)hold_ns));
		threads++;
	}
	flag_set(&stop);
	join(u);
	dup2(saved_err, 2);
	printf("test_exit: %lu threads exited inside, %lu GPs, %lu stall reports, "
	       "%lu with no reader left\n", threads, gps, stalls, lost_wakeups);
	CHECK(threads > 0);
	CHECK(gps > 0);
	CHECK_EQ(lost_wakeups, 0);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
	return check_report("test_exit");
}
