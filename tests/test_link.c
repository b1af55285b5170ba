/*
 * test_link: libsrcu behaves the same however a program links it.  Built
 * three times (tests/CMakeLists.txt): against libsrcu.so, against
 * libsrcu.a the plain way (`cc prog.c libsrcu.a -lpthread`, no
 * pkg-config, no extra flag), and fully -static.
 *
 * Bugs caught (each seen with the static archive of separate members,
 * which left out the start-up constructor of a program that called
 * nothing in its object):
 *  - the fence backend where the kernel offers membarrier;
 *  - no thread-exit key: a thread's first section set key 0, another
 *    library's (here the program's own), to libsrcu's record;
 *  - no thread-exit hook: a thread that exits inside a section blocks
 *    every later grace period (the watchdog fails the test), and records
 *    are never released (address space grows by 512 KiB per thread);
 *  - no fork handlers: a child's srcu_barrier() or synchronize_srcu()
 *    hangs on state the parent's other threads held at the fork.
 */
#include "check.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>

static DEFINE_SRCU(dom);
static pthread_key_t program_key;
static int stop;

/* The backend a correct start-up picks on this machine. */
static const char *expected_backend(void)
{
	const char *b = getenv("SRCU_BACKEND");
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	if (b && strcmp(b, "fence") == 0)
		return "fence";
	return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) ? "membarrier" : "fence";
}

static void *key_user(void *arg)
{
	static int marker;
	int idx;

	(void)arg;
	REQUIRE(pthread_setspecific(program_key, &marker) == 0);
	idx = srcu_read_lock(&dom);          /* the thread's first section */
	srcu_read_unlock(&dom, idx);
	CHECK(pthread_getspecific(program_key) == &marker);
	return NULL;
}

static void *exit_inside(void *arg)
{
	(void)arg;
	(void)srcu_read_lock(&dom);          /* never unlocked: the hook ends it */
	return NULL;
}

static void *short_reader(void *arg)
{
	(void)arg;
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	return NULL;
}

static long vm_size_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	REQUIRE(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void *updater(void *arg)
{
	(void)arg;
	while (!flag_get(&stop))
		synchronize_srcu(&dom);
	return NULL;
}

static int cb_runs;
static void count_cb(struct srcu_head *h)
{
	(void)h;
	__atomic_fetch_add(&cb_runs, 1, __ATOMIC_SEQ_CST);
}

/* A child forked while another thread runs grace periods and the
 * callback worker lives: its own grace periods and barrier must end. */
static void fork_while_busy(void)
{
	static struct srcu_head heads[20];
	pthread_t u = spawn(updater, NULL);

	for (int i = 0; i < 20; i++) {
		int st;
		pid_t pid;

		call_srcu(&dom, &heads[i], count_cb);
		pid = fork();
		REQUIRE(pid >= 0);
		if (pid == 0) {
			static struct srcu_head h;

			alarm(30);   /* a hang fails the child */
			synchronize_srcu(&dom);
			call_srcu(&dom, &h, count_cb);
			srcu_barrier(&dom);
			_exit(__atomic_load_n(&cb_runs, __ATOMIC_SEQ_CST) > 0 ? 0 : 3);
		}
		REQUIRE(waitpid(pid, &st, 0) == pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	flag_set(&stop);
	join(u);
	srcu_barrier(&dom);
}

int main(void)
{
	long before, after;

	watchdog(100);
	REQUIRE(pthread_key_create(&program_key, NULL) == 0);

	printf("backend: %s (expected %s)\n", srcu_backend(), expected_backend());
	CHECK(strcmp(srcu_backend(), expected_backend()) == 0);

	join(spawn(key_user, NULL));

	join(spawn(exit_inside, NULL));
	synchronize_srcu(&dom);              /* hangs without the exit hook */

	/* Records of exited threads are reused: 300 threads, one at a time,
	 * take about one record's 512 KiB, not 300 of them (150 MiB). */
	join(spawn(short_reader, NULL));
	before = vm_size_kib();
	for (int i = 0; i < 300; i++)
		join(spawn(short_reader, NULL));
	after = vm_size_kib();
	printf("address space after 300 reader threads: +%ld KiB\n", after - before);
	/* qemu-user 7.2 itself keeps ~500 KiB of address space per thread
	 * that ever ran (300 threads of a program without libsrcu: +146 MiB),
	 * which hides the records' reuse. */
	if (!skip_if_emulated("records reused (VmSize)", "qemu-user's own address space "
			      "grows by ~500 KiB per thread created"))
		CHECK_LT(after - before, 32 * 1024);

	/* Its children start libsrcu's worker thread.  Not under ASan: gcc
	 * 12's allocator does not take its locks around fork(), so a child
	 * forked while another thread allocated inherits a lock held for
	 * ever, and its first malloc() (a new thread's, in pthread_getattr_np)
	 * hangs: 2 runs in 8 under load, gdb showing the worker in
	 * SizeClassAllocator64::GetFromAllocator.  glibc's malloc is fork-safe;
	 * the plain and clang suites run the case. */
#ifdef __SANITIZE_ADDRESS__
	(void)fork_while_busy;
	printf("SKIP: fork while busy: AddressSanitizer's allocator is not fork-safe\n");
#else
	if (!skip_if_emulated("fork while busy", "qemu-user 7.2 asserts when the child of a "
			      "multithreaded fork creates a thread (cpu_exec: cpu == current_cpu)"))
		fork_while_busy();
#endif
	printf("%s\n", check_failures ? "FAIL" : "PASS");
	return check_failures ? 1 : 0;
}
