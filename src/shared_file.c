/*
 * shared_file.c: the file of a process-shared domain (doc/shared.md): its layout,
 * this process's attachments, reader slots and who owns them, whether an
 * owner is alive, and the grace period's sums over the slots.
 *
 * A slot is one page of the file, mapped MAP_FIXED | MAP_SHARED over the
 * page of a thread's counter table (reader.c) that holds the domain's id:
 * the inline read side then counts straight into the file, unchanged.
 * Every slot belongs to a process (its owner word: pid and start time, so
 * that a reused pid is another owner); a process reserves slots at attach
 * and its threads take them at their first section.  Only an owner's
 * threads write a slot's counts, except recovery, which balances a dead
 * owner's counts under the domain's GP lock and only once the owner is
 * found dead (model/srcu.pml, DEAD).
 *
 * Below reader.c (which maps slots at a thread's first section) and gp.c
 * (which sums them and recovers dead owners); calls only report, backend
 * and domain.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <time.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Older C library headers: 434 on every architecture whose new system
 * calls share one table (Linux 5.1 on); alpha and mips number theirs
 * apart, and there an unknown call is -1, ENOSYS: no evidence of death. */
#if !defined(SYS_pidfd_open) && !defined(__alpha__) && !defined(__mips__)
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open (-1)
#endif

struct srcu__shm_att srcu__shm_att[SRCU__SHARED_BLOCKS];

/* This process's owner word (pid | start time << 32), 0 until needed.
 * Recomputed in a fork child. */
static uint64_t self_owner;

/* ---- identity and liveness ---- */

/* Append pid's digits at p; returns the end. */
static char *put_pid(char *p, int pid)
{
	char digits[16];
	int n = 0;

	do
		digits[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) > 0 && n < 15);
	while (n > 0)
		*p++ = digits[--n];
	return p;
}

/*
 * The stat file that names process pid, into path (64 bytes), without
 * stdio: a thread's first section may get here (claim_dead()), in a
 * signal handler.  Another process: "/proc/<pid>/stat".  This one (self):
 * "/proc/self/task/<pid>/stat", its main thread's entry, whose start time
 * (field 22) is the one other processes read in "/proc/<pid>/stat": the
 * kernel takes both from the thread-group leader.  Not "/proc/self/stat"
 * or "/proc/<pid>/stat" of our own pid: an emulator may answer those
 * itself (qemu-user does, with the start time of the emulator's state,
 * which a fork child copies from its parent), and an identity that others
 * read otherwise makes them take us for dead and end our live sections.
 * Not the calling thread's own task entry either: a thread started later
 * than the process has a later start time than the one others read.
 */
static void stat_path(char *path, int pid, bool self)
{
	char *p = path;

	memcpy(p, "/proc/", 6);
	p += 6;
	if (self) {
		memcpy(p, "self/task/", 10);
		p += 10;
	}
	p = put_pid(p, pid);
	memcpy(p, "/stat", 6);
}

/* The start time (field 22 of the stat file of stat_path(), clock ticks
 * since boot) of process pid.  The command (field 2) may hold spaces and
 * parentheses: the fields start after its last ')'.  false if it cannot
 * be read (the process is gone, or hidden from us), or if the file names
 * another pid than the one asked for (field 1: a /proc of another pid
 * namespace numbers processes otherwise). */
/* The decimal number at p (at most 19 digits: no overflow). */
static unsigned long long decimal_at(const char *p)
{
	unsigned long long v = 0;

	for (int i = 0; i < 19 && *p >= '0' && *p <= '9'; i++, p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	return v;
}

static bool proc_start_time(int pid, bool self, unsigned long long *start)
{
	char path[64], buf[1024], *p;
	struct srcu__torture_stat st;
	ssize_t n;
	int fd, field;

	stat_path(path, pid, self);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	st.start = decimal_at(buf);   /* field 1, the pid: a real one is below 2^22 */
	st.pid = st.start < 1u << 22 ? (int)st.start : -1;
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return false;
	p += 2;   /* field 3 */
	for (field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (!p || *p < '0' || *p > '9')
		return false;
	st.start = decimal_at(p);
	st.path = path;
	/* Tests: what an emulator's own answer for some paths would say. */
	SRCU__TORTURE_POINT(PROC_STAT, &st);
	*start = st.start;
	return st.pid == pid;
}

static uint64_t owner_word(int pid, unsigned long long start)
{
	/* Never a marker: their pid halves are above any pid. */
	return (uint64_t)(uint32_t)pid | (uint64_t)(uint32_t)start << 32;
}

static uint64_t ns_inode(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* Owners are named by pid and by start time as /proc shows it (shifted by
 * the reader's boot-time offset): every attacher must see the same ones. */
uint64_t srcu__shm_pidns(void)
{
	return ns_inode("/proc/self/ns/pid");
}

uint64_t srcu__shm_timens(void)
{
	return ns_inode("/proc/self/ns/time");
}

/* Is this process in the namespaces of every domain it has attached? (A
 * fork child after unshare() may not be.) */
static bool namespaces_match(void)
{
	uint64_t pidns = srcu__shm_pidns(), timens = srcu__shm_timens();

	for (unsigned int b = 0; b < SRCU__SHARED_BLOCKS; b++) {
		const struct srcu__shm_header *h = srcu__shm_att[b].hdr;

		if (h && (load_relaxed(&h->pidns) != pidns || load_relaxed(&h->timens) != timens))
			return false;
	}
	return true;
}

/* This process's identity, read once (again in a fork child), from the
 * same start time other processes read about it (stat_path()); 0 if that
 * cannot be read, or names another pid, or if the process has left the
 * namespaces of a domain it is attached to: attach refuses then
 * (-EACCES), and anything else that needs it aborts (self_or_die()).
 * Refusing is the safe side: an identity that others do not read the
 * same way would let their grace periods find us "dead" and end our live
 * sections. */
uint64_t srcu__shm_self(void)
{
	uint64_t o = load_relaxed(&self_owner);
	unsigned long long start = 0;
	int pid = (int)getpid();

	/* A child made without the fork handlers kept its parent's: every
	 * caller names the domain first (srcu__gp_check_forked(), shared_domain.c,
	 * reader.c); this is the backstop. */
	if (SRCU__UNLIKELY(srcu__backend_unforked_child()))
		srcu__report_fatal(SRCU__UNFORKED_FMT, pid, "a shared domain's identity",
				   "(shared)");
	if (o)
		return o;
	if (!proc_start_time(pid, true, &start) || !namespaces_match())
		return 0;
	o = owner_word(pid, start);
	store_relaxed(&self_owner, o);
	return o;
}

/* The child is another process: its identity is computed when it first
 * needs it (not here: an atfork handler should not read files). */
void srcu__shm_fork_child(void)
{
	store_relaxed(&self_owner, 0);
}

/* This process's identity where a shared domain needs it; attach made
 * sure it could be read, but a fork child reads it anew. */
static uint64_t self_or_die(void)
{
	uint64_t me = srcu__shm_self();

	if (!me)
		srcu__report_fatal("process %d cannot read /proc/self/task/%d/stat: a shared "
			    "domain names its processes by pid and start time", (int)getpid(),
			    (int)getpid());
	return me;
}

/*
 * Is the process that owner names dead?  Only on evidence: pidfd_open()
 * failing with ESRCH (no process has the pid), a pidfd that polls
 * readable (the process that had the pid when it was opened has exited,
 * zombie or reaped: if that was the owner it is dead, and if it was not,
 * the owner had left the pid before, so it is dead too; a leader that
 * exited alone does not poll readable), or a start time that was read
 * and differs (the pid was reused).  Anything else (no pidfd_open, file
 * descriptors exhausted, a /proc that hides the process) counts as
 * alive: a grace period that waits longer is safe, one that ends a live
 * section is not.
 */
static bool owner_dead(uint64_t owner)
{
	unsigned long long start;
	bool dead = false;
	int pid, pidfd;

	if (owner == SRCU__SHM_RECOVERING)
		return false;
	owner &= ~SRCU__SHM_CLAIMING_BIT;   /* a claimer: whether it lives */
	pid = srcu__shm_owner_pid(owner);
	if (owner == srcu__shm_self() || pid <= 0)
		return false;
	if (SRCU__BUSTED(DISCARDLIVE))   /* the broken recovery of model/srcu.pml */
		return true;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		if (errno == ESRCH || (kill(pid, 0) != 0 && errno == ESRCH))
			return true;
	} else {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		dead = poll(&p, 1, 0) > 0;
		close(pidfd);
	}
	if (!dead && proc_start_time(pid, false, &start))
		dead = (uint32_t)start != (uint32_t)(owner >> 32);
	return dead;
}

bool srcu__shm_owner_dead(uint64_t owner)
{
	return owner && owner_dead(owner);
}

/* ---- layout ---- */

struct srcu__slot *srcu__shm_counters(unsigned int b, unsigned int i)
{
	return (struct srcu__slot *)(void *)srcu__shm_slot_page(srcu__shm_att[b].hdr, i);
}

struct srcu__shm_owner *srcu__shm_owner_of(unsigned int b, unsigned int i)
{
	return srcu__shm_owner_at(srcu__shm_att[b].hdr, i);
}

unsigned long srcu__shm_size(unsigned int slots)
{
	if (slots == 0 || slots > SRCU__SHM_MAX_SLOTS)
		return 0;
	return (unsigned long)(SRCU__SHM_FIRST_SLOT_PAGE + slots) * SRCU__SHM_PAGE;
}

/* What a header must say before anything else of the file is believed.
 * Reads only: garbage is rejected, never written. */
int srcu__shm_validate(const struct srcu__shm_header *h, const struct srcu_struct *sp,
		       unsigned long file_size)
{
	unsigned int w;

	if (memcmp(h->magic, SRCU__SHM_MAGIC, sizeof(h->magic)) != 0)
		return -EINVAL;
	if (h->version != SRCU__SHM_VERSION || h->abi != SRCU__SHM_ABI)
		return -EPROTO;   /* another format, or a process of another data model */
	if (h->header_size != sizeof(*h) || h->page_size != SRCU__SHM_PAGE ||
	    h->struct_size != sizeof(struct srcu_struct) ||
	    h->domain_offset != SRCU__SHM_DOMAIN_OFFSET || h->block >= SRCU__SHARED_BLOCKS ||
	    srcu__shm_size(h->slots) == 0 || h->size != srcu__shm_size(h->slots) ||
	    h->size > file_size || h->slots_high > h->slots)
		return -EINVAL;
	w = (SRCU__SHARED_ID_FIRST + h->block * SRCU__SHARED_BLOCK_IDS) * SRCU__SLOT_WORDS;
	if (load_relaxed(&sp->slot_word) != w || (load_relaxed(&sp->lock_word) & ~1u) != w)
		return -EINVAL;
	return 0;
}

/* ---- slots ---- */

/* How many slots have ever been claimed: the bound of every walk.  The
 * file's word, clamped to the slot count validated at attach, so that a
 * file scribbled on later cannot send a walk past the mapping. */
unsigned int srcu__shm_slots_high(unsigned int b)
{
	const struct srcu__shm_att *a = &srcu__shm_att[b];
	unsigned int n = load_acquire(&a->hdr->slots_high);

	return n < a->slots ? n : a->slots;
}

/* Raise slots_high past slot i (an atomic max). */
static void slots_high_raise(struct srcu__shm_header *h, unsigned int i)
{
	unsigned int cur = load_relaxed(&h->slots_high);

	while (cur <= i && !__atomic_compare_exchange_n(&h->slots_high, &cur, i + 1, true,
							__ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		;
}

/* Take a free slot for this process in state st.  Async-signal-safe. */
static int claim_free(unsigned int b, unsigned int st)
{
	struct srcu__shm_att *a = &srcu__shm_att[b];
	uint64_t me = self_or_die();

	for (unsigned int i = 0; i < a->slots; i++) {
		struct srcu__shm_owner *o = srcu__shm_owner_of(b, i);
		uint64_t free_owner = 0;

		if (load_relaxed(&o->owner) != 0)
			continue;
		/* slots_high first: a process killed right after its CAS
		 * below leaves a slot that recovery's walk reaches (raised
		 * after, it was hidden until another claim raised it).  Both
		 * seq-cst: the raise is not ordered after the CAS. */
		slots_high_raise(a->hdr, i);
		if (__atomic_compare_exchange_n(&o->owner, &free_owner, me, false,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
			/* The acquire pairs with the release that freed it:
			 * the balanced counts this owner goes on from.  The
			 * state with release (attach's RESERVED): pairs with
			 * the acquire CAS in claim_for_thread(), as in
			 * shared_domain.c's reserve(). */
			SRCU__TORTURE_POINT(CLAIM_FREE, &i);
			store_release(&o->state, st);
			return (int)i;
		}
	}
	return -1;
}

/* Take a dead process's slot whose counts are balanced (it held no
 * section open), when no slot is free.  No GP lock is needed: nothing is
 * written but the owner word, by CAS from the dead owner's value, which
 * fails once recovery has marked the slot (srcu__shm_recover()). */
static int claim_dead(unsigned int b, unsigned int st)
{
	uint64_t me = self_or_die();

	for (unsigned int i = 0; i < srcu__shm_slots_high(b); i++) {
		struct srcu__shm_owner *o = srcu__shm_owner_of(b, i);
		struct srcu__slot *s = srcu__shm_counters(b, i);
		uint64_t owner = load_acquire(&o->owner);

		if (!owner || !owner_dead(owner))   /* free, ours, alive, being recovered */
			continue;
		if (srcu__slot_open_on(s, 0) || srcu__slot_open_on(s, 1))
			continue;   /* open sections: the recovery's, under the GP lock */
		/* Through a marker: until the state is ours, no thread of
		 * ours may take the slot for the dead owner's RESERVED.  The
		 * marker names us: killed before the owner store, we leave
		 * a dead claimer's slot, which recovery or a claim takes. */
		if (__atomic_compare_exchange_n(&o->owner, &owner, me | SRCU__SHM_CLAIMING_BIT, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			SRCU__TORTURE_POINT(CLAIM_DEAD, &i);
			store_relaxed(&o->state, st);
			store_release(&o->owner, me);
			return (int)i;
		}
	}
	return -1;
}

int srcu__shm_reserve(unsigned int b, unsigned int st)
{
	int i = claim_free(b, st);

	return i >= 0 ? i : claim_dead(b, st);
}

/* Could srcu__shm_reserve() take slot i: free, or a dead process's with
 * no section open (claim_dead()'s test)? */
static bool takeable(unsigned int b, unsigned int i)
{
	uint64_t owner = load_acquire(&srcu__shm_owner_of(b, i)->owner);
	struct srcu__slot *s;

	if (!owner)
		return true;
	if (!owner_dead(owner))
		return false;
	s = srcu__shm_counters(b, i);
	return !srcu__slot_open_on(s, 0) && !srcu__slot_open_on(s, 1);
}

unsigned int srcu__shm_count_free(unsigned int b)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < srcu__shm_att[b].slots; i++)
		n += takeable(b, i);
	return n;
}

/* A slot for a thread's first section: one this process reserved, else a
 * free one, else a dead process's idle one (a prefork server's workers
 * that exited attached leave theirs).  Async-signal-safe. */
static int claim_for_thread(unsigned int b)
{
	uint64_t me = self_or_die();

	for (unsigned int i = 0; i < srcu__shm_slots_high(b); i++) {
		struct srcu__shm_owner *o = srcu__shm_owner_of(b, i);
		unsigned int reserved = SRCU__SHM_RESERVED;

		/* Acquire on the owner: pairs with the release that names us
		 * owner in claim_dead() (and with claim_free()'s seq-cst CAS):
		 * the state we CAS next is ours, not the dead owner's
		 * RESERVED that the marker was there to keep from us.
		 * Acquire on the CAS: pairs with the release of RESERVED in
		 * shared_domain.c's reserve(): the counts this thread goes on
		 * from (shared_map() reads them) are the ones the reserver's
		 * claim acquired, balanced by the slot's last owner or its
		 * recovery. */
		if (load_acquire(&o->owner) == me &&
		    __atomic_compare_exchange_n(&o->state, &reserved, SRCU__SHM_MAPPED, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return (int)i;
	}
	return srcu__shm_reserve(b, SRCU__SHM_MAPPED);
}

/*
 * Slot i's page of the file, mapped MADV_DONTFORK at page: no child gets
 * it.  A fork() child's handler maps private memory there (reader.c); a
 * child made without the handlers (_Fork(), clone(), syscall(SYS_fork))
 * faults (SIGSEGV) at its first count on it instead of counting in its
 * parent's slot, under its parent's name, where recovery would end its
 * sections once the parent died.  Mapped elsewhere first and moved into
 * place once marked, so that no moment exists at which a fork copies it.
 */
static void *map_slot_page(unsigned int b, unsigned int i, void *page)
{
	struct srcu__shm_att *a = &srcu__shm_att[b];
	void *m = mmap(NULL, SRCU__SHM_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, a->fd,
		       (off_t)(SRCU__SHM_FIRST_SLOT_PAGE + i) * SRCU__SHM_PAGE);

	if (m == MAP_FAILED)
		return m;
	if (madvise(m, SRCU__SHM_PAGE, MADV_DONTFORK) != 0 ||
	    mremap(m, SRCU__SHM_PAGE, SRCU__SHM_PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
		   page) == MAP_FAILED) {
		int err = errno;

		munmap(m, SRCU__SHM_PAGE);
		errno = err;
		return MAP_FAILED;
	}
	return page;
}

/* Does another process hold slots PENDING (a reservation under way,
 * which takes them all or gives them back in a moment)?  This process's
 * own are not waited for: a signal handler's first section may have
 * interrupted its reservation, which cannot go on meanwhile. */
static bool any_pending(unsigned int b)
{
	uint64_t me = self_or_die();

	for (unsigned int i = 0; i < srcu__shm_slots_high(b); i++) {
		struct srcu__shm_owner *o = srcu__shm_owner_of(b, i);

		if (load_relaxed(&o->state) == SRCU__SHM_PENDING && load_relaxed(&o->owner) != me)
			return true;
	}
	return false;
}

/* A thread's slot: claimed, or, while another process's reservation holds
 * slots PENDING, claimed once it has taken or given them back (at most
 * PENDING_WAITS pauses): a shortage that lasts a moment must not abort
 * an innocent process.  nanosleep() is async-signal-safe. */
#define PENDING_WAITS 2000
static int claim_waiting(unsigned int b)
{
	struct timespec pause = { 0, 50 * 1000 };
	int i;

	for (int t = 0; (i = claim_for_thread(b)) < 0 && t < PENDING_WAITS && any_pending(b); t++)
		nanosleep(&pause, NULL);
	return i;
}

int srcu__shm_map_slot(unsigned int b, void *page)
{
	int i = claim_waiting(b);

	if (i < 0)
		return -1;
	if (map_slot_page(b, (unsigned int)i, page) == MAP_FAILED)
		srcu__report_fatal("cannot map reader slot %d of shared domain '%.47s': %s", i,
			    srcu__shm_domain(b)->srcu__name_buf, strerror(errno));
	/* R (shared): pairs with S or A before a check reads slots_high:
	 * either the check sums this slot, or the section this slot is
	 * mapped for sees everything published before the check began. */
	srcu__smp_mb();
	return i;
}

void srcu__shm_release(unsigned int b, unsigned int i)
{
	struct srcu__shm_owner *o = srcu__shm_owner_of(b, i);

	store_relaxed(&o->state, SRCU__SHM_FREE);
	/* Release: the next owner's acquire in claim_free() sees the counts
	 * balanced. */
	store_release(&o->owner, 0);
}

static unsigned long balance(struct srcu__slot *s);

unsigned long srcu__shm_release_balanced(unsigned int b, unsigned int i)
{
	unsigned long ended = balance(srcu__shm_counters(b, i));

	srcu__shm_release(b, i);
	return ended;
}

unsigned int srcu__shm_count_mine(unsigned int b)
{
	uint64_t me = self_or_die();
	unsigned int n = 0;

	for (unsigned int i = 0; i < srcu__shm_slots_high(b); i++)
		n += load_relaxed(&srcu__shm_owner_of(b, i)->owner) == me;
	return n;
}

/* ---- the grace period's sums ---- */

unsigned int srcu__shm_sum_unlocks(unsigned int b, unsigned long unlocks[2])
{
	unsigned int n = srcu__shm_slots_high(b);

	for (unsigned int i = 0; i < n; i++) {
		struct srcu__slot *s = srcu__shm_counters(b, i);

		/* Acquire keeps these loads before fence A and the lock
		 * sums; C has no release (the check's global membarrier
		 * orders the sections: doc/design.md, "The argument in C11
		 * terms"). */
		unlocks[0] += load_acquire(&s->unlock[0]);
		unlocks[1] += load_acquire(&s->unlock[1]);
	}
	return n;
}

unsigned long srcu__shm_sum_locks(unsigned int b, int idx, unsigned int n, unsigned int *bad_slot)
{
	unsigned long sum = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct srcu__slot *s = srcu__shm_counters(b, i);
		unsigned long u = load_acquire(&s->unlock[idx]);
		unsigned long l = srcu__count(load_acquire(&s->lock[idx]));

		if (srcu__open(l, u) < 0 && !*bad_slot)
			*bad_slot = i + 1;
		sum += l;
	}
	return sum;
}

/* ---- recovery ---- */

/* Remember what one dead process held (several slots each): by its
 * owner word, so that two processes that had one pid are two. */
static void note_dead(struct srcu__shm_dead *dead, unsigned int *n, unsigned int max,
		      uint64_t owner, unsigned long sections)
{
	owner &= ~SRCU__SHM_CLAIMING_BIT;
	for (unsigned int k = 0; k < *n; k++)
		if (dead[k].owner == owner) {
			dead[k].sections += sections;
			return;
		}
	if (*n < max) {
		dead[*n].pid = srcu__shm_owner_pid(owner);
		dead[*n].owner = owner;
		dead[*n].sections = sections;
		(*n)++;
	}
}

/* End the sections a dead owner left open in slot s, as its unlocks would
 * have (the counts then balance: nobody else writes them). */
static unsigned long balance(struct srcu__slot *s)
{
	unsigned long open = 0;

	for (int idx = 0; idx < 2; idx++) {
		unsigned long l = srcu__count(load_relaxed(&s->lock[idx]));
		unsigned long d = srcu__count_diff(l, load_relaxed(&s->unlock[idx]));

		if (d) {
			open += d;
			store_release(&s->unlock[idx], load_relaxed(&s->unlock[idx]) + d);
		}
	}
	return open;
}

/* Mark slot i (owner word owner) as being recovered: the CAS that makes
 * it ours to balance.  An attacher's claim_dead() that took it first
 * makes this fail, and one that comes after fails on the mark. */
static bool mark_recovering(struct srcu__shm_owner *o, uint64_t owner)
{
	return __atomic_compare_exchange_n(&o->owner, &owner, SRCU__SHM_RECOVERING, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

unsigned int srcu__shm_recover(unsigned int b, struct srcu__shm_dead *dead, unsigned int max)
{
	uint64_t seen_dead[16] = { 0 }, seen_live[16] = { 0 };
	unsigned int n = 0, nd = 0, nl = 0;

	for (unsigned int i = 0; i < srcu__shm_slots_high(b); i++) {
		struct srcu__shm_owner *o = srcu__shm_owner_of(b, i);
		uint64_t owner = load_acquire(&o->owner);
		bool is_dead = false, known = false;
		unsigned long sections;

		if (!owner)
			continue;
		/* Marked by a GP-lock holder that died recovering it: ours
		 * to finish, since we hold the lock now. */
		is_dead = known = owner == SRCU__SHM_RECOVERING;
		for (unsigned int k = 0; k < nd && !known; k++)
			known = is_dead = seen_dead[k] == owner;
		for (unsigned int k = 0; k < nl && !known; k++)
			known = seen_live[k] == owner;
		if (!known) {
			is_dead = owner_dead(owner);
			if (is_dead && nd < 16)
				seen_dead[nd++] = owner;
			else if (!is_dead && nl < 16)
				seen_live[nl++] = owner;
		}
		if (!is_dead || (owner != SRCU__SHM_RECOVERING && !mark_recovering(o, owner)))
			continue;
		/* Dead, and marked: its counts are balanced only now (DEAD in
		 * model/srcu.pml; a live owner's never are), then the slot is
		 * freed, with release: the next owner sees them balanced. */
		sections = balance(srcu__shm_counters(b, i));
		if (owner != SRCU__SHM_RECOVERING)   /* else its pid is lost: no report */
			note_dead(dead, &n, max, owner, sections);
		srcu__shm_release(b, i);
	}
	return n;
}
