/*
 * srcu/layout.h: the private layout behind <srcu.h>, included by it: the
 * domain ids, a thread's counters and the words that name them, and struct
 * srcu_struct.  Do not include it yourself, and do not touch what it
 * defines: the inline read side (<srcu/read.h>) depends on it, and
 * struct srcu_struct's size is part of the ABI (doc/abi.md).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU__LAYOUT_H
#define SRCU__LAYOUT_H

#ifndef SRCU_H
#error "include <srcu.h>, not <srcu/layout.h>"
#endif

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with -fvisibility=hidden; these are its exports. */
#define SRCU__API __attribute__((visibility("default")))

/* ---------------------------------------------------------------------- */
/* Domain ids and a thread's counters.                                    */

#define SRCU__MAX_IDS     16384u                /* live domains + sentinels */
/* Sentinel ids send the fast path to the slow path.  A zeroed srcu_struct
 * is thus an unused static domain, never an alias of a live one. */
#define SRCU__ID_UNSET    0u                    /* static, not yet used   */
#define SRCU__ID_DEAD     1u                    /* after cleanup          */
/* First real id: the ids below it are sentinels, whose slots of a
 * thread's table hold the thread's reader record instead (two slots of
 * 8-byte counters, four of 4-byte ones). */
#if __SIZEOF_LONG__ == 8
#define SRCU__ID_FIRST    2u
#else
#define SRCU__ID_FIRST    4u
#endif
/* Process-shared domains (doc/shared.md) take ids from blocks reserved
 * at the top, the same in every process: 8 blocks of 256 ids (one page
 * of srcu__gp_waits[], two of a thread's counters), of which a shared
 * domain uses the first. */
#define SRCU__SHARED_BLOCK_IDS 256u
#define SRCU__SHARED_BLOCKS    8u
#define SRCU__SHARED_ID_FIRST  (SRCU__MAX_IDS - SRCU__SHARED_BLOCKS * SRCU__SHARED_BLOCK_IDS)

/* One thread's counters for one domain.  Written only by the owning
 * thread; read by grace-period scans.  Counts only ever increase: a
 * domain index is idle when the sum of its unlock counts over all threads
 * equals the sum of its lock counts (modern Tree SRCU's scheme).  A lock
 * word's top bit (SRCU__LOCK_NOTED) says that the record is in the
 * domain's reader set; counts are taken without it, modulo 2^63 (2^31 where a long has
 * 32 bits). */
struct srcu__slot {
	unsigned long lock[2];
	unsigned long unlock[2];
};
#define SRCU__LOCK_NOTED (~0ul ^ (~0ul >> 1))
/* Read-side addresses are counted in words: domain id's slot starts at
 * word id * SRCU__SLOT_WORDS of a thread's table, lock[idx] is word +idx,
 * unlock[idx] word +2+idx.  Words below SRCU__WORD_FIRST belong to the
 * sentinel ids and send the fast path to the slow path.  The domain holds
 * its words in 16 bits, so that even a garbage srcu_struct stays inside
 * the table (hence 16384 ids): its words are below 65536, an unlock
 * counts at most 3 words past its word (word 65538) and reads
 * srcu__gp_waits[] at most 1 past (65536).  So the table, and
 * srcu__gp_waits[], end with a spill slot that no id names, where only
 * such garbage counts land: no test on the fast path. */
#define SRCU__SLOT_WORDS  4u
#define SRCU__WORD_FIRST  (SRCU__ID_FIRST * SRCU__SLOT_WORDS)
#define SRCU__TABLE_WORDS ((SRCU__MAX_IDS + 1) * SRCU__SLOT_WORDS)

/* The library's thread-local words: initial-exec with glibc, one
 * %fs-relative load also from code linked against libsrcu.so, even in a
 * module dlopen()ed later (glibc keeps static TLS to spare for that).
 * musl has none to spare and refuses to dlopen() a module with such an
 * access to another's TLS: there the compiler picks (initial-exec in
 * programs, a __tls_get_addr() call in -fPIC code). */
#ifdef __GLIBC__
#define SRCU__TLS_FAST __attribute__((tls_model("initial-exec")))
#else
#define SRCU__TLS_FAST
#endif

/* This thread's counters, indexed by domain id (SRCU__TABLE_WORDS words):
 * a 516 KiB reservation of which only the pages of ids the thread uses get
 * memory.  NULL until the thread's first read-side section, and always
 * NULL with the fence backend (whose readers take the out-of-line path). */
SRCU__API extern __thread struct srcu__slot *srcu__slots SRCU__TLS_FAST;
/* A grace period that sleeps waiting for readers of domain id announces
 * it here, outside the domain: a reader checks it after its last count,
 * when the domain may already have been cleaned up and freed.  Four words
 * per id, laid out like the id's slot so that an unlock finds its flag at
 * the word number of its own counter: [id*4 + idx] nonzero while a GP
 * sleeps on that index, [id*4 + 2] the futex word each waking reader
 * bumps. */
#define SRCU__WAIT_SEQ    2u
SRCU__API extern unsigned int srcu__gp_waits[SRCU__TABLE_WORDS];

/* ---------------------------------------------------------------------- */
/* The domain.                                                            */

/* The private area's size: three 64-byte lines (src/layout.h asserts
 * that its layout fits). */
#define SRCU__PRIVATE_SIZE 192u

struct srcu_struct {
	/* Read-side state: all the inline fast path reads.  Both words are 0
	 * in a static domain not yet used. */
	uint16_t slot_word;      /* id * SRCU__SLOT_WORDS: its slot in tables */
	uint16_t lock_word;      /* slot_word + current index: the GP flips it */
	/* SRCU__KIND_*: the reader kind fixed at initialization, checked
	 * off the fast path (the slow path and a thread's first lock of
	 * each index).  Set by the initializer, kept by cleanup. */
	unsigned int srcu__reader_kind;
	const char *name;        /* used in every message; may be NULL */

	/* A shared domain's name, kept in its file (name would point into
	 * one process's memory); unused by private domains. */
	unsigned char srcu__name_buf[64 - 16];

	/* Everything else is private (src/layout.h): the update side, three
	 * groups a cache line each, from the domain's second line.  Fixed
	 * size, zero in a static domain, so that DEFINE_SRCU needs no
	 * allocation and sizeof is an ABI fact (doc/abi.md).  The type keeps
	 * malloc()'s alignment; the lines are the domain's own when it is
	 * 64-byte aligned, as DEFINE_SRCU makes it. */
	unsigned char srcu__private[SRCU__PRIVATE_SIZE] __attribute__((aligned(8)));
};

/* Reader kinds, of a domain and of a section.  A domain of kind ANY (the
 * default) takes srcu_read_lock() (and srcu_down_read()) sections and
 * srcu_read_lock_fast() ones, mixed freely; FAST (DEFINE_SRCU_FAST,
 * init_srcu_struct_fast()) takes srcu_read_lock_fast() ones only;
 * FAST_UPDOWN (DEFINE_SRCU_FAST_UPDOWN, init_srcu_struct_fast_updown())
 * only srcu_down_read_fast() / srcu_read_lock_fast_updown() ones, which
 * may end in another thread. */
#define SRCU__KIND_ANY         0u
#define SRCU__KIND_FAST        1u
#define SRCU__KIND_FAST_UPDOWN 2u

/* A static domain: id SRCU__ID_UNSET, named, the rest zero. */
#define SRCU__INITIALIZER(domain) SRCU__INITIALIZER_KIND(domain, SRCU__KIND_ANY)
#define SRCU__INITIALIZER_KIND(domain, kind) { 0, 0, kind, #domain, { 0 }, { 0 } }
/* Static domains start a cache line: the update side's groups are then
 * lines of their own. */
#define SRCU__LINE __attribute__((aligned(64)))

#ifdef __cplusplus
}
#endif
#endif /* SRCU__LAYOUT_H */
