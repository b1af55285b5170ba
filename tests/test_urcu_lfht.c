/*
 * test_urcu_lfht: liburcu's lock-free hash table on a libsrcu flavour of
 * its own (DEFINE_SRCU_URCU_FLAVOR), under readers that sleep inside
 * their sections, updaters that delete, re-add and retire nodes through
 * the flavour's call_rcu(), and resizes both ways (the table's worker
 * runs the flavour's synchronize_rcu()).
 *
 * A retired node is poisoned by its callback and kept for 100 ms before
 * its memory is freed, much longer than any reader sleeps: a reader that
 * finds a poisoned node, at the lookup or after sleeping in the section,
 * saw memory its flavour let go while the section could still reach it.
 *
 * Bug caught: a flavour whose grace periods do not cover its read
 * sections.  --busted retires nodes through a second flavour, bound to
 * another domain: the ctest urcu_lfht.busted must see poisoned reads
 * (proof that this test can fail), and urcu_lfht must see none.
 * Nested sections (half the readers' sections open a second one) and the
 * resize worker's grace periods run in both.
 *
 * SPDX-License-Identifier: MIT
 */
#include "check.h"

#define SRCU_URCU_NO_COMPAT
#include <srcu_urcu.h>
#include <urcu/call-rcu.h>   /* struct rcu_head */
#include <urcu/rculfhash.h>

enum { LIVE = 0x11fe, POISON = 0xdead };
#define KEYS       4096
#define GRAVE_MS   100
#define READERS    3

DEFINE_SRCU(table_domain);
DEFINE_SRCU(other_domain);
DEFINE_SRCU_URCU_FLAVOR(table_flavor, &table_domain);
DEFINE_SRCU_URCU_FLAVOR(other_flavor, &other_domain);

struct node {
	struct cds_lfht_node lfht;
	struct rcu_head rcu;
	unsigned long key;
	int state;
	long long dead_at;       /* when its callback ran */
	struct node *grave_next;
};

static struct cds_lfht *ht;
static const struct rcu_flavor_struct *retire_flavor = &table_flavor;
static int stop;
static long poisoned, lookups, found_nodes, retired;

/* The graveyard: poisoned nodes, oldest first, freed after GRAVE_MS. */
static pthread_mutex_t grave_lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *grave_head, *grave_tail;

static void bury(struct rcu_head *head)
{
	struct node *n = caa_container_of(head, struct node, rcu);

	__atomic_store_n(&n->state, POISON, __ATOMIC_RELAXED);
	n->dead_at = now_ns();
	n->grave_next = NULL;
	pthread_mutex_lock(&grave_lock);
	if (grave_tail)
		grave_tail->grave_next = n;
	else
		grave_head = n;
	grave_tail = n;
	pthread_mutex_unlock(&grave_lock);
}

static void free_old_graves(long long older_than_ns)
{
	long long now = now_ns();

	pthread_mutex_lock(&grave_lock);
	while (grave_head && now - grave_head->dead_at >= older_than_ns) {
		struct node *n = grave_head;

		grave_head = n->grave_next;
		if (!grave_head)
			grave_tail = NULL;
		free(n);
	}
	pthread_mutex_unlock(&grave_lock);
}

static unsigned long hash_key(unsigned long key)
{
	return key * 0x9e3779b97f4a7c15ul;
}

static int match_key(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct node, lfht)->key == *(const unsigned long *)key;
}

static unsigned long next_random(unsigned long *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void check_live(const struct node *n)
{
	if (__atomic_load_n(&n->state, __ATOMIC_RELAXED) != LIVE)
		__atomic_fetch_add(&poisoned, 1, __ATOMIC_RELAXED);
}

static void *reader(void *arg)
{
	unsigned long seed = (unsigned long)(uintptr_t)arg * 7919 + 1;
	long n_lookups = 0, n_found = 0;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned long r = next_random(&seed), key = r % KEYS;
		struct cds_lfht_iter iter;
		struct cds_lfht_node *hit;
		int nested = r & 0x10000;

		table_flavor.read_lock();
		if (nested)
			table_flavor.read_lock();
		cds_lfht_lookup(ht, hash_key(key), match_key, &key, &iter);
		hit = cds_lfht_iter_get_node(&iter);
		if (nested)
			table_flavor.read_unlock();   /* the outer section still holds */
		if (hit) {
			struct node *n = caa_container_of(hit, struct node, lfht);

			n_found++;
			check_live(n);
			if ((r & 0x700000) == 0)
				sleep_us(2000);   /* I/O inside the section */
			check_live(n);
		}
		table_flavor.read_unlock();
		n_lookups++;
	}
	__atomic_fetch_add(&lookups, n_lookups, __ATOMIC_RELAXED);
	__atomic_fetch_add(&found_nodes, n_found, __ATOMIC_RELAXED);
	return NULL;
}

/* Fill the table to all KEYS, then drain it, again and again: each fill
 * and drain resizes it, and every deletion retires a node. */
static void *updater(void *arg)
{
	unsigned long seed = 12345, ops = 0;
	bool filling = true;
	long n = 0;

	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned long key = next_random(&seed) % KEYS;
		struct cds_lfht_iter iter;
		struct cds_lfht_node *hit;

		table_flavor.read_lock();
		cds_lfht_lookup(ht, hash_key(key), match_key, &key, &iter);
		hit = cds_lfht_iter_get_node(&iter);
		if (filling && !hit) {
			struct node *nd = calloc(1, sizeof(*nd));

			REQUIRE(nd);
			nd->key = key;
			nd->state = LIVE;
			cds_lfht_node_init(&nd->lfht);
			cds_lfht_add(ht, hash_key(key), &nd->lfht);
			n++;
		} else if (!filling && hit && cds_lfht_del(ht, hit) == 0) {
			retire_flavor->update_call_rcu(
				&caa_container_of(hit, struct node, lfht)->rcu, bury);
			n--;
			__atomic_fetch_add(&retired, 1, __ATOMIC_RELAXED);
		}
		table_flavor.read_unlock();
		if (filling && n >= KEYS * 3 / 4)
			filling = false;
		else if (!filling && n <= KEYS / 8)
			filling = true;
		if (++ops % 1024 == 0)
			free_old_graves(GRAVE_MS * 1000000LL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	double duration = 3;
	bool busted = false;
	pthread_t r[READERS], u;
	struct cds_lfht_iter iter;
	struct cds_lfht_node *hit;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--busted"))
			busted = true;
		else if (!strcmp(argv[i], "--duration") && i + 1 < argc)
			duration = atof(argv[++i]);
	}
	watchdog((unsigned int)duration + 60);
	if (busted)
		retire_flavor = &other_flavor;
	ht = cds_lfht_new_flavor(1, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				 &table_flavor, NULL);
	REQUIRE(ht);
	for (int i = 0; i < READERS; i++)
		r[i] = spawn(reader, (void *)(uintptr_t)(i + 1));
	u = spawn(updater, NULL);
	sleep_ms((long)(duration * 1000));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < READERS; i++)
		join(r[i]);
	join(u);

	/* Empty the table; every retired node's callback runs. */
	cds_lfht_for_each(ht, &iter, hit) {
		if (cds_lfht_del(ht, hit) == 0)
			table_flavor.update_call_rcu(&caa_container_of(hit, struct node, lfht)->rcu,
						     bury);
	}
	table_flavor.barrier();
	other_flavor.barrier();
	CHECK_EQ(cds_lfht_destroy(ht, NULL), 0);
	free_old_graves(0);
	printf("lookups %ld, found %ld, retired %ld\n", lookups, found_nodes, retired);
	printf("poisoned reads: %ld\n", poisoned);
	CHECK(lookups > 0 && retired > 0);
	CHECK_EQ(poisoned, 0);
	return check_report(busted ? "test_urcu_lfht --busted" : "test_urcu_lfht");
}
