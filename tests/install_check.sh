#!/bin/sh
# install_check.sh BUILD_DIR SOURCE_DIR: install into a scratch prefix and
# build a program there as a user would (pkg-config srcu, both headers),
# against the shared and against the static library, then the same with
# CMake's find_package(srcu CONFIG).
# Bugs caught: a header or library missing from the install, a .pc file
# that points at the configure-time prefix instead of where it lies, a
# CMake package that does not import, symbols exported without a version
# (src/libsrcu.map), srcu_kernel.h not installed, man pages not installed, srcu.hpp or libsrcu-urcu
# missing or unusable as installed.
set -eu
BUILD=$1 SRC=$2
PREFIX=$(mktemp -d)
trap 'rm -rf "$PREFIX"' EXIT
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
PC=$(find "$PREFIX" -name srcu.pc)
export PKG_CONFIG_PATH=$(dirname "$PC")
cat >"$PREFIX/user.c" <<'C'
#include <srcu.h>
#include <srcu_gate.h>
#include <srcu_kernel.h>
static DEFINE_SRCU(dom);
static DEFINE_SRCU_GATE(gate);
static int fn(void *arg) { (void)arg; return 7; }
int main(void)
{
	int idx = srcu_read_lock(&dom), tag;

	srcu_read_unlock(&dom, idx);
	{
		guard(srcu)(&dom);
	}
	scoped_guard(srcu, &dom) {
		if (!srcu_read_lock_held(&dom))
			return 1;
	}
	synchronize_srcu(&dom);
	tag = srcu_gate_enter(&gate);
	srcu_gate_exit(&gate, tag);
	return srcu_gate_reset(&gate, fn, 0) == 7 && srcu_batches_completed(&dom) == 1 ? 0 : 1;
}
C
CFLAGS=$(pkg-config --cflags srcu)
LIBDIR=$(pkg-config --variable=libdir srcu)
${CC:-cc} -Wall -Wextra -Werror $CFLAGS "$PREFIX/user.c" $(pkg-config --libs srcu) -o "$PREFIX/user"
LD_LIBRARY_PATH=$LIBDIR "$PREFIX/user"
${CC:-cc} -Wall -Wextra -Werror $CFLAGS "$PREFIX/user.c" "$LIBDIR/libsrcu.a" -lpthread -o "$PREFIX/user_static"
"$PREFIX/user_static"

# Every exported symbol carries the version node of src/libsrcu.map.
LIB=$(ls "$LIBDIR"/libsrcu.so.0.* | head -1)
unversioned=$(objdump -T "$LIB" | grep -E ' D[FO] ' | grep -v -e '\*UND\*' -e 'LIBSRCU_0\.1' || true)
if [ -n "$unversioned" ]; then
	echo "install_check: exported without a version:"; echo "$unversioned"; exit 1
fi
[ -f "$PREFIX/share/man/man3/synchronize_srcu.3" ] || { echo "install_check: no man pages"; exit 1; }
[ -f "$PREFIX/share/man/man7/srcu.7" ] || { echo "install_check: no srcu(7)"; exit 1; }

# Every doc the installed README (or an installed doc) names is installed,
# at the path it names (doc/api.md beside README.md).
DOCDIR=$(dirname "$(find "$PREFIX" -name README.md | head -1)")
# Recorded runs and plots too (doc/runs/..., doc/plots/...); a name with
# an upper-case placeholder (DATE, NAME, ...) is a pattern, not a file.
missing=$(cd "$DOCDIR" && grep -o -h -E '(doc/[A-Za-z0-9_./-]+\.(md|png|json|txt)|CHANGELOG\.md|LICENSE)' \
		README.md doc/*.md | grep -v -E "/[A-Z]+[.-]" |
	sort -u | while read -r f; do [ -f "$f" ] || echo "$f"; done)
if [ -n "$missing" ]; then
	echo "install_check: named by the installed docs, not installed:" $missing; exit 1
fi
# The guide's install paragraph ("`make` alone builds ...") names every
# header, pkg-config file and library that is installed.
para=$(sed -n '/^`make` alone builds/,/^$/p' "$DOCDIR/doc/guide.md" | tr '\n' ' ')
# The liburcu drop-in's directories are named as directories.
for f in $(cd "$PREFIX/include" && find . -path ./srcu-urcu -prune -o -name '*.h*' -print | sed 's|^\./||') \
	 $(find "$PREFIX" -path '*/srcu-urcu/pkgconfig' -prune -o -name '*.pc' -print | xargs -n1 basename) \
	 $([ -d "$PREFIX/include/srcu-urcu" ] && echo include/srcu-urcu/ srcu-urcu/pkgconfig/) \
	 $(find "$PREFIX" -name 'lib*.so' -exec basename {} .so \;); do
	echo "$para" | grep -q -F "\`$f" ||
		{ echo "install_check: doc/guide.md's install paragraph omits the installed $f"; exit 1; }
done

# A CMake user: find_package(srcu CONFIG), srcu::srcu and srcu::srcu_static.
mkdir "$PREFIX/cmake-user"
cp "$PREFIX/user.c" "$PREFIX/cmake-user/user.c"
cat >"$PREFIX/cmake-user/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(user LANGUAGES C)
find_package(srcu 0.1 CONFIG REQUIRED)
add_executable(user_shared user.c)
target_link_libraries(user_shared PRIVATE srcu::srcu)
add_executable(user_static user.c)
target_link_libraries(user_static PRIVATE srcu::srcu_static)
CM
cmake -S "$PREFIX/cmake-user" -B "$PREFIX/cmake-user/b" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$PREFIX/cmake-user/b" >/dev/null
LD_LIBRARY_PATH=$LIBDIR "$PREFIX/cmake-user/b/user_shared"
"$PREFIX/cmake-user/b/user_static"
# The C++ API, header-only: a scope as a section, against the installed
# header and library (when a C++ compiler is at hand).
if command -v "${CXX:-c++}" >/dev/null 2>&1; then
	cat >"$PREFIX/user.cpp" <<'CPP'
#include <srcu.hpp>
#include <mutex>
static srcu::rcu_domain dom;
int main()
{
	{
		std::scoped_lock section(dom);
	}
	srcu::domain d("install-check");
	{
		auto g = srcu::read_lock(d);
	}
	srcu::synchronize(d);
	srcu::rcu_synchronize(dom);
	return d.close();
}
CPP
	${CXX:-c++} -std=c++17 -Wall -Wextra -Werror $CFLAGS "$PREFIX/user.cpp" $(pkg-config --libs srcu) \
		-o "$PREFIX/user_cpp"
	LD_LIBRARY_PATH=$LIBDIR "$PREFIX/user_cpp"
	CPP_NOTE="; srcu.hpp"
fi

# libsrcu-urcu, when built: a liburcu program with one include changed,
# linked with pkg-config srcu-urcu, and its symbols versioned too.
if PC_URCU=$(find "$PREFIX" -name srcu-urcu.pc | grep .); then
	cat >"$PREFIX/compat.c" <<'C'
#include <srcu_urcu.h>
#include <urcu/rculfhash.h>
int main(void)
{
	struct cds_lfht *ht = cds_lfht_new(1, 1, 0, 0, NULL);

	rcu_register_thread();
	rcu_read_lock();
	rcu_read_unlock();
	synchronize_rcu();
	rcu_barrier();
	return ht && cds_lfht_destroy(ht, NULL) == 0 &&
	       srcu_batches_completed(&srcu_urcu_domain) >= 1 ? 0 : 1;
}
C
	${CC:-cc} -Wall -Wextra -Werror $(pkg-config --cflags srcu-urcu) "$PREFIX/compat.c" \
		$(pkg-config --libs srcu-urcu) -o "$PREFIX/compat"
	LD_LIBRARY_PATH=$LIBDIR "$PREFIX/compat"
	# ... statically, the plain way (pkg-config --static gives the same).
	${CC:-cc} -Wall -Wextra -Werror $(pkg-config --cflags srcu-urcu) "$PREFIX/compat.c" \
		"$LIBDIR/libsrcu-urcu.a" "$LIBDIR/libsrcu.a" $(pkg-config --libs liburcu-cds) -lpthread \
		-o "$PREFIX/compat_static"
	"$PREFIX/compat_static"
	# ... and with CMake: find_package(srcu) gives srcu::srcu_urcu.
	mkdir "$PREFIX/cmake-compat"
	cp "$PREFIX/compat.c" "$PREFIX/cmake-compat/compat.c"
	cat >"$PREFIX/cmake-compat/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(compat LANGUAGES C)
find_package(srcu 0.1 CONFIG REQUIRED)
add_executable(compat compat.c)
target_link_libraries(compat PRIVATE srcu::srcu_urcu)
add_executable(compat_static compat.c)
target_link_libraries(compat_static PRIVATE srcu::srcu_urcu_static)
CM
	cmake -S "$PREFIX/cmake-compat" -B "$PREFIX/cmake-compat/b" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
	cmake --build "$PREFIX/cmake-compat/b" >/dev/null
	LD_LIBRARY_PATH=$LIBDIR "$PREFIX/cmake-compat/b/compat"
	"$PREFIX/cmake-compat/b/compat_static"
	LIB=$(ls "$LIBDIR"/libsrcu-urcu.so.0.* | head -1)
	unversioned=$(objdump -T "$LIB" | grep -E ' D[FO] ' | grep -v -e '\*UND\*' -e 'LIBSRCU_URCU_0\.1' || true)
	if [ -n "$unversioned" ]; then
		echo "install_check: libsrcu-urcu exports without a version:"; echo "$unversioned"; exit 1
	fi
	URCU_NOTE="; libsrcu-urcu shared and static, with pkg-config srcu-urcu and srcu::srcu_urcu(_static)"
fi
echo "install_check: PASS (installed; pkg-config and find_package(srcu), shared and static; symbols versioned; man pages; every doc the README names${CPP_NOTE:-}${URCU_NOTE:-})"
