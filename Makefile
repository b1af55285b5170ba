# Thin wrapper over CMake.  `make check` installs everything the suites
# need first (scripts/deps.sh check, waiting out another apt's lock),
# builds and runs every test, then the same suite under ASan+UBSan and
# under TSan, then a clang build, then the Spin model and the litmus
# tests, then the engine's code under GenMC (make verify), then the
# aarch64 and armhf suites under qemu-user: a line as each
# suite starts and ends, with its time, and a summary that lists every
# test skipped and why (scripts/check.sh).  `make test` (one build, one
# suite) is the quick loop.
BUILD   ?= build
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE   ?= cmake
PREFIX  ?= /usr/local
CONFIG   = -DSRCU_WERROR=ON -DCMAKE_INSTALL_PREFIX=$(PREFIX)
CTEST    = ctest --output-on-failure -j$(JOBS)
DEPS     = scripts/deps.sh

.PHONY: all configure check test sanitize asan tsan clang bench torture model verify verify-deep install clean \
	check-cross check-cross-ci docs

all: configure
	$(CMAKE) --build $(BUILD) -j$(JOBS)

# Configured on every call (a second or two): a peer installed since the
# last call is found, and the PREFIX of this call is the one used.
configure:
	$(CMAKE) -S . -B $(BUILD) $(CONFIG)

test: all
	cd $(BUILD) && $(CTEST)

check:
	$(DEPS) check
	@MAKE="$(MAKE)" BUILD="$(BUILD)" scripts/check.sh test asan tsan clang model verify check-cross-ci

# Every test again under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	$(CMAKE) -S . -B $(BUILD)-asan $(CONFIG) -DCMAKE_BUILD_TYPE=Debug \
	  -DSRCU_SANITIZE=address,undefined
	$(CMAKE) --build $(BUILD)-asan -j$(JOBS)
	cd $(BUILD)-asan && $(CTEST)

# TSan cannot see membarrier's ordering: run it with the fence backend,
# whose readers order themselves with atomics TSan understands.  A child of
# a multithreaded fork may start threads (test_fork does): allow it.
tsan:
	$(CMAKE) -S . -B $(BUILD)-tsan $(CONFIG) -DCMAKE_BUILD_TYPE=Debug \
	  -DSRCU_SANITIZE=thread
	$(CMAKE) --build $(BUILD)-tsan -j$(JOBS)
	cd $(BUILD)-tsan && SRCU_BACKEND=fence TSAN_OPTIONS=die_after_fork=0 $(CTEST)

# The second compiler must build it warning-free too.
clang:
	CC=clang CXX=clang++ $(CMAKE) -S . -B $(BUILD)-clang $(CONFIG)
	$(CMAKE) --build $(BUILD)-clang -j$(JOBS)
	cd $(BUILD)-clang && $(CTEST)

# The algorithm, model-checked with Spin: once per `make check`, printing
# each verification as it starts and ends; then the fence pairings'
# litmus tests under herd7, where herd7 is found (model/litmus/check.sh).
model:
	model/check.sh
	model/litmus/check.sh

# The engine's own C code under GenMC, a model checker for C11 and the
# hardware model IMM: a line per scenario and memory model, the broken
# variants (a lettered fence removed) caught (model/genmc/verify.sh,
# doc/verification.md).  Skipped, loudly, where GenMC is not found.
verify:
	model/genmc/verify.sh

# And the larger scenarios, minutes each, up to VERIFY_TIMEOUT (1800 s)
# (doc/verification.md, the deep table).
verify-deep:
	VERIFY_DEEP=1 model/genmc/verify.sh

# The suite on other architectures (doc/testing.md, "Cross-architecture
# runs"): Debian's cross compilers, the tests under qemu-user (i686 and
# musl natively), one build-cross-<arch> each and a table at the end.
# ARCHS=... picks (aarch64 ppc64le s390x riscv64 armhf i686 musl);
# CROSS_JOBS: -j of the builds and of ctest (qemu is CPU-bound: 2).
ARCHS      ?= aarch64 ppc64le s390x riscv64 armhf i686
CROSS_JOBS ?= 2
check-cross:
	JOBS=$(CROSS_JOBS) scripts/check-cross.sh $(ARCHS)

# make check's share: aarch64 and armhf (32-bit) under qemu, each with the
# curated subset (scripts/check-cross.sh --ci), and the two data models on
# one shared-domain file.  armhf, not i686: this machine's kernel cannot
# run i386 programs, and under qemu-i386 7.2 the signal tests cannot run.
check-cross-ci:
	JOBS=$(CROSS_JOBS) scripts/check-cross.sh --ci aarch64 armhf

# The side-by-side benchmark, every figure in rounds (srcu-bench --rounds),
# its output and JSON kept in build/bench-run.{txt,json}; then how far
# each figure the docs quote moved from the recorded run (doc/runs/current)
# against the spread either run measured (scripts/docs-figures.sh
# --compare, informational: a benchmark measures, it does not fail on
# noise).  The exit status is srcu-bench's: non-zero if a figure failed.
# BENCH_FLAGS adds srcu-bench options, e.g. BENCH_FLAGS=--background-load
# (the run with one CPU-bound process beside it).
BENCH_RUN = $(BUILD)/bench-run
bench:
	$(DEPS) bench
	$(MAKE) --no-print-directory all
	@{ $(BUILD)/srcu-bench $(BENCH_FLAGS) --json $(BENCH_RUN).json; echo $$? >$(BENCH_RUN).rc; } | \
		tee $(BENCH_RUN).txt
	@echo; echo "The docs' figures against this run (full list: $(BENCH_RUN).compare):"
	@scripts/docs-figures.sh --compare $(BENCH_RUN).json >$(BENCH_RUN).compare 2>&1; \
		grep -E '  (OUTSIDE \(|no-spread, CHANGED|MISSING$$)' $(BENCH_RUN).compare; tail -1 $(BENCH_RUN).compare
	@if command -v gnuplot >/dev/null; then rm -rf $(BUILD)/bench-plots && \
		$(BUILD)/srcu-bench --from $(BENCH_RUN).json --plot $(BUILD)/bench-plots >/dev/null && \
		echo && echo "The plots of this run: $(BUILD)/bench-plots/*.png"; \
	else echo; echo "No plots (gnuplot is missing: apt-get install gnuplot-nox)"; fi
	@echo; echo "The docs' claims (doc/claims.txt) on this run:"
	@scripts/claims.sh --check $(BENCH_RUN).json >$(BENCH_RUN).claims; \
		cat $(BENCH_RUN).claims; tail -1 $(BENCH_RUN).claims | grep -q 'did not hold' && \
		echo "make bench: a claim of the docs did not hold on this run: a defect, please report it"; \
		exit $$(cat $(BENCH_RUN).rc)

# Every performance figure in README.md and doc/*.md rewritten from the
# recorded run that doc/runs/current names (scripts/docs-figures.sh; the
# ctest docs_figures checks them).  To record a new run: make bench, then
#   cp build/bench-run.json doc/runs/DATE-bench.json; cp build/bench-run.txt doc/runs/DATE-bench.txt
#   echo doc/runs/DATE-bench.json > doc/runs/current; make docs
# The figures of README.md and doc/*.md, and the plots in doc/plots/ (the
# guide shows them), from the run doc/runs/current names.
PLOTS = fig01-read-pair fig03-gp-latency fig04-sync-throughput fig06-isolation fig08-call
docs: all
	scripts/docs-figures.sh --update
	@if command -v gnuplot >/dev/null; then \
		rm -rf $(BUILD)/plots && \
		$(BUILD)/srcu-bench --from "$$(cat doc/runs/current)" --plot $(BUILD)/plots && \
		for p in $(PLOTS); do cp $(BUILD)/plots/$$p.png doc/plots/; done; \
	else echo "make docs: plots left as they are (apt-get install gnuplot-nox to redraw them)"; fi

# 60 s of the correct flavour (TORTURE_S=... for longer), the signal and
# fork storms, then proof that the broken flavours are caught.
TORTURE_S ?= 60
torture: all
	$(BUILD)/srcu-torture --duration $(TORTURE_S) --json $(BUILD)/torture.json
	$(BUILD)/srcu-torture --duration 20 --signal-storm --fork-storm
	$(BUILD)/srcu-torture --flavor busted-nosync --duration 10 --stop-on-fail | grep -q '^FAIL: '
	$(BUILD)/srcu-torture --flavor busted-onescan --duration 60 --stop-on-fail | grep -q '^FAIL: '
	$(BUILD)/srcu-torture --flavor busted-cbnowait --duration 20 --stop-on-fail | grep -q '^FAIL: '
	$(BUILD)/srcu-torture --flavor busted-earlypoll --duration 20 --stop-on-fail | grep -q '^FAIL: '
	$(BUILD)/srcu-torture --flavor busted-nofence --duration 20 --stop-on-fail | grep -q '^FAIL: '
	$(BUILD)/srcu-torture --flavor busted-earlyfence --duration 120 --stop-on-fail | grep -q '^FAIL: '
	$(BUILD)/srcu-torture --flavor busted-latejoin --duration 60 --stop-on-fail --domains 1 \
		--readers 1 --writers 8 --expedited-ratio 1 --async-writers 0 --poll-writers 0 \
		| grep -q '^FAIL: '
	$(BUILD)/srcu-torture --flavor busted-handovernowake --duration 20 --stop-on-fail | grep -q '^FAIL: '
	$(BUILD)/srcu-torture --flavor busted-freeatcall --duration 10 --stop-on-fail | grep -q '^FAIL: chain: '
	$(BUILD)/srcu-torture --flavor busted-paceunbounded --duration 20 --stop-on-fail | grep -qE '^(FAIL|SKIP): '
	$(BUILD)/srcu-torture --processes 3 --duration $(TORTURE_S) --json $(BUILD)/torture-processes.json
	$(BUILD)/srcu-torture --processes 3 --cotenant --duration 20
	$(BUILD)/srcu-torture --processes 3 --flavor busted-discardlive --duration 20 --stop-on-fail | grep -q '^FAIL: '
	@echo "make torture: correct flavour passed, busted flavours caught"

# PREFIX=... is honoured on every call (the configure step above uses it).
install: all
	$(CMAKE) --install $(BUILD) --prefix $(PREFIX)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-clang build-cross-*
