#!/bin/sh
# deb_check.sh SOURCE_DIR: dpkg-buildpackage turns the tree into libsrcu0
# and libsrcu-dev; install them (as root, when no libsrcu is installed
# already), build a user program against the installed packages with
# pkg-config and with CMake's find_package, run both, then purge them.
# Exit 77 (skipped) without dpkg-buildpackage, as non-root, or when the
# system already has a libsrcu package that this test must not replace.
# Bugs caught: debian/ that does not build, a package missing the header,
# the .pc file, the CMake package or the library, a broken dependency.
set -eu
SRC=$1
command -v dpkg-buildpackage >/dev/null || { echo "deb_check: no dpkg-buildpackage (apt-get install debhelper dpkg-dev)"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "deb_check: needs root to install the packages"; exit 77; }
if dpkg-query -W libsrcu0 libsrcu-dev >/dev/null 2>&1; then
	echo "deb_check: a libsrcu package is installed already; not replacing it"; exit 77
fi
WORK=$(mktemp -d)
cleanup() {
	dpkg -P libsrcu-urcu-dev libsrcu-urcu0 libsrcu-dev libsrcu0 >/dev/null 2>&1 || true
	rm -rf "$WORK"
}
trap cleanup EXIT
mkdir "$WORK/libsrcu"
if [ -d "$SRC/.git" ]; then
	git -C "$SRC" ls-files -co --exclude-standard | (cd "$SRC" && tar -cf - -T -) | tar -xf - -C "$WORK/libsrcu"
else
	(cd "$SRC" && tar -cf - --exclude='./build*' .) | tar -xf - -C "$WORK/libsrcu"
fi
(cd "$WORK/libsrcu" && dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1 ||
	{ tail -40 "$WORK/build.log"; exit 1; }
dpkg -i "$WORK"/libsrcu0_*.deb "$WORK"/libsrcu-dev_*.deb \
	"$WORK"/libsrcu-urcu0_*.deb "$WORK"/libsrcu-urcu-dev_*.deb >/dev/null

cat >"$WORK/user.c" <<'C'
#include <srcu.h>
#include <string.h>
static DEFINE_SRCU(dom);
int main(void)
{
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	synchronize_srcu(&dom);
	return srcu_batches_completed(&dom) == 1 &&
	       strcmp(srcu_version(), SRCU_VERSION_STRING) == 0 ? 0 : 1;
}
C
${CC:-cc} -Wall -Wextra -Werror "$WORK/user.c" $(pkg-config --cflags --libs srcu) -o "$WORK/user"
"$WORK/user"
mkdir "$WORK/cm"
cp "$WORK/user.c" "$WORK/cm/"
cat >"$WORK/cm/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(user LANGUAGES C)
find_package(srcu CONFIG REQUIRED)
add_executable(user user.c)
target_link_libraries(user PRIVATE srcu::srcu)
CM
cmake -S "$WORK/cm" -B "$WORK/cm/b" >/dev/null && cmake --build "$WORK/cm/b" >/dev/null
"$WORK/cm/b/user"
# A liburcu program moved over: one include, pkg-config srcu-urcu.
cat >"$WORK/compat.c" <<'C'
#include <srcu_urcu.h>
int main(void)
{
	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	synchronize_rcu();
	rcu_barrier();
	return srcu_batches_completed(&srcu_urcu_domain) >= 1 ? 0 : 1;
}
C
${CC:-cc} -Wall -Wextra -Werror "$WORK/compat.c" $(pkg-config --cflags --libs srcu-urcu) -o "$WORK/compat"
"$WORK/compat"
man -w synchronize_srcu >/dev/null 2>&1 || [ -f /usr/share/man/man3/synchronize_srcu.3.gz ] ||
	{ echo "deb_check: man page synchronize_srcu(3) not installed"; exit 1; }
echo "deb_check: PASS (dpkg-buildpackage: libsrcu0, libsrcu-dev, libsrcu-urcu0, libsrcu-urcu-dev installed; pkg-config and find_package users run)"
