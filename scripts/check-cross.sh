#!/bin/sh
# scripts/check-cross.sh: build and run the suite for other architectures
# (doc/testing.md, "Cross-architecture runs"; make check-cross).
#
#   scripts/check-cross.sh [--ci] [ARCH...]
#
# ARCH: aarch64 ppc64le s390x riscv64 armhf (Debian's gcc-<triple> cross
# compilers, the tests run under qemu-user), i686 (its cross compiler, run
# natively: qemu-i386 7.2 hangs in pthread_create) and musl (musl-gcc,
# x86-64, native).  Default: the six Debian architectures.
# Each gets build-cross-<arch> (cmake/toolchains/<arch>.cmake): configure,
# build, ctest with the timeouts scaled for emulation (the toolchain's
# CMAKE_CROSSCOMPILING_EMULATOR; SRCU_TEST_TIMEOUT_SCALE, default 4 under
# qemu).  Then one table: arch | builds | pass / fail / timeout | skipped |
# wall seconds.  Exit status 0 only if every architecture built and no
# test failed or timed out.
#
# --ci: the curated subset CI runs (CROSS_CI_EXCLUDE below; the full run
# is this script without it).  Environment: JOBS (default 2, the build and
# ctest -j), CTEST_ARGS (more ctest arguments: -R, -E, -L ...),
# TIMEOUT_SCALE, BUILD_PREFIX (default build-cross-), NO_DEPS=1 (do not
# call scripts/deps.sh).
#
# SPDX-License-Identifier: MIT
set -uf   # -f: CTEST_ARGS regexes are not globs
cd "$(dirname "$0")/.." || exit 2

ALL="aarch64 ppc64le s390x riscv64 armhf i686"
# CI: every test but the second copy of the suite against libsrcu.a (the
# .static tests; test_link.static and .full-static stay) and the broken
# torture flavours that run for 20-150 s each (the native suite runs all).
CROSS_CI_EXCLUDE='^test_[a-z_]+\.static$|^torture\.busted-(onescan|earlyfence|latejoin|cbnowait|earlypoll)$'

ci=0
archs=""
for a in "$@"; do
	case "$a" in
	--ci) ci=1 ;;
	aarch64|ppc64le|s390x|riscv64|armhf|i686|musl) archs="$archs $a" ;;
	-h|--help) sed -n '2,23p' "$0"; exit 0 ;;
	*) echo "check-cross: unknown architecture '$a' (known: $ALL musl)" >&2; exit 2 ;;
	esac
done
[ -n "$archs" ] || archs=$ALL
JOBS=${JOBS:-2}
BUILD_PREFIX=${BUILD_PREFIX:-build-cross-}
CTEST_ARGS=${CTEST_ARGS:-}

if [ "${NO_DEPS:-0}" != 1 ]; then
	# shellcheck disable=SC2086
	scripts/deps.sh cross $archs || exit 1
fi

# Can this machine run an i386 program natively?  A kernel built without
# IA32 emulation (or booted with ia32_emulation=0) cannot.
i686_runs_natively() {
	d=$(mktemp -d)
	printf 'int main(void) { return 0; }\n' >"$d/t.c"
	i686-linux-gnu-gcc "$d/t.c" -o "$d/t" \
		-Wl,--dynamic-linker=/usr/i686-linux-gnu/lib/ld-linux.so.2 \
		-Wl,-rpath,/usr/i686-linux-gnu/lib >/dev/null 2>&1 && "$d/t" 2>/dev/null
	r=$?
	rm -rf "$d"
	return $r
}

# Does the emulator keep a thread's TLS in place across its signal
# handlers?  tests/probe_signal_tls.c, built for the target and run the way
# the tests run (the build's SRCU_TEST_EXEC_PREFIX).  0: yes or native,
# 1: no (qemu-i386 7.2), 2: could not tell.
signal_tls_kept() {
	exec_prefix="" target_cc="" target_ldflags=""
	# shellcheck disable=SC1091
	. "$1/check-cross.env" || return 2
	[ -n "$exec_prefix" ] || return 0
	# shellcheck disable=SC2086
	"$target_cc" -O2 -pthread tests/probe_signal_tls.c -o "$1/probe_signal_tls" \
		$target_ldflags >/dev/null 2>&1 || return 2
	# shellcheck disable=SC2086
	timeout 120 $exec_prefix "$1/probe_signal_tls"
}
# What a thread that takes signals inside its sections exercises: left out
# where the probe says the emulator moves TLS under a handler (every count
# after the first signal would go elsewhere: an unlock without its lock).
SIGNAL_TESTS='^(cpp_api.*|test_signal.*|torture.*)$'

summary=${BUILD_PREFIX}summary.txt
rows=""
bad=0
start_all=$(date +%s)
for arch in $archs; do
	b=$BUILD_PREFIX$arch
	t0=$(date +%s)
	built=clean
	arch_note=""
	scale_arg=""
	[ -n "${TIMEOUT_SCALE:-}" ] && scale_arg="-DSRCU_TEST_TIMEOUT_SCALE=$TIMEOUT_SCALE"
	if [ "$arch" = i686 ] && ! i686_runs_natively; then
		echo "=== i686: this kernel cannot exec i386 binaries (no IA32 emulation): qemu-i386"
		scale_arg="$scale_arg -DSRCU_I686_QEMU=ON"
		arch_note=" (qemu-i386)"
	fi
	echo "=== $arch: configure ($b)"
	mkdir -p "$b"
	# shellcheck disable=SC2086
	if ! cmake -S . -B "$b" -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/$arch.cmake" \
		-DSRCU_WERROR=ON $scale_arg >"$b/check-cross-configure.log" 2>&1; then
		built="no (configure)"
		tail -20 "$b/check-cross-configure.log"
	else
		grep -E '^-- cross build' "$b/check-cross-configure.log"
		echo "=== $arch: build"
		if ! cmake --build "$b" -j"$JOBS" >"$b/check-cross-build.log" 2>&1; then
			built="no ($(grep -c 'error:' "$b/check-cross-build.log") errors)"
			grep -m 20 'error:' "$b/check-cross-build.log"
		elif grep -q 'warning:' "$b/check-cross-build.log"; then
			built="warnings"
		fi
	fi
	pass=0 fail=0 tout=0 skip=0
	case "$built" in
	no*) bad=1 ;;
	*)
		excl=""
		[ $ci = 1 ] && excl=$CROSS_CI_EXCLUDE
		left_out=0
		if ! signal_tls_kept "$b"; then
			echo "  $arch: left out: $SIGNAL_TESTS: the emulator moves a thread's TLS under its" \
				"signal handlers (tests/probe_signal_tls.c failed); they run on every other" \
				"architecture"
			left_out=$(cd "$b" && ctest -N -R "$SIGNAL_TESTS" | sed -n 's/^Total Tests: //p')
			excl=${excl:+$excl|}$SIGNAL_TESTS
		fi
		echo "=== $arch: ctest"
		# Tests without a TIMEOUT of their own: 300 s.
		# shellcheck disable=SC2086
		(cd "$b" && ctest --output-on-failure -j"$JOBS" --timeout 300 \
			${excl:+-E "$excl"} $CTEST_ARGS) >"$b/check-cross-ctest.log" 2>&1
		res=$(grep -E '^ *[0-9]+/[0-9]+ Test +#' "$b/check-cross-ctest.log")
		pass=$(printf '%s\n' "$res" | grep -c ' Passed ')
		fail=$(printf '%s\n' "$res" | grep -Ec '\*\*\*(Failed|Exception)|Not Run|\*\*\*Not')
		tout=$(printf '%s\n' "$res" | grep -c '\*\*\*Timeout')
		skip=$(( $(printf '%s\n' "$res" | grep -c 'Skipped') + ${left_out:-0} ))
		printf '%s\n' "$res" | grep -Ev ' Passed |Skipped' | sed "s/^/  $arch: /"
		[ "$fail" = 0 ] && [ "$tout" = 0 ] && [ "$pass" -gt 0 ] || bad=1
		;;
	esac
	t1=$(date +%s)
	rows="$rows$(printf '| %-8s | %-16s | %4s / %2s / %2s          | %7s | %6s |' \
		"$arch$arch_note" "$built" "$pass" "$fail" "$tout" "$skip" "$((t1 - t0))")
"
done
# A 32-bit and a 64-bit process on one shared-domain file: each must
# refuse the other's (test_shared_domain other-model, doc/shared.md).  The
# 64-bit side is this machine's own build of the test ($BUILD, default
# build, configured here if need be).
NATIVE=${BUILD:-build}
other=""
for arch in $archs; do
	case $arch in armhf|i686) ;; *) continue ;; esac
	b=$BUILD_PREFIX$arch
	[ -x "$b/tests/test_shared_domain" ] || continue
	exec_prefix=""
	# shellcheck disable=SC1091
	. "$b/check-cross.env"
	echo "=== $arch against x86-64: one shared-domain file"
	[ -f "$NATIVE/CMakeCache.txt" ] || cmake -S . -B "$NATIVE" -DSRCU_WERROR=ON >/dev/null
	# shellcheck disable=SC2086
	if cmake --build "$NATIVE" -j"$JOBS" --target test_shared_domain >/dev/null &&
		"$NATIVE/tests/test_shared_domain" other-model $exec_prefix "$PWD/$b/tests/test_shared_domain"; then
		other="$other$arch: refused both ways (-EPROTO). "
	else
		other="$other$arch: FAILED. "
		bad=1
	fi
done

{
	echo
	[ $ci = 1 ] && echo "check-cross --ci (excluded: $CROSS_CI_EXCLUDE)"
	echo "| arch     | builds           | pass / fail / timeout | skipped | wall s |"
	echo "|----------|------------------|-----------------------|---------|--------|"
	printf '%s' "$rows"
	[ -n "${other:-}" ] && echo "64-bit and 32-bit processes on one domain file: $other"
	echo "total wall: $(( $(date +%s) - start_all )) s (JOBS=$JOBS, $(nproc) CPUs)"
} | tee "$summary"
echo "logs: ${BUILD_PREFIX}<arch>/check-cross-{configure,build,ctest}.log"
[ $bad = 0 ] && echo "check-cross: PASS" || { echo "check-cross: FAIL"; exit 1; }
