#!/bin/sh
# subproject_check.sh SOURCE_DIR: libsrcu as a subproject of a C-only
# CMake project (add_subdirectory), with no C++ compiler to be found.
# Bugs caught: a subproject that demands C++, or that builds libsrcu's
# tests, tools and examples into its parent's build (and its ctest).
set -eu
SRC=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/main.c" <<'C'
#include <srcu.h>
static DEFINE_SRCU(dom);
int main(void)
{
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	synchronize_srcu(&dom);
	return srcu_batches_completed(&dom) == 1 ? 0 : 1;
}
C
cat >"$WORK/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.16)
project(parent LANGUAGES C)
add_subdirectory($SRC srcu)
add_executable(app main.c)
target_link_libraries(app PRIVATE srcu::srcu_static)
CM
CXX=/nonexistent/c++ cmake -S "$WORK" -B "$WORK/b" >"$WORK/configure.log" 2>&1 ||
	{ cat "$WORK/configure.log"; exit 1; }
cmake --build "$WORK/b" >/dev/null
"$WORK/b/app"
for t in srcu-bench srcu-torture test_api list_del; do
	if cmake --build "$WORK/b" --target "$t" >/dev/null 2>&1; then
		echo "subproject_check: the parent's build has libsrcu's target $t"; exit 1
	fi
done
echo "subproject_check: PASS (a C-only parent, no C++ compiler; only the libraries)"
