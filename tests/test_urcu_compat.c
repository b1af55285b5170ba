/*
 * test_urcu_compat: a program written for liburcu's default flavour, with
 * <srcu_urcu.h> in place of <urcu.h>, builds and behaves: sections,
 * pointers, call_rcu() and rcu_barrier(), defer_rcu(), the call_rcu data
 * API, and liburcu's own rculist, rcuhlist and cds_lfht headers on
 * rcu_flavor.
 *
 * Bugs caught, each by the check named:
 *  - call_rcu() callback run before a section that began earlier ends
 *    (callback_waits_for_reader: a compat call that skipped the GP);
 *  - rcu_barrier() returning before queued callbacks ran (barrier_waits);
 *  - defer_rcu() losing or running its function early (defer_waits);
 *  - rcu_read_lock() not entering a section of srcu_urcu_domain
 *    (sections_are_domain_sections), or nesting that ends the section at
 *    an inner unlock (nested_unlock_keeps_section);
 *  - cds_lfht_new() with rcu_flavor not bound to our domain, or the
 *    liburcu headers' inline code not seeing our names (lfht_on_rcu_flavor:
 *    compiles only if the names resolve, and the table answers);
 *  - a call_rcu data API that loses callbacks queued through a handle
 *    (call_rcu_data_api);
 *  - liburcu's lock-free queue unable to take our call_rcu() for its
 *    dummy nodes, or losing elements (lfqueue).
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"

#include <srcu_urcu.h>
#include <urcu/rculist.h>
#include <urcu/rcuhlist.h>
#include <urcu/rculfhash.h>
#include <urcu/rculfqueue.h>

struct item {
	int value;
	struct rcu_head rcu;
	struct cds_list_head node;
	struct cds_hlist_node hnode;
	struct cds_lfht_node lfht;
};

static int freed;

static void free_item(struct rcu_head *head)
{
	struct item *it = caa_container_of(head, struct item, rcu);

	it->value = -1;
	free(it);
	__atomic_fetch_add(&freed, 1, __ATOMIC_SEQ_CST);
}

/* A reader holding a section until told to leave. */
static int reader_in, reader_leave, reader_left;

static void *hold_section(void *arg)
{
	(void)arg;
	rcu_register_thread();
	rcu_read_lock();
	flag_set(&reader_in);
	flag_wait(&reader_leave);
	flag_set(&reader_left);   /* before the unlock: a GP must wait past it */
	rcu_read_unlock();
	rcu_unregister_thread();
	return NULL;
}

static void sections_are_domain_sections(void)
{
	CHECK(!rcu_read_ongoing());
	rcu_read_lock();
	CHECK(rcu_read_ongoing());
	CHECK(srcu_read_lock_held(&srcu_urcu_domain));
	rcu_read_lock();
	rcu_read_unlock();
	CHECK(rcu_read_ongoing());
	CHECK(srcu_read_lock_held(&srcu_urcu_domain));
	rcu_read_unlock();
	CHECK(!rcu_read_ongoing());
	CHECK(!srcu_read_lock_held(&srcu_urcu_domain));
	rcu_quiescent_state();
	rcu_thread_offline();
	rcu_thread_online();
}

static void callback_waits_for_reader(void)
{
	pthread_t t;
	struct item *it = calloc(1, sizeof(*it));
	int before;

	REQUIRE(it);
	reader_in = reader_leave = reader_left = 0;
	t = spawn(hold_section, NULL);
	flag_wait(&reader_in);
	before = __atomic_load_n(&freed, __ATOMIC_SEQ_CST);
	call_rcu(&it->rcu, free_item);
	sleep_ms(50);   /* the worker has had time to run a wrong GP */
	CHECK_EQ(__atomic_load_n(&freed, __ATOMIC_SEQ_CST), before);
	flag_set(&reader_leave);
	rcu_barrier();
	CHECK(flag_get(&reader_left));
	CHECK_EQ(__atomic_load_n(&freed, __ATOMIC_SEQ_CST), before + 1);
	join(t);
}

static void barrier_waits(void)
{
	int before = __atomic_load_n(&freed, __ATOMIC_SEQ_CST);

	for (int i = 0; i < 1000; i++) {
		struct item *it = calloc(1, sizeof(*it));

		REQUIRE(it);
		call_rcu(&it->rcu, free_item);
	}
	rcu_barrier();
	CHECK_EQ(__atomic_load_n(&freed, __ATOMIC_SEQ_CST), before + 1000);
}

static int deferred;

static void count_deferred(void *p)
{
	CHECK(p == &deferred);
	__atomic_fetch_add(&deferred, 1, __ATOMIC_SEQ_CST);
}

static void defer_waits(void)
{
	pthread_t t;

	CHECK_EQ(rcu_defer_register_thread(), 0);
	reader_in = reader_leave = reader_left = 0;
	t = spawn(hold_section, NULL);
	flag_wait(&reader_in);
	defer_rcu(count_deferred, &deferred);
	sleep_ms(50);
	CHECK_EQ(flag_get(&deferred), 0);
	flag_set(&reader_leave);
	rcu_defer_barrier();
	CHECK_EQ(flag_get(&deferred), 1);
	join(t);
	rcu_defer_unregister_thread();
}

static void *synchronize_thread(void *arg)
{
	(void)arg;
	synchronize_rcu();
	return NULL;
}

static void nested_unlock_keeps_section(void)
{
	pthread_t t;
	unsigned long gps;

	/* synchronize_rcu() from another thread must wait for the outer
	 * unlock, not return at the inner one. */
	reader_in = reader_leave = reader_left = 0;
	rcu_read_lock();
	rcu_read_lock();
	rcu_read_unlock();
	gps = srcu_batches_completed(&srcu_urcu_domain);
	t = spawn(synchronize_thread, NULL);
	sleep_ms(50);
	CHECK_EQ(srcu_batches_completed(&srcu_urcu_domain), gps);
	rcu_read_unlock();
	join(t);
	CHECK(srcu_batches_completed(&srcu_urcu_domain) > gps);
}

static struct item *shared_ptr;

static void pointers(void)
{
	struct item *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b)), *old;

	REQUIRE(a && b);
	a->value = 1;
	b->value = 2;
	rcu_assign_pointer(shared_ptr, a);
	rcu_read_lock();
	CHECK_EQ(rcu_dereference(shared_ptr)->value, 1);
	rcu_read_unlock();
	old = rcu_xchg_pointer(&shared_ptr, b);
	CHECK(old == a);
	old = rcu_cmpxchg_pointer(&shared_ptr, b, a);
	CHECK(old == b);
	synchronize_rcu();
	free(b);
	rcu_set_pointer(&shared_ptr, NULL);
	synchronize_rcu();
	free(a);
}

static void lists(void)
{
	CDS_LIST_HEAD(list);
	struct cds_hlist_head hlist = { NULL };
	struct item *it, *tmp;
	int sum = 0;

	for (int i = 1; i <= 3; i++) {
		it = calloc(1, sizeof(*it));
		REQUIRE(it);
		it->value = i;
		cds_list_add_rcu(&it->node, &list);
		cds_hlist_add_head_rcu(&it->hnode, &hlist);
	}
	rcu_read_lock();
	cds_list_for_each_entry_rcu(it, &list, node)
		sum += it->value;
	cds_hlist_for_each_entry_rcu_2(it, &hlist, hnode)
		sum += 10 * it->value;
	rcu_read_unlock();
	CHECK_EQ(sum, 66);
	cds_list_for_each_entry_safe(it, tmp, &list, node) {
		cds_list_del_rcu(&it->node);
		cds_hlist_del_rcu(&it->hnode);
		call_rcu(&it->rcu, free_item);
	}
	rcu_barrier();
}

static int match_value(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct item, lfht)->value == *(const int *)key;
}

static void lfht_on_rcu_flavor(void)
{
#if defined(__SANITIZE_THREAD__)
	/* liburcu-cds is not built with TSan, which then reports the table's
	 * own publication as races (tests/CMakeLists.txt); the rest of this
	 * test runs under TSan. */
	return;
#endif
	struct cds_lfht *ht = cds_lfht_new(2, 2, 0, CDS_LFHT_AUTO_RESIZE, NULL);
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	int found = 0;

	REQUIRE(ht);
	for (int i = 0; i < 200; i++) {
		struct item *it = calloc(1, sizeof(*it));

		REQUIRE(it);
		it->value = i;
		cds_lfht_node_init(&it->lfht);
		rcu_read_lock();
		cds_lfht_add(ht, (unsigned long)i * 2654435761u, &it->lfht);
		rcu_read_unlock();
	}
	rcu_read_lock();
	for (int i = 0; i < 200; i++) {
		cds_lfht_lookup(ht, (unsigned long)i * 2654435761u, match_value, &i, &iter);
		found += cds_lfht_iter_get_node(&iter) != NULL;
	}
	rcu_read_unlock();
	CHECK_EQ(found, 200);
	rcu_read_lock();
	cds_lfht_for_each(ht, &iter, node) {
		if (!cds_lfht_del(ht, node))
			call_rcu(&caa_container_of(node, struct item, lfht)->rcu, free_item);
	}
	rcu_read_unlock();
	rcu_barrier();
	CHECK_EQ(cds_lfht_destroy(ht, NULL), 0);
}

struct qitem {
	struct cds_lfq_node_rcu node;
	struct rcu_head rcu;
	int value;
};

static void free_qitem(struct rcu_head *head)
{
	free(caa_container_of(head, struct qitem, rcu));
}

static void lfqueue(void)
{
	struct cds_lfq_queue_rcu q;
	struct cds_lfq_node_rcu *n;
	int sum = 0;

	cds_lfq_init_rcu(&q, call_rcu);
	for (int i = 1; i <= 100; i++) {
		struct qitem *it = calloc(1, sizeof(*it));

		REQUIRE(it);
		it->value = i;
		cds_lfq_node_init_rcu(&it->node);
		rcu_read_lock();
		cds_lfq_enqueue_rcu(&q, &it->node);
		rcu_read_unlock();
	}
	for (;;) {
		rcu_read_lock();
		n = cds_lfq_dequeue_rcu(&q);
		rcu_read_unlock();
		if (!n)
			break;
		sum += caa_container_of(n, struct qitem, node)->value;
		call_rcu(&caa_container_of(n, struct qitem, node)->rcu, free_qitem);
	}
	CHECK_EQ(sum, 5050);
	CHECK_EQ(cds_lfq_destroy_rcu(&q), 0);
	rcu_barrier();
}

static void call_rcu_data_api(void)
{
	struct call_rcu_data *crdp = create_call_rcu_data(0, -1);
	struct item *it = calloc(1, sizeof(*it));
	int before = __atomic_load_n(&freed, __ATOMIC_SEQ_CST);

	REQUIRE(crdp && it);
	CHECK(get_default_call_rcu_data() != NULL);
	CHECK(get_thread_call_rcu_data() == NULL);
	CHECK(get_call_rcu_data() == get_default_call_rcu_data());
	set_thread_call_rcu_data(crdp);
	CHECK(get_thread_call_rcu_data() == crdp);
	CHECK(get_call_rcu_data() == crdp);
	call_rcu(&it->rcu, free_item);
	set_thread_call_rcu_data(NULL);
	call_rcu_data_free(crdp);
	rcu_barrier();
	CHECK_EQ(__atomic_load_n(&freed, __ATOMIC_SEQ_CST), before + 1);
	CHECK_EQ(create_all_cpu_call_rcu_data(0), 0);
	(void)get_cpu_call_rcu_data(0);
	free_all_cpu_call_rcu_data();
	CHECK(!pthread_equal(get_call_rcu_thread(get_default_call_rcu_data()), pthread_self()));
	/* liburcu's getter works inside a section too (it used to wait for
	 * a grace period there, which libsrcu reports as a deadlock). */
	rcu_read_lock();
	CHECK(!pthread_equal(get_call_rcu_thread(get_default_call_rcu_data()), pthread_self()));
	rcu_read_unlock();
	CHECK(rcu_flavor.read_lock != NULL && rcu_flavor.barrier != NULL);
}

int main(void)
{
	watchdog(60);
	rcu_init();
	rcu_register_thread();
	sections_are_domain_sections();
	callback_waits_for_reader();
	barrier_waits();
	defer_waits();
	nested_unlock_keeps_section();
	pointers();
	lists();
	lfht_on_rcu_flavor();
	lfqueue();
	call_rcu_data_api();
	rcu_unregister_thread();
	return check_report("test_urcu_compat");
}
