// cpp-config: a C++ service's configuration, swapped under readers that
// block while they hold it (include/srcu.hpp).
//
// The service keeps its live configuration (maps and strings) behind one
// std::atomic pointer.  Request threads take a section of the config
// domain, look settings up and then block inside the section (a
// simulated backend call) while still using the configuration they
// read.  An updater swaps in a new configuration every millisecond and
// retires the old one (rcu_obj_base::retire(), P2545's shape); every
// 16th swap it waits with rcu_synchronize() and deletes at once instead.
// A second domain holds the service's routing table: its readers sleep
// too, and its grace periods never wait for the config domain's readers.
//
// Checking: a retired configuration is poisoned by its deleter and kept
// in a quarantine of recently retired ones before being freed, so a
// reader still holding one after its grace period sees the poison (no
// use-after-free needed to notice).  Each request checks, after it
// blocked, that its configuration is live and self-consistent, and that
// versions never go backwards.  Any violation: exit status 1.
// --busted deletes (poisons) without a grace period, to show the check
// can fail.
//
//   cpp-config [--duration S] [--readers N] [--busted]
//
// SPDX-License-Identifier: MIT

#include <srcu.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr std::uint64_t LIVE = 0x11fe11fe11fe11feull;
constexpr std::uint64_t POISON = 0xdeaddeaddeaddeadull;

struct config;

// Poisons, then quarantines: the object is freed only once kQuarantine
// younger ones have been retired after it.
struct config_deleter {
	void operator()(config *c) const;
};

struct config : srcu::rcu_obj_base<config, config_deleter> {
	explicit config(std::uint64_t v) : version(v)
	{
		settings["version"] = std::to_string(v);
		settings["timeout_ms"] = std::to_string(100 + v % 900);
		settings["backend"] = "db-" + std::to_string(v % 7) + ".internal";
		banner = "service config #" + std::to_string(v);
	}
	std::atomic<std::uint64_t> magic{LIVE};
	std::uint64_t version;
	std::map<std::string, std::string> settings;
	std::string banner;
};

// The quarantine: filled by deleters on the config domain's worker thread
// and by the updater (its synchronous and --busted paths).
constexpr std::size_t kQuarantine = 256;
struct quarantine {
	std::mutex lock;
	std::vector<config *> ring = std::vector<config *>(kQuarantine, nullptr);
	std::size_t next = 0;
	std::uint64_t freed = 0;
} graveyard;

void config_deleter::operator()(config *c) const
{
	c->magic.store(POISON, std::memory_order_relaxed);
	std::lock_guard<std::mutex> g(graveyard.lock);
	config *old = graveyard.ring[graveyard.next];
	graveyard.ring[graveyard.next] = c;
	graveyard.next = (graveyard.next + 1) % kQuarantine;
	if (old) {
		delete old;
		graveyard.freed++;
	}
}

// The routing table, a second domain.
struct routes {
	std::map<std::string, int> port;
	std::atomic<std::uint64_t> magic{LIVE};
};

struct service {
	srcu::rcu_domain config_domain{"config"};
	srcu::domain routes_domain{"routes"};
	std::atomic<config *> current{new config(1)};
	std::atomic<routes *> table{nullptr};
	std::atomic<bool> stop{false};
	std::atomic<std::uint64_t> requests{0}, violations{0}, swaps{0};
	bool busted = false;
};

void violation(service &s, const char *what, std::uint64_t version)
{
	if (s.violations.fetch_add(1) < 5)
		std::fprintf(stderr, "cpp-config: VIOLATION: %s (config version %llu)\n", what,
			     static_cast<unsigned long long>(version));
}

// One request: read the config, block, then use what was read.
void handle_request(service &s, std::uint64_t &last_version, unsigned n)
{
	std::scoped_lock section(s.config_domain);   // P2545: the domain is the lock
	const config *c = s.current.load(std::memory_order_acquire);
	std::uint64_t v = c->version;
	const std::string &timeout = c->settings.at("timeout_ms");

	if (v < last_version)
		violation(s, "version went backwards", v);
	last_version = v;
	// The backend call: the section stays open while it blocks.
	std::this_thread::sleep_for(std::chrono::microseconds(200 + (n * 37) % 1800));
	if (c->magic.load(std::memory_order_relaxed) != LIVE) {
		violation(s, "configuration retired while a reader held it", v);
		return;   // do not look further into a dead object
	}
	if (c->settings.at("version") != std::to_string(v) ||
	    timeout != std::to_string(100 + v % 900) ||
	    c->banner != "service config #" + std::to_string(v))
		violation(s, "configuration inconsistent", v);
	s.requests++;
}

void reader(service &s, unsigned id)
{
	std::uint64_t last = 0;

	for (unsigned n = id; !s.stop.load(std::memory_order_relaxed); n++) {
		handle_request(s, last, n);
		if (n % 8 == 0) {   // a routing lookup, on the other domain
			srcu::read_guard g(s.routes_domain);
			const routes *r = s.table.load(std::memory_order_acquire);
			std::this_thread::sleep_for(std::chrono::microseconds(300));
			if (r && (r->magic.load() != LIVE || r->port.at("api") != 443))
				violation(s, "routing table freed under a reader", 0);
		}
	}
}

// Swap configurations; each old one is retired through its own
// rcu_obj_base (no allocation), or synchronized and deleted at once.
void updater(service &s)
{
	for (std::uint64_t v = 2; !s.stop.load(std::memory_order_relaxed); v++) {
		config *old = s.current.exchange(new config(v), std::memory_order_acq_rel);

		if (s.busted)
			config_deleter()(old);             // no grace period: wrong
		else if (v % 16 == 0) {
			srcu::rcu_synchronize(s.config_domain);
			config_deleter()(old);
		} else {
			old->retire(config_deleter(), s.config_domain);
		}
		if (v % 64 == 0) {   // the routes domain: a plain srcu::retire()
			auto *r = new routes;
			r->port = { { "api", 443 }, { "metrics", 9100 } };
			if (routes *prev = s.table.exchange(r, std::memory_order_acq_rel))
				srcu::retire(s.routes_domain, prev);
		}
		s.swaps++;
		std::this_thread::sleep_for(std::chrono::milliseconds(1));
	}
}

int usage()
{
	std::fprintf(stderr, "usage: cpp-config [--duration S] [--readers N] [--busted]\n");
	return 2;
}

} // namespace

int main(int argc, char **argv)
{
	double duration = 5;
	unsigned readers = 8;
	service s;

	for (int i = 1; i < argc; i++) {
		if (!std::strcmp(argv[i], "--duration") && i + 1 < argc)
			duration = std::atof(argv[++i]);
		else if (!std::strcmp(argv[i], "--readers") && i + 1 < argc)
			readers = static_cast<unsigned>(std::atoi(argv[++i]));
		else if (!std::strcmp(argv[i], "--busted"))
			s.busted = true;
		else
			return usage();
	}
	if (duration <= 0 || readers == 0)
		return usage();

	std::vector<std::thread> threads;
	for (unsigned i = 0; i < readers; i++)
		threads.emplace_back(reader, std::ref(s), i);
	threads.emplace_back(updater, std::ref(s));
	std::this_thread::sleep_for(std::chrono::duration<double>(duration));
	s.stop = true;
	for (auto &t : threads)
		t.join();

	// Shutdown: no reader is left.  Run the deleters still queued, free
	// the rest, then close the domains (a busy one would say -EBUSY).
	srcu::rcu_barrier(s.config_domain);
	delete s.current.load();
	delete s.table.load();
	for (config *c : graveyard.ring)
		delete c;
	int err = s.config_domain.close();
	if (!err)
		err = s.routes_domain.close();

	std::printf("cpp-config: %llu requests by %u readers that block inside, %llu swaps, "
		    "%llu configs freed after quarantine, backend %s%s\n",
		    static_cast<unsigned long long>(s.requests.load()), readers,
		    static_cast<unsigned long long>(s.swaps.load()),
		    static_cast<unsigned long long>(graveyard.freed), srcu_backend(),
		    s.busted ? " (--busted: no grace period)" : "");
	std::printf("cpp-config: violations: %llu\n",
		    static_cast<unsigned long long>(s.violations.load()));
	if (err) {
		std::fprintf(stderr, "cpp-config: close(): %s\n", std::strerror(-err));
		return 1;
	}
	return s.violations.load() ? 1 : 0;
}
