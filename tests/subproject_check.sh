#!/bin/sh
# subproject_check.sh SOURCE_DIR: libsrcu as a subproject of a C-only
# CMake project (add_subdirectory), with no C++ compiler to be found.
# Bugs caught: a subproject that demands C++, or that builds libsrcu's
# tests, tools and examples into its parent's build (and its ctest); a
# static link that leaves the library's constructor out (an archive
# member per file, the program calling nothing in its start-up object): no
# thread-exit hook, so a thread that exits inside a section holds every
# grace period forever.
set -eu
SRC=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cat >"$WORK/main.c" <<'C'
#include <pthread.h>
#include <srcu.h>
#include <unistd.h>
static DEFINE_SRCU(dom);
static void *exit_inside(void *arg)
{
	(void)arg;
	srcu_read_lock(&dom);   /* exits inside: the exit hook ends it */
	return NULL;
}
int main(void)
{
	pthread_t t;

	alarm(20);   /* without the library's constructor the GP never ends */
	srcu_read_unlock(&dom, srcu_read_lock(&dom));
	pthread_create(&t, NULL, exit_inside, NULL);
	pthread_join(t, NULL);
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
