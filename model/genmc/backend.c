/*
 * model/genmc/backend.c: src/backend.c for the model checker, the one
 * file of src/ that the verification build replaces.  backend.c is the
 * engine's platform: the backend's choice, membarrier(2), futexes and
 * the clock.  Here:
 *
 *   - the backend is fixed by the scenario's build (VERIFY_MEMBARRIER:
 *     membarrier, else fences), as SRCU_BACKEND would fix it;
 *   - membarrier() is a full fence that lands in every other reader
 *     thread at a point of the checker's choosing (the IPI model below);
 *   - a futex wait returns at once if the word differs from the value
 *     it was given, else blocks until the word moves (a spin on the word,
 *     which GenMC turns into an await and, with --check-liveness,
 *     reports when it can never end); a wake-up does nothing more (the
 *     waiter sees the store), so who wakes whom is not checked here but
 *     in model/wake.pml (Spin);
 *   - the clock is logical: each read a millisecond later than this
 *     thread's last, so that bounded spins end after one look.
 *
 * The IPI model.  The kernel's membarrier(PRIVATE_EXPEDITED): a full
 * fence in the caller, then an IPI to every CPU running a thread of the
 * process, whose handler executes a full fence, then the caller waits for
 * every handler and executes a full fence.  A thread not running has
 * passed through the scheduler, a full fence, since its last access and
 * passes through another before its next.  Here every reader thread of a
 * scenario is "online" from its start to its end (verify_thread_start(),
 * verify_thread_end()), and offers a landing point at each of the read
 * side's membarrier-paired barriers (B, C and W in <srcu/read.h>, through
 * srcu__read_barrier()), at its start and at its end: the IPI lands at the
 * first point the thread reaches after it reads the request, and the
 * caller waits for it there.  GenMC explores every interleaving, so every
 * point can be the one.  The landing fence is seq-cst, as the handler's
 * smp_mb().  Why this is no stronger than the kernel's guarantee:
 * doc/verification.md, "membarrier".
 *
 * SPDX-License-Identifier: MIT
 */

#ifdef VERIFY_MEMBARRIER
int srcu__backend_fence_mode = 0;
#else
int srcu__backend_fence_mode = 1;
#endif
unsigned int *srcu__backend_with_handlers;   /* none: no fork here */

/* ---- the IPI model ---- */

static atomic_uint verify_mb_requests;
static atomic_uint verify_mb_acked[VERIFY_THREADS];
static atomic_int verify_online[VERIFY_THREADS];

/* Where an IPI may land in this thread: the handler's fence, once per
 * request seen. */
void verify_ipi_point(void)
{
	unsigned int r = atomic_load_explicit(&verify_mb_requests, memory_order_relaxed);

	if (r != atomic_load_explicit(&verify_mb_acked[verify_tid], memory_order_relaxed)) {
		atomic_thread_fence(memory_order_seq_cst);   /* the handler's smp_mb() */
		atomic_store_explicit(&verify_mb_acked[verify_tid], r, memory_order_release);
	}
}

static void membarrier_model(void)
{
	unsigned int r;

#ifdef VERIFY_NO_IPI
	/* A broken membarrier for the checker's own check: a fence in the
	 * caller only, which the readers' compiler barriers do not pair
	 * with (make verify must catch it). */
	atomic_thread_fence(memory_order_seq_cst);
	return;
#endif
	atomic_thread_fence(memory_order_seq_cst);   /* the caller's, before */
	r = atomic_fetch_add_explicit(&verify_mb_requests, 1, memory_order_relaxed) + 1;
	for (int t = 0; t < VERIFY_THREADS; t++) {
		if (t == verify_tid)
			continue;
		/* Until t has taken the IPI, or is not running (not started,
		 * or ended: the scheduler's fence stands in for the IPI's). */
		while (atomic_load_explicit(&verify_online[t], memory_order_acquire) &&
		       atomic_load_explicit(&verify_mb_acked[t], memory_order_acquire) < r)
			;
	}
	atomic_thread_fence(memory_order_seq_cst);   /* the caller's, after */
}

/* The harness's threads: numbered 1..VERIFY_THREADS-1 (main is 0), and
 * online while they run. */
static void verify_thread_start(int tid)
{
	verify_tid = tid;
	atomic_thread_fence(memory_order_seq_cst);   /* the scheduler's */
	atomic_store_explicit(&verify_mb_acked[tid],
			      atomic_load_explicit(&verify_mb_requests, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&verify_online[tid], 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
}

/* exit_hooks: run pthread's destructors (reader.c's thread exit) as the
 * thread ends; a scenario that does not check the exit path leaves them
 * out (its record stays owned, as a live thread's). */
static void verify_thread_end(bool exit_hooks)
{
	if (exit_hooks)
		verify_thread_exit();
	verify_ipi_point();
	atomic_thread_fence(memory_order_seq_cst);   /* the scheduler's */
	atomic_store_explicit(&verify_online[verify_tid], 0, memory_order_release);
}

/* Bind a static domain (DEFINE_SRCU) before the threads start: its
 * first user would, under the registry lock, in every interleaving. */
static void verify_bind(struct srcu_struct *sp)
{
	(void)srcu__domain_id(sp, "verify_bind");
}

/* ---- src/backend.c's interface ---- */

void srcu__backend_fork_prepare(void)
{
}

/* The backend is fixed by the build (above); the scenario calls
 * srcu__process_startup() itself. */
void srcu__backend_init(void)
{
}

/* VERIFY_SWITCH: the backend starts as fences and a scenario's thread
 * makes the constructor's switch to membarrier (src/backend.c's
 * srcu__backend_init() after registering) while a reader and a grace
 * period run: sections that ran before the constructor (doc/design.md,
 * "Start-up"). */
static void verify_backend_switch(void)
{
	/* Release: pairs with the acquire loads of the backend (reader.c's
	 * fast_path_on(), fence.c), as in src/backend.c. */
	store_release(&srcu__backend_fence_mode, 0);
}

void srcu__backend_fork_child(void)
{
}

void srcu__backend_membarrier(void)
{
	membarrier_model();
}

int srcu__backend_register_global(void)
{
	return 0;
}

void srcu__backend_membarrier_global(void)
{
	membarrier_model();   /* one process: the same threads */
}

const char *srcu_version(void)
{
	return SRCU_VERSION_STRING;
}

const char *srcu_backend(void)
{
	return srcu__backend_fence_mode ? "fence" : "membarrier";
}

int srcu__backend_futex_wait(unsigned int *addr, unsigned int val, int64_t deadline_ns,
			     bool pshared)
{
	(void)deadline_ns;
	(void)pshared;
	/* Relaxed, as the kernel's read of the word; the callers' own
	 * accesses order the rest.  The spin compares the value read here,
	 * not val: GenMC 0.11's spin-assume pass crashes (LLVM's
	 * DominatorTree) on a spin against a value its caller computed, as
	 * combine.c's marked event (ev | SRCU__EVENT_SLEEPERS). */
	unsigned int now = __atomic_load_n(addr, __ATOMIC_RELAXED);

	if (now != val)
		return 0;   /* EAGAIN */
	while (__atomic_load_n(addr, __ATOMIC_RELAXED) == now)
		;
	return 0;
}

static __thread int64_t verify_clock_ms;

int64_t srcu__backend_now_ns(void)
{
	return ++verify_clock_ms * 1000000;
}

static inline int verify_clock_gettime(struct timespec *ts)
{
	int64_t ns = srcu__backend_now_ns();

	ts->tv_sec = ns / 1000000000;
	ts->tv_nsec = ns % 1000000000;
	return 0;
}

void srcu__backend_futex_wake(unsigned int *addr, int n, bool pshared)
{
	(void)addr;
	(void)n;
	(void)pshared;
}

/* The race detectors' happens-before calls (src/internal.h, weak): GenMC
 * sees the memory model itself, so they do nothing here. */
void __tsan_acquire(void *addr)
{
	(void)addr;
}

void __tsan_release(void *addr)
{
	(void)addr;
}
