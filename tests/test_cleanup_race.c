/*
 * test_cleanup_race: cleanup_srcu_struct() against update-side calls in
 * progress, white-box, with the test-only srcu_torture objects.
 *
 * Bug caught: cleanup counted only the callers that slept on the domain's
 * event word, so it returned 0 while a synchronize_srcu() had entered
 * and not yet slept (spinning for another runner's grace period, or
 * about to take gp_lock); that call then ran a grace period on the
 * cleaned-up (possibly freed or re-initialized) domain.  The race is
 * nanoseconds wide: a hook stops each call just after it has entered the
 * domain, and cleanup must then say -EBUSY; once the call has returned,
 * cleanup succeeds.  Each update-side entry point is tried: synchronize,
 * expedited, srcu_barrier, call_srcu, and the three polled calls.
 *
 * Also (cleanup_in_handler_window()): the polled calls are
 * async-signal-safe, so a signal handler of the very thread that runs
 * cleanup may call them while cleanup holds the domain closed.  Bug
 * caught: the handler waited for cleanup's verdict, which its own thread
 * could not give until the handler returned: a spin for ever.
 *
 * Also (cleanup_while_async_held(), issue 35): a call_srcu() or
 * start_poll_synchronize_srcu() held after it has found the domain's
 * callback state (the ASYNC_GOT point), before it locks it.  Bug caught:
 * cleanup stopped the worker and freed that state before it closed the
 * domain, so the call went on to lock freed memory and start a worker on
 * it, and the callback was lost (srcu_barrier() found no state and
 * returned at once).  Cleanup now closes first: -EBUSY, nothing freed.
 */
#include "check.h"
#include "../src/internal.h"

static struct srcu_struct dom;
static int hold, held, release_it;
static int hold_async;   /* the next ASYNC_GOT on dom is held */
static int cb_runs;

static int signal_in_window;
static unsigned long handler_cookie;

static void polls_in_handler(int sig)
{
	(void)sig;
	handler_cookie = get_state_synchronize_srcu(&dom);
	(void)poll_state_synchronize_srcu(&dom, handler_cookie);
}

static void at_point(enum srcu__torture_point p, void *arg)
{
	if (p == SRCU_TORTURE_POINT_CLEANUP_CLOSED && arg == &dom &&
	    __atomic_exchange_n(&signal_in_window, 0, __ATOMIC_SEQ_CST)) {
		raise(SIGUSR1);   /* the handler runs here, inside the window */
		return;
	}
	if (arg != &dom)
		return;
	if ((p == SRCU_TORTURE_POINT_UPDATE_ENTERED &&
	     __atomic_exchange_n(&hold, 0, __ATOMIC_SEQ_CST)) ||
	    (p == SRCU_TORTURE_POINT_ASYNC_GOT &&
	     __atomic_exchange_n(&hold_async, 0, __ATOMIC_SEQ_CST))) {
		flag_set(&held);
		flag_wait(&release_it);
	}
}

static void cb(struct srcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&cb_runs, 1, __ATOMIC_SEQ_CST);
}

static void *call(void *arg)
{
	static struct srcu_head head;
	unsigned long cookie;

	switch ((int)(uintptr_t)arg) {
	case 0: synchronize_srcu(&dom); break;
	case 1: synchronize_srcu_expedited(&dom); break;
	case 2: srcu_barrier(&dom); break;
	case 3: call_srcu(&dom, &head, cb); break;
	case 4: (void)get_state_synchronize_srcu(&dom); break;
	case 5: (void)start_poll_synchronize_srcu(&dom); break;
	case 6: cookie = get_state_synchronize_srcu(&dom);
		flag_set(&hold);   /* the poll is the call held */
		(void)poll_state_synchronize_srcu(&dom, cookie);
		break;
	}
	return NULL;
}

static const char *const names[] = {
	"synchronize_srcu", "synchronize_srcu_expedited", "srcu_barrier", "call_srcu",
	"get_state_synchronize_srcu", "start_poll_synchronize_srcu",
	"poll_state_synchronize_srcu",
};

/* Cleanup while call `which` is held inside the domain. */
static void cleanup_while_inside(int which)
{
	pthread_t t;
	int err;

	REQUIRE(init_srcu_struct_named(&dom, "cleanup-race") == 0);
	held = release_it = 0;
	if (which != 6)
		flag_set(&hold);
	t = spawn(call, (void *)(uintptr_t)which);
	flag_wait(&held);
	err = cleanup_srcu_struct(&dom);
	if (err != -EBUSY)
		fprintf(stderr, "cleanup_srcu_struct() during %s(): %d, not -EBUSY\n",
			names[which], err);
	CHECK_EQ(err, -EBUSY);
	flag_set(&release_it);
	join(t);
	if (err == 0)
		return;   /* the domain is gone; the call ran on it (the bug) */
	srcu_barrier(&dom);            /* call_srcu's callback, start_poll's GP */
	while (cleanup_srcu_struct(&dom) == -EBUSY)
		sleep_ms(1);               /* a polled request the worker still serves */
}

/* Cleanup while call `which` (call_srcu or start_poll) holds the domain's
 * callback state, which an idle worker has, unlocked. */
static void cleanup_while_async_held(int which)
{
	static struct srcu_head warm;
	pthread_t t;
	int err;

	REQUIRE(init_srcu_struct_named(&dom, "cleanup-async") == 0);
	call_srcu(&dom, &warm, cb);   /* a worker, idle after the barrier */
	srcu_barrier(&dom);
	held = release_it = cb_runs = 0;
	flag_set(&hold_async);
	t = spawn(call, (void *)(uintptr_t)which);
	flag_wait(&held);
	err = cleanup_srcu_struct(&dom);
	if (err != -EBUSY)
		fprintf(stderr, "cleanup_srcu_struct() with %s() holding the callback state: "
			"%d, not -EBUSY\n", names[which], err);
	CHECK_EQ(err, -EBUSY);
	flag_set(&release_it);
	join(t);
	if (err == 0)
		return;
	srcu_barrier(&dom);
	if (which == 3 && cb_runs != 1)
		fprintf(stderr, "call_srcu() during a busy cleanup: its callback ran %d times, "
			"not once (lost with the freed state?)\n", cb_runs);
	CHECK_EQ(cb_runs, which == 3 ? 1 : 0);
	while ((err = cleanup_srcu_struct(&dom)) == -EBUSY)
		sleep_ms(1);               /* a polled request the worker still serves */
	CHECK_EQ(err, 0);
}

/* A polled call from a signal handler of the thread inside cleanup's
 * closed window: it returns, and the cleanup goes on to succeed. */
static void cleanup_in_handler_window(void)
{
	REQUIRE(init_srcu_struct_named(&dom, "cleanup-handler") == 0);
	signal(SIGUSR1, polls_in_handler);
	handler_cookie = 0;
	flag_set(&signal_in_window);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
	CHECK(handler_cookie != 0);   /* the handler ran, and returned */
	signal(SIGUSR1, SIG_DFL);
}

int main(void)
{
	watchdog(60);
	srcu__torture_point = at_point;
	for (int which = 0; which < 7; which++)
		cleanup_while_inside(which);
	cleanup_while_async_held(3);
	cleanup_while_async_held(5);
	cleanup_in_handler_window();
	return check_report("test_cleanup_race");
}
