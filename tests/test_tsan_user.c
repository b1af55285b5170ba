/*
 * test_tsan_user: a correct user program, built with -fsanitize=thread and
 * linked against the ordinary (uninstrumented) libsrcu.so, as a user runs
 * their own race detector.  ThreadSanitizer must report nothing.
 *
 * Bug caught: TSan cannot see the grace period's ordering (membarrier,
 * and code it did not instrument), so it reported the free() after
 * synchronize_srcu(), in a call_srcu() callback or after a polled cookie
 * against the readers' accesses as data races (3 such reports in the
 * reviewer's program).  The header now releases at each unlock and the
 * library acquires when a grace period ends for its caller (srcu.h,
 * SRCU__TSAN).  Run with TSAN_OPTIONS=halt_on_error=1:exitcode=66.
 *
 * The same source, built with -DSRCU_HELGRIND and without TSan, is
 * test_helgrind_user: Helgrind must report nothing either (the library
 * annotates grace periods and quiets its own lock-free words, vg.h; the
 * header's -DSRCU_HELGRIND annotates pointer publication).
 *
 * Usage: test_tsan_user [ROUNDS [READER_PAUSE_US]]
 */
#include "check.h"

#include <stddef.h>

struct cfg {
	int a, b;                     /* a + b == 0 in every published cfg */
	struct srcu_head rh;
};

static struct srcu_struct dom;
static struct cfg *cur;
static int stop;
static long bad;
static int reader_pause_us;   /* under Valgrind: let the updater run */

static void *reader(void *arg)
{
	long n = 0;

	(void)arg;
	while (!flag_get(&stop)) {
		int idx = srcu_read_lock(&dom);
		struct cfg *c = srcu_dereference(cur, &dom);

		if (c->a + c->b != 0)
			__atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
		srcu_read_unlock(&dom, idx);
		n++;
		if (reader_pause_us)
			sleep_us(reader_pause_us);
	}
	return (void *)n;
}

static void free_cfg(struct srcu_head *h)
{
	free((char *)h - offsetof(struct cfg, rh));
}

static struct cfg *publish(int i)
{
	struct cfg *n = malloc(sizeof(*n)), *old = cur;

	REQUIRE(n);
	n->a = i;
	n->b = -i;
	srcu_assign_pointer(cur, n);
	return old;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 600;

	reader_pause_us = argc > 2 ? atoi(argv[2]) : 0;
	pthread_t r[2];

	watchdog(60);
	REQUIRE(init_srcu_struct_named(&dom, "tsan-user") == 0);
	publish(0);
	for (int i = 0; i < 2; i++)
		r[i] = spawn(reader, NULL);
	for (int i = 1; i <= rounds; i++) {
		struct cfg *old = publish(i);

		switch (i % 3) {
		case 0:                       /* wait, then free */
			synchronize_srcu(&dom);
			free(old);
			break;
		case 1:                       /* a callback frees */
			call_srcu(&dom, &old->rh, free_cfg);
			break;
		default: {                    /* a polled cookie, then free */
			unsigned long c = start_poll_synchronize_srcu(&dom);

			while (!poll_state_synchronize_srcu(&dom, c))
				sleep_us(20);
			free(old);
		}
		}
	}
	flag_set(&stop);
	for (int i = 0; i < 2; i++)
		join(r[i]);
	srcu_barrier(&dom);
	free(cur);
	CHECK_EQ(bad, 0);
	CHECK_EQ(cleanup_srcu_struct(&dom), 0);
	return check_report("test_tsan_user");
}
