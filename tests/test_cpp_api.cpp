// test_cpp_api: include/srcu.hpp, the C++ API: srcu::domain, read_guard,
// synchronize, retire, and P2545's shape (rcu_domain, rcu_obj_base,
// rcu_retire, rcu_synchronize, rcu_barrier).  Built as C++17
// (test_cpp_api) and as C++20 (test_cpp_api20).  Each check says the bug
// it would catch.
//
// SPDX-License-Identifier: MIT

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

// Raise SIGUSR1 between the steps of rcu_domain::lock() and unlock(),
// while armed (see signal_between_steps()).
static void hook_between_steps();
#define SRCU__HPP_HOOK() hook_between_steps()
#include <srcu.hpp>

static int failures;

#define CHECK(cond) \
	do { if (!(cond)) { std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", \
		__FILE__, __LINE__, #cond); failures++; } } while (0)
#define CHECK_EQ(a, b) \
	do { long long a_ = (long long)(a), b_ = (long long)(b); \
	     if (a_ != b_) { std::fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
		__FILE__, __LINE__, #a, #b, a_, b_); failures++; } } while (0)

static void sleep_ms(long ms)
{
	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

static void wait_for(const std::atomic<bool> &f)
{
	while (!f.load())
		std::this_thread::sleep_for(std::chrono::microseconds(50));
}

static bool held(srcu::domain &d)
{
	return srcu_read_lock_held(d.native());
}

// Allocations by this thread (the global operator new is replaced below).
static thread_local long allocations;

// ---------------------------------------------------------------------------
// Death tests: fn() in a child with stderr captured; true if it aborted
// (std::terminate) saying every string of want.

template <class F>
static bool dies_saying(F fn, std::initializer_list<const char *> want)
{
	int fd[2];
	char out[4096];
	size_t len = 0;
	int status = 0;

	if (pipe(fd) != 0)
		return false;
	std::fflush(nullptr);
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		dup2(fd[1], 2);
		close(fd[0]);
		alarm(20);   // a hang is a failure too
		fn();
		_exit(0);    // survived: not the expected death
	}
	close(fd[1]);
	for (ssize_t n; (n = read(fd[0], out + len, sizeof(out) - 1 - len)) > 0;)
		len += (size_t)n;
	out[len] = 0;
	close(fd[0]);
	waitpid(pid, &status, 0);
	bool ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
	if (!ok)
		std::fprintf(stderr, "child did not abort (status 0x%x); it said: %s\n", status, out);
	for (const char *w : want) {
		if (!std::strstr(out, w)) {
			std::fprintf(stderr, "child's message lacks \"%s\"; it said: %s\n", w, out);
			ok = false;
		}
	}
	return ok;
}

// Bug caught: a domain destroyed while a reader is inside, silently (its
// memory reused while libsrcu still counts on it).
static void test_destroy_busy_terminates()
{
	CHECK(dies_saying([] {
		std::optional<srcu::domain> d;
		d.emplace("doomed");
		srcu::read_guard g(*d);
		d.reset();
	}, { "'doomed'", "destroyed while busy", "-EBUSY" }));
	CHECK(dies_saying([] {
		auto *d = new srcu::rcu_domain("doomed-rcu");
		d->lock();
		delete d;
	}, { "'doomed-rcu'", "destroyed while busy" }));
}

// Bug caught: an unbalanced unlock() corrupting the nesting word (a later
// section would then not be a section at all) instead of being reported.
static void test_unlock_without_lock_terminates()
{
	CHECK(dies_saying([] {
		srcu::rcu_domain d("unbalanced");
		d.unlock();
	}, { "'unbalanced'", "unlock() without a lock()" }));
}

// ---------------------------------------------------------------------------
// srcu::domain and read_guard.

// Bug caught: a guard that does not lock, or does not unlock at scope exit.
static void test_guard_scope()
{
	srcu::domain d("scope");

	CHECK(!d.closed());
	CHECK_EQ(d.error(), 0);
	CHECK(std::strcmp(d.name(), "scope") == 0);
	{
		srcu::read_guard g(d);
		CHECK(held(d));
		CHECK(g.owns_lock());
		CHECK(g.index() == 0 || g.index() == 1);
	}
	CHECK(!held(d));
	{
		auto g = srcu::read_lock(d);
		CHECK(held(d));
		g.unlock();              // early
		CHECK(!held(d));
		CHECK(!g);
	}                                // the destructor does nothing more
	CHECK(!held(d));
	srcu::synchronize(d);            // no section leaked: does not hang
}

// Bug caught: a moved-from guard that unlocks too (a double unlock, which
// libsrcu aborts on), or a move assignment that leaks the section the
// target held.
static void test_guard_move()
{
	srcu::domain a("move-a"), b("move-b");
	{
		srcu::read_guard g1(a);
		{
			srcu::read_guard g2(std::move(g1));
			CHECK(!g1.owns_lock());
			CHECK(g2.owns_lock());
			CHECK(held(a));
		}
		CHECK(!held(a));         // g2 ended it
	}                                // g1, moved from: nothing
	CHECK(!held(a));
	{
		srcu::read_guard ga(a), gb(b);
		ga = std::move(gb);      // ends a's section, takes b's
		CHECK(!held(a));
		CHECK(held(b));
		auto &self = ga;
		ga = std::move(self);    // self-move keeps the section
		CHECK(held(b));
	}
	CHECK(!held(a));
	CHECK(!held(b));
	srcu::synchronize(a);            // a leaked or doubled unlock hangs or aborts here
	srcu::synchronize(b);
}

// Bug caught: domain_ref not reaching a C domain (DEFINE_SRCU, zeroed).
DEFINE_STATIC_SRCU(c_domain);
static void test_c_domain()
{
	{
		srcu::read_guard g(c_domain);
		CHECK(srcu_read_lock_held(&c_domain));
	}
	CHECK(!srcu_read_lock_held(&c_domain));
	unsigned long before = srcu_batches_completed(&c_domain);
	srcu_stats st0, st1;
	CHECK(srcu_get_stats(&c_domain, &st0) == 0);
	srcu::synchronize(c_domain);
	srcu::synchronize_expedited(srcu::domain_ref(&c_domain));
	srcu::expedite_current(srcu::domain_ref(&c_domain));   /* the next GP: expedited */
	srcu::synchronize(srcu::domain_ref(&c_domain));
	CHECK(srcu_batches_completed(&c_domain) >= before + 3);
	CHECK(srcu_get_stats(&c_domain, &st1) == 0);
	CHECK(st1.gps_expedited - st0.gps_expedited == 2);
}

// Bug caught: synchronize() returning while a reader that began before
// it still sleeps inside its section (the updater would free what the
// reader uses).  The reader sets `leaving` just before it unlocks.
static void test_synchronize_waits(bool expedited)
{
	srcu::domain d("sync");
	std::atomic<bool> inside{false}, leaving{false};
	std::thread reader([&] {
		srcu::read_guard g(d);
		inside = true;
		sleep_ms(150);           // blocks inside the section
		leaving = true;
	});
	wait_for(inside);
	if (expedited)
		srcu::synchronize_expedited(d);
	else
		srcu::synchronize(d);
	CHECK(leaving.load());
	reader.join();
}

// ---------------------------------------------------------------------------
// retire(), rcu_retire(), barrier.

struct item {
	explicit item(int v) : value(v) { }
	int value;
};

struct probe {
	std::atomic<bool> deleted{false}, reader_left{false}, left_before_delete{false};
	std::atomic<int> count{0};
};

// Bug caught: a deleter run before a reader that began before retire()
// has left (retire() not waiting for a grace period), or barrier()
// returning before the deleter ran.
static void test_retire_waits_for_readers()
{
	srcu::domain d("retire");
	probe pr;
	std::atomic<bool> inside{false}, retired{false}, deleted_inside{false};
	auto *obj = new item(42);
	std::thread reader([&] {
		srcu::read_guard g(d);
		inside = true;
		wait_for(retired);
		sleep_ms(100);
		deleted_inside = pr.deleted.load();
		CHECK_EQ(obj->value, 42);   // ASan: not freed under us
		pr.reader_left = true;
	});
	wait_for(inside);
	srcu::retire(d, obj, [&pr](item *p) {
		pr.left_before_delete = pr.reader_left.load();
		delete p;
		pr.deleted = true;
	});
	retired = true;
	srcu::barrier(d);
	CHECK(pr.deleted.load());
	CHECK(!deleted_inside.load());
	CHECK(pr.left_before_delete.load());
	reader.join();
}

// Bug caught: rcu_barrier() returning before every deleter queued before
// it ran (objects leaked or freed after the caller unloads their code).
static void test_rcu_barrier_waits_for_all()
{
	srcu::rcu_domain d("barrier");
	std::atomic<int> count{0};
	const int n = 2000;

	for (int i = 0; i < n; i++) {
		if (i % 2)
			srcu::rcu_retire(new item(i), [&count](item *p) { count++; delete p; }, d);
		else
			srcu::retire(d, new item(i), [&count](item *p) { count++; delete p; });
	}
	srcu::rcu_barrier(d);
	CHECK_EQ(count.load(), n);
	// And with std::default_delete on the default domain (ASan: freed).
	srcu::rcu_retire(new item(1));
	srcu::rcu_retire(new std::string(100, 'x'));
	srcu::rcu_barrier();
}

// rcu_obj_base with a stateful deleter.
struct node;
struct node_deleter {
	std::atomic<int> *deletions;
	int tag;
	void operator()(node *n) const;
};
struct node : srcu::rcu_obj_base<node, node_deleter> {
	explicit node(int v) : value(v) { }
	int value;
	std::string payload = std::string(64, 'p');   // ASan: the destructor ran
};
void node_deleter::operator()(node *n) const
{
	deletions->fetch_add(tag);
	delete n;
}

// A second base before rcu_obj_base: the hook is not at the object's start.
struct tagged { virtual ~tagged() = default; long tag = 7; };
struct multi final : tagged, srcu::rcu_obj_base<multi> { int value = 5; };

// Bug caught: retire() losing the deleter's state, running the default
// deleter instead, computing the object's address wrongly from the
// embedded head, or allocating although the object carries its head.
static void test_obj_base_custom_deleter()
{
	srcu::rcu_domain d("obj-base");
	std::atomic<int> deletions{0};
	std::atomic<bool> inside{false}, release{false};
	auto *n = new node(3);
	std::thread reader([&] {
		std::scoped_lock section(d);
		inside = true;
		wait_for(release);
		CHECK_EQ(n->value, 3);   // still there: a reader is inside
	});
	wait_for(inside);
	auto *n2 = new node(4);
	long before = allocations;
	n->retire(node_deleter{&deletions, 7}, d);
	srcu::retire(d, n2, node_deleter{&deletions, 100});
	CHECK_EQ(allocations - before, 0);   // the objects carry their heads
	sleep_ms(20);
	CHECK_EQ(deletions.load(), 0);       // the reader holds the grace period
	release = true;
	reader.join();
	srcu::rcu_barrier(d);
	CHECK_EQ(deletions.load(), 107);
	(new multi)->retire(std::default_delete<multi>(), d);
	(new multi)->retire();
	srcu::rcu_barrier(d);
	srcu::rcu_barrier();
#if __cplusplus >= 202002L
	// [[no_unique_address]]: an empty deleter costs nothing.
	struct plain : srcu::rcu_obj_base<plain> { };
	CHECK_EQ(sizeof(plain), sizeof(srcu_head));
#endif
}

// ---------------------------------------------------------------------------
// rcu_domain: BasicLockable / Lockable, nesting per (thread, domain).

// Bug caught: nesting kept per thread instead of per (thread, domain)
// (one domain's unlock ending another's section), a nested unlock ending
// the outermost section, or scoped_lock/unique_lock not working on it.
static void test_scoped_lock_nesting()
{
	srcu::rcu_domain a("nest-a"), b("nest-b");
	{
		std::scoped_lock both(a, b);
		CHECK_EQ(a.depth(), 1u);
		CHECK_EQ(b.depth(), 1u);
		CHECK(held(a) && held(b));
		{
			std::scoped_lock again(a);
			std::lock_guard<srcu::rcu_domain> third(a);
			CHECK_EQ(a.depth(), 3u);
			CHECK_EQ(b.depth(), 1u);
		}
		CHECK_EQ(a.depth(), 1u);
		CHECK(held(a));          // a nested unlock did not end the outer section
		srcu::read_guard g(a);   // an index section inside: independent
		CHECK_EQ(a.depth(), 1u);
	}
	CHECK_EQ(a.depth(), 0u);
	CHECK_EQ(b.depth(), 0u);
	CHECK(!held(a) && !held(b));
	// Overlapping, not nested: lock a, lock b, unlock a, unlock b.
	a.lock();
	b.lock();
	a.unlock();
	CHECK(!held(a) && held(b));
	b.unlock();
	CHECK(!held(b));
	// unique_lock: deferred, try_to_lock, unlock and relock.
	{
		std::unique_lock<srcu::rcu_domain> lk(a, std::defer_lock);
		CHECK(!held(a));
		CHECK(lk.try_lock());
		CHECK(held(a));
		lk.unlock();
		CHECK(!held(a));
		std::unique_lock<srcu::rcu_domain> lk2(a, std::try_to_lock);
		CHECK(lk2.owns_lock());
		CHECK_EQ(a.depth(), 1u);
	}
	CHECK(!held(a));
	// try_lock() directly.
	CHECK(b.try_lock());
	CHECK_EQ(b.depth(), 1u);
	b.unlock();
	CHECK_EQ(b.depth(), 0u);
	// Grace periods are per domain: waiting on b inside a's section is fine.
	{
		std::scoped_lock section(a);
		srcu::rcu_synchronize(b);
	}
	srcu::rcu_synchronize(a);
	srcu::rcu_synchronize(b);        // nothing leaked: no hang
}

// Bug caught: rcu_synchronize() returning while a std::scoped_lock
// section on another thread still sleeps.
static void test_rcu_synchronize_waits()
{
	srcu::rcu_domain &d = srcu::rcu_default_domain();
	std::atomic<bool> inside{false}, leaving{false};
	std::thread reader([&] {
		std::scoped_lock section(srcu::rcu_default_domain());
		srcu::rcu_domain &again = srcu::rcu_default_domain();
		CHECK(&again == &d);
		inside = true;
		sleep_ms(100);
		leaving = true;
	});
	wait_for(inside);
	srcu::rcu_synchronize();
	CHECK(leaving.load());
	reader.join();
	CHECK(std::strcmp(d.name(), "rcu_default_domain") == 0);
}

// ---------------------------------------------------------------------------
// Signal handlers: a balanced section between any two steps.

static srcu::rcu_domain *sig_dom;
static thread_local volatile std::sig_atomic_t hook_armed, in_handler;
static std::atomic<int> hook_raises, sig_runs, sig_bad;

static void hook_between_steps()
{
	if (hook_armed && !in_handler) {
		hook_raises++;
		std::raise(SIGUSR1);
	}
}

// A handler's own sections, nested, on the domain the thread may be
// locking or unlocking: depth > 0 must mean an srcu section is held, and
// the handler must leave the word as it found it.
static void sig_handler(int)
{
	in_handler = 1;
	unsigned before = sig_dom->depth();
	if (before && !srcu_read_lock_held(sig_dom->native()))
		sig_bad++;   // the word says "inside" before the section began
	sig_dom->lock();
	sig_dom->lock();
	if (sig_dom->depth() != before + 2 || !srcu_read_lock_held(sig_dom->native()))
		sig_bad++;
	sig_dom->unlock();
	sig_dom->unlock();
	if (sig_dom->depth() != before)
		sig_bad++;
	sig_runs++;
	in_handler = 0;
}

// Bug caught: lock()/unlock() as a read-modify-write that a handler's
// section between its steps corrupts (a lost or doubled srcu section), or
// the word updated before the srcu section begins / after it ends.
static void test_signal_between_steps()
{
	srcu::rcu_domain d("signals");
	struct sigaction sa {};
	sa.sa_handler = sig_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, nullptr);
	sig_dom = &d;
	d.lock();   // the thread's first section outside a handler
	d.unlock();

	hook_armed = 1;
	d.lock();        // two steps: after the load, after srcu_read_lock
	d.lock();        // one: after the load
	d.unlock();      // one: after the load
	d.unlock();      // two: after the load, after the word is cleared
	hook_armed = 0;
	CHECK_EQ(hook_raises.load(), 6);
	CHECK_EQ(sig_runs.load(), 6);
	CHECK_EQ(sig_bad.load(), 0);
	CHECK_EQ(d.depth(), 0u);
	CHECK(!held(d));

	// Asynchronous signals from another thread while this one locks and
	// unlocks (nested) as fast as it can.
	std::atomic<bool> stop{false};
	pthread_t self = pthread_self();
	int before = sig_runs.load();
	std::thread sender([&] {
		while (!stop.load()) {
			pthread_kill(self, SIGUSR1);
			std::this_thread::sleep_for(std::chrono::microseconds(20));
		}
	});
	auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
	while (std::chrono::steady_clock::now() < end) {
		for (int i = 0; i < 1000; i++) {
			std::scoped_lock outer(d);
			std::scoped_lock inner(d);
		}
	}
	stop = true;
	sender.join();
	CHECK(sig_runs.load() > before);
	CHECK_EQ(sig_bad.load(), 0);
	CHECK_EQ(d.depth(), 0u);
	CHECK(!held(d));
	srcu::rcu_synchronize(d);        // no leaked section: no hang
	signal(SIGUSR1, SIG_IGN);
	sig_dom = nullptr;
}

// ---------------------------------------------------------------------------
// close(): -EBUSY is returned, never ignored.

// Bug caught: close() releasing a domain a reader (this thread's or
// another's) is inside, or not flushing retired objects first.
static void test_close()
{
	{
		srcu::domain d("close-self");
		srcu::retire(d, new item(0));   // the domain has a worker now
		srcu::barrier(d);
		{
			// -EBUSY, not srcu_barrier()'s "would wait for itself".
			srcu::read_guard g(d);
			CHECK_EQ(d.close(), -EBUSY);
			CHECK(!d.closed());
		}
		srcu::synchronize(d);    // still usable after -EBUSY
		CHECK_EQ(d.close(), 0);
		CHECK(d.closed());
		CHECK_EQ(d.close(), 0);  // idempotent; the destructor does nothing
	}
	{
		srcu::domain d("close-other");
		std::atomic<bool> inside{false}, release{false};
		std::thread reader([&] {
			srcu::read_guard g(d);
			inside = true;
			wait_for(release);
		});
		wait_for(inside);
		CHECK_EQ(d.close(), -EBUSY);
		release = true;
		reader.join();
		CHECK_EQ(d.close(), 0);
	}
	{
		srcu::rcu_domain d("close-rcu");
		d.lock();
		CHECK_EQ(d.close(), -EBUSY);
		d.unlock();
		std::atomic<bool> deleted{false};
		srcu::rcu_retire(new item(1), [&deleted](item *p) { delete p; deleted = true; }, d);
		CHECK_EQ(d.close(), 0);  // ran the deleter first
		CHECK(deleted.load());
	}
	{
		srcu::domain d(std::nothrow, "nothrow");
		CHECK_EQ(d.error(), 0);
		CHECK(!d.closed());
	}
}

// ---------------------------------------------------------------------------
// rcu_domain's per-thread slots.

// Bug caught: slots not recycled (the 256th domain ever created fails),
// a new domain inheriting a stale word (depth != 0 at birth), two live
// domains sharing a word, or no clear error when every slot is taken.
static void test_slots()
{
	for (int i = 0; i < 600; i++) {
		srcu::rcu_domain d;
		CHECK_EQ(d.depth(), 0u);
		std::scoped_lock section(d);
		CHECK_EQ(d.depth(), 1u);
	}
	std::vector<std::unique_ptr<srcu::rcu_domain>> live;
	int err = 0;
	try {
		for (;;) {
			live.push_back(std::make_unique<srcu::rcu_domain>());
			live.back()->lock();
		}
	} catch (const std::system_error &e) {
		err = e.code().value();
	}
	CHECK_EQ(err, ENOSPC);
	CHECK_EQ(live.size(), 255);      // 256 slots, one the default domain's
	for (auto &d : live)
		CHECK_EQ(d->depth(), 1u);        // each its own word
	{
		srcu::rcu_domain full(std::nothrow);
		CHECK_EQ(full.error(), -ENOSPC);
	}
	for (auto &d : live)
		d->unlock();
	live.clear();
	srcu::rcu_domain again("after-full");
	CHECK_EQ(again.error(), 0);
	CHECK_EQ(again.depth(), 0u);
}

// ---------------------------------------------------------------------------

// The global allocation functions, counting this thread's calls.  (gcc
// 12 sees the replaced operator delete's free() inlined after a new
// expression and calls it a mismatch: it is the matching replacement.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void *operator new(std::size_t n)
{
	allocations++;
	if (void *p = std::malloc(n ? n : 1))
		return p;
	throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }

static void watchdog_fired(int)
{
	static const char msg[] = "test_cpp_api: watchdog: hung (a grace period that never ends?)\n";
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	_exit(2);
}

// Bug caught: close() (and so the destructor) that drains the callbacks
// queued before it but not those its deleters queue: a list freed node
// by node, each deleter retiring the next, left close() with -EBUSY and
// the destructor terminating.
struct chain_node {
	chain_node *next;
	int *freed;
};

static void retire_chain(srcu::domain &d, chain_node *n)
{
	srcu::retire(d, n, [&d](chain_node *p) {
		if (p->next)
			retire_chain(d, p->next);
		(*p->freed)++;
		delete p;
	});
}

static void test_close_drains_chained_retires()
{
	int freed = 0;
	srcu::domain d("chain");
	chain_node *head = nullptr;

	for (int i = 0; i < 5; i++)
		head = new chain_node{head, &freed};
	retire_chain(d, head);
	CHECK_EQ(d.close(), 0);
	CHECK_EQ(freed, 5);
}

int main()
{
	// Death tests first, while the process has one thread (fork()).
	test_destroy_busy_terminates();
	test_unlock_without_lock_terminates();
	signal(SIGALRM, watchdog_fired);
	alarm(90);

	test_guard_scope();
	test_guard_move();
	test_c_domain();
	test_synchronize_waits(false);
	test_synchronize_waits(true);
	test_retire_waits_for_readers();
	test_rcu_barrier_waits_for_all();
	test_obj_base_custom_deleter();
	test_scoped_lock_nesting();
	test_rcu_synchronize_waits();
	test_signal_between_steps();
	test_close();
	test_close_drains_chained_retires();
	test_slots();

	const char *name = __cplusplus >= 202002L ? "test_cpp_api20" : "test_cpp_api";
	if (failures) {
		std::printf("%s: FAIL (%d checks failed, backend %s)\n", name, failures,
			    srcu_backend());
		return 1;
	}
	std::printf("%s: PASS (backend %s)\n", name, srcu_backend());
	return 0;
}
