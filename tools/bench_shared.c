/*
 * bench_shared.c: figure 11 of srcu-bench, a process-shared domain
 * (doc/shared.md) against a private domain and a PTHREAD_PROCESS_SHARED
 * rwlock, the lock such programs use today, with two processes: this one
 * and a fork() child.  The rows alternate (private, shared, rwlock,
 * private, ...) so that a noisy stretch of the machine lands on all three.
 *
 *  (11a) The read pair (lock + unlock around an empty section), ns, with
 *        both processes reading at once for the round's time, each
 *        timing its own pairs; a round's figure is the two processes'
 *        mean.  Private: each process on its own private domain (the
 *        child's is its copy of ours).  Shared: both on one domain in a
 *        memfd (the child inherits the attachment).  rwlock: both on one
 *        lock in a MAP_SHARED mapping (rdlock + unlock).  The private and
 *        the shared rows run one copy of the loop, the domain's pointer
 *        in a register: the shared domain's ratio is its own, not a
 *        difference between two compilations.
 *  (11b) The grace period, us, while the other side reads empty sections
 *        back to back: synchronize_srcu() on the shared domain with the
 *        child reading (the global membarrier interrupts its CPU);
 *        synchronize_srcu() on a private domain with a reader thread of
 *        this process (the private membarrier, what a single-process
 *        program pays); wrlock + unlock of the rwlock with the child
 *        taking read locks.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
#include "bench_callgrind.h"
#include "bench_shared.h"
#include "bench_results.h"
#include "clock.h"
#include "srcu.h"

#define ROUNDS_MAX 5
#define SLOTS      8       /* 2 in use: our main thread's and the child's */
#define CHUNK      4096    /* pairs between two looks at the clock */
#define WARM       100000  /* pairs before a window: slot mapping, page faults */
#define GP_MAX     2000    /* grace periods a round samples at most */

#define compiler_barrier() __asm__ __volatile__("" ::: "memory")

enum row { PRIV, SHARED, RWLOCK };
const char *const shared_row_name[SHARED_NROWS] = {
	"libsrcu-private", "libsrcu-shared", "rwlock-pshared",
};

DEFINE_STATIC_SRCU(private_domain);
static struct srcu_struct *shared_domain;

/* What the two processes share: a MAP_SHARED anonymous mapping made
 * before the forks, at the same address in both. */
struct ctl {
	pthread_rwlock_t rwlock;    /* PTHREAD_PROCESS_SHARED */
	int ready;                  /* the other side has warmed up */
	int go;                     /* (11a) start_ns and end_ns are set */
	int stop;                   /* (11b) the other side stops reading */
	int64_t start_ns, end_ns;      /* (11a) the window: CLOCK_MONOTONIC is one
				     * clock for every process */
	double child_ns;            /* (11a) the child's ns per pair */
	double child_on_cpu;        /* (11a) and the share of its window it ran */
};
static struct ctl *ctl;

static int get(int *w) { return __atomic_load_n(w, __ATOMIC_ACQUIRE); }
static void put(int *w, int v) { __atomic_store_n(w, v, __ATOMIC_RELEASE); }

/* A wait lasts the other side's warm-up, a few milliseconds: sleep
 * through it rather than spin, so that on 2 CPUs the waiter never takes
 * the CPU that the other side needs to get ready. */
static void wait_for(int *w)
{
	while (!get(w))
		usleep(50);
}

/* ---- the read loops ---- */

/* One loop for both domains, never inlined into a caller (see above). */
static __attribute__((noinline)) void srcu_pairs(struct srcu_struct *sp, long n)
{
	for (long i = 0; i < n; i++) {
		int idx = srcu_read_lock(sp);
		compiler_barrier();
		srcu_read_unlock(sp, idx);
	}
}

static __attribute__((noinline)) void rwlock_pairs(pthread_rwlock_t *l, long n)
{
	for (long i = 0; i < n; i++) {
		pthread_rwlock_rdlock(l);
		compiler_barrier();
		pthread_rwlock_unlock(l);
	}
}

static void pairs(enum row r, long n)
{
	if (r == RWLOCK)
		rwlock_pairs(&ctl->rwlock, n);
	else
		srcu_pairs(r == SHARED ? shared_domain : &private_domain, n);
}

/* ---- the second process ---- */

/* The fork child's end.  A child that read the shared domain gives back
 * the slot its reader took, which would otherwise stay with a dead
 * owner: a thread's first section takes only free slots, and a few
 * rounds would use them all up. */
static __attribute__((noreturn)) void child_exit(enum row r)
{
	int err = r == SHARED ? srcu_shared_detach(shared_domain) : 0;

	if (err)
		fprintf(stderr, "srcu-bench: figure 11's child: srcu_shared_detach: %s\n",
			strerror(-err));
	_exit(err ? 3 : 0);
}

static pid_t fork_child(void (*fn)(enum row), enum row r)
{
	pid_t pid;

	fflush(NULL);   /* the child must not print our buffered lines again */
	pid = fork();
	if (pid < 0) {
		perror("srcu-bench: figure 11: fork");
		exit(1);
	}
	if (pid == 0) {
		fn(r);
		child_exit(r);
	}
	return pid;
}

/* 0 if the child exited cleanly; says what happened otherwise. */
static int reap(pid_t pid)
{
	int st = 0;

	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		char why[96];

		printf("(11) the second process failed (status %#x): figure 11 stops here\n", st);
		snprintf(why, sizeof(why), "the second process failed (status %#x)", st);
		figure_failed(11, why);
		return -1;
	}
	return 0;
}

/* ---- (11a) the read pair ---- */

static int64_t cpu_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Read from start_ns (spinning until then) to end_ns; ns per pair, and
 * in *on_cpu the share of the window this thread ran: below 1 when
 * another program took its CPU, and then the two processes did not
 * read at once all along. */
static double read_window(enum row r, double *on_cpu)
{
	int64_t start = ctl->start_ns, end = ctl->end_ns, t0, t, c0, n = 0;

	while ((t0 = clock_now_ns()) < start)
		;
	c0 = cpu_now_ns();
	do {
		pairs(r, CHUNK);
		n += CHUNK;
	} while ((t = clock_now_ns()) < end);
	*on_cpu = (double)(cpu_now_ns() - c0) / (double)(t - t0);
	return (double)(t - t0) / (double)n;
}

static void window_child(enum row r)
{
	pairs(r, WARM);
	put(&ctl->ready, 1);
	wait_for(&ctl->go);
	ctl->child_ns = read_window(r, &ctl->child_on_cpu);
}

/* Both processes' mean ns per pair over a window of secs, < 0 on error;
 * in *on_cpu the smaller of their shares of the window on a CPU. */
static double read_round(enum row r, double secs, double *on_cpu)
{
	double mine, mine_on_cpu;
	pid_t pid;

	put(&ctl->ready, 0);
	put(&ctl->go, 0);
	pid = fork_child(window_child, r);
	pairs(r, WARM);
	wait_for(&ctl->ready);
	/* 2 ms ahead: the child, which looks at go every 50 us, is
	 * spinning on the clock by then. */
	ctl->start_ns = clock_now_ns() + 2000000;
	ctl->end_ns = ctl->start_ns + (int64_t)(secs * 1e9);
	put(&ctl->go, 1);
	mine = read_window(r, &mine_on_cpu);
	if (reap(pid))
		return -1;
	*on_cpu = mine_on_cpu < ctl->child_on_cpu ? mine_on_cpu : ctl->child_on_cpu;
	return (mine + ctl->child_ns) / 2;
}

/* ---- (11b) the grace period ---- */

static void busy_reader(enum row r)
{
	pairs(r, WARM);   /* its first section has taken its slot */
	put(&ctl->ready, 1);
	while (!get(&ctl->stop))
		pairs(r, 64);
}

static void *reader_thread(void *arg)
{
	(void)arg;
	busy_reader(PRIV);
	return NULL;
}

static void grace_period(enum row r)
{
	if (r == RWLOCK) {   /* a writer's turn is the rwlock's grace period */
		pthread_rwlock_wrlock(&ctl->rwlock);
		pthread_rwlock_unlock(&ctl->rwlock);
	} else {
		synchronize_srcu(r == SHARED ? shared_domain : &private_domain);
	}
}

/* p50 and p99 (us) of the grace periods run within budget seconds (20
 * at least, GP_MAX at most) while the other side reads; -1 on error. */
static int gp_round(enum row r, double budget, double *p50, double *p99)
{
	static double v[GP_MAX];
	pthread_t t;
	pid_t pid = 0;
	double start;
	int k;

	put(&ctl->ready, 0);
	put(&ctl->stop, 0);
	if (r == PRIV)
		pthread_create(&t, NULL, reader_thread, NULL);
	else
		pid = fork_child(busy_reader, r);
	wait_for(&ctl->ready);
	start = clock_now_s();
	for (k = 0; k < GP_MAX && (k < 20 || clock_now_s() - start < budget); k++) {
		int64_t t0 = clock_now_ns();

		grace_period(r);
		v[k] = (double)(clock_now_ns() - t0) / 1e3;
	}
	put(&ctl->stop, 1);
	if (r == PRIV)
		pthread_join(t, NULL);
	else if (reap(pid))
		return -1;
	qsort(v, (size_t)k, sizeof(v[0]), cmp_double);
	*p50 = v[k / 2];
	*p99 = v[(int)(0.99 * (k - 1) + 0.5)];
	return 0;
}

/* ---- the figure ---- */

/* A value in a cell of the table: two decimals for small ones. */
static void cell(double med, double lo, double hi)
{
	char s[64];

	if (hi < 10)
		snprintf(s, sizeof(s), "%.2f [%.2f-%.2f]", med, lo, hi);
	else if (hi < 1000)
		snprintf(s, sizeof(s), "%.1f [%.1f-%.1f]", med, lo, hi);
	else
		snprintf(s, sizeof(s), "%.0f [%.0f-%.0f]", med, lo, hi);
	printf(" %24s", s);
}

/* Sort each row's rounds, print median [min-max] per row and the
 * shared / private ratio of the medians, and record them (metric, with
 * its _min and _max: error bars). */
static void print_row(const char *label, const char *const metric[3], const char *unit,
		      double v[SHARED_NROWS][ROUNDS_MAX], int rounds)
{
	double med[SHARED_NROWS];

	printf("%-38s", label);
	for (int r = 0; r < SHARED_NROWS; r++) {
		qsort(v[r], (size_t)rounds, sizeof(double), cmp_double);
		med[r] = v[r][rounds / 2];
		cell(med[r], v[r][0], v[r][rounds - 1]);
		record("shared", shared_row_name[r], metric[0], med[r], unit);
		record("shared", shared_row_name[r], metric[1], v[r][0], unit);
		record("shared", shared_row_name[r], metric[2], v[r][rounds - 1], unit);
	}
	printf("  %5.2fx\n", med[SHARED] / med[PRIV]);
}
#define METRIC(m) (const char *const[3]){ m, m "_min", m "_max" }

/* The shared mapping and the rwlock in it. */
static int setup_ctl(void)
{
	pthread_rwlockattr_t a;

	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED) {
		printf("(11) skipped: mmap: %s\n", strerror(errno));
		figure_skipped(11);
		return -1;
	}
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
	pthread_rwlock_init(&ctl->rwlock, &a);
	pthread_rwlockattr_destroy(&a);
	return 0;
}

static void teardown_ctl(void)
{
	pthread_rwlock_destroy(&ctl->rwlock);
	munmap(ctl, sizeof(*ctl));
}

/* The shared domain, in a memfd: 0, or the negative errno. */
static int setup_shared(void)
{
	int fd = memfd_create("srcu-bench", MFD_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = init_srcu_struct_shared(fd, SLOTS, "srcu-bench", &shared_domain);
	close(fd);   /* the attachment keeps a descriptor of its own */
	return err;
}

/* The same for figure 11's rows (its own read loops). */
static void measure_shared_instructions(const char *self_path)
{
	char name[64];

	if (!callgrind_usable())
		return;
	for (int r = 0; r < SHARED_NROWS; r++) {
		double ir;

		snprintf(name, sizeof(name), "fig11:%s", shared_row_name[r]);
		ir = callgrind_per_pair(name, self_path);
		if (ir > 0)
			record("shared", shared_row_name[r], "instr_per_pair", ir, "instructions");
	}
}

void figure_shared(const struct bench_run *run)
{
	int rounds = run->quick ? 3 : ROUNDS_MAX;
	double secs = run->quick ? 0.1 : 0.3, budget = run->quick ? 0.1 : 0.2;
	double rd[SHARED_NROWS][ROUNDS_MAX], p50[SHARED_NROWS][ROUNDS_MAX];
	double p99[SHARED_NROWS][ROUNDS_MAX], ratio[ROUNDS_MAX];
	double instr, on_cpu, worst = 1;
	int err, off = 0;

	if (run->callgrind)   /* first: the table prints instructions per pair */
		measure_shared_instructions(run->self_path);
	printf("\n(11) a process-shared domain (memfd, %d slots) against a private domain and a "
	       "PTHREAD_PROCESS_SHARED rwlock, 2 processes: median of %d interleaved rounds "
	       "[min-max], shared / private\n", SLOTS, rounds);
	if (setup_ctl())
		return;
	if ((err = setup_shared()) != 0) {
		printf("(11) skipped: no shared domain here: %s\n", strerror(-err));
		figure_skipped(11);
		teardown_ctl();
		return;
	}
	for (int i = 0; i < rounds; i++) {
		for (int r = 0; r < SHARED_NROWS; r++) {
			if ((rd[r][i] = read_round((enum row)r, secs, &on_cpu)) < 0)
				goto out;
			if (on_cpu < 0.9) {   /* another program ran */
				off++;
				worst = on_cpu < worst ? on_cpu : worst;
			}
		}
		for (int r = 0; r < SHARED_NROWS; r++)
			if (gp_round((enum row)r, budget, &p50[r][i], &p99[r][i]))
				goto out;
		ratio[i] = rd[SHARED][i] / rd[PRIV][i];
	}
	printf("%-38s", "");
	for (int r = 0; r < SHARED_NROWS; r++)
		printf(" %24s", shared_row_name[r]);
	printf("\n");
	print_row("(11a) read pair, ns, both reading", METRIC("read_pair_ns"), "ns", rd, rounds);
	if (lookup("shared", shared_row_name[PRIV], "instr_per_pair") > 0) {
		printf("%-38s", "(11a) instructions a pair (callgrind)");
		for (int r = 0; r < SHARED_NROWS; r++) {
			instr = lookup("shared", shared_row_name[r], "instr_per_pair");
			if (instr > 0)
				printf(" %24.1f", instr);
			else
				printf(" %24s", "-");
		}
		printf("\n");
	}
	print_row("(11b) GP p50, us, the other reading", METRIC("gp_p50_us"), "us", p50, rounds);
	print_row("(11b) GP p99, us, the same", METRIC("gp_p99_us"), "us", p99, rounds);
	printf("      (11b): private = synchronize_srcu() with a reader thread of this process;"
	       " shared = with the child reading;\n      rwlock = wrlock + unlock with the child"
	       " taking read locks\n");
	qsort(ratio, (size_t)rounds, sizeof(double), cmp_double);
	printf("(11a) shared / private read pair, round by round: %.2fx [%.2f-%.2f]; "
	       "the goal (<= 1.5x) is %s\n", ratio[rounds / 2], ratio[0], ratio[rounds - 1],
	       ratio[rounds / 2] <= 1.5 ? "met" : "not met");
	if (off)
		printf("note: in %d of %d read windows a process ran for less than 90%% of it "
		       "(%.0f%% at worst): another program had its CPU, and those windows "
		       "count its time too\n", off, rounds * SHARED_NROWS, 100 * worst);
	record("shared", shared_row_name[SHARED], "read_pair_vs_private", ratio[rounds / 2], "x");
	record("shared", shared_row_name[SHARED], "read_pair_vs_private_min", ratio[0], "x");
	record("shared", shared_row_name[SHARED], "read_pair_vs_private_max", ratio[rounds - 1], "x");
out:
	if ((err = srcu_shared_detach(shared_domain)) != 0) {
		char why[96];

		printf("(11) srcu_shared_detach: %s\n", strerror(-err));
		snprintf(why, sizeof(why), "srcu_shared_detach: %s", strerror(-err));
		figure_failed(11, why);
	}
	teardown_ctl();
}

/* ---- for callgrind ---- */

static enum row instr_row;

int shared_instr_prepare(const char *row)
{
	int r, err;

	for (r = 0; r < SHARED_NROWS && strcmp(row, shared_row_name[r]); r++)
		;
	if (r == SHARED_NROWS)
		return -EINVAL;
	if (r == RWLOCK && setup_ctl())
		return -ENOMEM;
	if (r == SHARED && (err = setup_shared()) != 0)
		return err;
	instr_row = (enum row)r;
	pairs(instr_row, 1000);
	return 0;
}

void shared_instr_reads(long n)
{
	pairs(instr_row, n);
}
