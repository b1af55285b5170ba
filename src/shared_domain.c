/*
 * shared_domain.c: process-shared domains' public API (doc/shared.md): create a
 * domain in a file, attach to it, reserve reader slots, detach, and what
 * a fork child inherits.
 *
 * Attaching maps the whole file, registers for global membarrier, takes
 * the domain's id block in this process (its id's table entry, and the
 * block's page of srcu__gp_waits[] mapped from the file) and reserves a
 * slot for the process.  The read side needs nothing more: a thread's
 * first section maps a slot (reader.c).  Above async.c (detach drains
 * call_srcu()); process.c calls the fork handler.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Serializes attach, reserve and detach in this process. */
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;

unsigned long srcu_shared_size(unsigned int slots)
{
	return srcu__shm_size(slots);
}

static bool page_size_ok(void)
{
	return sysconf(_SC_PAGESIZE) == SRCU__SHM_PAGE;
}

/* The block's page of srcu__gp_waits[]: from the file, or back to
 * private zeroes. */
static void *waits_page(unsigned int b)
{
	return &srcu__gp_waits[srcu__shm_block_id(b) * SRCU__SLOT_WORDS];
}

static int map_waits(unsigned int b, int fd)
{
	void *m = mmap(waits_page(b), SRCU__SHM_PAGE, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_FIXED, fd, (off_t)SRCU__SHM_WAITS_PAGE * SRCU__SHM_PAGE);

	return m == MAP_FAILED ? -errno : 0;
}

static void unmap_waits(unsigned int b)
{
	if (mmap(waits_page(b), SRCU__SHM_PAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
		srcu__report_fatal("cannot unmap a shared domain's waiting flags: %s",
			    strerror(errno));
}

static int file_size(int fd, unsigned long *size)
{
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
		return -EINVAL;
	*size = (unsigned long)st.st_size;
	return 0;
}

/*
 * Whoever can write the file can stall the domain's grace periods and
 * corrupt its counts, and, through the words the inline read side takes
 * from it, a reader's counts of its other domains (doc/shared.md,
 * "Permissions").  So the file must be writable by no one the caller
 * does not trust already: not by others (mode o+w), and owned by the
 * caller or root (an owner can always chmod it).  A file with no name
 * (a memfd, whose mode is 0777) is reached only through a descriptor
 * the program handed out.  Group write is the
 * program's explicit choice.  SRCU_SHARED_TRUST_ANY=1 in the
 * environment lifts the rule, as ssh's StrictModes=no does.
 */
static int check_trust(int fd)
{
	const char *any = getenv("SRCU_SHARED_TRUST_ANY");
	struct stat st;

	if (any && strcmp(any, "1") == 0)
		return 0;
	if (fstat(fd, &st) != 0)
		return -EINVAL;
	if (st.st_nlink == 0)
		return 0;   /* no name (a memfd, O_TMPFILE): only descriptor holders reach it */
	if ((st.st_mode & S_IWOTH) || (st.st_uid != geteuid() && st.st_uid != 0)) {
		srcu__report_warn("shared domain file (descriptor %d, mode %04o, owner uid %u) "
				  "refused: writable by others, or owned by another user; "
				  "chmod o-w / chown it, or set SRCU_SHARED_TRUST_ANY=1",
				  fd, (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid);
		return -EPERM;
	}
	return 0;
}

/* The lowest block this process has free; -1 if none.  Caller holds
 * attach_lock. */
static int free_block(void)
{
	for (unsigned int b = 0; b < SRCU__SHARED_BLOCKS; b++)
		if (!srcu__shm_att[b].hdr)
			return (int)b;
	return -1;
}

/* Reserve n more slots for this process, all or none.  They are taken
 * PENDING, which a thread's first section does not take, and become
 * RESERVED only once all are there: a failed reservation gives back
 * slots no thread has mapped.  Free slots are counted first, so that a
 * reservation bound to fail does not hold them all for a moment (another
 * process's first section would find none). */
static int reserve(unsigned int b, unsigned int n)
{
	int *got;
	unsigned int k = 0;

	if (n == 0)
		return 0;
	if (srcu__shm_count_free(b) < n)
		return -ENOSPC;   /* dead processes' idle slots are not counted */
	got = calloc(n, sizeof(*got));
	if (!got)
		return -ENOMEM;
	while (k < n && (got[k] = srcu__shm_reserve(b, SRCU__SHM_PENDING)) >= 0)
		k++;
	for (unsigned int j = 0; j < k; j++) {
		struct srcu__shm_owner *o = srcu__shm_owner_of(b, (unsigned int)got[j]);

		/* Release: pairs with the acquire CAS in claim_for_thread()
		 * (shared_file.c): a thread that takes the slot sees the
		 * counts our claim acquired (balanced by the last owner's
		 * release of the slot), not older ones. */
		if (k == n)
			store_release(&o->state, SRCU__SHM_RESERVED);
		else
			srcu__shm_release(b, (unsigned int)got[j]);
	}
	free(got);
	return k == n ? 0 : -ENOSPC;
}

/* Unmap block b's file and forget it.  closed: the domain, which
 * srcu_shared_detach() holds closed to update-side callers; they are let
 * go once the block reads detached (gp.c's check_still_attached()), and
 * before the mapping goes. */
static void forget_block(unsigned int b, struct srcu_struct *closed)
{
	struct srcu__shm_att *a = &srcu__shm_att[b], was = *a;

	/* Release: pairs with the acquire in check_still_attached(). */
	store_release(&a->hdr, NULL);
	if (closed)
		srcu__gp_reopen(closed);
	munmap(was.hdr, was.len);
	close(was.fd);
	memset(a, 0, sizeof(*a));
	/* The handle a caller may still hold: dead, so that a use after
	 * detach is reported (zero would be a static domain's first use). */
	a->handle.slot_word = SRCU__ID_DEAD * SRCU__SLOT_WORDS;
	a->handle.lock_word = SRCU__ID_DEAD * SRCU__SLOT_WORDS;
}

/* Block b's handle (srcu__shm_att): its read-side words this process's
 * own (the block's slot word, the file's index), the kind every shared
 * domain has, the name copied from the file (checked printable where it
 * is printed). */
static void handle_init(unsigned int b)
{
	struct srcu_struct *hp = srcu__shm_domain(b), *file = srcu__shm_file_domain(b);

	memset(hp, 0, sizeof(*hp));
	hp->srcu__reader_kind = SRCU__KIND_ANY;
	memcpy(hp->srcu__name_buf, file->srcu__name_buf, sizeof(hp->srcu__name_buf) - 1);
	hp->slot_word = (uint16_t)(srcu__shm_block_id(b) * SRCU__SLOT_WORDS);
	srcu__shm_index_refresh(b);
}

/* How long an attacher that finds no slot waits, at most, for the live
 * process that holds the GP lock to let it go, so that it can recover
 * dead processes' slots itself. */
#define RECOVER_TRIES    100
#define RECOVER_PAUSE_NS (10 * 1000 * 1000L)

/* Dead processes an attach recovered, reported once attach_lock is
 * released: the stall handler that reports them may call attach, reserve
 * or detach itself. */
struct dead_reports {
	struct srcu_struct *sp;
	struct srcu__shm_dead dead[SRCU__DEAD_REPORTS_MAX];
	unsigned int n;
};

/* The process's first slot.  When none is free or idle, the slots of
 * dead processes that died inside a section are still counted open; only
 * a GP-lock holder balances them (srcu__shm_recover()), and a file whose
 * every attached process died has no GP to do it: the attacher does
 * (srcu__gp_recover_shared()), then tries again.  A live holder's
 * grace period recovers them too; the attacher waits for it, a while. */
static int reserve_first(unsigned int b, struct dead_reports *dr)
{
	struct timespec pause = { 0, RECOVER_PAUSE_NS };
	int i, n;

	for (int t = 0; (i = srcu__shm_reserve(b, SRCU__SHM_RESERVED)) < 0 && t < RECOVER_TRIES; t++) {
		if ((n = srcu__gp_recover_shared(srcu__shm_domain(b), dr->dead)) >= 0) {
			dr->sp = srcu__shm_domain(b);
			dr->n = (unsigned int)n;
			return srcu__shm_reserve(b, SRCU__SHM_RESERVED);
		}
		nanosleep(&pause, NULL);
	}
	return i;
}

/* After attach_lock is released: the recovery's reports, if any. */
static void report_recovered(const struct dead_reports *dr)
{
	if (dr->n)
		srcu__gp_report_dead(dr->sp, dr->dead, dr->n);
}

/* Attach this process to the file mapped at h (len bytes, through fd,
 * which is now ours) in block b, with slots reader slots (validated:
 * they fit len).  Caller holds attach_lock. */
static int attach_block(unsigned int b, struct srcu__shm_header *h, unsigned long len, int fd,
			unsigned int slots, struct srcu_struct **spp, struct dead_reports *dr)
{
	struct srcu__shm_att *a = &srcu__shm_att[b];
	int err;

	a->hdr = h;
	a->slots = slots;
	a->len = len;
	a->fd = fd;
	if ((err = map_waits(b, fd)) != 0) {
		forget_block(b, NULL);
		return err;
	}
	handle_init(b);
	srcu__domain_attach_shared(srcu__shm_domain(b), srcu__shm_block_id(b));
	if (reserve_first(b, dr) < 0) {   /* one for the process, or -ENOSPC */
		srcu__domain_detach_shared(srcu__shm_block_id(b));
		unmap_waits(b);
		forget_block(b, NULL);
		return -ENOSPC;
	}
	*spp = srcu__shm_domain(b);
	return 0;
}

/* Does this process's identity already own a slot or the GP lock of the
 * file mapped at h?  Only an image of this process before exec() (which
 * keeps the pid and start time) can have left them: its sections and
 * grace period would then be taken for ours, never for a dead process's. */
static bool holds_anything(const struct srcu__shm_header *h, unsigned int slots)
{
	uint64_t me = srcu__shm_self();

	if (load_relaxed(&srcu__dom_area(srcu__shm_domain_at(h))->gp_lock) == me)
		return true;
	for (unsigned int i = 0; i < slots; i++)
		if (load_relaxed(&srcu__shm_owner_at(h, i)->owner) == me)
			return true;
	return false;
}

/* mmap the whole file and duplicate fd (close-on-exec). */
static int map_file(int fd, unsigned long len, struct srcu__shm_header **h, int *dup)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (m == MAP_FAILED)
		return -errno;
	*dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (*dup < 0) {
		int err = -errno;

		munmap(m, len);
		return err;
	}
	*h = m;
	return 0;
}

static bool same_file(int a, int b)
{
	struct stat sa, sb;

	return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* What this process needs to take part at all. */
static int check_environment(void)
{
	if (srcu__backend_unforked_child())
		srcu__report_fatal(SRCU__UNFORKED_FMT, (int)getpid(), "attaching (or creating)",
				   "(a shared domain's file)");
	/* 4 KiB pages, and srcu__gp_waits[] page-aligned: an executable
	 * linked without -fPIE may hold a copy of the array (a copy
	 * relocation) at an alignment of its linker's choosing. */
	if (!page_size_ok() || ((uintptr_t)srcu__gp_waits & (SRCU__SHM_PAGE - 1)))
		return -EOPNOTSUPP;
	if (!srcu__shm_self())   /* no /proc/self/task/<pid>/stat: no identity */
		return -EACCES;
	return srcu__backend_register_global();
}

static uint64_t magic_word(void)
{
	uint64_t magic;

	memcpy(&magic, SRCU__SHM_MAGIC, sizeof(magic));
	return magic;
}

/*
 * Creators through other open files of the file (other open() calls, in
 * any process and pid namespace) exclude each other with an open file
 * description lock on its first byte, held from the claim to the magic:
 * one whose mark this creator could not judge (another namespace's pid)
 * still holds it.  Creators through one open file (a memfd inherited by
 * two children) share the lock; the mark in the file tells them apart.
 * -EEXIST: another creator is at work.  A file system without such
 * locks leaves the mark alone to decide.
 */
static int creation_lock(int fd, short type)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
		return 0;
	return errno == EAGAIN || errno == EACCES ? -EEXIST : 0;
}

/* Is cur a live creator's mark?  Anything else a file without a domain
 * holds (zeroes, another program's bytes, a dead creator's mark) is
 * formatted over. */
static bool creator_mark(uint64_t cur)
{
	return (cur & SRCU__SHM_CLAIMING_BIT) && cur != SRCU__SHM_RECOVERING &&
	       !srcu__shm_owner_dead(cur);
}

/*
 * Make this process the file's one creator: the magic word goes from
 * whatever a file without a domain holds to this process's identity,
 * marked (SRCU__SHM_CLAIMING_BIT), by CAS, in the file itself, so that
 * it excludes every other creator whatever descriptor or process it uses
 * (a lock on the descriptor would not: a memfd inherited across fork()
 * is one open file).  -EEXIST: a domain is there, or a live creator is
 * formatting one.  A creator that died formatting left its mark: the
 * file is anyone's to create again.  Caller holds attach_lock.
 */
static int claim_creation(struct srcu__shm_header *h)
{
	srcu__u64 *word = (srcu__u64 *)(void *)h->magic;
	uint64_t me = srcu__shm_self() | SRCU__SHM_CLAIMING_BIT, cur = load_acquire(word);

	for (;;) {
		if (cur == magic_word())
			return -EEXIST;
		if (creator_mark(cur))
			return -EEXIST;   /* another creator, alive, formats it */
		/* Acquire on success: a dead creator's writes are behind us;
		 * the format that follows overwrites them all. */
		if (__atomic_compare_exchange_n(word, &cur, me, false, __ATOMIC_ACQUIRE,
						__ATOMIC_ACQUIRE))
			return 0;
	}
}

/* Write a fresh header and domain; the magic last, with release, so that
 * an attacher that sees it sees the rest.  The magic word itself holds
 * this creator's mark meanwhile (claim_creation()), and is not zeroed:
 * zero would let a second creator in. */
static void format(struct srcu__shm_header *h, unsigned int slots, unsigned int b,
		   const char *name)
{
	struct srcu_struct *sp = srcu__shm_domain_at(h);
	uint16_t w = (uint16_t)(srcu__shm_block_id(b) * SRCU__SLOT_WORDS);

	SRCU__TORTURE_POINT(CREATE_CLAIMED, NULL);
	/* Zeroed, whatever the file held: stale counts or owners would be
	 * taken for live ones.  Bytes past the domain are the program's. */
	memset((char *)h + sizeof(h->magic), 0, srcu__shm_size(slots) - sizeof(h->magic));
	h->version = SRCU__SHM_VERSION;
	h->abi = SRCU__SHM_ABI;
	h->header_size = sizeof(*h);
	h->page_size = SRCU__SHM_PAGE;
	h->struct_size = sizeof(struct srcu_struct);
	h->domain_offset = SRCU__SHM_DOMAIN_OFFSET;
	h->block = b;
	h->slots = slots;
	h->size = srcu__shm_size(slots);
	h->pidns = srcu__shm_pidns();
	h->timens = srcu__shm_timens();
	h->creator = (int32_t)getpid();
	sp->slot_word = w;
	sp->lock_word = w;
	sp->name = NULL;   /* a pointer would mean another thing in each process */
	if (name)
		strncpy((char *)sp->srcu__name_buf, name, sizeof(sp->srcu__name_buf) - 1);
	/* Release: pairs with the acquire in srcu_shared_attach(): an
	 * attacher that sees the magic sees the header and domain. */
	store_release((srcu__u64 *)(void *)h->magic, magic_word());
}

int init_srcu_struct_shared(int fd, unsigned int slots, const char *name,
			    struct srcu_struct **spp)
{
	unsigned long size = srcu__shm_size(slots), have;
	/* Set by map_file() when it returns 0; initialized for gcc -O3,
	 * which cannot see that -errno is never 0 there. */
	struct srcu__shm_header *h = NULL;
	struct dead_reports dr = { .n = 0 };
	int err, b, dup = -1;

	if (!spp || !size || file_size(fd, &have) != 0)
		return -EINVAL;
	if ((err = check_environment()) != 0 || (err = check_trust(fd)) != 0)
		return err;
	if (have >= SRCU__SHM_PAGE) {   /* a domain there already? */
		char magic[8];

		if (pread(fd, magic, sizeof(magic), 0) == (ssize_t)sizeof(magic) &&
		    memcmp(magic, SRCU__SHM_MAGIC, sizeof(magic)) == 0)
			return -EEXIST;
	}
	/* Grown if short (a sealed memfd of the right size is not touched);
	 * format() zeroes what the domain uses. */
	if (have < size && ftruncate(fd, (off_t)size) != 0)
		return -errno;
	pthread_mutex_lock(&attach_lock);
	b = free_block();
	if (b < 0) {
		pthread_mutex_unlock(&attach_lock);
		return -ENOSPC;
	}
	if ((err = creation_lock(fd, F_WRLCK)) != 0) {
		pthread_mutex_unlock(&attach_lock);
		return err;
	}
	if ((err = map_file(fd, size, &h, &dup)) == 0 && (err = claim_creation(h)) != 0) {
		munmap(h, size);
		close(dup);
	} else if (!err) {
		format(h, slots, (unsigned int)b, name);
		err = attach_block((unsigned int)b, h, size, dup, slots, spp, &dr);
	}
	(void)creation_lock(fd, F_UNLCK);
	pthread_mutex_unlock(&attach_lock);
	if (!err)   /* else sp is unmapped again: the recovery stands, unreported */
		report_recovered(&dr);
	return err;
}

int srcu_shared_attach(int fd, struct srcu_struct **spp)
{
	struct srcu__shm_header *h = NULL, copy;   /* as in init_srcu_struct_shared() */
	struct dead_reports dr = { .n = 0 };
	unsigned long have;
	int err, dup = -1;
	unsigned int b;

	if (!spp || file_size(fd, &have) != 0 || have < SRCU__SHM_PAGE)
		return -EINVAL;
	if ((err = check_environment()) != 0 || (err = check_trust(fd)) != 0)
		return err;
	pthread_mutex_lock(&attach_lock);
	if ((err = map_file(fd, have, &h, &dup)) != 0)
		goto out;
	/* Acquire: pairs with the release of the creator's magic.  The
	 * header is validated, and used, from one copy: the file may change
	 * under us (it is others' to write), the copy does not. */
	(void)load_acquire((srcu__u64 *)(void *)h->magic);
	memcpy(&copy, h, sizeof(copy));
	/* The one word others write while attached (an atomic max in
	 * slots_high_raise()): read as an atomic, not as bytes of the copy. */
	copy.slots_high = load_relaxed(&h->slots_high);
	err = srcu__shm_validate(&copy, srcu__shm_domain_at(h), have);
	if (!err && (copy.pidns != srcu__shm_pidns() || copy.timens != srcu__shm_timens()))
		err = -EXDEV;
	b = err ? 0 : copy.block;
	if (!err && srcu__shm_att[b].hdr)
		err = same_file(srcu__shm_att[b].fd, fd) ? -EALREADY : -EADDRINUSE;
	if (!err && holds_anything(h, copy.slots))
		err = -EBUSY;   /* an image before exec() left itself attached */
	if (err) {
		munmap(h, have);
		close(dup);
		goto out;
	}
	err = attach_block(b, h, have, dup, copy.slots, spp, &dr);
out:
	pthread_mutex_unlock(&attach_lock);
	if (!err)   /* else sp is unmapped again: the recovery stands, unreported */
		report_recovered(&dr);
	return err;
}

/* sp's block if sp is a shared domain attached here, else -1. */
static int block_of(struct srcu_struct *sp)
{
	unsigned int id;

	if (!sp)
		return -1;
	id = srcu__domain_peek(sp);
	if (!srcu__id_shared(id) || id != srcu__shm_block_id(srcu__shm_block(id)) ||
	    srcu__shm_att[srcu__shm_block(id)].hdr == NULL ||
	    srcu__shm_domain(srcu__shm_block(id)) != sp)
		return -1;
	return (int)srcu__shm_block(id);
}

bool srcu_shared(struct srcu_struct *sp)
{
	return block_of(sp) >= 0;
}

int srcu_shared_reserve(struct srcu_struct *sp, unsigned int threads)
{
	int b = block_of(sp), err = 0;
	unsigned int have;

	if (b < 0)
		return -EINVAL;
	srcu__gp_check_forked(sp, "srcu_shared_reserve()");
	pthread_mutex_lock(&attach_lock);
	have = srcu__shm_count_mine((unsigned int)b);
	if (threads > have)
		err = reserve((unsigned int)b, threads - have);
	pthread_mutex_unlock(&attach_lock);
	return err;
}

/*
 * Give back every slot this process's identity holds in block b.  Its own
 * threads hold no section (detach checked); a slot that still counts one
 * open is a dead twin's: a process with this pid and the same start
 * time (a pid reused within one clock tick) that died inside a section,
 * whose slot this identity cannot tell from its own.  Its sections are
 * ended, as recovery ends a dead owner's, before the slot is freed: freed
 * unbalanced, the next owner would count a phantom section open for
 * ever.  Ending them wakes a grace period that may sleep on them.
 */
static void release_all(unsigned int b)
{
	uint64_t me = srcu__shm_self();
	unsigned long ended = 0;

	for (unsigned int i = 0; i < srcu__shm_slots_high(b); i++)
		if (load_relaxed(&srcu__shm_owner_of(b, i)->owner) == me)
			ended += srcu__shm_release_balanced(b, i);
	if (ended) {
		/* W (moved): pairs with the fence after a GP sets its waiting
		 * flag, as in reader.c's counts_moved(). */
		srcu__smp_mb();
		srcu__wake_gp(srcu__shm_block_id(b));
	}
}

int srcu_shared_detach(struct srcu_struct *sp)
{
	int b = block_of(sp), err;

	if (b < 0)
		return -EINVAL;
	srcu__gp_check_forked(sp, "srcu_shared_detach()");
	pthread_mutex_lock(&attach_lock);
	/* Closed to this process's update-side callers while it decides, as
	 * cleanup_srcu_struct() closes a private domain, and first: a thread
	 * inside synchronize_srcu() (waiting for another process's grace
	 * period) would have the file unmapped under it, and a call_srcu()
	 * could start a worker on the async state being freed. */
	if (!srcu__gp_close(sp)) {
		pthread_mutex_unlock(&attach_lock);
		return -EBUSY;
	}
	err = srcu__async_cleanup(sp);   /* callbacks pending: -EBUSY */
	if (!err && (load_acquire(&srcu__dom(sp)->gp_lock) == srcu__shm_self() ||
		     !srcu__reader_shared_idle((unsigned int)b)))
		err = -EBUSY;
	if (err) {
		srcu__gp_reopen(sp);
		pthread_mutex_unlock(&attach_lock);
		return err;
	}
	srcu__domain_detach_shared(srcu__shm_block_id((unsigned int)b));
	srcu__reader_unmap_shared((unsigned int)b);
	release_all((unsigned int)b);
	unmap_waits((unsigned int)b);
	forget_block((unsigned int)b, sp);
	pthread_mutex_unlock(&attach_lock);
	return 0;
}

/*
 * In a fork child (process.c; reader.c has given the parent's slots
 * back to private memory): the child is a process of its own, attached
 * to every domain its parent was.  It registers for global membarrier
 * (its readers count with compiler barriers only) and forgets its
 * parent's identity; it holds no slot yet: its threads take free ones at
 * their first section, so a child that execs at once costs nothing.
 * Nothing here reads a file or allocates (an atfork handler).
 */
void srcu__shared_fork_child(void)
{
	bool attached = false;

	pthread_mutex_init(&attach_lock, NULL);
	srcu__shm_fork_child();   /* attached or not: a later attach is the child's */
	for (unsigned int b = 0; b < SRCU__SHARED_BLOCKS; b++) {
		/* A block another thread was attaching or detaching at the
		 * fork (attach_lock is not held across it): one whose domain
		 * is not bound here is neither, in the child.  Forgotten:
		 * munmap(), close() and mmap() are async-signal-safe. */
		if (srcu__shm_att[b].hdr &&
		    !load_relaxed(&srcu__domain_table[srcu__shm_block_id(b)])) {
			unmap_waits(b);
			forget_block(b, NULL);
		}
		attached |= srcu__shm_att[b].hdr != NULL;
	}
	if (!attached)
		return;
	if (srcu__backend_register_global() != 0)
		srcu__report_fatal("fork child %d: membarrier(REGISTER_GLOBAL_EXPEDITED) failed: "
			    "it cannot read shared domains", (int)getpid());
}
