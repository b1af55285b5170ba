/*
 * test_stress: a short torture run.  Readers of two domains nest, overlap,
 * sleep and yield inside their sections and check that what they reached
 * is never poisoned; updaters replace objects, wait (normal and
 * expedited) and poison the old ones; threads come and go.
 *
 * Bug caught: any grace period that ends while a reader that began
 * before it is still inside (a reader then sees poison).
 */
#include "check.h"

#define LIVE   0x600Du
#define POISON 0xBADu
#define NDOM   2
#define POOL   4096

struct obj { unsigned int magic; };

static struct srcu_struct doms[NDOM];
static struct obj *heads[NDOM];
#define NUPD   (NDOM + 1)   /* two updaters share doms[0] */
static struct obj pool[NUPD][POOL];   /* one pool per updater */
static int stop, failures;
static long reads, updates;

static void check_obj(struct obj *p)
{
	if (__atomic_load_n(&p->magic, __ATOMIC_RELAXED) != LIVE)
		__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
}

static void extend_section(unsigned int *seed)
{
	switch (rand_r(seed) % 6) {
	case 0: sleep_us(1 + rand_r(seed) % 500); break;
	case 1: sched_yield(); break;
	case 2: for (volatile int i = 0; i < 2000; i++) ; break;
	default: break;
	}
}

static void one_read(unsigned int *seed)
{
	int d = rand_r(seed) % NDOM, e = rand_r(seed) % NDOM;
	int i = srcu_read_lock(&doms[d]);
	struct obj *p = srcu_dereference(heads[d], &doms[d]);
	int j = srcu_read_lock(&doms[e]);            /* nested: same or other domain */
	struct obj *q = srcu_dereference(heads[e], &doms[e]);

	check_obj(p);
	extend_section(seed);
	if (rand_r(seed) % 2) {                      /* overlap instead of nest */
		srcu_read_unlock(&doms[d], i);
		check_obj(q);
		srcu_read_unlock(&doms[e], j);
		return;
	}
	check_obj(q);
	srcu_read_unlock(&doms[e], j);
	check_obj(p);
	srcu_read_unlock(&doms[d], i);
}

static void *reader(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;
	long n = 0;

	while (!flag_get(&stop)) {
		one_read(&seed);
		n++;
	}
	__atomic_fetch_add(&reads, n, __ATOMIC_RELAXED);
	return NULL;
}

/* Short-lived readers: thread creation and exit during grace periods. */
static void *transient(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	for (int k = 0; k < 20; k++)
		one_read(&seed);
	return NULL;
}

static void *churn(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg;

	while (!flag_get(&stop))
		join(spawn(transient, (void *)(uintptr_t)rand_r(&seed)));
	return NULL;
}

static void *updater(void *arg)
{
	int me = (int)(uintptr_t)arg, d = me % NDOM;
	unsigned int next = 1, seed = (unsigned int)me + 77;

	while (!flag_get(&stop)) {
		struct obj *fresh = &pool[me][next++ % POOL];
		struct obj *old;

		/* Reuse only what its replacer has poisoned: with two updaters
		 * on a domain the object may still be the head, or wait for the
		 * other updater's grace period (a preempted updater once took
		 * longer than our 4096 updates, and poisoned a live head). */
		if (__atomic_load_n(&fresh->magic, __ATOMIC_ACQUIRE) == LIVE)
			continue;

		__atomic_store_n(&fresh->magic, LIVE, __ATOMIC_RELAXED);
		old = __atomic_exchange_n(&heads[d], fresh, __ATOMIC_ACQ_REL);
		if (rand_r(&seed) % 3 == 0)
			synchronize_srcu_expedited(&doms[d]);
		else
			synchronize_srcu(&doms[d]);
		__atomic_store_n(&old->magic, POISON, __ATOMIC_RELEASE);
		__atomic_fetch_add(&updates, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = argc > 1 ? atoi(argv[1]) : 3;
	pthread_t r[4], u[NUPD], c;
	int i;

	watchdog((unsigned int)seconds + 60);
	for (i = 0; i < NDOM; i++) {
		REQUIRE(init_srcu_struct(&doms[i]) == 0);
		pool[i][0].magic = LIVE;
		heads[i] = &pool[i][0];
	}
	for (i = 0; i < 4; i++)
		r[i] = spawn(reader, (void *)(uintptr_t)(i + 1));
	for (i = 0; i < NUPD; i++)
		u[i] = spawn(updater, (void *)(uintptr_t)i);
	c = spawn(churn, (void *)(uintptr_t)99);
	sleep_ms(seconds * 1000L);
	flag_set(&stop);
	for (i = 0; i < 4; i++)
		join(r[i]);
	for (i = 0; i < NUPD; i++)
		join(u[i]);
	join(c);
	printf("%ld reads, %ld updates, %lu + %lu grace periods, %d failures\n",
	       reads, updates, srcu_batches_completed(&doms[0]),
	       srcu_batches_completed(&doms[1]), failures);
	CHECK_EQ(failures, 0);
	CHECK(updates > 0 && reads > 0);
	for (i = 0; i < NDOM; i++)
		CHECK_EQ(cleanup_srcu_struct(&doms[i]), 0);
	return check_report("test_stress");
}
