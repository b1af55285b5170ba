#!/bin/sh
# deb_check.sh SOURCE_DIR: dpkg-buildpackage turns the tree into libsrcu0,
# libsrcu-dev, libsrcu-urcu0 and libsrcu-urcu-dev; inspect them with
# dpkg-deb (each package's files and dependencies), unpack them into a
# scratch root (dpkg-deb -x), and build user programs against that root
# as a user of the installed packages would: pkg-config srcu, CMake's
# find_package, pkg-config srcu-urcu, and the liburcu drop-in's modules;
# run them.  The machine's installed packages are never touched (no
# dpkg -i, no root needed): compare `dpkg -l` before and after.
# Exit 77 (skipped) without dpkg-buildpackage.
# Bugs caught: debian/ that does not build, a package missing the header,
# the .pc file, the CMake package, the library, the man pages or the
# drop-in, a broken dependency between the packages.
set -eu
SRC=$1
command -v dpkg-buildpackage >/dev/null || { echo "deb_check: SKIP (no dpkg-buildpackage: apt-get install debhelper dpkg-dev)"; exit 77; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/libsrcu"
if [ -d "$SRC/.git" ]; then
	git -C "$SRC" ls-files -co --exclude-standard | (cd "$SRC" && tar -cf - -T -) | tar -xf - -C "$WORK/libsrcu"
else
	(cd "$SRC" && tar -cf - --exclude='./build*' .) | tar -xf - -C "$WORK/libsrcu"
fi
(cd "$WORK/libsrcu" && dpkg-buildpackage -us -uc -b) >"$WORK/build.log" 2>&1 ||
	{ tail -40 "$WORK/build.log"; exit 1; }
# What each package holds and needs, read from the .debs themselves.
fail() { echo "deb_check: $*"; exit 1; }
has() {   # has PACKAGE PATH-REGEX
	dpkg-deb -c "$WORK/$1"_*.deb | awk '{ print $NF }' | grep -q -E "$2" ||
		fail "$1 lacks a file matching $2"
}
depends() {   # depends PACKAGE NEEDED
	dpkg-deb -f "$WORK/$1"_*.deb Depends | grep -q -E "(^|, )$2" ||
		fail "$1 does not depend on $2 (Depends: $(dpkg-deb -f "$WORK/$1"_*.deb Depends))"
}
has libsrcu0 '/libsrcu\.so\.0\.'
has libsrcu-dev '/usr/include/srcu\.h$'
has libsrcu-dev '/pkgconfig/srcu\.pc$'
has libsrcu-dev '/cmake/srcu/srcuConfig\.cmake$'
has libsrcu-dev '/man3/synchronize_srcu\.3'
has libsrcu-urcu0 '/libsrcu-urcu\.so\.0\.'
has libsrcu-urcu-dev '/usr/include/srcu_urcu\.h$'
has libsrcu-urcu-dev '/usr/include/srcu-urcu/urcu\.h$'
has libsrcu-urcu-dev '/srcu-urcu/pkgconfig/liburcu\.pc$'
depends libsrcu-dev 'libsrcu0 \(= '
depends libsrcu-urcu-dev 'libsrcu-urcu0 \(= '
# Unpacked into a scratch root: the .pc files and the CMake package find
# their prefix from where they lie.
ROOT=$WORK/root
for d in "$WORK"/libsrcu0_*.deb "$WORK"/libsrcu-dev_*.deb \
	 "$WORK"/libsrcu-urcu0_*.deb "$WORK"/libsrcu-urcu-dev_*.deb; do
	dpkg-deb -x "$d" "$ROOT"
done
# The man pages name the docs where the package puts them.
docs=$(zcat "$ROOT"/usr/share/man/man7/srcu.7.gz "$ROOT"/usr/share/man/man3/*.3.gz 2>/dev/null |
	grep -o -E '/usr/share/doc/[A-Za-z0-9_./-]+\.(md|txt)' | sort -u)
[ -n "$docs" ] || fail "the man pages name no installed doc"
for f in $docs; do
	[ -f "$ROOT$f" ] || fail "a man page names $f, which no package has"
done
LIBDIR=$(dirname "$(find "$ROOT" -name 'libsrcu.so.0' | head -1)")
export PKG_CONFIG_PATH=$LIBDIR/pkgconfig LD_LIBRARY_PATH=$LIBDIR

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
cmake -S "$WORK/cm" -B "$WORK/cm/b" -DCMAKE_PREFIX_PATH="$ROOT/usr" >/dev/null && cmake --build "$WORK/cm/b" >/dev/null
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
# The liburcu drop-in of libsrcu-urcu-dev: a liburcu program unchanged.
printf '#include <urcu.h>\nint main(void) { rcu_read_lock(); rcu_read_unlock(); synchronize_rcu(); return 0; }\n' \
	>"$WORK/dropin.c"
${CC:-cc} -Wall -Wextra -Werror "$WORK/dropin.c" \
	$(PKG_CONFIG_PATH=$LIBDIR/srcu-urcu/pkgconfig pkg-config --cflags --libs liburcu) -o "$WORK/dropin"
"$WORK/dropin"
readelf -d "$WORK/dropin" | grep -q 'NEEDED.*libsrcu-urcu' || fail "the drop-in user does not link libsrcu-urcu"
echo "deb_check: PASS (dpkg-buildpackage: libsrcu0, libsrcu-dev, libsrcu-urcu0, libsrcu-urcu-dev inspected with dpkg-deb and unpacked into a scratch root, none installed; pkg-config, find_package, srcu-urcu and drop-in users run)"
