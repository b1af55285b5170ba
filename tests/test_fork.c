/*
 * test_fork: the child of fork() has only the forking thread, and can use
 * every domain: sections and grace periods that other threads of the
 * parent held are gone with those threads.
 */
#include "check.h"
#include "../src/layout.h"   /* white-box: the private domain layout */

/* TSan cannot run threads in the child of a multithreaded fork ("dup
 * thread with used id"); under TSan the child stays single-threaded. */
#if defined(__SANITIZE_THREAD__)
#define CHILD_MAY_SPAWN 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CHILD_MAY_SPAWN 0
#endif
#endif
#ifndef CHILD_MAY_SPAWN
#define CHILD_MAY_SPAWN 1
#endif

/* Nor can qemu-user 7.2: a thread created in such a child asserts
 * (cpu_exec: "cpu == current_cpu") and the child dies with 127.  The
 * cases that need it are skipped under emulation only (check.h). */
static bool child_may_spawn(const char *what)
{
	return CHILD_MAY_SPAWN &&
	       !skip_if_emulated(what, "qemu-user 7.2 asserts when the child of a "
				 "multithreaded fork creates a thread");
}

static struct srcu_struct dom;
static int child_spawns;

static void *child_reader(void *arg)
{
	int idx = srcu_read_lock(&dom);

	(void)arg;
	srcu_read_unlock(&dom, idx);
	return NULL;
}

/* In the child: everything must work and nothing may hang. */
static int child_body(void)
{
	unsigned long b = srcu_batches_completed(&dom);
	int idx;

	alarm(20);
	synchronize_srcu(&dom);
	synchronize_srcu_expedited(&dom);
	idx = srcu_read_lock(&dom);
	srcu_read_unlock(&dom, idx);
	if (child_spawns)
		join(spawn(child_reader, NULL));
	synchronize_srcu(&dom);
	if (srcu_batches_completed(&dom) < b + 3)
		return 3;
	return cleanup_srcu_struct(&dom) == 0 ? 0 : 4;
}

/*
 * Bugs caught: a child that waits forever for a reader thread that does
 * not exist in it, or for the grace-period lock that another parent
 * thread held at fork time.
 */
static void test_fork_with_reader_and_gp(void)
{
	struct hold_arg h = { .sp = &dom };
	struct sync_arg a = { .sp = &dom };   /* sleeps: h is inside */
	pthread_t r, g;
	pid_t pid;
	int status;

	child_spawns = child_may_spawn("a reader thread in the child");
	REQUIRE(init_srcu_struct(&dom) == 0);
	r = spawn(hold_thread, &h);
	flag_wait(&h.inside);
	g = spawn(sync_thread, &a);
	flag_wait(&a.started);
	while (__atomic_load_n(&srcu__dom_area(&dom)->gp_lock, __ATOMIC_SEQ_CST) == 0)
		sleep_us(100);
	sleep_ms(20);   /* the GP is now asleep, waiting for the reader */
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0)
		_exit(child_body());
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	flag_set(&h.release);        /* the parent is unaffected */
	join(r);
	join(g);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
}

/* The forking thread itself may be inside a section; the child then is
 * too, and must end it before its own grace period. */
static void test_fork_inside_section(void)
{
	pid_t pid;
	int status, idx;

	REQUIRE(init_srcu_struct(&dom) == 0);
	idx = srcu_read_lock(&dom);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(20);
		srcu_read_unlock(&dom, idx);
		synchronize_srcu(&dom);
		_exit(cleanup_srcu_struct(&dom) == 0 ? 0 : 5);
	}
	srcu_read_unlock(&dom, idx);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
}

/*
 * Bug caught: a cookie of start_poll_synchronize_srcu() still pending at
 * fork() never completed in the child: its fork handler dropped the
 * request (gp_seq_needed = gp_seq), and the parent's worker, which runs
 * polled grace periods, is not in the child.  Here the forking thread's
 * own section holds the cookie's grace period back across the fork.
 */
static void test_fork_polled_cookie(void)
{
	unsigned long cookie;
	pid_t pid;
	int status, idx;

	if (!child_may_spawn("a polled cookie in the child"))
		return;   /* the child's worker is a thread */
	REQUIRE(init_srcu_struct(&dom) == 0);
	idx = srcu_read_lock(&dom);
	cookie = start_poll_synchronize_srcu(&dom);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		alarm(10);
		srcu_read_unlock(&dom, idx);
		/* Polls only: nothing else in the child runs a grace period. */
		while (!poll_state_synchronize_srcu(&dom, cookie))
			sleep_ms(1);
		_exit(0);
	}
	srcu_read_unlock(&dom, idx);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	while (!poll_state_synchronize_srcu(&dom, cookie))   /* the parent's too */
		sleep_ms(1);
	while (cleanup_srcu_struct(&dom) == -EBUSY)   /* its worker going idle */
		sleep_ms(1);
}

/*
 * Bug caught: fork() while another thread held the stall handler's lock
 * (here one that sets the handler over and over) left it held in the
 * child, whose next stall report then hung.  Each child stalls a grace
 * period on its own srcu_down_read() section, and the handler ends the
 * section.
 */
static struct srcu_struct stall_dom;
static int stall_idx, stall_ended, stop_setting;

static void end_stall(const struct srcu_stall *s, void *arg)
{
	(void)arg;
	if (!s->dead_pid && !stall_ended) {
		stall_ended = 1;
		srcu_up_read(&stall_dom, stall_idx);
	}
}

static void *set_handler_forever(void *arg)
{
	(void)arg;
	while (!flag_get(&stop_setting))
		srcu_set_stall_handler(end_stall, NULL);
	return NULL;
}

static void test_fork_while_handler_set(void)
{
	pthread_t t;
	int i, status = 0;

	REQUIRE(init_srcu_struct_named(&stall_dom, "stall-fork") == 0);
	REQUIRE(srcu_set_stall_timeout(&stall_dom, 1) == 0);
	srcu_set_stall_handler(end_stall, NULL);
	t = spawn(set_handler_forever, NULL);
	for (i = 0; i < 100 && status == 0; i++) {
		pid_t pid = fork();

		REQUIRE(pid >= 0);
		if (pid == 0) {
			alarm(5);
			stall_idx = srcu_down_read(&stall_dom);
			synchronize_srcu(&stall_dom);   /* a stall report ends it */
			_exit(stall_ended ? 0 : 3);
		}
		REQUIRE(waitpid(pid, &status, 0) == pid);
	}
	CHECK_EQ(status, 0);
	flag_set(&stop_setting);
	join(t);
	srcu_set_stall_handler(NULL, NULL);
	CHECK_EQ(cleanup_srcu_struct(&stall_dom), 0);
}

int main(void)
{
	watchdog(60);
	test_fork_with_reader_and_gp();
	test_fork_inside_section();
	test_fork_polled_cookie();
	test_fork_while_handler_set();
	return check_report("test_fork");
}
