#!/bin/sh
# urcu_dropin_check.sh BUILD_DIR SOURCE_DIR [plain|autotools|cmake|meson]:
# the liburcu drop-in (doc/urcu.md, "Switching with one variable") used as
# a liburcu user would.  One small liburcu program (<urcu.h>, call_rcu(),
# cds_lfht), built unchanged:
#   plain:     with `pkg-config liburcu liburcu-cds` from the build tree's
#              and from an installed tree's drop-in directory; and a
#              liburcu call the drop-in lacks fails to compile, naming it;
#   autotools, cmake, meson: a project that finds liburcu through
#              pkg-config (PKG_CHECK_MODULES, pkg_check_modules,
#              dependency()) exactly as a liburcu user writes it, built
#              twice: as it is (it links liburcu), and with PKG_CONFIG_PATH
#              set to the build tree's drop-in directory and nothing else
#              changed (it links libsrcu-urcu and not liburcu).
# Exit 77 (skipped, with the reason) when that build system's tools are
# missing (scripts/deps.sh check installs them).
# Bugs caught: a drop-in header or module missing or broken, modules that
# find themselves instead of the real liburcu-cds, build-tree modules that
# point at an install, a lacking name that links (or fails only at link
# time), a switch that needs more than the one variable.
set -eu
BUILD=$(cd "$1" && pwd) SRC=$(cd "$2" && pwd) MODE=${3:-plain}
DROPIN=$BUILD/srcu-urcu/pkgconfig
[ -f "$DROPIN/liburcu.pc" ] || { echo "urcu_dropin: no $DROPIN/liburcu.pc (libsrcu-urcu not built)"; exit 1; }
skip() { echo "urcu_dropin($MODE): SKIP ($*)"; exit 77; }
need() { for t in "$@"; do command -v "$t" >/dev/null 2>&1 || skip "no $t: apt-get install $PKGS"; done; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
unset PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
export CC=${CC:-cc} LC_ALL=C

# The user's program: nothing in it knows of libsrcu.
cat >"$WORK/user.c" <<'C'
#include <urcu.h>
#include <urcu/rculfhash.h>
#include <stdio.h>
#include <stdlib.h>

struct item { int key; struct cds_lfht_node node; struct rcu_head rcu; };
static int freed;

static void free_item(struct rcu_head *head)
{
	free(caa_container_of(head, struct item, rcu));
	__atomic_add_fetch(&freed, 1, __ATOMIC_RELAXED);
}

static int match(struct cds_lfht_node *node, const void *key)
{
	return caa_container_of(node, struct item, node)->key == *(const int *)key;
}

int main(void)
{
	struct cds_lfht *ht = cds_lfht_new(8, 8, 0, CDS_LFHT_AUTO_RESIZE, NULL);
	struct cds_lfht_iter iter;
	struct cds_lfht_node *node;
	int i, found = 0;

	rcu_register_thread();
	for (i = 0; i < 100; i++) {
		struct item *it = malloc(sizeof(*it));
		it->key = i;
		cds_lfht_node_init(&it->node);
		rcu_read_lock();
		cds_lfht_add(ht, (unsigned long)i, &it->node);
		rcu_read_unlock();
	}
	for (i = 0; i < 100; i++) {
		rcu_read_lock();
		cds_lfht_lookup(ht, (unsigned long)i, match, &i, &iter);
		node = cds_lfht_iter_get_node(&iter);
		if (node && cds_lfht_del(ht, node) == 0) {
			found++;
			call_rcu(&caa_container_of(node, struct item, node)->rcu, free_item);
		}
		rcu_read_unlock();
	}
	synchronize_rcu();
	rcu_barrier();
	rcu_unregister_thread();
	printf("found %d, freed %d\n", found, freed);
	return found == 100 && freed == 100 && cds_lfht_destroy(ht, NULL) == 0 ? 0 : 1;
}
C

# links_srcu PROGRAM: it runs on libsrcu-urcu, and no liburcu flavour.
links_srcu() {
	needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
	case " $needed" in
	*" libsrcu-urcu.so."*) ;;
	*) echo "urcu_dropin($MODE): $1 does not link libsrcu-urcu (NEEDED: $needed)"; exit 1 ;;
	esac
	case " $needed" in
	*" liburcu.so."* | *" liburcu-memb.so."* | *" liburcu-mb.so."* | *" liburcu-qsbr.so."* | *" liburcu-bp.so."*)
		echo "urcu_dropin($MODE): $1 links a liburcu flavour too (NEEDED: $needed)"; exit 1 ;;
	esac
}
links_liburcu() {
	readelf -d "$1" | grep -q 'NEEDED.*\[liburcu\.so\.' ||
		{ echo "urcu_dropin($MODE): $1, built without the drop-in, does not link liburcu"; exit 1; }
}

case $MODE in
plain)
	# From the build tree: no install, no LD_LIBRARY_PATH.
	PKG_CONFIG_PATH=$DROPIN $CC -Wall -Wextra -Werror "$WORK/user.c" \
		$(PKG_CONFIG_PATH=$DROPIN pkg-config --cflags --libs liburcu liburcu-cds) -o "$WORK/user"
	"$WORK/user"
	links_srcu "$WORK/user"
	# From an installed tree: the modules find their prefix from where they lie.
	cmake --install "$BUILD" --prefix "$WORK/prefix" >/dev/null
	IDROPIN=$(dirname "$(find "$WORK/prefix" -path '*/srcu-urcu/pkgconfig/liburcu.pc')")
	for m in liburcu liburcu-memb liburcu-cds; do
		[ -f "$IDROPIN/$m.pc" ] || { echo "urcu_dropin: $m.pc not installed in $IDROPIN"; exit 1; }
	done
	$CC -Wall -Wextra -Werror "$WORK/user.c" \
		$(PKG_CONFIG_PATH=$IDROPIN pkg-config --cflags --libs liburcu-memb liburcu-cds) -o "$WORK/user_inst"
	LD_LIBRARY_PATH=$(PKG_CONFIG_PATH=$IDROPIN pkg-config --variable=libdir liburcu) "$WORK/user_inst"
	links_srcu "$WORK/user_inst"
	# Installed elsewhere, nothing finds the modules unless PKG_CONFIG_PATH names them.
	[ "$(pkg-config --variable=dropindir liburcu 2>/dev/null || true)" = "" ] ||
		{ echo "urcu_dropin: the default pkg-config path finds a drop-in liburcu"; exit 1; }
	# A liburcu call the drop-in lacks: a compile error that names it.
	printf '#include <urcu.h>\nint main(void) { return (int)start_poll_synchronize_rcu(); }\n' >"$WORK/lacks.c"
	if $CC -c "$WORK/lacks.c" $(PKG_CONFIG_PATH=$DROPIN pkg-config --cflags liburcu) \
		-o "$WORK/lacks.o" 2>"$WORK/lacks.err"; then
		echo "urcu_dropin: start_poll_synchronize_rcu() compiled against the drop-in"; exit 1
	fi
	grep -q "start_poll_synchronize_rcu" "$WORK/lacks.err" ||
		{ cat "$WORK/lacks.err"; echo "urcu_dropin: the compile error does not name the call"; exit 1; }
	# A flavour it does not provide: the same.
	printf '#include <urcu/urcu-qsbr.h>\nint main(void) { return 0; }\n' >"$WORK/qsbr.c"
	if $CC -c "$WORK/qsbr.c" $(PKG_CONFIG_PATH=$DROPIN pkg-config --cflags liburcu) \
		-o "$WORK/qsbr.o" 2>"$WORK/qsbr.err" || ! grep -q 'qsbr' "$WORK/qsbr.err"; then
		echo "urcu_dropin: <urcu/urcu-qsbr.h> is not refused by name"; exit 1
	fi
	echo "urcu_dropin(plain): PASS (build tree and installed modules; a lacking call: $(grep -m1 'start_poll_synchronize_rcu' "$WORK/lacks.err" | sed 's/^.*error: //'))"
	;;
autotools)
	PKGS="autoconf automake"
	need autoreconf autoconf automake aclocal make
	P=$WORK/proj
	mkdir "$P"
	cp "$WORK/user.c" "$P/"
	cat >"$P/configure.ac" <<'AC'
AC_INIT([urcu-user], [1.0])
AM_INIT_AUTOMAKE([foreign])
AC_PROG_CC
PKG_CHECK_MODULES([URCU], [liburcu liburcu-cds])
AC_CONFIG_FILES([Makefile])
AC_OUTPUT
AC
	cat >"$P/Makefile.am" <<'AM'
bin_PROGRAMS = user
user_SOURCES = user.c
user_CFLAGS = $(URCU_CFLAGS)
user_LDADD = $(URCU_LIBS)
AM
	(cd "$P" && autoreconf -i) >"$WORK/autoreconf.log" 2>&1 || { cat "$WORK/autoreconf.log"; exit 1; }
	for v in liburcu dropin; do
		mkdir "$WORK/b-$v"
		if [ $v = dropin ]; then export PKG_CONFIG_PATH=$DROPIN; fi
		(cd "$WORK/b-$v" && "$P/configure" && make) >"$WORK/$v.log" 2>&1 || { cat "$WORK/$v.log"; exit 1; }
		unset PKG_CONFIG_PATH
	done
	;;
cmake)
	PKGS="cmake"
	need cmake
	P=$WORK/proj
	mkdir "$P"
	cp "$WORK/user.c" "$P/"
	cat >"$P/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(urcu_user LANGUAGES C)
find_package(PkgConfig REQUIRED)
pkg_check_modules(URCU REQUIRED IMPORTED_TARGET liburcu liburcu-cds)
add_executable(user user.c)
target_link_libraries(user PRIVATE PkgConfig::URCU)
CM
	for v in liburcu dropin; do
		if [ $v = dropin ]; then export PKG_CONFIG_PATH=$DROPIN; fi
		{ cmake -S "$P" -B "$WORK/b-$v" && cmake --build "$WORK/b-$v"; } >"$WORK/$v.log" 2>&1 ||
			{ cat "$WORK/$v.log"; exit 1; }
		unset PKG_CONFIG_PATH
	done
	;;
meson)
	PKGS="meson ninja-build"
	need meson ninja
	P=$WORK/proj
	mkdir "$P"
	cp "$WORK/user.c" "$P/"
	cat >"$P/meson.build" <<'MB'
project('urcu-user', 'c')
urcu = dependency('liburcu')
urcu_cds = dependency('liburcu-cds')
executable('user', 'user.c', dependencies : [urcu, urcu_cds])
MB
	for v in liburcu dropin; do
		if [ $v = dropin ]; then export PKG_CONFIG_PATH=$DROPIN; fi
		{ meson setup "$WORK/b-$v" "$P" && ninja -C "$WORK/b-$v"; } >"$WORK/$v.log" 2>&1 ||
			{ cat "$WORK/$v.log"; exit 1; }
		unset PKG_CONFIG_PATH
	done
	;;
*)	echo "usage: $0 BUILD_DIR SOURCE_DIR [plain|autotools|cmake|meson]" >&2; exit 2 ;;
esac
if [ "$MODE" != plain ]; then
	"$WORK/b-liburcu/user"
	links_liburcu "$WORK/b-liburcu/user"
	"$WORK/b-dropin/user"
	links_srcu "$WORK/b-dropin/user"
	echo "urcu_dropin($MODE): PASS (the same project: as it is, it links liburcu; with PKG_CONFIG_PATH=$DROPIN alone, libsrcu-urcu, and runs)"
fi
