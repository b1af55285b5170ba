/*
 * test_gate: every promise of include/srcu_gate.h.  Each test names the
 * bug it catches.  Where a test needs another thread to be asleep in the
 * gate, it waits for the gate's own counters to say so, never for a
 * fixed time.
 */
#include "check.h"
#include "srcu_gate.h"

static struct srcu_gate gate;

static void gate_fresh(void)
{
	REQUIRE(srcu_gate_init(&gate) == 0);
	srcu_set_name(&gate.srcu, "test-gate");
}

static void wait_sleepers(unsigned int n)
{
	while (__atomic_load_n(&gate.sleepers, __ATOMIC_SEQ_CST) < n)
		sleep_us(100);
}

/* ---- exclusive access ---- */

static int inside, in_fn, violations, stop;

static void *user_loop(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!flag_get(&stop)) {
		int tag = srcu_gate_enter(&gate);

		REQUIRE(tag >= 0);
		__atomic_fetch_add(&inside, 1, __ATOMIC_SEQ_CST);
		if (flag_get(&in_fn))
			__atomic_fetch_add(&violations, 1, __ATOMIC_SEQ_CST);
		if (rand_r(&seed) % 4 == 0)
			sleep_us(rand_r(&seed) % 300);     /* users may sleep inside */
		if (flag_get(&in_fn))
			__atomic_fetch_add(&violations, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_sub(&inside, 1, __ATOMIC_SEQ_CST);
		srcu_gate_exit(&gate, tag);
	}
	return NULL;
}

static int exclusive_fn(void *arg)
{
	(void)arg;
	if (__atomic_load_n(&inside, __ATOMIC_SEQ_CST) != 0)
		__atomic_fetch_add(&violations, 1, __ATOMIC_SEQ_CST);
	flag_set(&in_fn);
	sleep_us(200);
	__atomic_store_n(&in_fn, 0, __ATOMIC_SEQ_CST);
	return 7;
}

static void *resetter(void *arg)
{
	(void)arg;
	for (int i = 0; i < 150; i++)
		CHECK_EQ(srcu_gate_reset(&gate, exclusive_fn, NULL), 7);
	return NULL;
}

/* Bugs caught: a user running at the same time as fn (either side sees
 * the other), a lost wake-up of a user waiting for the reopen (hang). */
static void test_exclusive(void)
{
	pthread_t u[4], r[2];
	int i;

	gate_fresh();
	for (i = 0; i < 4; i++)
		u[i] = spawn(user_loop, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < 2; i++)
		r[i] = spawn(resetter, NULL);
	for (i = 0; i < 2; i++)
		join(r[i]);
	flag_set(&stop);
	for (i = 0; i < 4; i++)
		join(u[i]);
	CHECK_EQ(violations, 0);
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

/* ---- a reset waits for users, users wait for a reset ---- */

static int user_left, fn_done, release_fn;

static void *hold_inside(void *arg)
{
	int tag = srcu_gate_enter(&gate);

	(void)arg;
	flag_set(&inside);
	sleep_ms(100);
	flag_set(&user_left);
	srcu_gate_exit(&gate, tag);
	return NULL;
}

static int note_done_fn(void *arg)
{
	(void)arg;
	return flag_get(&user_left) ? 1 : -1;
}

/* Bug caught: a reset that runs fn while a user who entered before it is
 * still inside (asleep). */
static void test_reset_waits_for_users(void)
{
	pthread_t t;

	gate_fresh();
	inside = 0;
	t = spawn(hold_inside, NULL);
	flag_wait(&inside);
	CHECK_EQ(srcu_gate_reset(&gate, note_done_fn, NULL), 1);
	join(t);
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

static int blocking_fn(void *arg)
{
	(void)arg;
	flag_set(&in_fn);
	flag_wait(&release_fn);
	flag_set(&fn_done);
	return 42;
}

static void *reset_blocking(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)srcu_gate_reset(&gate, blocking_fn, NULL);
}

static void *enter_and_report(void *arg)
{
	int tag = srcu_gate_enter(&gate), seen;

	(void)arg;
	if (tag < 0)
		return (void *)(intptr_t)tag;
	seen = flag_get(&fn_done) ? 1 : -100;    /* entered only after the reset */
	srcu_gate_exit(&gate, tag);
	return (void *)(intptr_t)seen;
}

static int other_fn_calls;
static int other_fn(void *arg)
{
	(void)arg;
	__atomic_fetch_add(&other_fn_calls, 1, __ATOMIC_SEQ_CST);
	return 5;
}

static void *reset_other(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)srcu_gate_reset(&gate, other_fn, NULL);
}

static void start_blocking_reset(pthread_t *t)
{
	in_fn = fn_done = release_fn = 0;
	*t = spawn(reset_blocking, NULL);
	flag_wait(&in_fn);
}

static long join_result(pthread_t t)
{
	void *r;

	REQUIRE(pthread_join(t, &r) == 0);
	return (long)(intptr_t)r;
}

/*
 * Bugs caught: enter that does not sleep while a reset runs (enters
 * before fn is done), tryenter or a timed enter that sleeps or succeeds,
 * a second reset that runs its own fn instead of piggy-backing, and a
 * piggy-backer that returns before the reset it waited for, or with
 * another result.
 */
static void test_waiting_and_piggy_back(void)
{
	pthread_t reset, user, other;
	long long t0;

	gate_fresh();
	start_blocking_reset(&reset);
	CHECK_EQ(srcu_gate_tryenter(&gate), -EAGAIN);
	t0 = now_ns();
	CHECK_EQ(srcu_gate_enter_timeout(&gate, 20 * 1000 * 1000L), -ETIMEDOUT);
	CHECK(now_ns() - t0 >= 20 * 1000 * 1000LL);
	CHECK_EQ(srcu_gate_enter_timeout(&gate, 0), -ETIMEDOUT);
	user = spawn(enter_and_report, NULL);
	other = spawn(reset_other, NULL);
	wait_sleepers(1);
	while (!__atomic_load_n(&gate.piggy_backers, __ATOMIC_SEQ_CST))
		sleep_us(100);
	CHECK_EQ(srcu_gate_destroy(&gate), -EBUSY);   /* reset running, sleeper */
	flag_set(&release_fn);
	CHECK_EQ(join_result(reset), 42);
	CHECK_EQ(join_result(other), 42);             /* its result, not its own */
	CHECK_EQ(other_fn_calls, 0);
	CHECK_EQ(join_result(user), 1);
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

/*
 * A piggy-backer held between the wake-up of the reset it waited for and
 * its look at the result: a signal handler that blocks runs on top of its
 * pthread_cond_wait(), where it holds no lock, while a second reset runs
 * and ends.  Bug caught: a piggy-backer that returns the later reset's
 * result (one shared result word, read after the wake-up).
 */
static int piggy_held, release_piggy;

static void hold_in_handler(int sig)
{
	(void)sig;
	flag_set(&piggy_held);
	flag_wait(&release_piggy);   /* nanosleep: async-signal-safe */
}

static void test_piggy_back_own_result(void)
{
	struct sigaction sa;
	pthread_t reset, other;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = hold_in_handler;
	sigaction(SIGUSR2, &sa, NULL);
	gate_fresh();
	other_fn_calls = piggy_held = release_piggy = 0;
	start_blocking_reset(&reset);                 /* reset 1: 42 */
	other = spawn(reset_other, NULL);
	while (!__atomic_load_n(&gate.piggy_backers, __ATOMIC_SEQ_CST))
		sleep_us(100);
	/* It counted itself under the lock and released it only in
	 * pthread_cond_wait(): once we hold the lock, it waits there. */
	pthread_mutex_lock(&gate.reset_lock);
	pthread_mutex_unlock(&gate.reset_lock);
	pthread_kill(other, SIGUSR2);
	flag_wait(&piggy_held);
	flag_set(&release_fn);
	CHECK_EQ(join_result(reset), 42);             /* reset 1 ended, woke it */
	CHECK_EQ(srcu_gate_reset(&gate, other_fn, NULL), 5);   /* reset 2 */
	flag_set(&release_piggy);
	CHECK_EQ(join_result(other), 42);             /* reset 1's, not reset 2's */
	CHECK_EQ(other_fn_calls, 1);                  /* reset 2's fn only */
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

/* ---- EINTR ---- */

static int handler_runs, enter_returned;

static void count_signal(int sig)
{
	(void)sig;
	__atomic_fetch_add(&handler_runs, 1, __ATOMIC_SEQ_CST);
}

/* Enter once: untimed (arg NULL) or with a deadline an hour off. */
static void *enter_once(void *arg)
{
	int tag = arg ? srcu_gate_enter_timeout(&gate, (int64_t)3600 * 1000 * 1000 * 1000)
		      : srcu_gate_enter(&gate);

	flag_set(&enter_returned);
	if (tag >= 0)
		srcu_gate_exit(&gate, tag);
	return (void *)(intptr_t)tag;
}

/*
 * A user asleep in enter while a reset runs gets signals until enter
 * returns: the first may land before its futex call, and then the handler
 * runs and it sleeps on.  After each signal we wait for its handler or
 * for enter's return, a bounded while (a sanitizer may defer handlers),
 * so the loop always ends.  Then the reset ends: an enter that slept on
 * through every handler gets in and returns a tag.
 */
static void eintr_case(int sa_flags, int timed)
{
	struct sigaction sa;
	pthread_t reset, user;
	long result;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = count_signal;
	sa.sa_flags = sa_flags;
	sigaction(SIGUSR1, &sa, NULL);
	gate_fresh();
	enter_returned = 0;
	start_blocking_reset(&reset);
	user = spawn(enter_once, timed ? &gate : NULL);
	wait_sleepers(1);
	for (int i = 0; i < 200 && !flag_get(&enter_returned); i++) {
		int runs = flag_get(&handler_runs);

		pthread_kill(user, SIGUSR1);
		for (int j = 0; j < 100 && flag_get(&handler_runs) == runs &&
				!flag_get(&enter_returned); j++)
			sleep_us(100);
	}
	flag_set(&release_fn);
	result = join_result(user);
	if (result != -EINTR)
		fprintf(stderr, "%s enter, handler with%s SA_RESTART: %ld, not -EINTR\n",
			timed ? "timed" : "untimed", sa_flags ? "" : "out", result);
	CHECK_EQ(result, -EINTR);
	CHECK_EQ(join_result(reset), 42);
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

/* Bugs caught: a sleeper that ignores the signal (sleeps until the reset
 * ends) or reports it as something else; an untimed enter that sleeps on
 * after a handler installed with SA_RESTART (glibc's signal() sets it:
 * the kernel restarts an untimed FUTEX_WAIT) where the timed one returns
 * -EINTR. */
static void test_eintr(void)
{
	for (int restart = 0; restart < 2; restart++)
		for (int timed = 0; timed < 2; timed++)
			eintr_case(restart ? SA_RESTART : 0, timed);
}

/* ---- shutdown ---- */

static void *shutdown_thread(void *arg)
{
	(void)arg;
	return (void *)(intptr_t)srcu_gate_shutdown(&gate);
}

/* Bugs caught: shutdown returning while a user is inside, destroy
 * succeeding while one is, and enter, tryenter or reset succeeding after
 * shutdown. */
static void test_shutdown(void)
{
	pthread_t holder, sd;

	gate_fresh();
	user_left = inside = 0;
	holder = spawn(hold_inside, NULL);
	flag_wait(&inside);
	CHECK_EQ(srcu_gate_destroy(&gate), -EBUSY);   /* a user inside */
	sd = spawn(shutdown_thread, NULL);
	CHECK_EQ(join_result(sd), 0);
	CHECK(flag_get(&user_left));                  /* it waited for the user */
	join(holder);
	CHECK_EQ(srcu_gate_enter(&gate), -ESHUTDOWN);
	CHECK_EQ(srcu_gate_tryenter(&gate), -ESHUTDOWN);
	CHECK_EQ(srcu_gate_enter_timeout(&gate, 1000), -ESHUTDOWN);
	CHECK_EQ(srcu_gate_reset(&gate, other_fn, NULL), -ESHUTDOWN);
	CHECK_EQ(srcu_gate_shutdown(&gate), 0);       /* twice is fine */
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

/* Bugs caught: a user asleep in enter not woken by the shutdown (it would
 * sleep until the running reset ends, or for ever), and a shutdown that
 * returns while the reset's fn still runs. */
static void test_shutdown_wakes_sleepers(void)
{
	pthread_t reset, sleeper, sd;

	gate_fresh();
	start_blocking_reset(&reset);
	sleeper = spawn(enter_and_report, NULL);
	wait_sleepers(1);
	sd = spawn(shutdown_thread, NULL);
	CHECK_EQ(join_result(sleeper), -ESHUTDOWN);
	CHECK(!flag_get(&fn_done));                   /* woken before the reset ended */
	flag_set(&release_fn);
	CHECK_EQ(join_result(reset), 42);
	CHECK_EQ(join_result(sd), 0);
	CHECK_EQ(srcu_gate_enter(&gate), -ESHUTDOWN);
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

/* ---- the i915 deadlock and the wedge hook ---- */

static int wedged, wedge_calls;

static void *user_waits_for_reset(void *arg)
{
	int tag = srcu_gate_enter(&gate);

	(void)arg;
	flag_set(&inside);
	flag_wait(&wedged);   /* stands for "wait for the GPU the reset would fix" */
	srcu_gate_exit(&gate, tag);
	return NULL;
}

static void *user_briefly(void *arg)
{
	int tag = srcu_gate_enter(&gate);

	(void)arg;
	flag_set(&inside);
	sleep_us(50 * 1000);
	srcu_gate_exit(&gate, tag);
	return NULL;
}

static void wedge(void *arg)
{
	CHECK(arg == &wedged);
	__atomic_fetch_add(&wedge_calls, 1, __ATOMIC_SEQ_CST);
	flag_set(&wedged);    /* cancel what the users wait for */
}

/* Bug caught: a reset that deadlocks with a user who waits for the reset
 * (the watchdog fires), a wedge hook called more than once or never. */
static void test_wedge(void)
{
	pthread_t t;

	gate_fresh();
	inside = 0;
	t = spawn(user_waits_for_reset, NULL);
	flag_wait(&inside);
	CHECK_EQ(srcu_gate_reset_timeout(&gate, other_fn, NULL, 30 * 1000 * 1000L,
					 wedge, &wedged), 5);
	CHECK_EQ(wedge_calls, 1);
	join(t);
	/* A reset that is quick never calls its hook. */
	CHECK_EQ(srcu_gate_reset_timeout(&gate, other_fn, NULL, 1000L * 1000 * 1000,
					 wedge, &wedged), 5);
	CHECK_EQ(wedge_calls, 1);
	/* Timeouts past a 32-bit long's 2.1 s, or past the clock's range,
	 * are long waits, not expired ones: a user inside for 50 ms is
	 * waited for without the hook.  Bug caught: a deadline computed in
	 * a long (wrapped on ILP32) or overflowing int64_t (the hook called
	 * at the first sleep). */
	for (int i = 0; i < 2; i++) {
		inside = 0;
		t = spawn(user_briefly, NULL);
		flag_wait(&inside);
		CHECK_EQ(srcu_gate_reset_timeout(&gate, other_fn, NULL,
						 i ? INT64_MAX : (int64_t)3 * 1000 * 1000 * 1000,
						 wedge, &wedged), 5);
		join(t);
	}
	CHECK_EQ(wedge_calls, 1);
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

/* ---- misuse and static gates ---- */

static DEFINE_SRCU_GATE(static_gate);

static void reset_from_inside(void)
{
	int tag = srcu_gate_enter(&static_gate);

	srcu_gate_reset(&static_gate, other_fn, NULL);
	srcu_gate_exit(&static_gate, tag);
}

/* Bugs caught: a static gate that needs an init call, a reset from inside
 * the gate that hangs silently instead of saying why, NULL arguments that
 * crash. */
static void test_static_and_misuse(void)
{
	int tag = srcu_gate_enter(&static_gate);

	CHECK(tag == 0 || tag == 1);
	srcu_gate_exit(&static_gate, tag);
	CHECK_EQ(srcu_gate_reset(&static_gate, other_fn, NULL), 5);
	CHECK(dies_saying(reset_from_inside, "srcu_gate_reset()", "from inside gate",
			  "static_gate", NULL));
	CHECK_EQ(srcu_gate_init(NULL), -EINVAL);
	CHECK_EQ(srcu_gate_destroy(NULL), -EINVAL);
	CHECK_EQ(srcu_gate_shutdown(NULL), -EINVAL);
	CHECK_EQ(srcu_gate_reset(NULL, other_fn, NULL), -EINVAL);
	CHECK_EQ(srcu_gate_reset(&static_gate, NULL, NULL), -EINVAL);
	CHECK_EQ(srcu_gate_destroy(&static_gate), 0);
}

/* ---- calls from the reset's own fn or wedge hook ---- */

static struct srcu_gate mgate;   /* the dying children's gate */
static void (*misuse_call)(void);
static int stay;

static void m_reset(void) { srcu_gate_reset(&mgate, other_fn, NULL); }
static void m_shutdown(void) { srcu_gate_shutdown(&mgate); }
static void m_enter(void) { srcu_gate_enter(&mgate); }
static void m_enter_forever(void) { srcu_gate_enter_timeout(&mgate, -1); }

static int misuse_fn(void *arg)
{
	(void)arg;
	misuse_call();
	return 0;
}

static void misuse_wedge(void *arg)
{
	(void)arg;
	misuse_call();
}

static void *stay_inside(void *arg)
{
	(void)arg;
	REQUIRE(srcu_gate_enter(&mgate) >= 0);
	flag_set(&stay);
	for (;;)                 /* until the child aborts */
		sleep_us(1000);
	return NULL;
}

static void mgate_fresh(void)
{
	REQUIRE(srcu_gate_init(&mgate) == 0);
	srcu_set_name(&mgate.srcu, "misuse-gate");
}

static void reset_calls_in_fn(void)
{
	mgate_fresh();
	srcu_gate_reset(&mgate, misuse_fn, NULL);
}

static void reset_calls_in_wedge(void)
{
	mgate_fresh();
	pthread_detach(spawn(stay_inside, NULL));
	flag_wait(&stay);
	srcu_gate_reset_timeout(&mgate, other_fn, NULL, 1000 * 1000L, misuse_wedge, NULL);
}

static struct srcu_gate gate2;

/* What does not wait for the reset still answers from its fn. */
static int polite_fn(void *arg)
{
	(void)arg;
	CHECK_EQ(srcu_gate_tryenter(&gate), -EAGAIN);
	CHECK_EQ(srcu_gate_enter_timeout(&gate, 1000 * 1000L), -ETIMEDOUT);
	CHECK_EQ(srcu_gate_destroy(&gate), -EBUSY);
	CHECK_EQ(srcu_gate_reset(&gate2, other_fn, NULL), 5);   /* another gate */
	return 9;
}

/*
 * Bugs caught: srcu_gate_reset(), srcu_gate_shutdown() or an untimed
 * enter called from the reset's own fn or wedge hook that hangs silently
 * (each waits for the reset that runs it) instead of aborting with the
 * gate's name; a check that fires for another gate, or after the reset.
 */
static void test_calls_from_reset(void)
{
	static const struct { const char *who; void (*call)(void); } calls[] = {
		{ "srcu_gate_reset()", m_reset },
		{ "srcu_gate_shutdown()", m_shutdown },
		{ "srcu_gate_enter()", m_enter },
		{ "srcu_gate_enter_timeout()", m_enter_forever },
	};
	int tag;

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		misuse_call = calls[i].call;
		CHECK(dies_saying(reset_calls_in_fn, calls[i].who, "from the fn or wedge hook",
				  "misuse-gate", NULL));
		CHECK(dies_saying(reset_calls_in_wedge, calls[i].who, "from the fn or wedge hook",
				  "misuse-gate", NULL));
	}
	gate_fresh();
	REQUIRE(srcu_gate_init(&gate2) == 0);
	other_fn_calls = 0;
	CHECK_EQ(srcu_gate_reset(&gate, polite_fn, NULL), 9);
	tag = srcu_gate_enter(&gate);                 /* the reset is over */
	CHECK(tag >= 0);
	srcu_gate_exit(&gate, tag);
	CHECK_EQ(srcu_gate_reset(&gate, other_fn, NULL), 5);
	CHECK_EQ(other_fn_calls, 2);
	CHECK_EQ(srcu_gate_destroy(&gate2), 0);
	CHECK_EQ(srcu_gate_destroy(&gate), 0);
}

/* Every test, or those named on the command line. */
static const struct { const char *name; void (*fn)(void); } tests[] = {
	{ "exclusive", test_exclusive },
	{ "reset_waits_for_users", test_reset_waits_for_users },
	{ "waiting_and_piggy_back", test_waiting_and_piggy_back },
	{ "piggy_back_own_result", test_piggy_back_own_result },
	{ "eintr", test_eintr },
	{ "shutdown", test_shutdown },
	{ "shutdown_wakes_sleepers", test_shutdown_wakes_sleepers },
	{ "wedge", test_wedge },
	{ "static_and_misuse", test_static_and_misuse },
	{ "calls_from_reset", test_calls_from_reset },
};

int main(int argc, char **argv)
{
	watchdog(60);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		bool run = argc < 2;

		for (int a = 1; a < argc; a++)
			run |= strcmp(argv[a], tests[i].name) == 0;
		if (run)
			tests[i].fn();
	}
	return check_report("test_gate");
}
