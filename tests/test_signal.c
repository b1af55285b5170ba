/*
 * test_signal: read-side sections inside signal handlers.  The read side
 * is async-signal-safe (doc/guide.md, "Rules": signal handlers): a handler may enter
 * and leave sections of any initialized domain, even as its thread's
 * first section, whatever the interrupted code was doing in libsrcu.
 *
 * Each case runs a signal storm: a timer sends SIGUSR1 to the thread under
 * attack every few microseconds, and the handler runs a section of the
 * domain wherever that thread happens to be.
 */
#include "check.h"

#define STORM_NS        (1500LL * 1000 * 1000)   /* each storm's length */
/* Between two signals: longer than a handler's run (signal delivery and
 * return take a few microseconds), or every signal would arrive on the
 * return from the one before and none inside the code under attack. */
#if defined(__SANITIZE_THREAD__)
#define SLOW_PERIOD_NS 200000L   /* TSan: handlers run 10-20x slower */
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLOW_PERIOD_NS 200000L
#endif
#endif
#ifdef SLOW_PERIOD_NS
#define STORM_PERIOD_NS SLOW_PERIOD_NS
#else
/* Under qemu-user (a cross run, check.h) a handler's run takes longer
 * than 10 us of host time: every signal arrived on the return from the
 * one before and the thread never left its handlers (livelock).  The
 * TSan period serves there too. */
#define STORM_PERIOD_NS (test_emulated() ? 200000L : 10000L)
#endif

/* musl names the thread a SIGEV_THREAD_ID event targets; glibc has it
 * only as the internal union member (older glibc: no macro). */
#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

static struct srcu_struct dom;
static unsigned long handled;

static void section_handler(int sig)
{
	int idx = srcu_read_lock(&dom);

	(void)sig;
	__atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
	srcu_read_unlock(&dom, idx);
}

/* A storm: a timer that sends SIGUSR1 to one thread every period_ns,
 * however busy the machine (a signaller thread would be descheduled). */
static void storm_handler_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = section_handler;
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
}

/* Start a storm aimed at the calling thread. */
static timer_t storm_begin(long period_ns)
{
	struct sigevent ev;
	struct itimerspec its = { { 0, period_ns }, { 0, period_ns } };
	timer_t t;

	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = SIGUSR1;
	ev.sigev_notify_thread_id = gettid();
	REQUIRE(timer_create(CLOCK_MONOTONIC, &ev, &t) == 0);
	REQUIRE(timer_settime(t, 0, &its, NULL) == 0);
	return t;
}

static void storm_end(timer_t t)
{
	REQUIRE(timer_delete(t) == 0);
}

/* A fresh dom whose calling thread has read it once already (so that the
 * storm attacks the case at hand, not the first section), under storm. */
static timer_t storm_on_fresh_domain(void)
{
	REQUIRE(init_srcu_struct(&dom) == 0);
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	return storm_begin(STORM_PERIOD_NS);
}

static void storm_report(const char *what)
{
	unsigned long n = __atomic_exchange_n(&handled, 0, __ATOMIC_RELAXED);

	printf("  %s: %lu sections in signal handlers\n", what, n);
	CHECK(n > 0);
}

static void noop_cb(struct srcu_head *h)
{
	(void)h;
}

/*
 * Bug caught: the "am I inside my own section?" check of synchronize_srcu()
 * and srcu_barrier() summed the thread's unlocks, then its locks; a
 * handler's section in between counted one lock more than unlocks, and
 * the call aborted with a false "inside its own read-side critical
 * section" (within 500k signals).
 */
static void test_updater_interrupted(void)
{
	struct srcu_head h;
	long long end = now_ns() + STORM_NS;
	timer_t s;

	s = storm_on_fresh_domain();
	while (now_ns() < end) {
		/* Mostly synchronize: with no other reader thread its GP is
		 * a few fences, no system call, so the signals land in it. */
		for (int i = 0; i < 100; i++)
			synchronize_srcu(&dom);
		call_srcu(&dom, &h, noop_cb);
		srcu_barrier(&dom);
	}
	storm_end(s);
	storm_report("synchronize_srcu + srcu_barrier");
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
}

/*
 * Bug caught (fence backend, whose unlocks run out of line): the unlock's
 * "no matching lock" check loaded lock[idx] before unlock[idx]; a
 * handler's section in between made them equal and the unlock aborted a
 * correct program (within 100k signals).
 */
static void test_reader_interrupted(void)
{
	long long end = now_ns() + STORM_NS;
	timer_t s;

	s = storm_on_fresh_domain();
	while (now_ns() < end) {
		for (int i = 0; i < 1000; i++) {
			int a = srcu_read_lock(&dom);
			int b = srcu_read_lock(&dom);

			srcu_read_unlock(&dom, a);
			srcu_read_unlock(&dom, b);
		}
	}
	storm_end(s);
	storm_report("nested sections");
	synchronize_srcu(&dom);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
}

/* A new thread: a storm aimed at itself, its first section, and an exit
 * with the storm still on (the spawner deletes the timer). */
static void *first_section_then_exit(void *arg)
{
	timer_t *storm = arg;
	int idx;

	*storm = storm_begin(STORM_PERIOD_NS);
	idx = srcu_read_lock(&dom);   /* creates or reuses a reader record */
	srcu_read_unlock(&dom, idx);
	return NULL;                  /* the exit balances and frees it */
}

/*
 * Bug caught: a handler whose section was its thread's first blocked on
 * the registry lock (or malloc's) that the interrupted thread held while
 * creating its own reader record: a self-deadlock within 2 s, here a
 * watchdog failure.  The same storm lands in the thread-exit path.
 * Also caught (the review after the fix): records leaked for good when a
 * handler's first section came between the first section's look at its
 * record and its signal block, or after the exit hook had run; the
 * exited threads then still count as this domain's readers.
 */
static void test_first_section_interrupted(void)
{
	long long end = now_ns() + STORM_NS;
	unsigned long threads = 0;
	unsigned int readers_before;
	struct srcu_stats st;

	REQUIRE(init_srcu_struct(&dom) == 0);
	/* Live threads with counts in dom's slot: this one, if an earlier
	 * domain with the same id was read here (counts are never reset). */
	REQUIRE(srcu_get_stats(&dom, &st) == 0);
	readers_before = st.reader_threads;
	while (now_ns() < end) {
		pthread_t t[4];
		timer_t storm[4];

		for (int i = 0; i < 4; i++)
			t[i] = spawn(first_section_then_exit, &storm[i]);
		for (int i = 0; i < 4; i++) {
			join(t[i]);
			storm_end(storm[i]);
		}
		threads += 4;
	}
	storm_report("first sections and exits");
	printf("  %lu threads\n", threads);
	REQUIRE(srcu_get_stats(&dom, &st) == 0);
	CHECK_EQ(st.reader_threads, readers_before);   /* every stormed thread exited */
	synchronize_srcu(&dom);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
}

/* With an argument, only the case of that name runs. */
static bool wanted(int argc, char **argv, const char *name)
{
	return argc < 2 || strcmp(argv[1], name) == 0;
}

int main(int argc, char **argv)
{
	watchdog(60);
	setvbuf(stdout, NULL, _IOLBF, 0);
	storm_handler_install();
	if (wanted(argc, argv, "updater"))
		test_updater_interrupted();
	if (wanted(argc, argv, "reader"))
		test_reader_interrupted();
	if (wanted(argc, argv, "first"))
		test_first_section_interrupted();
	return check_report("test_signal");
}
