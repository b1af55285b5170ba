/*
 * test_kernel_port: kernel SRCU users ported in their kernel shape, with
 * only tests/kernel_shim.h for the non-SRCU kernel APIs, to check that
 * kernel code and knowledge carry over (issue 24).  The SRCU calls are
 * libsrcu's, under the kernel's names, unchanged; doc/kernel.md ("What had
 * to change in kernel code") lists every line that differs.  The ports are
 * written anew after the kernel's structure, not copied.
 *
 *  1. i915's reset backoff (commit 2caffbf11762, "drm/i915: Revoke mmaps
 *     and prevent access to fence registers across reset"):
 *     i915_reset_trylock()/i915_reset_unlock() around users of the fence
 *     registers, and a reset that sets I915_RESET_BACKOFF, waits with
 *     synchronize_srcu(), clobbers the registers, clears the bit and
 *     wakes the reset queue.
 *     Bug caught: a user inside its section while the reset clobbers the
 *     registers (it sees the poison, or another generation, between two
 *     looks), e.g. do_reset() without its synchronize_srcu().
 *
 *  2. kernel/notifier.c's SRCU notifier chains: srcu_init_notifier_head(),
 *     srcu_notifier_chain_register(), srcu_notifier_chain_unregister()
 *     (unlink under the mutex, then synchronize_srcu()),
 *     srcu_notifier_call_chain() (the walk inside a section).  Blocks are
 *     "freed" (poisoned, kept in memory) as soon as unregister returns.
 *     Bugs caught: a call into a block after its unregister returned
 *     (poison seen at entry or after a sleep in the callback), a chain
 *     not in priority order, a block registered before a call but not
 *     called.
 *
 *  3. The shim's rculist: list_for_each_entry_rcu() inside a section
 *     while list_add_rcu()/list_del_rcu() + synchronize_srcu() + poison
 *     run.  Bug caught: an entry reached after its removal's grace period
 *     (poison), or the shim's ordering broken (a half-built entry).
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"
#include "kernel_shim.h"

#include <sched.h>

#define RUN_NS (600 * 1000000LL)   /* each stress phase, per backend */

/* ====================================================================
 * 1. i915 reset backoff
 * ==================================================================== */

/*
 * Classic RCU, which userspace lacks, stands in as a second libsrcu
 * domain: the kernel's i915_reset_trylock() tests the bit and enters the
 * SRCU section inside rcu_read_lock(), and i915_handle_error() calls
 * synchronize_rcu_expedited() after setting the bit, so that no user that
 * saw the bit clear can still be on its way into the SRCU section when
 * do_reset() calls synchronize_srcu().  Defined here, not in the shim,
 * which makes no SRCU call.  Not nested (the index is per thread).
 */
static DEFINE_SRCU(rcu_standin);
static __thread int rcu_standin_idx;
static void rcu_read_lock(void) { rcu_standin_idx = srcu_read_lock(&rcu_standin); }
static void rcu_read_unlock(void) { srcu_read_unlock(&rcu_standin, rcu_standin_idx); }
static void synchronize_rcu_expedited(void) { synchronize_srcu_expedited(&rcu_standin); }

#define I915_RESET_BACKOFF 0
#define I915_NUM_FENCES    16
#define FENCE_POISON       0xdead0000dead0000ull

struct i915_gpu_error {
	unsigned long flags;
	wait_queue_head_t reset_queue;
	struct srcu_struct reset_backoff_srcu;
	unsigned long reset_count;
};

struct drm_i915_private {
	struct i915_gpu_error gpu_error;
	unsigned long long fence_regs[I915_NUM_FENCES];   /* the "hardware" */
	int num_fence_regs;
};

static struct drm_i915_private i915_dev;

/* Which register value a generation's fences hold. */
static unsigned long long fence_pattern(unsigned long gen, int i)
{
	return (unsigned long long)gen << 8 | (unsigned long long)i;
}

/* The kernel's, in its shape. */
static int i915_reset_trylock(struct drm_i915_private *i915)
{
	struct i915_gpu_error *error = &i915->gpu_error;
	int srcu;

	rcu_read_lock();
	while (test_bit(I915_RESET_BACKOFF, &error->flags)) {
		rcu_read_unlock();

		if (wait_event_interruptible(error->reset_queue,
					     !test_bit(I915_RESET_BACKOFF,
						       &error->flags)))
			return -EINTR;

		rcu_read_lock();
	}
	srcu = srcu_read_lock(&error->reset_backoff_srcu);
	rcu_read_unlock();

	return srcu;
}

static void i915_reset_unlock(struct drm_i915_private *i915, int tag)
{
	struct i915_gpu_error *error = &i915->gpu_error;

	srcu_read_unlock(&error->reset_backoff_srcu, tag);
}

/* The hardware reset clobbers every fence register. */
static int intel_gpu_reset(struct drm_i915_private *i915)
{
	for (int i = 0; i < i915->num_fence_regs; i++)
		WRITE_ONCE(i915->fence_regs[i], FENCE_POISON);
	sleep_us(50);   /* the reset takes a while */
	return 0;
}

/* Rewrite the registers, for the next generation. */
static void i915_gem_restore_fences(struct drm_i915_private *i915)
{
	unsigned long gen = READ_ONCE(i915->gpu_error.reset_count) + 1;

	for (int i = 0; i < i915->num_fence_regs; i++)
		WRITE_ONCE(i915->fence_regs[i], fence_pattern(gen, i));
	WRITE_ONCE(i915->gpu_error.reset_count, gen);
}

static int gt_reset(struct drm_i915_private *i915)
{
	i915_gem_restore_fences(i915);
	return 0;
}

static int do_reset(struct drm_i915_private *i915)
{
	int err;

	/* Users of what the reset clobbers must be out first. */
	synchronize_srcu(&i915->gpu_error.reset_backoff_srcu);

	err = intel_gpu_reset(i915);
	if (err)
		return err;

	return gt_reset(i915);
}

static void i915_handle_error(struct drm_i915_private *i915)
{
	struct i915_gpu_error *error = &i915->gpu_error;

	might_sleep();

	if (test_and_set_bit(I915_RESET_BACKOFF, &error->flags)) {
		wait_event(error->reset_queue,
			   !test_bit(I915_RESET_BACKOFF, &error->flags));
		return;   /* the other reset did the work */
	}

	/* i915_reset_trylock() must see the bit from here on. */
	synchronize_rcu_expedited();

	WARN_ON(do_reset(i915));

	clear_bit(I915_RESET_BACKOFF, &error->flags);
	smp_mb__after_atomic();
	wake_up_all(&error->reset_queue);
}

static int i915_stop;
static long i915_bad, i915_sections, i915_resets;

/* The fault handler's shape: trylock, use the fences, unlock.  The check:
 * inside, every register holds the current generation's pattern, before
 * and after a write of its own register and a sleep. */
static int check_fences(struct drm_i915_private *i915, unsigned long gen)
{
	int bad = 0;

	for (int i = 0; i < i915->num_fence_regs; i++)
		bad |= READ_ONCE(i915->fence_regs[i]) != fence_pattern(gen, i);
	return bad;
}

static void *i915_user(void *arg)
{
	struct drm_i915_private *i915 = &i915_dev;
	int me = (int)(long)arg;
	long n = 0;

	while (!flag_get(&i915_stop)) {
		int srcu = i915_reset_trylock(i915);
		unsigned long gen;

		if (srcu < 0)
			continue;
		gen = READ_ONCE(i915->gpu_error.reset_count);
		if (check_fences(i915, gen))
			__atomic_fetch_add(&i915_bad, 1, __ATOMIC_RELAXED);
		WRITE_ONCE(i915->fence_regs[me], fence_pattern(gen, me));   /* fence_write() */
		if (n % 4 == 0)
			sleep_us(20);   /* an SRCU reader may sleep */
		else
			sched_yield();
		if (check_fences(i915, gen) || READ_ONCE(i915->gpu_error.reset_count) != gen)
			__atomic_fetch_add(&i915_bad, 1, __ATOMIC_RELAXED);
		i915_reset_unlock(i915, srcu);
		n++;
	}
	__atomic_fetch_add(&i915_sections, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *i915_resetter(void *arg)
{
	(void)arg;
	while (!flag_get(&i915_stop)) {
		i915_handle_error(&i915_dev);
		__atomic_fetch_add(&i915_resets, 1, __ATOMIC_RELAXED);
		sleep_us(300);
	}
	return NULL;
}

static void test_i915_reset_backoff(void)
{
	struct drm_i915_private *i915 = &i915_dev;
	pthread_t users[3], resetters[2];
	long long end;

	/* i915_gem_init_early() */
	init_waitqueue_head(&i915->gpu_error.reset_queue);
	CHECK_EQ(init_srcu_struct(&i915->gpu_error.reset_backoff_srcu), 0);
	i915->num_fence_regs = I915_NUM_FENCES;
	i915_gem_restore_fences(i915);

	i915_stop = 0;
	for (long i = 0; i < 3; i++)
		users[i] = spawn(i915_user, (void *)i);
	for (int i = 0; i < 2; i++)
		resetters[i] = spawn(i915_resetter, NULL);
	end = now_ns() + RUN_NS;
	while (now_ns() < end)
		sleep_ms(10);
	flag_set(&i915_stop);
	for (int i = 0; i < 2; i++)
		join(resetters[i]);
	for (int i = 0; i < 3; i++)
		join(users[i]);

	printf("i915: %ld sections, %ld resets, %ld saw a clobber\n",
	       i915_sections, i915_resets, i915_bad);
	CHECK_EQ(i915_bad, 0);
	CHECK(i915_sections > 100);
	CHECK(i915_resets > 20);
	CHECK(!test_bit(I915_RESET_BACKOFF, &i915->gpu_error.flags));

	/* i915_gem_cleanup_early() */
	CHECK_EQ(cleanup_srcu_struct(&i915->gpu_error.reset_backoff_srcu), 0);
}

/* ====================================================================
 * 2. SRCU notifier chain (kernel/notifier.c)
 * ==================================================================== */

#define NOTIFY_DONE      0x0000
#define NOTIFY_OK        0x0001
#define NOTIFY_STOP_MASK 0x8000

struct notifier_block;
typedef int (*notifier_fn_t)(struct notifier_block *nb, unsigned long action, void *data);

struct notifier_block {
	notifier_fn_t notifier_call;
	struct notifier_block *next;    /* __rcu */
	int priority;
};

struct srcu_notifier_head {
	struct mutex mutex;
	struct srcu_struct srcu;
	struct notifier_block *head;    /* __rcu */
};

static int notifier_chain_register(struct notifier_block **nl,
				   struct notifier_block *n, bool unique_priority)
{
	while ((*nl) != NULL) {
		if (unlikely((*nl) == n)) {
			WARN_ON(1);   /* already registered */
			return -EEXIST;
		}
		if (n->priority > (*nl)->priority)
			break;
		if (n->priority == (*nl)->priority && unique_priority)
			return -EBUSY;
		nl = &((*nl)->next);
	}
	n->next = *nl;
	srcu_assign_pointer(*nl, n);
	return 0;
}

static int notifier_chain_unregister(struct notifier_block **nl,
				     struct notifier_block *n)
{
	while ((*nl) != NULL) {
		if ((*nl) == n) {
			srcu_assign_pointer(*nl, n->next);
			return 0;
		}
		nl = &((*nl)->next);
	}
	return -ENOENT;
}

static int notifier_call_chain(struct notifier_block **nl,
			       unsigned long val, void *v,
			       int nr_to_call, int *nr_calls)
{
	int ret = NOTIFY_DONE;
	struct notifier_block *nb, *next_nb;

	nb = rcu_dereference_raw(*nl);

	while (nb && nr_to_call) {
		next_nb = rcu_dereference_raw(nb->next);

		ret = nb->notifier_call(nb, val, v);

		if (nr_calls)
			(*nr_calls)++;

		if (ret & NOTIFY_STOP_MASK)
			break;
		nb = next_nb;
		nr_to_call--;
	}
	return ret;
}

static int srcu_notifier_chain_register(struct srcu_notifier_head *nh,
					struct notifier_block *n)
{
	int ret;

	mutex_lock(&nh->mutex);
	ret = notifier_chain_register(&nh->head, n, false);
	mutex_unlock(&nh->mutex);
	return ret;
}

static int srcu_notifier_chain_unregister(struct srcu_notifier_head *nh,
					  struct notifier_block *n)
{
	int ret;

	mutex_lock(&nh->mutex);
	ret = notifier_chain_unregister(&nh->head, n);
	mutex_unlock(&nh->mutex);
	synchronize_srcu(&nh->srcu);
	return ret;
}

static int srcu_notifier_call_chain(struct srcu_notifier_head *nh,
				    unsigned long val, void *v)
{
	int ret;
	int idx;

	idx = srcu_read_lock(&nh->srcu);
	ret = notifier_call_chain(&nh->head, val, v, -1, NULL);
	srcu_read_unlock(&nh->srcu, idx);
	return ret;
}

static void srcu_init_notifier_head(struct srcu_notifier_head *nh)
{
	mutex_init(&nh->mutex);
	if (init_srcu_struct(&nh->srcu) < 0)
		BUG();
	nh->head = NULL;
}

static int srcu_cleanup_notifier_head(struct srcu_notifier_head *nh)
{
	return cleanup_srcu_struct(&nh->srcu);
}

/* The test's blocks: a pool never unmapped, "freed" by poisoning. */
#define NB_LIVE   0x11feu
#define NB_POISON 0xdeadu
#define NB_POOL   12

struct test_nb {
	struct notifier_block nb;
	unsigned int magic;      /* NB_LIVE while registered, else NB_POISON */
	unsigned long calls;
};

static struct test_nb nb_pool[NB_POOL];
static struct srcu_notifier_head test_chain;
static int nc_stop;
static long nc_stale, nc_order, nc_calls, nc_chain_calls, nc_unregs;

/* What one srcu_notifier_call_chain() walk has seen. */
struct nc_walk { int last_priority; int n; };

static int test_notifier_call(struct notifier_block *nb, unsigned long action, void *data)
{
	struct test_nb *t = container_of(nb, struct test_nb, nb);
	struct nc_walk *w = data;

	if (__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) != NB_LIVE)
		__atomic_fetch_add(&nc_stale, 1, __ATOMIC_RELAXED);
	if (w->n++ && nb->priority > w->last_priority)
		__atomic_fetch_add(&nc_order, 1, __ATOMIC_RELAXED);
	w->last_priority = nb->priority;
	if (action % 8 == 0)
		sleep_us(10);   /* notifiers of an SRCU chain may sleep */
	if (__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) != NB_LIVE)
		__atomic_fetch_add(&nc_stale, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&t->calls, 1, __ATOMIC_RELAXED);
	return NOTIFY_OK;
}

static void *nc_caller(void *arg)
{
	unsigned long val = (unsigned long)arg;

	while (!flag_get(&nc_stop)) {
		struct nc_walk w = { 0, 0 };

		srcu_notifier_call_chain(&test_chain, val++, &w);
		__atomic_fetch_add(&nc_calls, w.n, __ATOMIC_RELAXED);
		__atomic_fetch_add(&nc_chain_calls, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void nb_alloc(struct test_nb *t, int priority)
{
	t->nb.notifier_call = test_notifier_call;
	t->nb.priority = priority;
	t->calls = 0;
	__atomic_store_n(&t->magic, NB_LIVE, __ATOMIC_RELEASE);
}

/* kfree(): poisoned, the memory kept so that a stale call is seen. */
static void nb_free(struct test_nb *t)
{
	__atomic_store_n(&t->magic, NB_POISON, __ATOMIC_RELEASE);
	WRITE_ONCE(t->nb.priority, -1000);
}

/* Each updater owns half the pool: registers, lets callers run, checks a
 * call chain after the register called it, unregisters, frees at once. */
static void *nc_updater(void *arg)
{
	int base = (int)(long)arg * (NB_POOL / 2);
	unsigned int seed = (unsigned int)base + 1;

	while (!flag_get(&nc_stop)) {
		struct test_nb *t = &nb_pool[base + (int)(rand_r(&seed) % (NB_POOL / 2))];
		struct nc_walk w = { 0, 0 };

		if (__atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) == NB_LIVE) {
			CHECK_EQ(srcu_notifier_chain_unregister(&test_chain, &t->nb), 0);
			nb_free(t);
			__atomic_fetch_add(&nc_unregs, 1, __ATOMIC_RELAXED);
		} else {
			nb_alloc(t, (int)(rand_r(&seed) % 5));
			CHECK_EQ(srcu_notifier_chain_register(&test_chain, &t->nb), 0);
			srcu_notifier_call_chain(&test_chain, 1, &w);
			CHECK(__atomic_load_n(&t->calls, __ATOMIC_RELAXED) >= 1);
		}
		sleep_us(100);
	}
	return NULL;
}

static void test_notifier_chain(void)
{
	pthread_t callers[2], updaters[2];
	struct test_nb single;
	struct nc_walk w = { 0, 0 };
	long long end;

	srcu_init_notifier_head(&test_chain);
	for (int i = 0; i < NB_POOL; i++)
		nb_pool[i].magic = NB_POISON;

	/* The kernel's return values, one thread. */
	nb_alloc(&single, 3);
	CHECK_EQ(srcu_notifier_chain_register(&test_chain, &single.nb), 0);
	CHECK_EQ(srcu_notifier_call_chain(&test_chain, 1, &w), NOTIFY_OK);
	CHECK_EQ(single.calls, 1);
	CHECK_EQ(srcu_notifier_chain_register(&test_chain, &single.nb), -EEXIST);
	CHECK_EQ(__atomic_exchange_n(&kernel_shim_warnings, 0, __ATOMIC_RELAXED), 1);
	CHECK_EQ(srcu_notifier_chain_unregister(&test_chain, &single.nb), 0);
	CHECK_EQ(srcu_notifier_chain_unregister(&test_chain, &single.nb), -ENOENT);
	CHECK_EQ(srcu_notifier_call_chain(&test_chain, 1, &w), NOTIFY_DONE);
	CHECK_EQ(single.calls, 1);

	nc_stop = 0;
	for (long i = 0; i < 2; i++)
		callers[i] = spawn(nc_caller, (void *)(i * 1000));
	for (long i = 0; i < 2; i++)
		updaters[i] = spawn(nc_updater, (void *)i);
	end = now_ns() + RUN_NS;
	while (now_ns() < end)
		sleep_ms(10);
	flag_set(&nc_stop);
	for (int i = 0; i < 2; i++)
		join(updaters[i]);
	for (int i = 0; i < 2; i++)
		join(callers[i]);

	printf("notifier: %ld chain calls, %ld notifier calls, %ld unregisters, "
	       "%ld stale calls, %ld out of order\n",
	       nc_chain_calls, nc_calls, nc_unregs, nc_stale, nc_order);
	CHECK_EQ(nc_stale, 0);
	CHECK_EQ(nc_order, 0);
	CHECK(nc_unregs > 20);
	CHECK(nc_calls > 100);

	for (int i = 0; i < NB_POOL; i++)
		if (nb_pool[i].magic == NB_LIVE)
			CHECK_EQ(srcu_notifier_chain_unregister(&test_chain, &nb_pool[i].nb), 0);
	CHECK(test_chain.head == NULL);
	CHECK_EQ(srcu_cleanup_notifier_head(&test_chain), 0);
}

/* ====================================================================
 * 3. The shim's rculist under a libsrcu domain
 * ==================================================================== */

#define ITEM_LIVE   0x1u
#define ITEM_POISON 0xdeadu

struct item {
	struct list_head link;
	unsigned int magic;
	int key;
};

static DEFINE_SRCU(list_srcu);
static DEFINE_MUTEX(list_mutex);
static LIST_HEAD(item_list);
static struct item items[8];
static int rl_stop;
static long rl_bad, rl_walks;

static void *rl_reader(void *arg)
{
	(void)arg;
	while (!flag_get(&rl_stop)) {
		struct item *it;
		int idx = srcu_read_lock(&list_srcu);

		list_for_each_entry_rcu(it, &item_list, link) {
			if (__atomic_load_n(&it->magic, __ATOMIC_RELAXED) != ITEM_LIVE ||
			    it->key != (int)(it - items))
				__atomic_fetch_add(&rl_bad, 1, __ATOMIC_RELAXED);
		}
		srcu_read_unlock(&list_srcu, idx);
		__atomic_fetch_add(&rl_walks, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static void test_rculist(void)
{
	pthread_t readers[2];
	unsigned int seed = 7;
	long long end;

	for (long i = 0; i < 2; i++)
		readers[i] = spawn(rl_reader, NULL);
	end = now_ns() + RUN_NS / 2;
	while (now_ns() < end) {
		struct item *it = &items[rand_r(&seed) % 8];

		mutex_lock(&list_mutex);
		if (it->magic == ITEM_LIVE) {
			list_del_rcu(&it->link);
			mutex_unlock(&list_mutex);
			synchronize_srcu(&list_srcu);
			__atomic_store_n(&it->magic, ITEM_POISON, __ATOMIC_RELAXED);
			it->key = -1;
		} else {
			it->key = (int)(it - items);
			__atomic_store_n(&it->magic, ITEM_LIVE, __ATOMIC_RELAXED);
			list_add_rcu(&it->link, &item_list);   /* publishes key and magic */
			mutex_unlock(&list_mutex);
		}
	}
	flag_set(&rl_stop);
	for (int i = 0; i < 2; i++)
		join(readers[i]);
	printf("rculist: %ld walks, %ld bad\n", rl_walks, rl_bad);
	CHECK_EQ(rl_bad, 0);
	CHECK(rl_walks > 10);
}

int main(void)
{
	watchdog(30);
	test_i915_reset_backoff();
	test_notifier_chain();
	test_rculist();
	CHECK_EQ(kernel_shim_warnings, 0);
	return check_report("test_kernel_port");
}
