/*
 * shared_file.h: the format of a process-shared domain's file, the same
 * in every process that maps it (doc/shared.md, "The file").  A change to
 * anything here changes SRCU__SHM_VERSION: an attacher refuses another
 * version with -EPROTO.  Included by internal.h, in shared_file.c's part.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_SHARED_FILE_H
#define SRCU_SHARED_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "srcu.h"

/* The file: page 0 the header, with the domain at SRCU__SHM_DOMAIN_OFFSET;
 * page 1 the block's srcu__gp_waits[] page; then a page per reader slot,
 * its counters where the block's first id has them in a thread's table
 * (offset 0), its owner at SRCU__SHM_OWNER_OFFSET. */
#define SRCU__SHM_MAGIC          "SRCUSHM"
#define SRCU__SHM_VERSION        5u   /* 5: sleepers marked in gp_event, one-RMW bump */
/* The data model of the processes that may share the file: the width of
 * a long (every counter, sequence and statistics word of the domain and
 * the slots) and the byte order.  A process of another model could
 * attach the very same bytes and sum counters at wrong offsets: it is
 * refused with -EPROTO, as another version is. */
#define SRCU__SHM_ABI ((uint32_t)sizeof(long) | \
		       (uint32_t)(__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) << 8)
#define SRCU__SHM_PAGE           4096u
#define SRCU__SHM_DOMAIN_OFFSET  256u
#define SRCU__SHM_WAITS_PAGE     1u
#define SRCU__SHM_FIRST_SLOT_PAGE 2u
#define SRCU__SHM_OWNER_OFFSET   2048u
#define SRCU__SHM_MAX_SLOTS      65536u

struct srcu__shm_header {
	char magic[8];            /* SRCU__SHM_MAGIC, written last at creation */
	uint32_t version;         /* SRCU__SHM_VERSION */
	uint32_t header_size;     /* sizeof(struct srcu__shm_header) */
	uint32_t page_size;       /* SRCU__SHM_PAGE */
	uint32_t struct_size;     /* sizeof(struct srcu_struct) */
	uint32_t domain_offset;   /* SRCU__SHM_DOMAIN_OFFSET */
	uint32_t block;           /* the id block, the same in every process */
	uint32_t slots;           /* reader slots */
	uint32_t slots_high;      /* one past the highest slot ever claimed */
	srcu__u64 size;           /* srcu__shm_size(slots) */
	srcu__u64 pidns;          /* inode of the creator's pid namespace */
	srcu__u64 timens;         /* and of its time namespace (start times) */
	int32_t creator;          /* pid, for messages */
	uint32_t abi;             /* SRCU__SHM_ABI */
};
/* The header's own layout is the same on every ABI (fixed-width fields,
 * 64-bit ones at 8-byte offsets), so that any process can read version
 * and abi and refuse the file. */
_Static_assert(offsetof(struct srcu__shm_header, size) == 40 &&
	       offsetof(struct srcu__shm_header, abi) == 68 &&
	       sizeof(struct srcu__shm_header) == 72,
	       "the header is laid out alike on every ABI");
_Static_assert(sizeof(struct srcu__shm_header) <= SRCU__SHM_DOMAIN_OFFSET,
	       "the header fits before the domain");

/* A slot's owner: a process, by pid and start time (a reused pid is
 * another owner); 0 when free.  state says whether a thread of it has
 * the slot mapped. */
#define SRCU__SHM_FREE     0u
#define SRCU__SHM_RESERVED 1u
#define SRCU__SHM_MAPPED   2u
/* An owner word no process has (a pid is below 2^22): a dead owner's
 * slot being recovered (by the GP lock's holder). */
#define SRCU__SHM_RECOVERING (~0ull)
/* In an owner word's pid half: a dead owner's slot being taken over by
 * the process the rest of the word names.  Not a bare marker: a claimer
 * killed there leaves a slot whose owner is found dead (and recovered),
 * not one that no one may ever take again. */
#define SRCU__SHM_CLAIMING_BIT (1ull << 31)
static inline int srcu__shm_owner_pid(uint64_t owner)
{
	return (int)((uint32_t)owner & ~(uint32_t)SRCU__SHM_CLAIMING_BIT);
}
/* A reserving process's slot until its reservation is whole: not yet
 * for its threads' first sections. */
#define SRCU__SHM_PENDING  3u
struct srcu__shm_owner {
	srcu__u64 owner;          /* 8-byte aligned on every ABI (layout.h) */
	uint32_t state;
	uint32_t pad;
};

/* Places in a file mapped at h (attached or not yet). */
static inline struct srcu_struct *srcu__shm_domain_at(const struct srcu__shm_header *h)
{
	return (struct srcu_struct *)(void *)((char *)h + SRCU__SHM_DOMAIN_OFFSET);
}

static inline char *srcu__shm_slot_page(const struct srcu__shm_header *h, unsigned int i)
{
	return (char *)h + (size_t)(SRCU__SHM_FIRST_SLOT_PAGE + i) * SRCU__SHM_PAGE;
}

static inline struct srcu__shm_owner *srcu__shm_owner_at(const struct srcu__shm_header *h,
							unsigned int i)
{
	return (struct srcu__shm_owner *)(void *)(srcu__shm_slot_page(h, i) +
						  SRCU__SHM_OWNER_OFFSET);
}

#endif /* SRCU_SHARED_FILE_H */
