/*
 * test_shared_domain: process-shared domains (doc/shared.md).  A domain in a
 * memfd, readers and updaters in separate processes (exec'd, so that
 * they attach as strangers do, and forked, which inherit it), and
 * processes killed inside a section and inside a grace period.
 *
 * Each test names the bug it would catch.  The helper processes are this
 * program run again: test_shared_domain <mode> <fd>, talking over stdin/stdout.
 */
#include "check.h"
#include "../src/internal.h"   /* white-box: the file's header, to corrupt it */

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>

static const char *self_exe;

static int new_memfd(void)
{
	int fd = (int)syscall(SYS_memfd_create, "srcu-test", 0);

	REQUIRE(fd >= 0);
	return fd;
}

static struct srcu_struct *create(int fd, unsigned int slots, const char *name)
{
	struct srcu_struct *sp = NULL;
	int err = init_srcu_struct_shared(fd, slots, name, &sp);

	if (err)
		fprintf(stderr, "init_srcu_struct_shared: %d (%s)\n", err, strerror(-err));
	REQUIRE(err == 0 && sp);
	return sp;
}

/* ---- helper processes ---- */

struct helper {
	pid_t pid;
	int to, from;   /* its stdin, its stdout */
};

static struct helper helper_start(const char *mode, int fd)
{
	int in[2], out[2];
	struct helper h;
	char fds[16];

	REQUIRE(pipe(in) == 0 && pipe(out) == 0);
	snprintf(fds, sizeof(fds), "%d", fd);
	fflush(NULL);
	h.pid = fork();
	REQUIRE(h.pid >= 0);
	if (h.pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		char *argv[] = { (char *)self_exe, (char *)mode, fds, NULL };

		test_execv(self_exe, argv);   /* through qemu-user on a cross run */
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	h.to = in[1];
	h.from = out[0];
	return h;
}

/* The helper's next byte (0 at end of file). */
static char helper_read(struct helper *h)
{
	char c = 0;

	return read(h->from, &c, 1) == 1 ? c : 0;
}

static void helper_say(struct helper *h, char c)
{
	REQUIRE(write(h->to, &c, 1) == 1);
}

static int helper_wait(struct helper *h)
{
	int status;

	close(h->to);
	close(h->from);
	REQUIRE(waitpid(h->pid, &status, 0) == h->pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void say(char c)
{
	REQUIRE(write(1, &c, 1) == 1);
}

static char hear(void)
{
	char c = 0;

	return read(0, &c, 1) == 1 ? c : 0;
}

/* Has the parent said anything (without blocking)? */
static bool hear_ready(void)
{
	struct timespec ts = { 0, 0 };
	fd_set r;

	FD_ZERO(&r);
	FD_SET(0, &r);
	return pselect(1, &r, NULL, NULL, &ts, NULL) > 0;
}

static struct srcu_struct *helper_attach(int fd)
{
	struct srcu_struct *sp = NULL;
	int err = srcu_shared_attach(fd, &sp);

	if (err) {
		fprintf(stderr, "helper %d: srcu_shared_attach: %d\n", (int)getpid(), err);
		exit(100 + (-err % 100));
	}
	return sp;
}

/* Helper modes. */
static int helper_main(const char *mode, int fd)
{
	struct srcu_struct *sp;
	int idx;

	if (strcmp(mode, "attach") == 0) {   /* exit status: -attach's error */
		struct srcu_struct *s2 = NULL;
		int err = srcu_shared_attach(fd, &s2);

		return err ? -err : 0;
	}
	if (strcmp(mode, "create") == 0) {   /* format the file, leave it */
		struct srcu_struct *s2 = NULL;
		int err = init_srcu_struct_shared(fd, 4, "other-model", &s2);

		return err ? -err : 0;
	}
	if (strcmp(mode, "create2-hold-forever") == 0 ||   /* 2 slots, a section */
	    strcmp(mode, "create2-exit") == 0) {          /* 2 slots, exit attached */
		struct srcu_struct *s2 = NULL;

		REQUIRE(init_srcu_struct_shared(fd, 2, "crashed", &s2) == 0);
		if (strcmp(mode, "create2-exit") == 0)
			return 0;
		idx = srcu_read_lock(s2);
		say('L');
		for (;;)
			pause();
	}
	sp = helper_attach(fd);
	if (strcmp(mode, "hold") == 0) {     /* a section until told */
		idx = srcu_read_lock(sp);
		say('L');
		hear();
		srcu_read_unlock(sp, idx);
		say('U');
		hear();
		CHECK_EQ(srcu_shared_detach(sp), 0);
		return check_failures;
	}
	if (strcmp(mode, "hold-forever") == 0) {
		idx = srcu_read_lock(sp);
		say('L');
		for (;;)
			pause();
	}
	if (strcmp(mode, "sync") == 0 || strcmp(mode, "sync-cued") == 0) {
		/* A grace period, told when done; cued: once told to start. */
		say('S');
		if (mode[4])
			hear();
		synchronize_srcu(sp);
		say('D');
		hear();
		return 0;
	}
	if (strcmp(mode, "churn") == 0) {    /* overlapping sections, never idle */
		int a = srcu_read_lock(sp), b;

		say('L');
		while (!hear_ready()) {
			b = srcu_read_lock(sp);
			srcu_read_unlock(sp, a);
			sleep_us(200);
			a = srcu_read_lock(sp);
			srcu_read_unlock(sp, b);
			sleep_us(200);
		}
		srcu_read_unlock(sp, a);
		return 0;
	}
	fprintf(stderr, "unknown helper mode %s\n", mode);
	return 99;
}

/* A "hold" helper ends its section (and says so). */
static void hold_release(struct helper *h)
{
	helper_say(h, 'u');
	REQUIRE(helper_read(h) == 'U');
}

/* Let a helper exit (it must succeed), then detach from sp and close its
 * file. */
static void helper_finish(struct helper *h, struct srcu_struct *sp, int fd)
{
	helper_say(h, 'x');
	CHECK_EQ(helper_wait(h), 0);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

/* ---- the tests ---- */

/* A grace period in one process and its updater's thread, watched. */
struct gp_thread {
	struct srcu_struct *sp;
	int done;
	pthread_t t;
};

static void *gp_run(void *arg)
{
	struct gp_thread *g = arg;

	synchronize_srcu(g->sp);
	flag_set(&g->done);
	return NULL;
}

static void gp_start(struct gp_thread *g, struct srcu_struct *sp)
{
	g->sp = sp;
	g->done = 0;
	g->t = spawn(gp_run, g);
}

/* Bug caught: a GP that does not see another process's reader (its
 * counts in the file, the index flip in the file).  How soon the unlock
 * wakes it (the shared futex, the waiting flag's page) is printed, not
 * asserted: the periodic look for dead owners would end it too. */
static void test_waits_for_other_process(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 16, "cross");
	struct helper h = helper_start("hold", fd);
	struct gp_thread g;
	long long t0;

	REQUIRE(helper_read(&h) == 'L');
	gp_start(&g, sp);
	sleep_ms(300);
	CHECK(!flag_get(&g.done));          /* the other process's section holds it */
	hold_release(&h);
	t0 = now_ns();
	join(g.t);
	CHECK(flag_get(&g.done));
	/* Woken by the unlock, not by a periodic look (10 ms at the earliest). */
	printf("  GP ended %.2f ms after the other process's unlock\n", (double)(now_ns() - t0) / 1e6);
	helper_finish(&h, sp, fd);
}

/* Bug caught: a GP that waits for sections begun after it (it would
 * never end under a reader that is never idle). */
static void test_new_sections_not_waited(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 16, "churn");
	struct helper h = helper_start("churn", fd);

	REQUIRE(helper_read(&h) == 'L');
	for (int i = 0; i < 20; i++)
		synchronize_srcu(sp);
	helper_finish(&h, sp, fd);
}

static int dead_pid;
static unsigned long dead_sections;

static void on_report(const struct srcu_stall *s, void *arg)
{
	(void)arg;
	if (s->dead_pid) {
		__atomic_store_n(&dead_sections, s->dead_sections, __ATOMIC_SEQ_CST);
		__atomic_store_n(&dead_pid, s->dead_pid, __ATOMIC_SEQ_CST);
	}
}

/* Bugs caught: a reader killed inside its section blocks every later GP
 * (no dead-owner detection), a zombie taken for alive, or the recovery
 * not reported.  reap: the parent reaps it before the GP (the pid is
 * gone) or not (a zombie). */
static void test_kill_in_section(bool reap)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 16, "killed");
	struct helper h = helper_start("hold-forever", fd);
	long long t0;
	int status;

	srcu_set_stall_handler(on_report, NULL);
	dead_pid = 0;
	REQUIRE(helper_read(&h) == 'L');
	kill(h.pid, SIGKILL);
	if (reap)
		REQUIRE(waitpid(h.pid, &status, 0) == h.pid);
	else
		sleep_ms(50);   /* dead, not reaped: a zombie */
	t0 = now_ns();
	synchronize_srcu(sp);
	printf("  GP after a kill inside a section (%s): %.1f ms\n",
	       reap ? "reaped" : "zombie", (double)(now_ns() - t0) / 1e6);
	CHECK_LT(now_ns() - t0, 1000000000LL);   /* the 1 s */
	CHECK_EQ(__atomic_load_n(&dead_pid, __ATOMIC_SEQ_CST), h.pid);
	CHECK_EQ(dead_sections, 1);
	synchronize_srcu(sp);   /* and the domain goes on */
	srcu_set_stall_handler(NULL, NULL);
	close(h.to);
	close(h.from);
	if (!reap)
		waitpid(h.pid, &status, 0);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

/* What srcu_shared_attach() says in a process of its own (exit status). */
static int attach_status(int fd)
{
	struct helper h = helper_start("attach", fd);

	return helper_wait(&h);
}

/* Bug caught: a stopped (live) process's section ended early: only a
 * dead owner's counts may be balanced (DISCARDLIVE in model/srcu.pml). */
static void test_stopped_reader_still_waited(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 16, "stopped");
	struct helper h = helper_start("hold", fd);
	struct gp_thread g;

	REQUIRE(helper_read(&h) == 'L');
	kill(h.pid, SIGSTOP);
	gp_start(&g, sp);
	sleep_ms(600);   /* several looks for dead owners (10, 20, 40 ... ms) */
	CHECK(!flag_get(&g.done));
	kill(h.pid, SIGCONT);
	hold_release(&h);
	join(g.t);
	helper_finish(&h, sp, fd);
}

/* Bug caught: a process killed while it runs a grace period (holding the
 * GP lock, asleep on a reader) wedges every later GP. */
static void test_kill_in_gp(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 16, "gp-killed");
	struct helper h = helper_start("sync-cued", fd);
	struct srcu__shm_header *hdr = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	int idx = srcu_read_lock(sp);
	srcu__u64 *gp_lock;
	long long t0;

	REQUIRE(hdr != MAP_FAILED);
	gp_lock = &srcu__dom_area(srcu__shm_domain_at(hdr))->gp_lock;
	/* Cued once our section is open: a helper that ran its grace period
	 * before our lock (a loaded machine runs the child first) would end
	 * it at once and never be seen holding the lock. */
	REQUIRE(helper_read(&h) == 'S');
	helper_say(&h, 'g');
	/* Its GP takes the lock and waits for our section: wait for the
	 * lock (not a fixed 100 ms, which a loaded machine can spend before
	 * the helper runs at all), then let it go to sleep on the section. */
	for (int i = 0; i < 10000 && !load_relaxed(gp_lock); i++)
		sleep_ms(1);
	CHECK(load_relaxed(gp_lock) != 0);
	sleep_ms(50);
	kill(h.pid, SIGKILL);
	helper_wait(&h);
	srcu_read_unlock(sp, idx);
	t0 = now_ns();
	synchronize_srcu(sp);
	printf("  GP after a kill inside a grace period: %.1f ms\n", (double)(now_ns() - t0) / 1e6);
	CHECK_LT(now_ns() - t0, 1000000000LL);
	synchronize_srcu(sp);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	munmap(hdr, 4096);
	close(fd);
}

/* Bugs caught: a fork child counting in its parent's slots (their counts
 * would race), or not attached at all; a child that never ran a GP
 * refused detach (its token 0 taken for the free GP lock's). */
static void test_fork_child(char how)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 16, "forked");
	int idx = srcu_read_lock(sp), p2c[2], c2p[2], status;
	struct gp_thread g;
	pid_t pid;
	char c;

	REQUIRE(pipe(p2c) == 0 && pipe(c2p) == 0);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {   /* inherited: its own slot, its own sections */
		int i2;

		srcu_read_unlock(sp, idx);   /* the copy of the parent's section */
		i2 = srcu_read_lock(sp);
		REQUIRE(write(c2p[1], "L", 1) == 1);
		REQUIRE(read(p2c[0], &c, 1) == 1);
		srcu_read_unlock(sp, i2);
		if (c == 'd') {   /* detach without ever running a GP */
			CHECK_EQ(srcu_shared_detach(sp), 0);
			_exit(check_failures);
		}
		synchronize_srcu(sp);   /* a GP from the child */
		CHECK_EQ(srcu_shared_detach(sp), 0);
		_exit(check_failures);
	}
	REQUIRE(read(c2p[0], &c, 1) == 1);
	srcu_read_unlock(sp, idx);   /* the parent's own section ends */
	gp_start(&g, sp);
	sleep_ms(200);
	CHECK(!flag_get(&g.done));   /* the child's section holds it */
	REQUIRE(write(p2c[1], &how, 1) == 1);
	join(g.t);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

/* Bug caught: a fork child whose handler copied its forking thread's
 * counts from the slot page while the parent, back from fork(), already
 * counted a new section in it: the child held a section nobody holds
 * (srcu_read_lock_held() true, detach -EBUSY forever, every GP stalled
 * while it lived).  The parent's section spans the child's handler (5 ms;
 * the handler registers membarrier first): caught nearly every time,
 * never a false failure (test_shared_domain_hooks holds the window open). */
static void test_fork_while_parent_reads(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 16, "fork-reads");

	for (int i = 0; i < 5; i++) {
		int idx = srcu_read_lock(sp), status;   /* the slot is mapped */
		pid_t pid;

		srcu_read_unlock(sp, idx);
		fflush(NULL);
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			int held = srcu_read_lock_held(sp);

			_exit(held ? 1 : srcu_shared_detach(sp) != 0 ? 2 : 0);
		}
		idx = srcu_read_lock(sp);
		sleep_ms(5);
		srcu_read_unlock(sp, idx);
		REQUIRE(waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status));
		CHECK_EQ(WEXITSTATUS(status), 0);   /* 1: a phantom section; 2: detach refused */
	}
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

/* Bugs caught: attaching to garbage or another layout version (must fail
 * cleanly and write nothing), slot overflow instead of -ENOSPC, a domain
 * attached twice, detach inside a section. */
static void test_errors(void)
{
	int fd = new_memfd(), junk = new_memfd(), small = new_memfd();
	struct srcu_struct *sp = create(fd, 3, "errors"), *other = NULL;
	struct srcu__shm_header *h;
	char buf[8192];
	int idx;

	CHECK_EQ(srcu_shared_size(0), 0);
	CHECK_EQ(srcu_shared_size(1), 3 * 4096);
	CHECK(srcu_shared(sp));
	CHECK_EQ(init_srcu_struct_shared(fd, 3, "again", &other), -EEXIST);
	CHECK_EQ(srcu_shared_attach(fd, &other), -EALREADY);
	CHECK_EQ(cleanup_srcu_struct(sp), -EINVAL);

	/* Garbage, a short file, another version: errors, nothing written. */
	memset(buf, 0x5a, sizeof(buf));
	REQUIRE(write(junk, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK_EQ(srcu_shared_attach(junk, &other), -EINVAL);
	REQUIRE(pread(junk, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		if (buf[i] != 0x5a) {
			CHECK(!"attach wrote to a garbage file");
			break;
		}
	{   /* every attacher writes the file: read-only is refused */
		char path[64];
		int ro;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ro = open(path, O_RDONLY);
		REQUIRE(ro >= 0);
		CHECK_EQ(srcu_shared_attach(ro, &other), -EACCES);
		close(ro);
	}
	REQUIRE(write(small, "SRCUSHM", 8) == 8);
	CHECK_EQ(srcu_shared_attach(small, &other), -EINVAL);
	CHECK_EQ(srcu_shared_attach(-1, &other), -EINVAL);
	CHECK_EQ(srcu_shared_attach(fd, NULL), -EINVAL);
	h = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	REQUIRE(h != MAP_FAILED);
	h->version++;
	CHECK_EQ(attach_status(fd), EPROTO);
	h->version--;
	/* A file made by a process of another data model (its longs 4 bytes
	 * where ours are 8, or the reverse; the other byte order): its
	 * counters would be summed at wrong offsets.  Bug caught: a file
	 * format that does not record the creator's word size (format 1). */
	h->abi ^= 4 | 8;
	CHECK_EQ(attach_status(fd), EPROTO);
	h->abi ^= 4 | 8;
	h->abi ^= 1u << 8;
	CHECK_EQ(attach_status(fd), EPROTO);
	h->abi ^= 1u << 8;
	h->slots = 1000000;
	CHECK_EQ(attach_status(fd), EINVAL);
	h->slots = 3;
	h->slots_high = 4;   /* more claimed than there are: garbage */
	CHECK_EQ(attach_status(fd), EINVAL);
	h->slots_high = 1;
	munmap(h, 4096);

	/* 3 slots: ours (home), 2 more; a reservation past that fails whole. */
	CHECK_EQ(srcu_shared_reserve(sp, 4), -ENOSPC);
	CHECK_EQ(srcu_shared_reserve(sp, 3), 0);
	CHECK_EQ(attach_status(fd), ENOSPC);
	CHECK_EQ(srcu_shared_reserve(NULL, 1), -EINVAL);

	idx = srcu_read_lock(sp);
	CHECK(srcu_read_lock_held(sp));
	CHECK_EQ(srcu_shared_detach(sp), -EBUSY);
	srcu_read_unlock(sp, idx);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	CHECK_EQ(srcu_shared_detach(NULL), -EINVAL);   /* sp itself is unmapped now */
	/* Detached: its slots are free for others. */
	CHECK_EQ(attach_status(fd), 0);
	close(fd);
	close(junk);
	close(small);
}

/* Bug caught: a process whose liveness cannot be checked (here: no file
 * descriptor left for pidfd_open() or /proc) taken for dead, and its
 * live section ended. */
static void test_unknown_is_alive(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 8, "no-fds");
	struct helper h = helper_start("hold", fd);
	struct rlimit saved, none;
	struct gp_thread g;
	int probe;

	REQUIRE(helper_read(&h) == 'L');
	REQUIRE(getrlimit(RLIMIT_NOFILE, &saved) == 0);
	probe = dup(0);   /* the lowest free descriptor: allow none from it on */
	REQUIRE(probe >= 0);
	close(probe);
	none = saved;
	none.rlim_cur = (rlim_t)probe;
	REQUIRE(setrlimit(RLIMIT_NOFILE, &none) == 0);
	gp_start(&g, sp);
	sleep_ms(400);   /* looks for dead owners at 10, 30, 70, 150, 310 ms */
	CHECK(!flag_get(&g.done));
	REQUIRE(setrlimit(RLIMIT_NOFILE, &saved) == 0);
	hold_release(&h);
	join(g.t);
	helper_finish(&h, sp, fd);
}

/* Bug caught: reader slots of processes that exited attached (a prefork
 * server's workers) never coming back: with 3 slots, the fourth child on
 * would find none at its first section and abort. */
static void test_exited_slots_reused(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 3, "reuse");

	for (int i = 0; i < 6; i++) {
		int status;
		pid_t pid;

		fflush(NULL);
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			int idx = srcu_read_lock(sp);

			srcu_read_unlock(sp, idx);
			_exit(0);   /* attached, not detached */
		}
		REQUIRE(waitpid(pid, &status, 0) == pid);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	synchronize_srcu(sp);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

static int *callbacks_run;   /* shared between parent and child */

static void count_callback(struct srcu_head *h)
{
	(void)h;
	__atomic_fetch_add(callbacks_run, 1, __ATOMIC_SEQ_CST);
}

/* Bugs caught: a shared domain's callbacks pending at fork() run by both
 * parent and child (a shared object freed twice); an idle child refused
 * detach because another process needs a GP (gp_seq_needed is the
 * domain's, in the file); a file that held something else kept its stale
 * counts at creation (a GP that never ends). */
static void test_fork_callbacks_and_dirty_file(void)
{
	int fd = new_memfd(), idx, status;
	char junk[4 * 4096];
	struct srcu_struct *sp;
	struct srcu_head head;
	struct gp_thread g;
	pid_t pid;

	memset(junk, 0xff, sizeof(junk));
	REQUIRE(write(fd, junk, sizeof(junk)) == (ssize_t)sizeof(junk));
	sp = create(fd, 2, "dirty");
	synchronize_srcu(sp);   /* stale counts would hold it forever */
	callbacks_run = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	REQUIRE(callbacks_run != MAP_FAILED);
	idx = srcu_read_lock(sp);   /* the callback waits for this section */
	call_srcu(sp, &head, count_callback);
	gp_start(&g, sp);           /* and so does a GP the domain needs */
	sleep_ms(20);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		srcu_read_unlock(sp, idx);   /* the copy of the section */
		srcu_barrier(sp);
		/* The parent's GP is still needed (its section holds it):
		 * that is not this process's business. */
		_exit(srcu_shared_detach(sp) == 0 ? 0 : 3);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	srcu_read_unlock(sp, idx);
	join(g.t);
	srcu_barrier(sp);
	CHECK_EQ(*callbacks_run, 1);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	munmap(callbacks_run, 4096);
	close(fd);
}

/* Bug caught: a fork child that was attached to nothing when it was
 * forked keeping its parent's identity (the parent had attached and
 * detached): once the parent dies, the child's live section is taken
 * for the dead parent's and ended. */
static void test_fork_child_own_identity(void)
{
	int fd = new_memfd(), c2t[2], t2c[2], status;
	struct srcu_struct *sp = create(fd, 8, "identity");
	struct gp_thread g;
	pid_t p;
	char c;

	REQUIRE(pipe(c2t) == 0 && pipe(t2c) == 0);
	fflush(NULL);
	p = fork();
	REQUIRE(p >= 0);
	if (p == 0) {   /* P: reads (its identity is now known), detaches, forks C, dies */
		int idx = srcu_read_lock(sp);

		srcu_read_unlock(sp, idx);
		REQUIRE(srcu_shared_detach(sp) == 0);
		if (fork() == 0) {   /* C: attaches on its own, holds a section */
			struct srcu_struct *csp = helper_attach(fd);

			idx = srcu_read_lock(csp);
			REQUIRE(write(c2t[1], "L", 1) == 1);
			REQUIRE(read(t2c[0], &c, 1) == 1);
			srcu_read_unlock(csp, idx);
			_exit(srcu_shared_detach(csp) == 0 ? 0 : 1);
		}
		_exit(0);
	}
	REQUIRE(waitpid(p, &status, 0) == p);   /* P is dead, reaped */
	REQUIRE(read(c2t[0], &c, 1) == 1);
	gp_start(&g, sp);
	sleep_ms(300);
	CHECK(!flag_get(&g.done));   /* C's section holds it */
	REQUIRE(write(t2c[1], "u", 1) == 1);
	join(g.t);
	close(t2c[1]);
	sleep_ms(50);   /* C (not our child) detaches and exits */
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

/* Bug caught: two shared domains of one process mixing their slots or
 * flags (each has its own id block). */
static void test_two_domains(void)
{
	int fa = new_memfd(), fb = new_memfd();
	struct srcu_struct *a = create(fa, 4, "A"), *b = create(fb, 4, "B");
	struct helper h = helper_start("hold", fa);

	CHECK(srcu__id_of(a) != srcu__id_of(b));
	REQUIRE(helper_read(&h) == 'L');
	synchronize_srcu(b);          /* A's reader does not hold B */
	hold_release(&h);
	synchronize_srcu(a);
	helper_say(&h, 'x');
	CHECK_EQ(helper_wait(&h), 0);
	CHECK_EQ(srcu_shared_detach(a), 0);
	CHECK_EQ(srcu_shared_detach(b), 0);
	close(fa);
	close(fb);
}

/* Run the other data model's test binary (cmd: its argv, with its
 * emulator; it inherits fd) in mode, and its exit status. */
static int other_model_run(char **cmd, const char *mode, int fd)
{
	char fds[16], *argv[24];
	int n = 0, st;
	pid_t pid;

	snprintf(fds, sizeof(fds), "%d", fd);
	while (cmd[n] && n < 20) {
		argv[n] = cmd[n];
		n++;
	}
	argv[n++] = (char *)mode;
	argv[n++] = fds;
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	REQUIRE(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/*
 * `test_shared_domain other-model CMD...`: CMD runs this test built for
 * another data model (i686 or armhf against x86-64: scripts/check-cross.sh
 * does it).  Each side refuses the other's file with -EPROTO.  Bug
 * caught: a 32-bit and a 64-bit process attached to one file, summing
 * each other's counters at wrong offsets (file format 1 had no word size).
 */
static int test_other_model(char **cmd)
{
	struct srcu_struct *sp = NULL;
	int mine = new_memfd(), theirs = new_memfd();

	watchdog(120);
	sp = create(mine, 4, "this-model");
	CHECK_EQ(other_model_run(cmd, "attach", mine), EPROTO);
	CHECK_EQ(other_model_run(cmd, "create", theirs), 0);
	CHECK_EQ(srcu_shared_attach(theirs, &sp), -EPROTO);
	return check_report("test_shared_domain other-model");
}

/* A stall handler that calls into the shared-domain API, as a program's
 * may: the attach-time recovery reports through it, and must not hold
 * the attach lock meanwhile (it would wait for itself). */
static struct srcu_struct *other_sp;
static int reports_in_attach;

static void reserve_on_report(const struct srcu_stall *s, void *arg)
{
	(void)arg;
	if (!s->dead_pid)
		return;
	CHECK_EQ(srcu_shared_reserve(other_sp, 1), 0);
	__atomic_fetch_add(&reports_in_attach, 1, __ATOMIC_SEQ_CST);
}

/* Bug caught: every slot owned by a process that died inside a section.
 * Only a grace period recovered such slots, and only an attached process
 * could run one: every later attach said -ENOSPC, for ever.  The
 * recovery's reports reach a stall handler that calls srcu_shared_reserve()
 * (it deadlocked on the attach lock when reported from inside attach). */
static void test_every_owner_died(void)
{
	int fd = new_memfd(), status, ofd = new_memfd();
	struct helper c = helper_start("create2-hold-forever", fd), h;
	struct srcu_struct *sp = NULL;
	int err;

	int dfd = new_memfd();
	struct srcu_struct *dummy = create(dfd, 4, "dummy");   /* block 0, */

	other_sp = create(ofd, 4, "other");   /* so that this one is in block 1 */
	CHECK_EQ(srcu_shared_detach(dummy), 0);   /* and the crashed file's 0 is free */
	close(dfd);
	reports_in_attach = 0;
	srcu_set_stall_handler(reserve_on_report, NULL);

	REQUIRE(helper_read(&c) == 'L');
	h = helper_start("hold-forever", fd);
	REQUIRE(helper_read(&h) == 'L');
	kill(c.pid, SIGKILL);
	kill(h.pid, SIGKILL);
	REQUIRE(waitpid(c.pid, &status, 0) == c.pid && waitpid(h.pid, &status, 0) == h.pid);
	close(c.to); close(c.from); close(h.to); close(h.from);
	err = srcu_shared_attach(fd, &sp);
	if (err)
		fprintf(stderr, "every_owner_died: srcu_shared_attach: %d (%s)\n", err, strerror(-err));
	CHECK_EQ(err, 0);
	CHECK_EQ(__atomic_load_n(&reports_in_attach, __ATOMIC_SEQ_CST), 2);
	srcu_set_stall_handler(NULL, NULL);
	if (!err) {
		synchronize_srcu(sp);   /* the dead sections are ended */
		CHECK_EQ(srcu_shared_detach(sp), 0);
	}
	CHECK_EQ(srcu_shared_detach(other_sp), 0);
	close(ofd);
	close(fd);
}

/* Bug caught: srcu_shared_reserve() counting free slots only, while the
 * claims right after it take dead processes' idle slots too: the prefork
 * pattern (a worker that exited attached) got -ENOSPC from the reserve
 * although its first section would have had a slot. */
static void test_reserve_counts_dead_idle(void)
{
	int fd = new_memfd();
	struct helper c = helper_start("create2-exit", fd);
	struct srcu_struct *sp = NULL;

	CHECK_EQ(helper_wait(&c), 0);   /* slot 0: a dead process's, idle */
	REQUIRE(srcu_shared_attach(fd, &sp) == 0);   /* takes slot 1 */
	CHECK_EQ(srcu_shared_reserve(sp, 2), 0);     /* and the dead one */
	CHECK_EQ(srcu_shared_reserve(sp, 3), -ENOSPC);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

/* Bug caught: srcu_shared_detach() while another thread of the process
 * waits in synchronize_srcu() for a grace period that another process
 * runs (waiting for a reader in a third): only the GP lock and open
 * sections were looked at, so detach unmapped the file under the waiting
 * thread (SIGSEGV).  It must say -EBUSY. */
static void test_detach_under_synchronize(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 8, "detach-busy");
	struct helper h = helper_start("hold", fd), u;
	struct gp_thread g;

	REQUIRE(helper_read(&h) == 'L');
	u = helper_start("sync", fd);
	REQUIRE(helper_read(&u) == 'S');
	sleep_ms(100);   /* its GP holds the lock, waiting for the section */
	gp_start(&g, sp);
	sleep_ms(200);   /* inside, waiting for the other process's GP */
	CHECK(!flag_get(&g.done));
	CHECK_EQ(srcu_shared_detach(sp), -EBUSY);
	hold_release(&h);
	REQUIRE(helper_read(&u) == 'D');
	join(g.t);
	helper_say(&u, 'x');
	CHECK_EQ(helper_wait(&u), 0);
	helper_finish(&h, sp, fd);
}

/* Bug caught: the inline read side taking its counter's word from the
 * file.  Whoever writes the file rewrites the domain's slot and lock
 * words there to a private domain's: the unlock of a shared section then
 * counted in the private domain's counters, balancing a section open in
 * another thread, and the private domain's grace period ended under it
 * (or the counter table outside the file was written).  The words a
 * reader counts at are the process's own, made at attach; only the
 * index bit comes from the file. */
static void test_file_words_not_trusted(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 8, "rewritten"), priv;
	struct srcu__shm_header *hdr = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	struct hold_arg hold = { .sp = &priv };
	struct gp_thread g;
	pthread_t ht;
	uint16_t *words, saved[2];
	int sidx;

	REQUIRE(hdr != MAP_FAILED);
	REQUIRE(init_srcu_struct(&priv) == 0);
	words = &srcu__shm_domain_at(hdr)->slot_word;
	saved[0] = words[0];
	saved[1] = words[1];
	ht = spawn(hold_thread, &hold);
	flag_wait(&hold.inside);
	sidx = srcu_read_lock(sp);
	/* Both fresh: index 0, the one the private section counted on. */
	CHECK_EQ(sidx, 0);
	__atomic_store_n(&words[0], priv.slot_word, __ATOMIC_RELAXED);
	__atomic_store_n(&words[1], priv.lock_word, __ATOMIC_RELAXED);
	srcu_read_unlock(sp, sidx);
	sidx = srcu_read_lock(sp);   /* and whole sections under the rewritten words */
	srcu_read_unlock(sp, sidx);
	srcu_read_unlock_fast(sp, srcu_read_lock_fast(sp));
	gp_start(&g, &priv);
	sleep_ms(200);   /* the private section is still open */
	CHECK(!flag_get(&g.done));
	flag_set(&hold.release);
	join(ht);
	join(g.t);
	CHECK(flag_get(&g.done));
	/* The file's index bit is the shared domain's: its GPs still flip
	 * it, and end. */
	__atomic_store_n(&words[0], saved[0], __ATOMIC_RELAXED);
	__atomic_store_n(&words[1], (uint16_t)(saved[1] | (words[1] & 1)), __ATOMIC_RELAXED);
	synchronize_srcu(sp);
	synchronize_srcu(sp);
	CHECK_EQ(cleanup_srcu_struct(&priv), 0);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	munmap(hdr, 4096);
	close(fd);
}

/* A domain detached, then used: the handle the caller kept. */
static void lock_after_detach(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 4, "gone");

	REQUIRE(srcu_shared_detach(sp) == 0);
	(void)srcu_read_lock(sp);
}

static void sync_after_detach(void)
{
	int fd = new_memfd();
	struct srcu_struct *sp = create(fd, 4, "gone");

	REQUIRE(srcu_shared_detach(sp) == 0);
	synchronize_srcu(sp);
}

/* Bug caught: a domain used after srcu_shared_detach() faulting on the
 * unmapped file, or (its words zero) taken for a static domain's first
 * use and given a private id: both calls abort and say what happened. */
static void test_use_after_detach(void)
{
	CHECK(dies_saying(lock_after_detach, "srcu_read_lock() on domain", "srcu_shared_detach()",
			  NULL));
	CHECK(dies_saying(sync_after_detach, "synchronize_srcu() on domain", "srcu_shared_detach()",
			  NULL));
}

/* Bug caught: a file that anyone may write (another user pre-created it
 * in a world-writable directory, or it is mode o+w) used as it is: its
 * writers can reach the reader's other domains through the words the
 * inline read side takes from the file.  Refused (-EPERM) unless the
 * environment lifts the rule; a memfd (no name, mode 0777) is not. */
static void test_untrusted_file_refused(void)
{
	char path[] = "/tmp/srcu-trust-XXXXXX";
	int fd = mkstemp(path);
	struct srcu_struct *sp = NULL;

	REQUIRE(fd >= 0);
	REQUIRE(fchmod(fd, 0666) == 0);
	CHECK_EQ(init_srcu_struct_shared(fd, 4, "world", &sp), -EPERM);
	REQUIRE(fchmod(fd, 0600) == 0);
	if (geteuid() == 0) {   /* owned by another user: it may chmod it back */
		REQUIRE(fchown(fd, 4242, (gid_t)-1) == 0);
		CHECK_EQ(init_srcu_struct_shared(fd, 4, "other-owner", &sp), -EPERM);
		REQUIRE(fchown(fd, 0, (gid_t)-1) == 0);
	}
	REQUIRE(fchmod(fd, 0666) == 0);
	setenv("SRCU_SHARED_TRUST_ANY", "1", 1);
	CHECK_EQ(init_srcu_struct_shared(fd, 4, "trusted", &sp), 0);
	unsetenv("SRCU_SHARED_TRUST_ANY");
	if (sp)
		CHECK_EQ(srcu_shared_detach(sp), 0);
	REQUIRE(fchmod(fd, 0660) == 0);   /* group write: the program's choice */
	sp = NULL;
	CHECK_EQ(srcu_shared_attach(fd, &sp), 0);
	if (sp)
		CHECK_EQ(srcu_shared_detach(sp), 0);
	unlink(path);
	close(fd);
}

int main(int argc, char **argv)
{
	/* The binary's own path: under qemu-user, /proc/self/exe opened by
	 * the emulator's new process would be the emulator itself. */
	static char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	self_exe = "/proc/self/exe";
	if (n > 0) {
		exe[n] = 0;
		self_exe = exe;
	}
	if (argc >= 3 && strcmp(argv[1], "other-model") == 0)
		return test_other_model(argv + 2);
	if (argc == 3)
		return helper_main(argv[1], atoi(argv[2]));
	watchdog(120);
	test_errors();
	test_waits_for_other_process();
	test_new_sections_not_waited();
	test_kill_in_section(true);
	test_kill_in_section(false);
	test_stopped_reader_still_waited();
	test_kill_in_gp();
	test_fork_child('u');
	test_fork_child('d');
	test_fork_while_parent_reads();
	test_two_domains();
	test_unknown_is_alive();
	test_exited_slots_reused();
	test_fork_callbacks_and_dirty_file();
	test_fork_child_own_identity();
	test_every_owner_died();
	test_reserve_counts_dead_idle();
	test_detach_under_synchronize();
	test_file_words_not_trusted();
	test_use_after_detach();
	test_untrusted_file_refused();
	return check_report("test_shared_domain");
}
