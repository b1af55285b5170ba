/*
 * bench_lfht.c: figure 10 of srcu-bench, liburcu's lock-free hash table
 * (cds_lfht) on the libsrcu flavour and on urcu-memb: the same table
 * code, the same threads, the flavours in interleaved rounds.
 *
 *  (10a) lookups/s with every thread reading, and lookups/s and updates/s
 *        (delete, call_rcu, re-add) with one thread updating.  The read
 *        sections are each flavour's inline calls, as a program gets them:
 *        srcu_urcu_read_lock() (what rcu_read_lock() is under srcu_urcu.h)
 *        and _LGPL_SOURCE's urcu_memb_read_lock().
 *  (10b) two tables; a reader of table A sleeps 10 ms inside each of its
 *        sections while table B's updater deletes, waits for a grace
 *        period, frees and re-adds (B has an idle reader of its own).  B's deletions/s: each table on a
 *        domain of its own (libsrcu) or both on the one process-wide
 *        domain (urcu-memb).
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#define _LGPL_SOURCE                 /* urcu-memb's read side inline */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <urcu/urcu-memb.h>
#define SRCU_URCU_NO_COMPAT
#include <srcu_urcu.h>
#include <urcu/rculfhash.h>

#include "bench.h"
#include "peers.h"
#include "bench_results.h"
#include "clock.h"

#define KEYS    (1 << 14)
#define ROUNDS  3

DEFINE_SRCU(lfht_domain_a);
DEFINE_SRCU(lfht_domain_b);
DEFINE_SRCU_URCU_FLAVOR(lfht_flavor_a, &lfht_domain_a);
DEFINE_SRCU_URCU_FLAVOR(lfht_flavor_b, &lfht_domain_b);

struct entry {
	struct cds_lfht_node node;
	struct rcu_head rcu;
	unsigned long key;
};

enum lfht_peer { SRCU, MEMB, NPEERS };
static const char *const peer_name[NPEERS] = { "libsrcu-flavor", "urcu-memb" };

struct run {
	enum lfht_peer peer;
	struct cds_lfht *ht;
	const struct rcu_flavor_struct *flavor;
	int stop;
	long lookups, updates;
};

static unsigned long hash(unsigned long key)
{
	return key * 0x9e3779b97f4a7c15ul;
}

static int match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct entry, node)->key == *(const unsigned long *)key;
}

static struct entry *new_entry(unsigned long key)
{
	struct entry *e = calloc(1, sizeof(*e));

	if (!e)
		abort();
	e->key = key;
	cds_lfht_node_init(&e->node);
	return e;
}

static void free_entry(struct rcu_head *head)
{
	free(caa_container_of(head, struct entry, rcu));
}

/* The read loop, one copy per peer so that each inlines its own calls. */
#define LOOKUP_LOOP(lock, unlock) \
	do { \
		for (int i = 0; i < 256; i++) { \
			struct cds_lfht_iter iter; \
			unsigned long k = (seed = seed * 6364136223846793005ul + 1) >> 50; \
			lock; \
			cds_lfht_lookup(r->ht, hash(k), match, &k, &iter); \
			found += cds_lfht_iter_get_node(&iter) != NULL; \
			unlock; \
		} \
		n += 256; \
	} while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED))

static void *lookup_thread(void *arg)
{
	struct run *r = arg;
	unsigned long seed = (unsigned long)(uintptr_t)&seed;
	long n = 0, found = 0;

	r->flavor->register_thread();
	if (r->peer == SRCU)
		LOOKUP_LOOP(srcu_urcu_read_lock(), srcu_urcu_read_unlock());
	else
		LOOKUP_LOOP(urcu_memb_read_lock(), urcu_memb_read_unlock());
	r->flavor->unregister_thread();
	if (found < 0)
		abort();   /* keeps the lookups' results live */
	__atomic_fetch_add(&r->lookups, n, __ATOMIC_RELAXED);
	return NULL;
}

static void *update_thread(void *arg)
{
	struct run *r = arg;
	unsigned long k = 0;
	long n = 0;

	r->flavor->register_thread();
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		struct cds_lfht_iter iter;
		struct cds_lfht_node *hit;

		k = (k + 7919) % KEYS;
		r->flavor->read_lock();
		cds_lfht_lookup(r->ht, hash(k), match, &k, &iter);
		hit = cds_lfht_iter_get_node(&iter);
		if (hit && cds_lfht_del(r->ht, hit) == 0)
			r->flavor->update_call_rcu(&caa_container_of(hit, struct entry, node)->rcu,
						   free_entry);
		cds_lfht_add(r->ht, hash(k), &new_entry(k)->node);
		r->flavor->read_unlock();
		n++;
	}
	r->flavor->barrier();
	r->flavor->unregister_thread();
	r->updates = n;
	return NULL;
}

static struct cds_lfht *filled_table(const struct rcu_flavor_struct *flavor)
{
	struct cds_lfht *ht = cds_lfht_new_flavor(KEYS, KEYS, 0, 0, flavor, NULL);

	if (!ht)
		abort();
	flavor->register_thread();
	flavor->read_lock();
	for (unsigned long k = 0; k < KEYS; k++)
		cds_lfht_add(ht, hash(k), &new_entry(k)->node);
	flavor->read_unlock();
	flavor->unregister_thread();
	return ht;
}

static void destroy_table(struct cds_lfht *ht, const struct rcu_flavor_struct *flavor)
{
	struct cds_lfht_iter iter;
	struct cds_lfht_node *n;

	flavor->register_thread();
	flavor->read_lock();
	cds_lfht_for_each(ht, &iter, n)
		if (cds_lfht_del(ht, n) == 0)
			flavor->update_call_rcu(&caa_container_of(n, struct entry, node)->rcu,
						free_entry);
	flavor->read_unlock();
	flavor->barrier();
	flavor->unregister_thread();
	cds_lfht_destroy(ht, NULL);
}

static const struct rcu_flavor_struct *flavor_of(enum lfht_peer p)
{
	return p == SRCU ? &srcu_urcu_flavor : &urcu_memb_flavor;
}

/* One round: nlookup threads reading, one updating if update; rates. */
static void one_round(enum lfht_peer p, int nlookup, int update, double secs,
		      double *lookups, double *updates)
{
	struct run r = { .peer = p, .flavor = flavor_of(p) };
	pthread_t t[64], u;
	double t0;

	r.ht = filled_table(r.flavor);
	t0 = clock_now_s();
	for (int i = 0; i < nlookup; i++)
		pthread_create(&t[i], NULL, lookup_thread, &r);
	if (update)
		pthread_create(&u, NULL, update_thread, &r);
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nlookup; i++)
		pthread_join(t[i], NULL);
	if (update)
		pthread_join(u, NULL);
	t0 = clock_now_s() - t0;
	*lookups = (double)r.lookups / t0;
	*updates = (double)r.updates / t0;
	destroy_table(r.ht, r.flavor);
}

static void print_and_record(const char *metric, const char *unit, double v[NPEERS][ROUNDS])
{
	for (int p = 0; p < NPEERS; p++) {
		qsort(v[p], ROUNDS, sizeof(double), cmp_double);
		printf(" %12.0f [%.0f-%.0f]", v[p][ROUNDS / 2], v[p][0], v[p][ROUNDS - 1]);
		record("lfht", peer_name[p], metric, v[p][ROUNDS / 2], unit);
		record_spread("lfht", peer_name[p], metric, v[p][0], v[p][ROUNDS - 1], unit);
	}
	printf("   %.2fx\n", v[SRCU][ROUNDS / 2] / v[MEMB][ROUNDS / 2]);
}

/* ---- figure 1's row for liburcu's names on libsrcu ----
 *
 * rcu_read_lock() and rcu_read_unlock() as srcu_urcu.h gives them: the
 * libsrcu pair plus the word that keeps the outermost index, which
 * liburcu's index-less API needs.  Read figures only (no synchronize:
 * its grace periods are libsrcu's, measured in the libsrcu rows). */

static void compat_reads(long n)
{
	for (long i = 0; i < n; i++) {
		srcu_urcu_read_lock();
		srcu__barrier();
		srcu_urcu_read_unlock();
	}
}

static int compat_lock(void) { srcu_urcu_read_lock(); return 0; }
static void compat_unlock(int token) { (void)token; srcu_urcu_read_unlock(); }
static void compat_nothing(void) { }

const struct peer peer_srcu_urcu = {
	"libsrcu-urcu", "srcu_urcu.h's rcu_read_lock() (liburcu's names on libsrcu)", 1,
	compat_nothing, compat_nothing, compat_reads, compat_lock, compat_unlock, NULL, NULL, NULL,
};

/* ---- 10b: table B's deletions while table A's reader sleeps ---- */

struct sleepy {
	struct cds_lfht *ht_a, *ht_b;
	const struct rcu_flavor_struct *fa, *fb;
	int stop;
};

/* A reader of table B, idle: one lookup, then asleep outside any section
 * until the end, as B's own readers are between requests.  It makes B's
 * grace periods interrupt the process (libsrcu's lone-updater shortcut,
 * local fences only, would otherwise apply). */
static void *idle_b_reader(void *arg)
{
	struct sleepy *s = arg;
	struct cds_lfht_iter iter;
	unsigned long k = 2;

	s->fb->register_thread();
	s->fb->read_lock();
	cds_lfht_lookup(s->ht_b, hash(k), match, &k, &iter);
	s->fb->read_unlock();
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		struct timespec ms = { 0, 1000 * 1000 };

		nanosleep(&ms, NULL);
	}
	s->fb->unregister_thread();
	return NULL;
}

static void *sleep_in_a(void *arg)
{
	struct sleepy *s = arg;
	struct timespec io = { 0, 10 * 1000 * 1000 };

	s->fa->register_thread();
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		struct cds_lfht_iter iter;
		unsigned long k = 1;

		s->fa->read_lock();
		cds_lfht_lookup(s->ht_a, hash(k), match, &k, &iter);
		nanosleep(&io, NULL);   /* I/O inside the section */
		s->fa->read_unlock();
	}
	s->fa->unregister_thread();
	return NULL;
}

static double b_deletions_per_s(enum lfht_peer p, double secs)
{
	const struct rcu_flavor_struct *fa = p == SRCU ? &lfht_flavor_a : &urcu_memb_flavor;
	const struct rcu_flavor_struct *fb = p == SRCU ? &lfht_flavor_b : &urcu_memb_flavor;
	struct sleepy s = { .fa = fa, .fb = fb };
	struct cds_lfht *ht_b = filled_table(fb);
	unsigned long k = 0;
	long n = 0;
	pthread_t t, tb;
	double t0, el;

	s.ht_a = filled_table(fa);
	s.ht_b = ht_b;
	pthread_create(&t, NULL, sleep_in_a, &s);
	pthread_create(&tb, NULL, idle_b_reader, &s);
	fb->register_thread();
	t0 = clock_now_s();
	do {
		struct cds_lfht_iter iter;
		struct cds_lfht_node *hit;

		k = (k + 7919) % KEYS;
		fb->read_lock();
		cds_lfht_lookup(ht_b, hash(k), match, &k, &iter);
		hit = cds_lfht_iter_get_node(&iter);
		if (hit && cds_lfht_del(ht_b, hit) != 0)
			hit = NULL;
		fb->read_unlock();
		if (hit) {
			fb->update_synchronize_rcu();
			free(caa_container_of(hit, struct entry, node));
			n++;
		}
		fb->read_lock();
		cds_lfht_add(ht_b, hash(k), &new_entry(k)->node);
		fb->read_unlock();
	} while ((el = clock_now_s() - t0) < secs);
	fb->unregister_thread();
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	pthread_join(t, NULL);
	pthread_join(tb, NULL);
	destroy_table(ht_b, fb);
	destroy_table(s.ht_a, fa);
	return (double)n / el;
}

void figure_lfht(const struct bench_run *run)
{
	double secs = run->quick ? 0.3 : 1.0;
	double ro[NPEERS][ROUNDS], mixed_l[NPEERS][ROUNDS], mixed_u[NPEERS][ROUNDS];
	double sleepy[NPEERS][ROUNDS], unused;
	int readers = run->ncpu < 64 ? run->ncpu : 64;
	int mixed_readers = readers > 1 ? readers - 1 : 1;

	printf("\n(10) liburcu's cds_lfht (%d keys) on the libsrcu flavour and on urcu-memb: "
	       "median of %d interleaved rounds [min-max], libsrcu / memb\n", KEYS, ROUNDS);
	for (int i = 0; i < ROUNDS; i++)
		for (int p = 0; p < NPEERS; p++) {
			one_round((enum lfht_peer)p, readers, 0, secs, &ro[p][i], &unused);
			one_round((enum lfht_peer)p, mixed_readers, 1, secs, &mixed_l[p][i],
				  &mixed_u[p][i]);
			sleepy[p][i] = b_deletions_per_s((enum lfht_peer)p, secs);
		}
	printf("%-44s %28s %28s\n", "", peer_name[SRCU], peer_name[MEMB]);
	printf("(10a) lookups/s, %2d threads reading          ", readers);
	print_and_record("lookups_per_s_all", "1/s", ro);
	printf("(10a) lookups/s, %2d reading + 1 updating     ", mixed_readers);
	print_and_record("lookups_per_s_mixed", "1/s", mixed_l);
	printf("(10a) updates/s (del, call_rcu, add), same   ");
	print_and_record("updates_per_s_mixed", "1/s", mixed_u);
	printf("(10b) table B deletions/s (synchronize each; B's\n"
	       "      reader idle), a reader of table A asleep 10 ms");
	print_and_record("b_deletions_per_s_a_asleep", "1/s", sleepy);
}
