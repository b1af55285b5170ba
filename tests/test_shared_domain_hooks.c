/*
 * test_shared_domain_hooks: process-shared domains at instants that are
 * nanoseconds wide, held open by the test-only hooks of
 * srcu_torture objects (src/torture.h): a fork child's handler held back
 * while its parent reads, and a process SIGKILLed inside claim_free() or
 * claim_dead().  White-box: recovery is run directly, under the GP lock,
 * so that no verdict depends on how long a grace period sleeps.
 *
 * Each test names the bug it would catch.
 */
#include "check.h"
#include "../src/internal.h"

#include <fcntl.h>
#include <sys/mman.h>

/* ---- the hook: stop this process at one point, say so, wait ---- */

static pid_t parent_pid;
static int stop_point = -1;     /* the point to stop at (this process only) */
static int stop_skip;           /* how many of its calls to let pass first */
static int hook_out = -1, hook_in = -1;   /* to and from the test's main process */

static void at_point(enum srcu__torture_point p, void *arg)
{
	char c = 'P';

	if ((int)p != stop_point || getpid() == parent_pid)
		return;
	if (stop_skip-- > 0)
		return;
	if (arg && p != SRCU_TORTURE_POINT_FORK_CHILD)
		c = (char)('0' + *(unsigned int *)arg);   /* the slot it holds */
	if (write(hook_out, &c, 1) != 1)
		_exit(90);
	if (hook_in < 0)
		for (;;)
			pause();   /* until SIGKILL */
	if (read(hook_in, &c, 1) != 1)
		_exit(91);
}

/* ---- recovery, run here under the GP lock ---- */

/* One recovery pass over sp's slots: how many times it reported pid. */
static int recover_reports(struct srcu_struct *sp, int pid)
{
	struct srcu__shm_dead dead[16];
	unsigned int n;
	int reports = 0;

	REQUIRE(srcu__gp_trylock(sp));
	n = srcu__shm_recover(srcu__shm_block(srcu__id_of(sp)), dead, 16);
	srcu__gp_unlock(sp);
	for (unsigned int i = 0; i < n; i++)
		reports += dead[i].pid == pid;
	return reports;
}

/* Slots of sp owned by anything but this process or nobody: a dead
 * process's, or a marker left behind. */
static int foreign_slots(struct srcu_struct *sp)
{
	unsigned int b = srcu__shm_block(srcu__id_of(sp)), n = 0;

	for (unsigned int i = 0; i < srcu__shm_att[b].slots; i++) {
		uint64_t o = load_relaxed(&srcu__shm_owner_of(b, i)->owner);

		n += o != 0 && o != srcu__shm_self();
	}
	return (int)n;
}

/* Fork a child that stops at point (after skip passes) and pause()s
 * there; body runs in it.  Returns its pid once it has stopped; *slot
 * gets the slot it reported. */
static pid_t fork_stopped(int point, int skip, void (*body)(struct srcu_struct *),
			  struct srcu_struct *sp, int *slot)
{
	int c2p[2];
	pid_t pid;
	char c;

	REQUIRE(pipe(c2p) == 0);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(c2p[0]);
		hook_out = c2p[1];
		hook_in = -1;
		stop_skip = skip;
		stop_point = point;
		body(sp);
		_exit(92);   /* never stopped: the point was not reached */
	}
	close(c2p[1]);
	REQUIRE(read(c2p[0], &c, 1) == 1);
	close(c2p[0]);
	*slot = c - '0';
	return pid;
}

static void kill_reap(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

/* ---- bug 3: a fork child inheriting a section nobody holds ---- */

/* The hook for the fork test: the child's handler reports, then waits
 * for the parent's go. */
static int phantom_out, phantom_in;

static void at_fork_child(enum srcu__torture_point p, void *arg)
{
	char c = 'F';

	(void)arg;
	if (p != SRCU_TORTURE_POINT_FORK_CHILD || getpid() == parent_pid)
		return;
	if (write(phantom_out, &c, 1) != 1 || read(phantom_in, &c, 1) != 1)
		_exit(93);
}

/*
 * Bug caught: the fork child's handler copied the forking thread's counts
 * from the slot page while it was still shared with the parent, which had
 * opened a section by then (here: the child's handler is held back until
 * it has).  The child then held a phantom section: srcu_read_lock_held()
 * true, srcu_shared_detach() -EBUSY, a false "fork() inside a read-side
 * critical section" warning, and once it read, every process's grace
 * periods waited for it until it exited.
 */
static void test_fork_phantom_section(void)
{
	int fd = new_memfd(), c2p[2], p2c[2], status;
	struct srcu_struct *sp = shared_create(fd, 8, "phantom");
	int idx = srcu_read_lock(sp);   /* the forking thread's slot is mapped */
	struct sync_arg gp = { 0 };
	long long t0;
	pthread_t t;
	pid_t pid;
	char c;

	srcu_read_unlock(sp, idx);
	REQUIRE(pipe(c2p) == 0 && pipe(p2c) == 0);
	phantom_out = c2p[1];
	phantom_in = p2c[0];
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {   /* its handler ran after the parent's lock below */
		int fails = 0, i2;

		stop_point = -1;
		fails += srcu_read_lock_held(sp);           /* the phantom */
		i2 = srcu_read_lock(sp);                    /* its own slot */
		srcu_read_unlock(sp, i2);
		REQUIRE(write(c2p[1], "R", 1) == 1);
		REQUIRE(read(p2c[0], &c, 1) == 1);          /* the parent's GP is done */
		fails += 2 * (srcu_shared_detach(sp) != 0); /* -EBUSY forever */
		_exit(fails);
	}
	REQUIRE(read(c2p[0], &c, 1) == 1 && c == 'F');  /* its handler waits */
	idx = srcu_read_lock(sp);                       /* the parent reads on */
	REQUIRE(write(p2c[1], "g", 1) == 1);            /* now its handler runs */
	REQUIRE(read(c2p[0], &c, 1) == 1 && c == 'R');  /* the child has read */
	srcu_read_unlock(sp, idx);
	t0 = now_ns();
	gp.sp = sp;
	t = spawn(sync_thread, &gp);
	/* A phantom holds it until the child exits: 10 s is the bound on a
	 * GP that waits for nothing (it takes milliseconds). */
	while (!flag_get(&gp.done) && now_ns() - t0 < 10000000000LL)
		sleep_ms(1);
	CHECK(flag_get(&gp.done));
	printf("  GP with the fork child alive: %.2f ms\n", (double)(now_ns() - t0) / 1e6);
	REQUIRE(write(p2c[1], "x", 1) == 1);
	join(t);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);   /* 1: phantom held; 2: detach refused */
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
	close(c2p[0]);
	close(c2p[1]);
	close(p2c[0]);
	close(p2c[1]);
}

/* ---- bug 11: SIGKILL inside claim_free() and claim_dead() ---- */

static void read_then_reserve(struct srcu_struct *sp)
{
	int idx = srcu_read_lock(sp);   /* claims a slot (not stopped: skip 1) */

	srcu_read_unlock(sp, idx);
	(void)srcu_shared_reserve(sp, 2);   /* the second claim: stopped inside */
}

/*
 * Bug caught: a process killed inside claim_free(), after it took a
 * free slot and before it raised slots_high past it: the slot was hidden
 * from recovery (every walk stops at slots_high) and leaked until another
 * claim raised slots_high, and then its dead owner was reported a second
 * time.
 */
static void test_kill_in_claim_free(void)
{
	int fd = new_memfd(), slot, idx;
	struct srcu_struct *sp = shared_create(fd, 4, "claim-free");
	pid_t victim;

	idx = srcu_read_lock(sp);   /* our home slot 0, mapped */
	srcu_read_unlock(sp, idx);
	victim = fork_stopped(SRCU_TORTURE_POINT_CLAIM_FREE, 1, read_then_reserve, sp, &slot);
	CHECK_EQ(slot, 2);          /* its second slot, past its first */
	kill_reap(victim);
	CHECK_EQ(recover_reports(sp, victim), 1);
	CHECK_EQ(foreign_slots(sp), 0);   /* both of its slots recovered */
	/* Claims that raise slots_high past the slot it died in. */
	CHECK_EQ(srcu_shared_reserve(sp, 4), 0);
	CHECK_EQ(recover_reports(sp, victim), 0);   /* reported once, not twice */
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

static void read_once(struct srcu_struct *sp)
{
	int idx = srcu_read_lock(sp);

	srcu_read_unlock(sp, idx);
}

/*
 * Bug caught: a process killed inside claim_dead(), after it marked a
 * dead process's idle slot as being claimed and before it named itself
 * the owner: the marker was nobody's, so no recovery and no claim ever
 * took the slot again (a slot lost for the file's lifetime; with every
 * slot lost, no process could read).
 */
static void test_kill_in_claim_dead(void)
{
	int fd = new_memfd(), slot, idx, status, reports;
	struct srcu_struct *sp = shared_create(fd, 2, "claim-dead");
	pid_t exited, victim;

	idx = srcu_read_lock(sp);   /* our home slot 0 */
	srcu_read_unlock(sp, idx);
	fflush(NULL);
	exited = fork();            /* slot 1: a process that exits attached */
	REQUIRE(exited >= 0);
	if (exited == 0) {
		read_once(sp);
		_exit(0);
	}
	REQUIRE(waitpid(exited, &status, 0) == exited);
	victim = fork_stopped(SRCU_TORTURE_POINT_CLAIM_DEAD, 0, read_once, sp, &slot);
	CHECK_EQ(slot, 1);          /* no slot free: it takes the exited one's */
	kill_reap(victim);
	reports = recover_reports(sp, victim);
	CHECK_EQ(reports, 1);       /* the slot it died claiming, once */
	CHECK_EQ(foreign_slots(sp), 0);
	CHECK_EQ(recover_reports(sp, victim), 0);
	/* And the slot serves again: a process can read. */
	fflush(NULL);
	exited = fork();
	REQUIRE(exited >= 0);
	if (exited == 0) {
		read_once(sp);
		_exit(srcu_shared_detach(sp) == 0 ? 0 : 1);
	}
	REQUIRE(waitpid(exited, &status, 0) == exited);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
}

/* ---- own identity: read as the other processes read it ---- */

/* What qemu-user does: it answers "/proc/self/stat" and "/proc/<own
 * pid>/stat" itself, with a start time of its own (a fork child gets its
 * parent's), and leaves every other path to the kernel.  Set in a child
 * only. */
static int fake_own_stat;
/* Make this process's own stat read name another pid, as a /proc of
 * another pid namespace would. */
static int fake_own_pid;

static void at_proc_stat(enum srcu__torture_point p, void *arg)
{
	struct srcu__torture_stat *st = arg;
	char own[32];

	if (p != SRCU_TORTURE_POINT_PROC_STAT)
		return;
	snprintf(own, sizeof(own), "/proc/%d/stat", (int)getpid());
	if (fake_own_stat && (!strcmp(st->path, "/proc/self/stat") || !strcmp(st->path, own)))
		st->start += 1000;   /* 10 s off at 100 ticks a second */
	if (fake_own_pid && !strncmp(st->path, "/proc/self/", 11))
		st->pid += 1;
}

struct held_section {
	struct srcu_struct *sp;
	int out, in;
};

/* A section held open until the parent says: 'L' when inside. */
static void *hold_section(void *arg)
{
	struct held_section *h = arg;
	int idx = srcu_read_lock(h->sp);   /* this process's identity is read here */
	char c = 'L';

	REQUIRE(write(h->out, &c, 1) == 1);
	REQUIRE(read(h->in, &c, 1) == 1);
	srcu_read_unlock(h->sp, idx);
	return NULL;
}

/*
 * Bug caught: a process named itself by a start time read from a file
 * other processes do not read about it (/proc/self/stat, which qemu-user
 * fakes; or the calling thread's own task entry, whose start time is the
 * thread's), so another process's recovery found the live owner's start
 * time "changed", took it for dead and ended its open section.  Here a
 * fork child holds a section, its identity read (fake) with the emulator's
 * answers in place, (thread) in a thread started 50 ms after the process;
 * the parent's recovery must report nothing.
 */
static void test_own_identity(int fake, int thread)
{
	int fd = new_memfd(), c2p[2], p2c[2], status, idx;
	struct srcu_struct *sp = shared_create(fd, 4, "identity");
	pid_t pid;
	char c;

	idx = srcu_read_lock(sp);   /* our home slot */
	srcu_read_unlock(sp, idx);
	REQUIRE(pipe(c2p) == 0 && pipe(p2c) == 0);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct held_section h = { sp, c2p[1], p2c[0] };

		close(c2p[0]);
		close(p2c[1]);
		fake_own_stat = fake;
		if (thread) {
			sleep_ms(50);   /* the thread's start time: 5 ticks later */
			join(spawn(hold_section, &h));
		} else {
			hold_section(&h);
		}
		_exit(srcu_shared_detach(sp) == 0 ? 0 : 1);
	}
	close(c2p[1]);   /* a child that dies early: read() says so */
	close(p2c[0]);
	REQUIRE(read(c2p[0], &c, 1) == 1 && c == 'L');   /* inside */
	CHECK_EQ(recover_reports(sp, pid), 0);           /* alive: nothing ended */
	REQUIRE(write(p2c[1], "x", 1) == 1);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(fd);
	close(c2p[0]);
	close(p2c[1]);
}

/*
 * Bug caught: an identity read from a stat file that names another pid
 * (a /proc of another pid namespace) was used anyway.  Such an identity
 * is refused at attach, -EACCES, rather than risked.
 */
static void test_own_identity_refused(void)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();   /* a child reads its identity anew */
	REQUIRE(pid >= 0);
	if (pid == 0) {
		struct srcu_struct *sp = NULL;
		int fd = new_memfd();

		fake_own_pid = 1;
		_exit(init_srcu_struct_shared(fd, 4, "refused", &sp) == -EACCES && !sp ? 0 : 1);
	}
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- two creators, one file ---- */

/* Bug caught: two init_srcu_struct_shared() on one file both returning 0.
 * The first checked for the magic, then formatted; the second, between
 * the two, formatted and attached and could enter a section, which the
 * first's format then zeroed (a grace period that ends early).  Here the
 * first creator is held inside its window while the second tries. */
static void test_two_creators(bool reopen)
{
	int fd = new_memfd(), c2p[2], p2c[2], status, err, fd2;
	char path[64];
	struct srcu_struct *sp = NULL;
	pid_t pid;
	char c;

	REQUIRE(pipe(c2p) == 0 && pipe(p2c) == 0);
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		hook_out = c2p[1];
		hook_in = p2c[0];
		stop_point = SRCU_TORTURE_POINT_CREATE_CLAIMED;
		stop_skip = 0;
		err = init_srcu_struct_shared(fd, 4, "first", &sp);
		_exit(err ? 100 + (-err % 100) : 0);
	}
	REQUIRE(read(c2p[0], &c, 1) == 1);   /* the first is inside its window */
	/* The second creator through the same open file (an inherited
	 * memfd), or through one of its own (another open() of it: as a
	 * process in another pid namespace would, whose mark the first
	 * could not judge). */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	fd2 = reopen ? open(path, O_RDWR) : fd;
	REQUIRE(fd2 >= 0);
	err = init_srcu_struct_shared(fd2, 4, "second", &sp);
	if (reopen)
		close(fd2);
	if (err == 0)
		fprintf(stderr, "two_creators: the second creator formatted a file that the "
			"first was creating\n");
	CHECK_EQ(err, -EEXIST);
	REQUIRE(write(p2c[1], "g", 1) == 1);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	if (err == 0)
		(void)srcu_shared_detach(sp);
	sp = NULL;
	REQUIRE(srcu_shared_attach(fd, &sp) == 0);   /* the first's domain */
	CHECK(strcmp((const char *)sp->srcu__name_buf, "first") == 0);
	CHECK_EQ(srcu_shared_detach(sp), 0);
	close(c2p[0]); close(c2p[1]); close(p2c[0]); close(p2c[1]);
	close(fd);
}

int main(void)
{
	watchdog(60);
	parent_pid = getpid();
	srcu__torture_point = at_point;
	test_kill_in_claim_free();
	test_kill_in_claim_dead();
	test_two_creators(false);
	test_two_creators(true);
	srcu__torture_point = at_fork_child;
	test_fork_phantom_section();
	srcu__torture_point = at_proc_stat;
	test_own_identity(1, 0);
	test_own_identity(0, 1);
	test_own_identity_refused();
	return check_report("test_shared_domain_hooks");
}
