#!/bin/sh
# scripts/deps.sh: install the Debian packages a make target needs, if any
# is missing.  The one list of packages for the Makefile and .ci/run.
#
#   scripts/deps.sh build|check|bench|ci
#   scripts/deps.sh cross [ARCH...]
#
# build: compile and test with gcc; check: + clang (the second compiler),
# spin (the model), valgrind, debhelper (the Debian packages), liburcu-dev
# (libsrcu-urcu, the liburcu flavour, and its tests), meson, ninja-build,
# autoconf and automake (the liburcu drop-in's build-system tests), and
# the cross compilers and qemu-user of make check's cross share (aarch64,
# armhf): all before the first suite starts; bench: + the peers
# srcu-bench compares (liburcu-dev, libck-dev) and gnuplot for its plots;
# ci: check and bench.  cross: what scripts/check-cross.sh needs for each ARCH
# (default all: aarch64 ppc64le s390x riscv64 armhf i686 musl): Debian's
# gcc/g++ cross compilers (their target libc comes with them), qemu-user
# for the emulated ones (and i686 where the kernel cannot exec i386
# binaries), musl-tools for musl.
# As root it runs apt-get; otherwise sudo -n apt-get; if neither can, it
# stops at once and prints the exact command to run.  Idempotent: nothing
# is installed, and no package list fetched, when all are present.
# Another apt or dpkg holding the package locks (unattended-upgrades, a
# second apt-get) is waited for, saying so within 10 s and every 30 s, for up to
# DEPS_LOCK_WAIT seconds (default 900) before giving up.
#
# SPDX-License-Identifier: MIT
set -eu

BUILD="build-essential cmake pkg-config"
CHECK="clang spin valgrind debhelper dpkg-dev liburcu-dev meson ninja-build autoconf automake"
BENCH="liburcu-dev libck-dev gnuplot-nox"

cross_pkgs() {
	for a in "$@"; do
		case "$a" in
		aarch64) t=aarch64-linux-gnu ;;
		ppc64le) t=powerpc64le-linux-gnu ;;
		s390x)   t=s390x-linux-gnu ;;
		riscv64) t=riscv64-linux-gnu ;;
		armhf)   t=arm-linux-gnueabihf ;;
		i686)    t=i686-linux-gnu ;;
		musl)    echo musl-tools; continue ;;
		*) echo "deps: unknown architecture '$a'" >&2; exit 2 ;;
		esac
		echo "gcc-$t g++-$t"
		echo qemu-user   # i686: where the kernel cannot exec i386 binaries
	done
}

case "${1:-}" in
build) want="$BUILD" ;;
cross) shift
       [ $# -gt 0 ] || set -- aarch64 ppc64le s390x riscv64 armhf i686 musl
       want="$BUILD $(cross_pkgs "$@" | tr '\n' ' ')" ;;
check) want="$BUILD $CHECK $(cross_pkgs aarch64 armhf | tr '\n' ' ')" ;;
bench) want="$BUILD $BENCH" ;;
ci)    want="$BUILD $CHECK $BENCH $(cross_pkgs aarch64 armhf | tr '\n' ' ')" ;;
*)     echo "usage: $0 build|check|bench|ci|cross [ARCH...]" >&2; exit 2 ;;
esac

missing=""
for p in $(printf '%s\n' $want | sort -u); do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps: missing packages:$missing (no apt-get here: install them by hand)" >&2
	exit 1
fi
if [ "$(id -u)" = 0 ]; then
	run=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
	run="sudo -n"
else
	echo "deps: missing packages:$missing" >&2
	echo "deps: run as root:  apt-get install -y --no-install-recommends$missing" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
LOCK_WAIT=${DEPS_LOCK_WAIT:-900}
t0=$(date +%s)
# apt_get ARGS...: apt-get, waiting out another apt or dpkg that holds a
# lock (apt's own wait, DPkg::Lock::Timeout, covers the dpkg lock of an
# install; a held lists or archives lock fails at once: retried here).
apt_get() {
	said=0
	while :; do
		err=$(mktemp)
		if $run apt-get -o DPkg::Lock::Timeout=10 "$@" 2>"$err"; then
			rm -f "$err"; return 0
		else
			rc=$?
		fi
		waited=$(( $(date +%s) - t0 ))
		if grep -q -E 'Could not get lock|Unable to acquire|Unable to lock|is held by process' "$err" &&
		   [ "$waited" -lt "$LOCK_WAIT" ]; then
			if [ $((waited - said)) -ge 30 ] || [ "$said" = 0 ]; then
				lock=$(grep -o -m1 '/var/[a-z/_-]*lock[a-z-]*' "$err" || echo 'a package lock')
				who=$(grep -o -m1 'held by process [0-9]* *([^)]*)' "$err" || echo 'held by another apt or dpkg')
				echo "deps: waiting for $lock ($who): ${waited} s so far, up to ${LOCK_WAIT} s (DEPS_LOCK_WAIT)" >&2
				said=$((waited > 0 ? waited : 1))
			fi
			rm -f "$err"; sleep 3; continue
		fi
		cat "$err" >&2; rm -f "$err"
		[ "$waited" -ge "$LOCK_WAIT" ] && echo "deps: still locked after ${LOCK_WAIT} s (DEPS_LOCK_WAIT); giving up" >&2
		return $rc
	done
}
# A fresh machine's package lists may be empty or stale: refresh once.
apt_get update -qq
apt_get install -y -qq --no-install-recommends $missing
[ "$(( $(date +%s) - t0 ))" -ge 5 ] && echo "deps: done in $(( $(date +%s) - t0 )) s"
exit 0
