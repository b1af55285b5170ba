/*
 * test_gp_sharing: concurrent synchronize_srcu() callers share grace periods,
 * yet each still gets a full one; domains do not delay each other.
 */
#include "check.h"
#include "../src/layout.h"   /* white-box: the private domain layout */

#define MAGIC_LIVE   0x11FEu
#define MAGIC_POISON 0xDEADu

struct obj { unsigned int magic; };

static struct srcu_struct dom;
static struct obj *head;
static int stop, failures;
static long reads;

/* Readers check that the object they reach is never poisoned while they
 * are inside, including after sleeping there. */
static void *reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	long n = 0;

	while (!flag_get(&stop)) {
		int idx = srcu_read_lock(&dom);
		struct obj *p = srcu_dereference(head, &dom);

		if (p->magic != MAGIC_LIVE)
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
		/* Always stay a while, so that grace periods last long enough
		 * for calls to overlap even where they are otherwise cheap. */
		sleep_us(20 + rand_r(&seed) % 100);
		if (__atomic_load_n(&p->magic, __ATOMIC_RELAXED) != MAGIC_LIVE)
			__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
		srcu_read_unlock(&dom, idx);
		n++;
	}
	__atomic_fetch_add(&reads, n, __ATOMIC_RELAXED);
	return NULL;
}

#define UPDATERS 6
#define CALLS    150

/* Each call publishes a new object, waits, then poisons the old one (kept
 * in memory, so a stale reader sees poison instead of crashing). */
static void *updater(void *arg)
{
	struct obj *pool = calloc(CALLS, sizeof(*pool));
	long u = (long)(uintptr_t)arg;

	REQUIRE(pool);
	for (int i = 0; i < CALLS; i++) {
		struct obj *fresh = &pool[i], *old;

		fresh->magic = MAGIC_LIVE;
		old = __atomic_exchange_n(&head, fresh, __ATOMIC_ACQ_REL);
		if (u % 2)
			synchronize_srcu(&dom);
		else
			synchronize_srcu_expedited(&dom);
		__atomic_store_n(&old->magic, MAGIC_POISON, __ATOMIC_RELAXED);
	}
	return pool;   /* freed by main after the readers stop */
}

/*
 * Bug caught: sharing that hands a caller a grace period that started
 * before its call (a reader then sees its object poisoned).  How many
 * calls share a grace period here depends on scheduling, so it is only
 * printed; test_gp_sharing_counted() asserts the sharing itself.
 */
static void test_shared_and_full(void)
{
	static struct obj first = { MAGIC_LIVE };
	pthread_t r[3], u[UPDATERS];
	void *pools[UPDATERS];
	unsigned long before, gps;
	int i;

	REQUIRE(init_srcu_struct(&dom) == 0);
	head = &first;
	for (i = 0; i < 3; i++)
		r[i] = spawn(reader, (void *)(uintptr_t)(i + 1));
	before = srcu_batches_completed(&dom);
	for (i = 0; i < UPDATERS; i++)
		u[i] = spawn(updater, (void *)(uintptr_t)i);
	for (i = 0; i < UPDATERS; i++)
		REQUIRE(pthread_join(u[i], &pools[i]) == 0);
	gps = srcu_batches_completed(&dom) - before;
	flag_set(&stop);
	for (i = 0; i < 3; i++)
		join(r[i]);
	printf("%d calls ran %lu grace periods (%.2f calls per grace period), %ld reads\n",
	       UPDATERS * CALLS, gps, (double)(UPDATERS * CALLS) / (double)gps, reads);
	CHECK_EQ(failures, 0);
	CHECK(gps >= CALLS);                        /* every caller got its own wait */
	for (i = 0; i < UPDATERS; i++)
		free(pools[i]);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
}

#define CALLERS 8

static struct srcu_struct held;
static int reader_ending, callers_ready;

static pid_t caller_tid[CALLERS];

static void *call_synchronize(void *arg)
{
	__atomic_store_n(&caller_tid[(uintptr_t)arg], (pid_t)syscall(SYS_gettid), __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&callers_ready, 1, __ATOMIC_SEQ_CST);
	if ((uintptr_t)arg % 2)
		synchronize_srcu_expedited(&held);
	else
		synchronize_srcu(&held);
	/* The grace period that served us began while the reader was in. */
	return (void *)(uintptr_t)flag_get(&reader_ending);
}

/* The callers asleep (state S in /proc: blocked in a futex wait, which
 * inside synchronize comes only after the snapshot); -1 when /proc does
 * not say. */
static int callers_asleep(void)
{
	int asleep = 0;

	for (int i = 0; i < CALLERS; i++) {
		pid_t tid = __atomic_load_n(&caller_tid[i], __ATOMIC_SEQ_CST);
		char state;

		if (!tid)
			return 0;
		if ((state = thread_state((int)tid)) == '?')
			return -1;
		asleep += state == 'S';
	}
	return asleep;
}

/*
 * Bugs caught: no sharing (one grace period per caller), and a caller
 * served by a grace period that does not wait for a reader that was
 * inside before the call.  Deterministic: a reader holds the domain while
 * CALLERS threads call synchronize; once one of them runs the grace
 * period, asleep on the reader, and all the others sleep behind it (their
 * threads' state in /proc says so: the domain marks its event word when
 * anyone sleeps on it, but counts nobody), the reader leaves.  Every call needs at most the
 * running grace period and the one after it, so 2 grace periods must
 * serve all CALLERS calls.
 */
static void test_gp_sharing_counted(void)
{
	pthread_t t[CALLERS];
	unsigned long before, gps;
	int idx, i;

	REQUIRE(init_srcu_struct(&held) == 0);
	idx = srcu_read_lock(&held);
	before = srcu_batches_completed(&held);
	for (i = 0; i < CALLERS; i++)
		t[i] = spawn(call_synchronize, (void *)(uintptr_t)i);
	for (;;) {
		int asleep = callers_asleep();

		if (asleep < 0) {   /* no /proc: a long pause instead */
			printf("no thread states in /proc: waiting 1 s for the callers to sleep\n");
			sleep_us(1000 * 1000);
			break;
		}
		/* Twice, 20 ms apart: a thread asleep for another reason (a
		 * lock of the dynamic linker's or of a sanitizer's runtime)
		 * is so only briefly. */
		if (asleep == CALLERS &&   /* the runner asleep on the reader */
		    __atomic_load_n(&srcu__dom_area(&held)->gp_lock, __ATOMIC_SEQ_CST)) {
			sleep_us(20 * 1000);
			if (callers_asleep() == CALLERS)
				break;
		}
		sleep_us(100);
	}
	CHECK_EQ(srcu_batches_completed(&held), before);   /* all still held up */
	flag_set(&reader_ending);
	srcu_read_unlock(&held, idx);
	for (i = 0; i < CALLERS; i++) {
		void *saw_reader_end;

		REQUIRE(pthread_join(t[i], &saw_reader_end) == 0);
		CHECK(saw_reader_end);
	}
	gps = srcu_batches_completed(&held) - before;
	printf("%d concurrent calls ran %lu grace periods\n", CALLERS, gps);
	CHECK(gps >= 1);
	CHECK(gps <= 2);
	CHECK_EQ(cleanup_srcu_struct(&held), 0);
}

static struct srcu_struct a, b;
static int b_inside, b_ending;

static void *hold_b(void *arg)
{
	int idx = srcu_read_lock(&b);

	(void)arg;
	flag_set(&b_inside);
	sleep_ms(1000);
	flag_set(&b_ending);
	srcu_read_unlock(&b, idx);
	return NULL;
}

/* Bug caught: grace periods of one domain waiting for another's readers
 * (liburcu's single global domain does exactly that). */
static void test_isolation(void)
{
	pthread_t t;

	REQUIRE(init_srcu_struct(&a) == 0);
	REQUIRE(init_srcu_struct(&b) == 0);
	t = spawn(hold_b, NULL);
	flag_wait(&b_inside);
	for (int i = 0; i < 100; i++)
		synchronize_srcu(&a);
	CHECK(!flag_get(&b_ending));
	synchronize_srcu(&b);
	CHECK(flag_get(&b_ending));
	join(t);
	CHECK_EQ(cleanup_srcu_struct(&a), 0);
	CHECK_EQ(cleanup_srcu_struct(&b), 0);
}

int main(void)
{
	watchdog(100);
	test_gp_sharing_counted();
	test_shared_and_full();
	test_isolation();
	return check_report("test_gp_sharing");
}
