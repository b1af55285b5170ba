/*
 * test_early: read-side sections and reader threads before main(), before
 * and after libsrcu's own constructor.  Built against libsrcu.so, against
 * libsrcu.a the plain way, and -static (tests/CMakeLists.txt).
 *
 * .preinit_array runs before every constructor (libsrcu.so's and the
 * ones linked into the program alike): a section taken there runs with
 * fences, and one of its reader threads goes on reading while the
 * constructor switches the process to membarrier.  A plain constructor of
 * the program runs after libsrcu's (priority 101), so it already sees the
 * membarrier backend.
 *
 * Bugs caught: with libsrcu.a, the program's constructors ran first, and
 * a thread whose record was made in fence mode looped forever in its next
 * section after the switch (100% CPU: srcu__read_lock_slow() called the
 * fast path, which found no counter table and called the slow path); the
 * program's constructor saw the fence backend; a grace period must still
 * wait for a section taken before the switch and ended after it.
 */
#include "check.h"

static DEFINE_SRCU(early_dom);
static DEFINE_SRCU(held_dom);
static const char *backend_at_preinit, *backend_at_ctor;
static int held_idx, stop, gp_done;
static unsigned long reads[2];
static pthread_t readers[2];

static void *read_loop(void *arg)
{
	unsigned long *n = arg;

	while (!flag_get(&stop)) {
		int idx = srcu_read_lock(&early_dom);

		__atomic_fetch_add(n, 1, __ATOMIC_RELAXED);
		srcu_read_unlock(&early_dom, idx);
	}
	return NULL;
}

static void before_constructors(int argc, char **argv, char **envp)
{
	(void)argc; (void)argv; (void)envp;
	backend_at_preinit = srcu_backend();
	held_idx = srcu_read_lock(&held_dom);   /* ended in main() */
	srcu_read_unlock(&early_dom, srcu_read_lock(&early_dom));
	REQUIRE(pthread_create(&readers[0], NULL, read_loop, &reads[0]) == 0);
}
__attribute__((section(".preinit_array"), used))
static void (*const preinit_entry)(int, char **, char **) = before_constructors;

__attribute__((constructor)) static void program_constructor(void)
{
	backend_at_ctor = srcu_backend();
	srcu_read_unlock(&early_dom, srcu_read_lock(&early_dom));
	REQUIRE(pthread_create(&readers[1], NULL, read_loop, &reads[1]) == 0);
}

static void *sync_held(void *arg)
{
	(void)arg;
	synchronize_srcu(&held_dom);
	flag_set(&gp_done);
	return NULL;
}

/* Wait until reader i has read n more times (the watchdog fails a hang). */
static void wait_reads(int i, unsigned long n)
{
	unsigned long from = __atomic_load_n(&reads[i], __ATOMIC_RELAXED);

	while (__atomic_load_n(&reads[i], __ATOMIC_RELAXED) - from < n)
		sleep_us(100);
}

int main(void)
{
	const char *now = srcu_backend();
	/* musl runs no .preinit_array (neither its dynamic linker nor its
	 * static start-up): the cases before every constructor are not
	 * there to test, the constructor's are. */
	bool preinit = backend_at_preinit != NULL;
	pthread_t s;

	watchdog(60);
	printf("backend before constructors: %s, in the program's constructor: %s, "
	       "in main: %s\n", preinit ? backend_at_preinit : "(no .preinit_array run)",
	       backend_at_ctor, now);
	if (!preinit)
		printf("SKIP: sections before every constructor: this libc runs no "
		       ".preinit_array (musl)\n");
	CHECK(!preinit || strcmp(backend_at_preinit, "fence") == 0);   /* it did run first */
	CHECK(strcmp(backend_at_ctor, now) == 0);          /* libsrcu's ran before */

	/* Sections on this thread, whose record was made in fence mode. */
	for (int i = 0; i < 1000; i++)
		srcu_read_unlock(&early_dom, srcu_read_lock(&early_dom));
	if (preinit)
		wait_reads(0, 1000);
	wait_reads(1, 1000);

	/* A grace period waits for the section taken before the switch. */
	if (preinit) {
		s = spawn(sync_held, NULL);
		sleep_ms(100);
		CHECK(!flag_get(&gp_done));
		srcu_read_unlock(&held_dom, held_idx);
		join(s);
		CHECK(flag_get(&gp_done));
	}

	for (int i = 0; i < 100; i++)
		synchronize_srcu(&early_dom);
	flag_set(&stop);
	if (preinit)
		join(readers[0]);
	join(readers[1]);
	printf("%s\n", check_failures ? "FAIL" : "PASS");
	return check_failures ? 1 : 0;
}
