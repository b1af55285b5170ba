/*
 * srcu.hpp: libsrcu's C++ API (C++17 and later), header-only over <srcu.h>.
 *
 * Two layers, both on libsrcu domains:
 *  - srcu::domain, srcu::read_guard, srcu::synchronize(), srcu::retire():
 *    RAII over the C API, any number of domains, readers that may sleep.
 *  - srcu::rcu_domain, rcu_obj_base, rcu_retire(), rcu_synchronize(),
 *    rcu_barrier(), rcu_default_domain(): the shape of C++26's <rcu>
 *    (P2545), where a domain is a BasicLockable object and sections nest
 *    without an index.  Where SRCU's rules differ from P2545's, doc/cpp.md
 *    says so.
 *
 * Invariants: a domain owns its srcu_struct in place (never copied or
 * moved: libsrcu knows it by address), and is cleaned up exactly once,
 * by close() or by its destructor, which never ignores -EBUSY.  An
 * rcu_domain's per-thread state is one word per (thread, domain), the
 * only state lock() and unlock() write besides libsrcu's own counters.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SRCU_HPP
#define SRCU_HPP

#if __cplusplus < 201703L
#error "srcu.hpp needs C++17 or later"
#endif

/* Between the steps of rcu_domain::lock() and unlock() (<srcu/nest.h>'s
 * srcu__nest_lock()/srcu__nest_unlock()): nothing, except in
 * tests/test_cpp_api.cpp, which defines SRCU__HPP_HOOK first to raise a
 * signal there. */
#if defined(SRCU__HPP_HOOK) && !defined(SRCU__NEST_HOOK)
#define SRCU__NEST_HOOK() SRCU__HPP_HOOK()
#endif

#include <srcu.h>
#include <srcu/nest.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <system_error>
#include <type_traits>
#include <utility>


#if __cplusplus >= 202002L
#define SRCU__NO_UNIQUE_ADDRESS [[no_unique_address]]
#define SRCU__CONSTINIT constinit
#else
#define SRCU__NO_UNIQUE_ADDRESS
#define SRCU__CONSTINIT
#endif

namespace srcu {

class domain;
class rcu_domain;
template <class T, class D> class rcu_obj_base;

namespace detail {

/* Misuse that cannot be returned as an error: one line on stderr in
 * libsrcu's format, naming the domain, then std::terminate(). */
[[noreturn]] inline void fatal(const srcu_struct *sp, const char *what) noexcept
{
	/* Acquire: pairs with the release in srcu_set_name(). */
	const char *name = sp ? __atomic_load_n(&sp->name, __ATOMIC_ACQUIRE) : nullptr;

	if (!sp)
		std::fprintf(stderr, "libsrcu: fatal: %s\n", what);
	else if (name)
		std::fprintf(stderr, "libsrcu: fatal: domain '%s': %s\n", name, what);
	else
		std::fprintf(stderr, "libsrcu: fatal: domain srcu_struct@%p: %s\n",
			     static_cast<const void *>(sp), what);
	std::fflush(stderr);
	std::terminate();
}

/* A constructor's failure: std::system_error, or without exceptions the
 * message and std::terminate(). */
[[noreturn]] inline void init_failed(int err, const char *what)
{
#if defined(__cpp_exceptions)
	throw std::system_error(err, std::generic_category(), what);
#else
	(void)err;
	fatal(nullptr, what);
#endif
}

} // namespace detail

/* ---------------------------------------------------------------------- */
/* srcu::domain: one owned srcu_struct.                                   */

class domain {
public:
	/* Initialize a domain, named in libsrcu's messages if name is not
	 * null (the string must outlive the domain).  Throws std::system_error
	 * (ENOMEM: 14,334 domains live) on failure. */
	explicit domain(const char *name = nullptr) : state_(closed_)
	{
		int err = init(name);

		if (err)
			detail::init_failed(-err, "srcu::domain: init_srcu_struct");
	}
	/* The same, without exceptions: error() says whether it worked. */
	domain(std::nothrow_t, const char *name = nullptr) noexcept : state_(closed_)
	{
		state_ = init(name) ? init_failed_ : live_;
	}
	domain(const domain &) = delete;
	domain &operator=(const domain &) = delete;

	/* close(); a domain still busy ends the program (std::terminate,
	 * after a message naming it): its memory is about to be reused
	 * while libsrcu still knows it.  End every section, and let no
	 * grace period or callback run, before the destructor. */
	~domain()
	{
		int err = close();

		if (err)
			detail::fatal(&s_, err == -EBUSY ?
				      "srcu::domain destroyed while busy (close() returned -EBUSY: a "
				      "reader inside, a grace period running, or callbacks pending)" :
				      "srcu::domain destroyed and close() failed");
	}

	/* Run every callback queued (srcu_barrier(): what retire() queued
	 * is deleted), then release the domain (cleanup_srcu_struct()).
	 * 0, also when already closed; -EBUSY while this thread or another
	 * is inside a section, a grace period runs or waits, or a poll
	 * request is pending: the domain then stays usable and close() may
	 * be called again.  Not from a callback (deleter) of this domain. */
	int close() noexcept
	{
		int err;

		if (state_ != live_)
			return 0;
		if (srcu_read_lock_held(&s_))
			return -EBUSY;   /* srcu_barrier() would wait for us */
		/* Until no callback is left: a deleter may retire() more on
		 * this domain (a list freed node by node), after the barrier
		 * that ran it began. */
		for (;;) {
			srcu_stats st;

			srcu_barrier(&s_);
			if (srcu_get_stats(&s_, &st) != 0 || st.backlog == 0)
				break;
		}
		err = cleanup_srcu_struct(&s_);
		if (!err)
			state_ = closed_;
		return err;
	}
	/* 0, or why the nothrow constructor failed (-ENOMEM). */
	int error() const noexcept { return state_ == init_failed_ ? -ENOMEM : 0; }
	bool closed() const noexcept { return state_ != live_; }

	/* The C domain, for the rest of <srcu.h> (polling, stats, limits).
	 * Never cleanup_srcu_struct() it: close() does. */
	srcu_struct *native() noexcept { return &s_; }
	const char *name() const noexcept { return s_.name; }

protected:
	/* A static domain as DEFINE_SRCU makes it: zeroed, no call, an id
	 * on first use.  For rcu_default_domain(). */
	struct static_tag { };
	constexpr domain(static_tag, const char *name) noexcept
		: s_{ 0, 0, 0, name, {}, {} }, state_(live_) { }

private:
	enum : unsigned char { live_, closed_, init_failed_ };

	int init(const char *name) noexcept
	{
		int err = name ? init_srcu_struct_named(&s_, name) : init_srcu_struct(&s_);

		if (!err)
			state_ = live_;
		return err;
	}

	/* Its own cache lines for the update side, as DEFINE_SRCU's. */
	alignas(64) srcu_struct s_{};
	unsigned char state_;        /* written by constructor and close() */
};

/* A domain as the free functions take it: a srcu::domain (or
 * rcu_domain), or a C domain (DEFINE_SRCU, or one embedded in a C
 * structure), which it does not own. */
class domain_ref {
public:
	domain_ref(domain &d) noexcept : sp_(d.native()) { }
	domain_ref(srcu_struct &s) noexcept : sp_(&s) { }
	explicit domain_ref(srcu_struct *s) noexcept : sp_(s) { }
	srcu_struct *native() const noexcept { return sp_; }

private:
	srcu_struct *sp_;
};

/* ---------------------------------------------------------------------- */
/* srcu::read_guard: one read-side section, ended at scope exit.          */

class [[nodiscard]] read_guard {
public:
	/* srcu_read_lock().  The section may sleep and block; it must end
	 * in this thread (moving the guard to another thread is the misuse
	 * libsrcu reports for a cross-thread srcu_read_unlock()). */
	explicit read_guard(domain_ref d) noexcept
		: sp_(d.native()), idx_(srcu_read_lock(sp_)) { }
	read_guard(read_guard &&o) noexcept
		: sp_(std::exchange(o.sp_, nullptr)), idx_(o.idx_) { }
	/* Ends the section this guard holds, then takes o's. */
	read_guard &operator=(read_guard &&o) noexcept
	{
		if (this != &o) {
			unlock();
			idx_ = o.idx_;
			sp_ = std::exchange(o.sp_, nullptr);
		}
		return *this;
	}
	read_guard(const read_guard &) = delete;
	read_guard &operator=(const read_guard &) = delete;
	~read_guard() { unlock(); }

	/* End the section now; the guard then does nothing. */
	void unlock() noexcept
	{
		if (sp_)
			srcu_read_unlock(std::exchange(sp_, nullptr), idx_);
	}
	bool owns_lock() const noexcept { return sp_ != nullptr; }
	explicit operator bool() const noexcept { return owns_lock(); }
	/* The index srcu_read_lock() returned. */
	int index() const noexcept { return idx_; }

private:
	srcu_struct *sp_;            /* null once unlocked or moved from */
	int idx_;
};

/* A guard by value, for `auto g = srcu::read_lock(dom);`. */
[[nodiscard]] inline read_guard read_lock(domain_ref d) noexcept
{
	return read_guard(d);
}

/* ---------------------------------------------------------------------- */
/* Grace periods and deferred deletion.                                   */

/* Wait until every section of d that began before the call has ended.
 * Inside one's own section of d it aborts (it would wait for itself). */
inline void synchronize(domain_ref d) noexcept { synchronize_srcu(d.native()); }
inline void synchronize_expedited(domain_ref d) noexcept
{
	synchronize_srcu_expedited(d.native());
}
/* Expedite d's grace period in progress (else the next); returns at once. */
inline void expedite_current(domain_ref d) noexcept { srcu_expedite_current(d.native()); }
/* Wait until every deleter retire() queued on d before has run. */
inline void barrier(domain_ref d) noexcept { srcu_barrier(d.native()); }

namespace detail {

/* The srcu_head an rcu_obj_base embeds: standard layout, so that the
 * head's address is the hook's. */
struct obj_hook {
	srcu_head srcu__head;
};

/* retire() of an object without rcu_obj_base: a node of its own. */
template <class T, class D>
struct retire_node final : srcu_head {
	retire_node(T *ptr, D &&del) : srcu_head{}, p(ptr), d(std::move(del)) { }
	static void run(srcu_head *h) noexcept
	{
		std::unique_ptr<retire_node> n(static_cast<retire_node *>(h));

		n->d(n->p);
	}
	T *p;
	D d;
};

/* rcu_obj_base's queueing, for srcu::retire() and rcu_obj_base::retire(). */
struct obj_access {
	template <class T, class D>
	static void queue(rcu_obj_base<T, D> *b, srcu_struct *sp, D &&d) noexcept
	{
		b->queue(sp, std::move(d));
	}
};

} // namespace detail

/* Delete p with d(p) on d's worker thread after a grace period: once
 * every section of dom that could have loaded p has ended.  An object
 * derived from rcu_obj_base<T, D> is queued through its own head;
 * any other gets a small node (std::bad_alloc: nothing is queued and
 * the caller still owns p).  Blocks while the domain's backlog is full
 * (call_srcu()), except inside a section of dom.  The deleter must not
 * throw (std::terminate). */
template <class T, class D = std::default_delete<T>>
void retire(domain_ref dom, T *p, D d = D())
{
	static_assert(std::is_invocable_v<D &, T *>, "the deleter must be callable with T*");
	if constexpr (std::is_base_of_v<rcu_obj_base<T, D>, T>) {
		detail::obj_access::queue(static_cast<rcu_obj_base<T, D> *>(p), dom.native(),
					  std::move(d));
	} else {
		auto *n = new detail::retire_node<T, D>(p, std::move(d));

		call_srcu(dom.native(), n, &detail::retire_node<T, D>::run);
	}
}

/* ---------------------------------------------------------------------- */
/* P2545's shape: a lockable domain, sections without an index.          */

namespace detail {

/* Live rcu_domains at once (slot 0: rcu_default_domain()). */
constexpr unsigned rcu_slots = 256;

/* This thread's sections of the rcu_domain in each slot: srcu.h's
 * index-less section word (srcu__nest_lock(): 0 outside, else the depth
 * and what the outermost unlock needs).  One word, so that a signal
 * handler's balanced section between any two steps of lock() or unlock()
 * leaves it as it found it.  __thread rather than thread_local: constant
 * initialized, so that no access goes through a TLS init function.
 * Default visibility: one table and one slot allocator per process,
 * whichever shared objects include this header. */
SRCU__API inline __thread unsigned long rcu_state[rcu_slots];
static_assert(__atomic_always_lock_free(sizeof(unsigned long), 0),
	      "rcu_domain's per-thread word must be lock-free (signal handlers)");

struct rcu_slot_table {
	std::mutex lock;
	bool used[rcu_slots];        /* under lock */
};
SRCU__API inline rcu_slot_table rcu_slot_alloc;

/* A free slot, or rcu_slots when all are taken. */
inline unsigned rcu_slot_get() noexcept
{
	std::lock_guard<std::mutex> g(rcu_slot_alloc.lock);

	for (unsigned i = 1; i < rcu_slots; i++) {
		if (!rcu_slot_alloc.used[i]) {
			rcu_slot_alloc.used[i] = true;
			return i;
		}
	}
	return rcu_slots;
}

/* Only once the domain is closed: every thread's word for it is 0 then
 * (a word is nonzero only while its thread holds a section, and close()
 * fails while any section is held), so the next owner starts clean. */
inline void rcu_slot_put(unsigned i) noexcept
{
	std::lock_guard<std::mutex> g(rcu_slot_alloc.lock);

	rcu_slot_alloc.used[i] = false;
}

union rcu_default_holder;

} // namespace detail

class rcu_domain : public domain {
public:
	/* As srcu::domain's, and takes one of 255 per-thread slots:
	 * std::system_error (ENOSPC) when all are taken. */
	explicit rcu_domain(const char *name = nullptr) : domain(name), slot_(detail::rcu_slot_get())
	{
		if (slot_ == detail::rcu_slots) {
			(void)close();
			detail::init_failed(ENOSPC, "srcu::rcu_domain: 255 live rcu_domains");
		}
	}
	/* Without exceptions: error() is -ENOMEM or -ENOSPC on failure. */
	rcu_domain(std::nothrow_t, const char *name = nullptr) noexcept
		: domain(std::nothrow, name),
		  slot_(domain::error() ? detail::rcu_slots : detail::rcu_slot_get())
	{
		if (slot_ == detail::rcu_slots)
			(void)close();
	}
	/* As ~domain(), then frees the slot. */
	~rcu_domain()
	{
		int err = close();

		if (err)
			detail::fatal(native(), "srcu::rcu_domain destroyed while busy (close() "
				      "returned -EBUSY: a reader inside, a grace period running, "
				      "or callbacks pending)");
		if (slot_ != detail::rcu_slots)
			detail::rcu_slot_put(slot_);
	}
	int error() const noexcept
	{
		return domain::error() ? domain::error() : slot_ == detail::rcu_slots ? -ENOSPC : 0;
	}

	/* Enter a section.  Nested sections of this domain in this thread
	 * share the outermost one's srcu section.  Async-signal-safe. */
	void lock() noexcept
	{
		srcu__nest_lock(native(), &detail::rcu_state[slot_]);
	}
	/* Always succeeds: readers never wait (Lockable, for std::lock). */
	bool try_lock() noexcept
	{
		lock();
		return true;
	}
	/* Leave the innermost section; the outermost ends the srcu section.
	 * Without a lock() in this thread it terminates, naming the domain.
	 * Async-signal-safe. */
	void unlock() noexcept
	{
		if (!srcu__nest_unlock(native(), &detail::rcu_state[slot_]))
			detail::fatal(native(), "srcu::rcu_domain::unlock() without a lock() in "
				      "this thread");
	}
	/* This thread's lock() depth on this domain (for assertions). */
	unsigned depth() const noexcept
	{
		return static_cast<unsigned>(__atomic_load_n(&detail::rcu_state[slot_], __ATOMIC_RELAXED) &
					     SRCU__NEST_DEPTH);
	}

private:
	friend union detail::rcu_default_holder;
	constexpr rcu_domain(static_tag t, const char *name) noexcept
		: domain(t, name), slot_(0) { }

	unsigned slot_;              /* index into detail::rcu_state */
};

namespace detail {

/* The default domain: constant-initialized in slot 0, like a
 * DEFINE_SRCU domain (an id on first use), and never destroyed, so that
 * threads still reading at exit find it. */
union rcu_default_holder {
	constexpr rcu_default_holder() noexcept
		: d(rcu_domain::static_tag{}, "rcu_default_domain") { }
	~rcu_default_holder() { }
	rcu_domain d;
};
SRCU__API SRCU__CONSTINIT inline rcu_default_holder rcu_default;

} // namespace detail

/* The process's default domain (one, whichever shared objects include
 * this header).  Use it once outside signal handlers before a handler
 * does (its first use takes a lock, as DEFINE_SRCU's). */
inline rcu_domain &rcu_default_domain() noexcept
{
	return detail::rcu_default.d;
}

/* P2545's rcu_obj_base: derive T from rcu_obj_base<T, D>, and
 * obj->retire() queues the object itself (no allocation) to be deleted
 * with D after a grace period of dom.  D is stored in the base (without
 * space, when empty, in C++20). */
template <class T, class D = std::default_delete<T>>
class rcu_obj_base : private detail::obj_hook {
public:
	/* As srcu::retire(dom, static_cast<T *>(this), d): blocks while the
	 * domain's backlog is full, except inside a section of dom. */
	void retire(D d = D(), rcu_domain &dom = rcu_default_domain()) noexcept
	{
		queue(dom.native(), std::move(d));
	}

protected:
	rcu_obj_base() = default;
	rcu_obj_base(const rcu_obj_base &) = default;
	rcu_obj_base(rcu_obj_base &&) = default;
	rcu_obj_base &operator=(const rcu_obj_base &) = default;
	rcu_obj_base &operator=(rcu_obj_base &&) = default;
	~rcu_obj_base() = default;

private:
	friend struct detail::obj_access;

	void queue(srcu_struct *sp, D &&d) noexcept
	{
		static_assert(std::is_base_of_v<rcu_obj_base, T>,
			      "T must derive from rcu_obj_base<T, D>");
		static_assert(std::is_invocable_v<D &, T *>, "D must be callable with T*");
		deleter_ = std::move(d);
		call_srcu(sp, &srcu__head, &rcu_obj_base::run);
	}
	static void run(srcu_head *h) noexcept
	{
		/* The head is the hook's first member: the same address. */
		auto *b = static_cast<rcu_obj_base *>(reinterpret_cast<detail::obj_hook *>(h));
		D d = std::move(b->deleter_);   /* out of the object it deletes */

		d(static_cast<T *>(b));
	}

	SRCU__NO_UNIQUE_ADDRESS D deleter_{};
};

/* P2545's free functions, on the default domain unless told. */
inline void rcu_synchronize(rcu_domain &dom = rcu_default_domain()) noexcept
{
	synchronize_srcu(dom.native());
}
inline void rcu_barrier(rcu_domain &dom = rcu_default_domain()) noexcept
{
	srcu_barrier(dom.native());
}
template <class T, class D = std::default_delete<T>>
void rcu_retire(T *p, D d = D(), rcu_domain &dom = rcu_default_domain())
{
	srcu::retire(dom, p, std::move(d));
}

} // namespace srcu

#undef SRCU__NO_UNIQUE_ADDRESS
#undef SRCU__CONSTINIT

#endif /* SRCU_HPP */
