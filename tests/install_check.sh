#!/bin/sh
# install_check.sh BUILD_DIR SOURCE_DIR: install into a scratch prefix and
# build a program there as a user would (pkg-config srcu, both headers),
# against the shared and against the static library.
# Bugs caught: a header or library missing from the install, a .pc file
# that points at the configure-time prefix instead of where it lies.
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
static DEFINE_SRCU(dom);
static DEFINE_SRCU_GATE(gate);
static int fn(void *arg) { (void)arg; return 7; }
int main(void)
{
	int idx = srcu_read_lock(&dom), tag;

	srcu_read_unlock(&dom, idx);
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
echo "install_check: PASS (installed, built with pkg-config, shared and static)"
