/*
 * lfht-sleepy: two liburcu hash tables (cds_lfht), each on its own
 * libsrcu domain.  Table A's lookups sleep inside their read sections (an
 * I/O stand-in: a disk read, an RPC); table B's updater deletes, re-adds
 * and frees nodes, and the table resizes as it grows and shrinks.
 *
 *   lfht-sleepy [--flavor srcu|memb] [--duration S] [--sleep-ms MS]
 *
 * With --flavor srcu (the default) each table has a flavour of its own
 * (DEFINE_SRCU_URCU_FLAVOR), and B's grace periods wait only for B's
 * readers: its deletions run at full speed while A's readers sleep.  With
 * --flavor memb both tables use liburcu's urcu-memb flavour, one grace
 * period for the whole process: every deletion in B waits for A's
 * sleepers.  The program prints B's deletions per second and its
 * grace-period latencies; it exits 1 if any reader saw a freed node.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <urcu/urcu-memb.h>          /* the peer: liburcu's default flavour */
#define SRCU_URCU_NO_COMPAT          /* liburcu's own names stay liburcu's */
#include <srcu_urcu.h>
#include <urcu/rculfhash.h>

#define KEYS        1024
#define A_READERS   4
#define MAGIC       0x5eed
#define FREED       0xf7ee

DEFINE_SRCU(domain_a);
DEFINE_SRCU(domain_b);
DEFINE_SRCU_URCU_FLAVOR(flavor_a, &domain_a);
DEFINE_SRCU_URCU_FLAVOR(flavor_b, &domain_b);

struct entry {
	struct cds_lfht_node node;
	unsigned long key;
	int magic;
};

struct table {
	struct cds_lfht *ht;
	const struct rcu_flavor_struct *flavor;
};

static struct table a, b;
static int stop;
static long sleep_ms = 20;
static long bad_reads, a_lookups;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct entry, node)->key == *(const unsigned long *)key;
}

static unsigned long hash(unsigned long key)
{
	return key * 0x9e3779b97f4a7c15ul;
}

static struct entry *lookup(struct table *t, unsigned long key)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;

	cds_lfht_lookup(t->ht, hash(key), match, &key, &iter);
	n = cds_lfht_iter_get_node(&iter);
	return n ? caa_container_of(n, struct entry, node) : NULL;
}

static void insert(struct table *t, unsigned long key)
{
	struct entry *e = calloc(1, sizeof(*e));

	if (!e)
		abort();
	e->key = key;
	e->magic = MAGIC;
	cds_lfht_node_init(&e->node);
	t->flavor->read_lock();
	cds_lfht_add(t->ht, hash(key), &e->node);
	t->flavor->read_unlock();
}

static void check(const struct entry *e)
{
	if (__atomic_load_n(&e->magic, __ATOMIC_RELAXED) != MAGIC)
		__atomic_fetch_add(&bad_reads, 1, __ATOMIC_RELAXED);
}

/* Table A's readers: look up, then "do I/O" holding the entry. */
static void *a_reader(void *arg)
{
	unsigned long key = (uintptr_t)arg;
	struct timespec io = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000L };

	a.flavor->register_thread();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		struct entry *e;

		a.flavor->read_lock();
		e = lookup(&a, key++ % KEYS);
		if (e) {
			check(e);
			nanosleep(&io, NULL);
			check(e);   /* still ours: nobody freed it */
		}
		a.flavor->read_unlock();
		__atomic_fetch_add(&a_lookups, 1, __ATOMIC_RELAXED);
	}
	a.flavor->unregister_thread();
	return NULL;
}

static int cmp_double(const void *x, const void *y)
{
	double d = *(const double *)x - *(const double *)y;

	return (d > 0) - (d < 0);
}

int main(int argc, char **argv)
{
	const char *flavor = "srcu";
	double duration = 3, t0, gp_max = 0;
	static double gp[1 << 20];
	long deletions = 0, ngp = 0;
	unsigned long key = 0;
	pthread_t readers[A_READERS];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--flavor") && i + 1 < argc)
			flavor = argv[++i];
		else if (!strcmp(argv[i], "--duration") && i + 1 < argc)
			duration = atof(argv[++i]);
		else if (!strcmp(argv[i], "--sleep-ms") && i + 1 < argc)
			sleep_ms = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: %s [--flavor srcu|memb] [--duration S] [--sleep-ms MS]\n",
				argv[0]);
			return 2;
		}
	}
	if (!strcmp(flavor, "memb")) {
		a.flavor = b.flavor = &urcu_memb_flavor;
	} else if (!strcmp(flavor, "srcu")) {
		a.flavor = &flavor_a;
		b.flavor = &flavor_b;
	} else {
		fprintf(stderr, "lfht-sleepy: unknown flavour %s\n", flavor);
		return 2;
	}
	b.flavor->register_thread();
	a.ht = cds_lfht_new_flavor(1, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				   a.flavor, NULL);
	b.ht = cds_lfht_new_flavor(1, 1, 0, CDS_LFHT_AUTO_RESIZE | CDS_LFHT_ACCOUNTING,
				   b.flavor, NULL);
	if (!a.ht || !b.ht)
		return 1;
	for (unsigned long k = 0; k < KEYS; k++) {
		insert(&a, k);
		insert(&b, k);
	}
	for (int i = 0; i < A_READERS; i++)
		pthread_create(&readers[i], NULL, a_reader, (void *)(uintptr_t)(i * KEYS / A_READERS));

	/* Table B's updater: delete a key, wait for B's readers, free the
	 * entry, add it back; every KEYS deletions, drain and refill half
	 * the table, so that it resizes both ways. */
	t0 = now_s();
	while (now_s() - t0 < duration) {
		unsigned long k = key++ % KEYS;
		struct entry *e;
		double g0;

		b.flavor->read_lock();
		e = lookup(&b, k);
		if (e && cds_lfht_del(b.ht, &e->node) != 0)
			e = NULL;
		b.flavor->read_unlock();
		if (!e)
			continue;
		g0 = now_s();
		b.flavor->update_synchronize_rcu();
		g0 = now_s() - g0;
		if (ngp < (long)(sizeof(gp) / sizeof(gp[0])))
			gp[ngp++] = g0;
		if (g0 > gp_max)
			gp_max = g0;
		e->magic = FREED;
		free(e);
		deletions++;
		if ((key / KEYS) % 2 == 0 || k % 2 == 0)
			insert(&b, k);
	}
	duration = now_s() - t0;
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < A_READERS; i++)
		pthread_join(readers[i], NULL);

	qsort(gp, (size_t)ngp, sizeof(gp[0]), cmp_double);
	printf("flavour %s: table A: %d readers sleeping %ld ms in each section, %ld lookups\n",
	       flavor, A_READERS, sleep_ms, a_lookups);
	printf("flavour %s: table B: %.0f deletions/s; grace period p50 %.1f us, max %.1f us\n",
	       flavor, deletions / duration, ngp ? gp[ngp / 2] * 1e6 : 0.0, gp_max * 1e6);
	printf("freed entries seen by readers: %ld\n", bad_reads);

	/* Tear down: empty both tables, then destroy them. */
	struct table *both[] = { &a, &b };
	for (int i = 0; i < 2; i++) {
		struct cds_lfht_iter iter;
		struct cds_lfht_node *n;
		struct entry *dead[KEYS];
		int ndead = 0;

		both[i]->flavor->read_lock();
		cds_lfht_for_each(both[i]->ht, &iter, n)
			if (cds_lfht_del(both[i]->ht, n) == 0 && ndead < KEYS)
				dead[ndead++] = caa_container_of(n, struct entry, node);
		both[i]->flavor->read_unlock();
		both[i]->flavor->update_synchronize_rcu();
		while (ndead)
			free(dead[--ndead]);
		cds_lfht_destroy(both[i]->ht, NULL);
	}
	b.flavor->unregister_thread();
	return bad_reads ? 1 : 0;
}
