/*
 * peers.h: what srcu-bench measures, behind one interface.  Each peer's
 * read loop is compiled in the peer's own file, so that its read side is
 * inlined exactly as a user of that library would get it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_BENCH_PEERS_H
#define SRCU_BENCH_PEERS_H

#include <stddef.h>

struct peer {
	const char *name;
	const char *note;                  /* one line: what it is */
	int sleepable;                     /* readers may block */
	void (*thread_online)(void);       /* per-thread registration, if any */
	void (*thread_offline)(void);
	void (*reads)(long n);             /* n empty read-side pairs */
	int (*lock)(void);                 /* one section, to hold open */
	void (*unlock)(int token);
	void (*synchronize)(void);         /* NULL: no grace periods */
	void (*blocking_begin)(void);      /* around a reader thread's sleeps */
	void (*blocking_end)(void);        /*   outside sections (qsbr: offline) */
};

extern const struct peer peer_srcu, peer_srcu_exp, peer_floor, peer_rwlock, peer_naive;
#ifdef HAVE_URCU
extern const struct peer peer_urcu_memb, peer_urcu_mb, peer_urcu_qsbr, peer_urcu_bp;
#endif
#ifdef HAVE_SRCU_URCU
extern const struct peer peer_srcu_urcu;   /* bench_lfht.c */
#endif
#ifdef HAVE_CK
extern const struct peer peer_ck_epoch;
#endif

/* Every peer this build has, in the order of the tables; at most
 * BENCH_MAX_PEERS, the size of figure 3's per-peer sample arrays. */
#define BENCH_MAX_PEERS 16
extern const struct peer *const all_peers[];
extern const size_t all_npeers;
#define FOR_PEERS(p) \
	for (const struct peer *const *p##_it = all_peers, *p; \
	     p##_it < all_peers + all_npeers && ((p = *p##_it), 1); p##_it++)

/* libsrcu's other read sides (fast, fast up/down, srcu_down_read()):
 * rows of figure 1 and of the instruction counts only, right after
 * libsrcu's; FOR_PEERS does not visit them. */
extern const struct peer *const read_variants[];
extern const size_t read_nvariants;
#define FOR_READ_VARIANTS(p) \
	for (const struct peer *const *p##_it = read_variants, *p; \
	     p##_it < read_variants + read_nvariants && ((p = *p##_it), 1); p##_it++)

/* Grace periods completed on libsrcu's bench domain (sharing ratio). */
unsigned long srcu_peer_gps(void);

#endif
