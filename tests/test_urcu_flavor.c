/*
 * test_urcu_flavor: DEFINE_SRCU_URCU_FLAVOR's flavours, through the
 * struct rcu_flavor_struct that liburcu's data structures call.
 *
 * Bugs caught, each by the check named:
 *  - an inner read_unlock() that ends the outer section, or a section
 *    that is not one of the flavour's domain (nesting);
 *  - two flavours that share a domain, a per-thread word, or grace
 *    periods: a reader asleep in one flavour's section must not delay
 *    the other's synchronize_rcu() (isolation);
 *  - a section word torn by a signal handler's section between the
 *    stores of a lock or unlock: leaked or doubled counts, which hang
 *    the grace period after the storm or abort as an unbalanced unlock
 *    (signal_storm);
 *  - synchronize_rcu() inside one's own section, which deadlocks in
 *    liburcu, and an unlock without its lock, which would leave the
 *    thread's later sections uncounted, must abort naming the domain
 *    (misuse);
 *  - call_rcu(), defer_rcu() and barrier() that lose callbacks or run
 *    them on the wrong domain (callbacks).
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"

#define SRCU_URCU_NO_COMPAT
#include <srcu_urcu.h>
#include <urcu/call-rcu.h>   /* struct rcu_head (no compat names: ours) */
#include <urcu/compiler.h>

DEFINE_SRCU(dom_a);
DEFINE_SRCU(dom_b);
DEFINE_SRCU_URCU_FLAVOR(flavor_a, &dom_a);
DEFINE_SRCU_URCU_FLAVOR(flavor_b, &dom_b);

static void nesting(void)
{
	const struct rcu_flavor_struct *f = &flavor_a;

	f->register_thread();
	CHECK(!f->read_ongoing());
	f->read_lock();
	f->read_lock();
	f->read_lock();
	CHECK(f->read_ongoing());
	f->read_unlock();
	f->read_unlock();
	CHECK(f->read_ongoing());
	CHECK(srcu_read_lock_held(&dom_a));
	CHECK(!srcu_read_lock_held(&dom_b));
	CHECK(!flavor_b.read_ongoing());
	f->read_unlock();
	CHECK(!f->read_ongoing());
	CHECK(!srcu_read_lock_held(&dom_a));
	f->thread_offline();
	f->thread_online();
	f->read_quiescent_state();
	f->unregister_thread();
}

static int a_in, a_leave, b_synced, a_synced, a_left;

static void *sleep_in_a(void *arg)
{
	(void)arg;
	flavor_a.read_lock();
	flag_set(&a_in);
	flag_wait(&a_leave);
	flag_set(&a_left);
	flavor_a.read_unlock();
	return NULL;
}

static void *synchronize_a(void *arg)
{
	(void)arg;
	flavor_a.update_synchronize_rcu();
	CHECK(flag_get(&a_left));   /* never before the reader left */
	flag_set(&a_synced);
	return NULL;
}

static void isolation(void)
{
	pthread_t reader, sync_a;

	reader = spawn(sleep_in_a, NULL);
	flag_wait(&a_in);
	sync_a = spawn(synchronize_a, NULL);
	/* flavor_b's grace periods do not wait for flavor_a's reader. */
	for (int i = 0; i < 10; i++)
		flavor_b.update_synchronize_rcu();
	flag_set(&b_synced);
	sleep_ms(20);
	CHECK(!flag_get(&a_synced));
	flag_set(&a_leave);
	join(sync_a);
	join(reader);
	CHECK(flag_get(&a_synced));
}

/* ---- signal storm ---- */

static int storm_stop;
static long handler_sections;
static pthread_t storm_target;

static void handler(int sig)
{
	(void)sig;
	flavor_a.read_lock();
	if (!flavor_a.read_ongoing() || !srcu_read_lock_held(&dom_a))
		abort();   /* a section the handler does not hold */
	flavor_a.read_unlock();
	handler_sections++;
}

static void *storm(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&storm_stop, __ATOMIC_RELAXED)) {
		pthread_kill(storm_target, SIGUSR1);
		sleep_us(20);
	}
	return NULL;
}

static void *synchronize_loop(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&storm_stop, __ATOMIC_RELAXED))
		flavor_a.update_synchronize_rcu();
	return NULL;
}

static void signal_storm(void)
{
	struct sigaction sa;
	pthread_t stormer, syncer;
	long long end = now_ns() + 500 * 1000000LL;
	long loops = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	storm_target = pthread_self();
	stormer = spawn(storm, NULL);
	syncer = spawn(synchronize_loop, NULL);
	while (now_ns() < end) {
		for (int i = 0; i < 1000; i++) {
			flavor_a.read_lock();
			if (i & 1)
				flavor_a.read_lock();
			if (i & 1)
				flavor_a.read_unlock();
			flavor_a.read_unlock();
		}
		loops++;
	}
	__atomic_store_n(&storm_stop, 1, __ATOMIC_RELAXED);
	join(stormer);
	join(syncer);
	signal(SIGUSR1, SIG_IGN);
	CHECK(handler_sections > 0);
	CHECK(!flavor_a.read_ongoing());
	CHECK(!srcu_read_lock_held(&dom_a));
	/* Leaked counts would hold this grace period forever (the watchdog
	 * fails the test). */
	flavor_a.update_synchronize_rcu();
	printf("signal storm: %ld handler sections over %ld000 nested pairs\n",
	       handler_sections, loops);
}

static void synchronize_inside_own_section(void)
{
	flavor_a.read_lock();
	flavor_a.update_synchronize_rcu();
}

static void unlock_without_lock(void)
{
	flavor_a.read_lock();
	flavor_a.read_unlock();
	flavor_a.read_unlock();   /* one too many */
}

static void misuse(void)
{
	CHECK(dies_saying(synchronize_inside_own_section, "dom_a", "inside its own", NULL));
	/* Bug caught: an extra unlock that leaves the word "nested" forever,
	 * so that the thread's later sections count nowhere. */
	CHECK(dies_saying(unlock_without_lock, "dom_a", "rcu_read_unlock() without rcu_read_lock()",
			  NULL));
}

/* ---- callbacks ---- */

struct counted { struct rcu_head rcu; int *count; };
static int ran_a, ran_b, deferred;

static void count_it(struct rcu_head *head)
{
	struct counted *c = caa_container_of(head, struct counted, rcu);

	/* Run by the worker of the flavour's domain, outside any section. */
	__atomic_fetch_add(c->count, 1, __ATOMIC_SEQ_CST);
	free(c);
}

static void count_deferred(void *p)
{
	__atomic_fetch_add((int *)p, 1, __ATOMIC_SEQ_CST);
}

static void callbacks(void)
{
	for (int i = 0; i < 100; i++) {
		struct counted *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

		REQUIRE(a && b);
		a->count = &ran_a;
		b->count = &ran_b;
		flavor_a.update_call_rcu(&a->rcu, count_it);
		flavor_b.update_call_rcu(&b->rcu, count_it);
		flavor_a.update_defer_rcu(count_deferred, &deferred);
	}
	/* flavor_a's barrier covers flavor_a's callbacks, defer_rcu's
	 * included. */
	flavor_a.barrier();
	CHECK_EQ(flag_get(&ran_a), 100);
	CHECK_EQ(flag_get(&deferred), 100);
	flavor_b.barrier();
	CHECK_EQ(flag_get(&ran_b), 100);
	struct srcu_stats st;
	REQUIRE(srcu_get_stats(&dom_b, &st) == 0);
	CHECK_EQ(st.callbacks_invoked, 100);   /* on dom_b, not dom_a */
}

int main(void)
{
	watchdog(90);
	nesting();
	isolation();
	callbacks();
	signal_storm();
	misuse();
	return check_report("test_urcu_flavor");
}
