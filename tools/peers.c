/*
 * peers.c: libsrcu and the peers that need no extra package: a
 * pair of thread-local counts (the floor), glibc's pthread_rwlock, and a naive
 * SRCU with one shared atomic counter pair per domain.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "peers.h"

#include <pthread.h>
#include <sched.h>

#include "srcu.h"
#include "srcu_gate.h"

#define compiler_barrier() __asm__ __volatile__("" ::: "memory")

/* ---- libsrcu, linked as a user links it ---- */

static DEFINE_SRCU(bench_domain);

static void srcu_reads(long n)
{
	for (long i = 0; i < n; i++) {
		int idx = srcu_read_lock(&bench_domain);
		compiler_barrier();
		srcu_read_unlock(&bench_domain, idx);
	}
}

static int srcu_lock(void) { return srcu_read_lock(&bench_domain); }
static void srcu_unlock(int idx) { srcu_read_unlock(&bench_domain, idx); }
static void srcu_sync(void) { synchronize_srcu(&bench_domain); }
static void srcu_sync_exp(void) { synchronize_srcu_expedited(&bench_domain); }
static void nothing(void) { }

unsigned long srcu_peer_gps(void)
{
	return srcu_batches_completed(&bench_domain);
}

const struct peer peer_srcu = {
	"libsrcu", "this library, synchronize_srcu()", 1,
	nothing, nothing, srcu_reads, srcu_lock, srcu_unlock, srcu_sync, NULL, NULL,
};
const struct peer peer_srcu_exp = {
	"libsrcu-exp", "this library, synchronize_srcu_expedited()", 1,
	nothing, nothing, srcu_reads, srcu_lock, srcu_unlock, srcu_sync_exp, NULL, NULL,
};

/* ---- libsrcu's other read sides: figure 1's rows beside libsrcu ----
 *
 * The kernel's fast readers, on their own kinds of domain, and
 * srcu_down_read()'s atomic pair.  A token is an int: a struct srcu_ctr
 * pointer here holds a word number below 65,536 (doc/design.md, "Fast
 * readers"), which an int keeps; only this benchmark relies on that. */
static DEFINE_SRCU_FAST(bench_fast);
static DEFINE_SRCU_FAST_UPDOWN(bench_updown);

static void srcu_fast_reads(long n)
{
	for (long i = 0; i < n; i++) {
		struct srcu_ctr *scp = srcu_read_lock_fast(&bench_fast);
		compiler_barrier();
		srcu_read_unlock_fast(&bench_fast, scp);
	}
}
static int srcu_fast_lock(void)
{
	return (int)(uintptr_t)srcu_read_lock_fast(&bench_fast);
}
static void srcu_fast_unlock(int t)
{
	srcu_read_unlock_fast(&bench_fast, (struct srcu_ctr *)(uintptr_t)t);
}
static void srcu_fast_sync(void) { synchronize_srcu(&bench_fast); }

const struct peer peer_srcu_fast = {
	"libsrcu-fast", "this library, srcu_read_lock_fast() (DEFINE_SRCU_FAST)", 1,
	nothing, nothing, srcu_fast_reads, srcu_fast_lock, srcu_fast_unlock, srcu_fast_sync,
	NULL, NULL,
};

/* The up/down pair, both halves in one thread (what a pair costs; the up
 * costs the same in any thread that has counted in the domain). */
static void srcu_updown_reads(long n)
{
	for (long i = 0; i < n; i++) {
		struct srcu_ctr *scp = srcu_down_read_fast(&bench_updown);
		compiler_barrier();
		srcu_up_read_fast(&bench_updown, scp);
	}
}
static int srcu_updown_lock(void)
{
	return (int)(uintptr_t)srcu_down_read_fast(&bench_updown);
}
static void srcu_updown_unlock(int t)
{
	srcu_up_read_fast(&bench_updown, (struct srcu_ctr *)(uintptr_t)t);
}
static void srcu_updown_sync(void) { synchronize_srcu(&bench_updown); }

const struct peer peer_srcu_fast_updown = {
	"libsrcu-updown", "this library, srcu_down_read_fast() (DEFINE_SRCU_FAST_UPDOWN)", 1,
	nothing, nothing, srcu_updown_reads, srcu_updown_lock, srcu_updown_unlock,
	srcu_updown_sync, NULL, NULL,
};

/* srcu_down_read()/srcu_up_read(): shared counters, atomic RMWs. */
static void srcu_down_reads(long n)
{
	for (long i = 0; i < n; i++) {
		int idx = srcu_down_read(&bench_domain);
		compiler_barrier();
		srcu_up_read(&bench_domain, idx);
	}
}
static int srcu_down_lock(void) { return srcu_down_read(&bench_domain); }
static void srcu_down_unlock(int idx) { srcu_up_read(&bench_domain, idx); }

const struct peer peer_srcu_down = {
	"libsrcu-down", "this library, srcu_down_read() (atomic counters)", 1,
	nothing, nothing, srcu_down_reads, srcu_down_lock, srcu_down_unlock, srcu_sync,
	NULL, NULL,
};

/* srcu_gate (doc/gate.md): a section behind a gate that a reset closes;
 * the pair a user pays where it would otherwise take a rwlock's read
 * side around the same code. */
static DEFINE_SRCU_GATE(bench_gate);

static void srcu_gate_reads(long n)
{
	for (long i = 0; i < n; i++) {
		int tag = srcu_gate_enter(&bench_gate);
		compiler_barrier();
		srcu_gate_exit(&bench_gate, tag);
	}
}
static int srcu_gate_lock(void) { return srcu_gate_enter(&bench_gate); }
static void srcu_gate_unlock(int tag) { srcu_gate_exit(&bench_gate, tag); }
static int gate_reset_nothing(void *arg) { (void)arg; return 0; }
static void srcu_gate_sync(void) { (void)srcu_gate_reset(&bench_gate, gate_reset_nothing, NULL); }

const struct peer peer_srcu_gate = {
	"libsrcu-gate", "this library, srcu_gate_enter()/srcu_gate_exit() (doc/gate.md)", 1,
	nothing, nothing, srcu_gate_reads, srcu_gate_lock, srcu_gate_unlock, srcu_gate_sync,
	NULL, NULL,
};

const struct peer *const read_variants[] = {
	&peer_srcu_fast, &peer_srcu_fast_updown, &peer_srcu_down, &peer_srcu_gate,
};
const size_t read_nvariants = sizeof(read_variants) / sizeof(read_variants[0]);

/* ---- the floor: the counting of libsrcu's pair, without its checks ----
 *
 * A section's lock counts one thread-local word and its unlock another, as
 * libsrcu's lock[idx] and unlock[idx] are counted, with nothing else: no
 * table, no domain word, no slow-path test, no wake-up check.  So the
 * floor is what the counts themselves cost.  Each count is libsrcu's own
 * instruction, srcu__owner_inc(): an add to memory through a register.
 * (Until issue 40 it was a ++ then a -- of one word, whose store-to-load
 * chain made it 3x libsrcu's pair; then two ++ of %fs-relative words,
 * which on the VM of 2026-12-07 ran 1.4x libsrcu's pair, where the same
 * adds through a register kept up with it: no floor either.) */

static __thread unsigned long floor_words[4];

static void floor_reads(long n)
{
	unsigned long *t = floor_words;

	for (long i = 0; i < n; i++) {
		srcu__owner_inc(t, 0);   /* the lock's count */
		compiler_barrier();
		srcu__owner_inc(t, 2);   /* the unlock's, two words on */
		compiler_barrier();
	}
}

static int floor_lock(void) { srcu__owner_inc(floor_words, 0); compiler_barrier(); return 0; }
static void floor_unlock(int t) { (void)t; compiler_barrier(); srcu__owner_inc(floor_words, 2); }

const struct peer peer_floor = {
	"tls-counter", "two thread-local counts, the lock's and the unlock's (the floor)", 1,
	nothing, nothing, floor_reads, floor_lock, floor_unlock, NULL, NULL, NULL,
};

/* ---- pthread_rwlock ---- */

static pthread_rwlock_t rwlock = PTHREAD_RWLOCK_INITIALIZER;

static void rwlock_reads(long n)
{
	for (long i = 0; i < n; i++) {
		pthread_rwlock_rdlock(&rwlock);
		compiler_barrier();
		pthread_rwlock_unlock(&rwlock);
	}
}

static int rwlock_lock(void) { return pthread_rwlock_rdlock(&rwlock); }
static void rwlock_unlock(int t) { (void)t; pthread_rwlock_unlock(&rwlock); }

/* A writer's lock/unlock is the "grace period" of a reader-writer lock. */
static void rwlock_sync(void)
{
	pthread_rwlock_wrlock(&rwlock);
	pthread_rwlock_unlock(&rwlock);
}

const struct peer peer_rwlock = {
	"pthread_rwlock", "glibc rwlock: wrlock+unlock as the grace period", 1,
	nothing, nothing, rwlock_reads, rwlock_lock, rwlock_unlock, rwlock_sync, NULL, NULL,
};

/* ---- naive SRCU: one shared atomic counter pair ---- */

static struct { unsigned long ctr[2]; unsigned int idx; } naive;

static void naive_reads(long n)
{
	for (long i = 0; i < n; i++) {
		int idx = (int)(__atomic_load_n(&naive.idx, __ATOMIC_RELAXED) & 1);
		__atomic_fetch_add(&naive.ctr[idx], 1, __ATOMIC_SEQ_CST);
		compiler_barrier();
		__atomic_fetch_sub(&naive.ctr[idx], 1, __ATOMIC_SEQ_CST);
	}
}

static int naive_lock(void)
{
	int idx = (int)(__atomic_load_n(&naive.idx, __ATOMIC_RELAXED) & 1);

	__atomic_fetch_add(&naive.ctr[idx], 1, __ATOMIC_SEQ_CST);
	return idx;
}

static void naive_unlock(int idx)
{
	__atomic_fetch_sub(&naive.ctr[idx], 1, __ATOMIC_SEQ_CST);
}

static void naive_sync(void)
{
	static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	unsigned int old;

	pthread_mutex_lock(&m);
	old = __atomic_fetch_add(&naive.idx, 1, __ATOMIC_SEQ_CST) & 1;
	while (__atomic_load_n(&naive.ctr[old], __ATOMIC_SEQ_CST))
		sched_yield();
	pthread_mutex_unlock(&m);
}

const struct peer peer_naive = {
	"naive-srcu", "one shared atomic counter pair per domain (no stale-index care)", 1,
	nothing, nothing, naive_reads, naive_lock, naive_unlock, naive_sync, NULL, NULL,
};

const struct peer *const all_peers[] = {
	&peer_srcu, &peer_srcu_exp,
#ifdef HAVE_SRCU_URCU
	&peer_srcu_urcu,
#endif
#ifdef HAVE_URCU
	&peer_urcu_memb, &peer_urcu_mb, &peer_urcu_qsbr, &peer_urcu_bp,
#endif
#ifdef HAVE_CK
	&peer_ck_epoch,
#endif
	&peer_rwlock, &peer_naive, &peer_floor,
};
const size_t all_npeers = sizeof(all_peers) / sizeof(all_peers[0]);
_Static_assert(sizeof(all_peers) / sizeof(all_peers[0]) <= BENCH_MAX_PEERS,
	       "BENCH_MAX_PEERS: figure 3 keeps samples per peer");
