#!/bin/sh
# scripts/read-side-asm.sh [ARCH...]: what the inline read side costs on
# each architecture, read off the compiled code.  Compiles a read pair
# around one load (include/srcu.h's srcu_read_lock() and
# srcu_read_unlock(), -O2 -fPIC, as a program or library built with
# Debian's cross gcc would get them) and prints, per architecture, the
# instructions on the straight path from entry to the first return (the
# fast path: gcc lays the slow paths out after it), the atomic
# read-modify-writes and barriers among them, and the out-of-line atomic
# helpers it calls.  A static count, not a timing: the machine that runs
# this is x86-64.  ARCH: x86_64 aarch64 aarch64-lse ppc64le s390x riscv64
# armhf i686 (default: those whose compiler is installed;
# `scripts/deps.sh cross` installs them).
#
# scripts/read-side-asm.sh --deref [ARCH...]: the same for a section that
# follows a pointer (lock, p = srcu_dereference(gp, sp), v = p->x,
# unlock), twice per architecture: srcu_dereference()'s default load (a
# relaxed load, ordered by the address dependency) and the opt-in acquire
# (-DSRCU_DEREFERENCE_ACQUIRE).  Acquire loads (ldar, ldapr) count among
# the barriers (doc/design.md, "srcu_dereference(): acquire or dependency").
#
# scripts/read-side-asm.sh --fast [ARCH...]: the same for
# srcu_read_lock_fast() and srcu_read_unlock_fast() around the one load,
# beside srcu_read_lock()'s pair, per architecture.
set -eu
deref=
fast=
if [ "${1:-}" = --deref ]; then
	deref=1
	shift
elif [ "${1:-}" = --fast ]; then
	fast=1
	shift
fi
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/pair.c" <<'C'
#include <srcu.h>
extern int shared_data;
int srcu_pair(struct srcu_struct *sp)
{
	int idx = srcu_read_lock(sp);
	int v = __atomic_load_n(&shared_data, __ATOMIC_RELAXED);

	srcu_read_unlock(sp, idx);
	return v;
}
C
cat > "$tmp/deref.c" <<'C'
#include <srcu.h>
struct obj { int x; };
extern struct obj *gp;
int srcu_pair(struct srcu_struct *sp)
{
	int idx = srcu_read_lock(sp);
	struct obj *p = srcu_dereference(gp, sp);
	int v = p->x;

	srcu_read_unlock(sp, idx);
	return v;
}
C
cat > "$tmp/fast.c" <<'C'
#include <srcu.h>
extern int shared_data;
int srcu_pair(struct srcu_struct *sp)
{
	struct srcu_ctr *scp = srcu_read_lock_fast(sp);
	int v = __atomic_load_n(&shared_data, __ATOMIC_RELAXED);

	srcu_read_unlock_fast(sp, scp);
	return v;
}
C
triple() {
	case $1 in
	x86_64) echo x86_64-linux-gnu ;;
	aarch64|aarch64-lse) echo aarch64-linux-gnu ;;
	ppc64le) echo powerpc64le-linux-gnu ;;
	s390x) echo s390x-linux-gnu ;;
	riscv64) echo riscv64-linux-gnu ;;
	armhf) echo arm-linux-gnueabihf ;;
	i686) echo i686-linux-gnu ;;
	*) echo "read-side-asm: unknown arch $1" >&2; exit 2 ;;
	esac
}
[ $# -gt 0 ] || set -- x86_64 aarch64 aarch64-lse ppc64le s390x riscv64 armhf i686
if [ -n "$deref" ]; then
	printf '| arch | srcu_dereference() | fast-path instructions | atomic RMWs, acquire loads and barriers on it | out-of-line helpers |\n'
	printf '|---|---|---|---|---|\n'
	variants="dependency acquire"
elif [ -n "$fast" ]; then
	printf '| arch | pair | fast-path instructions | atomic RMWs and barriers on it | out-of-line helpers |\n'
	printf '|---|---|---|---|---|\n'
	variants="pair fast"
else
	printf '| arch | fast-path instructions | atomic RMWs and barriers on it | out-of-line helpers |\n'
	printf '|---|---|---|---|\n'
	variants=pair
fi
for a in "$@"; do
	t=$(triple "$a")
	cc=$t-gcc
	[ "$a" = x86_64 ] && cc=gcc
	command -v "$cc" > /dev/null || { printf '| %s | (no %s) | | |\n' "$a" "$cc"; continue; }
	for v in $variants; do
	flags=
	[ "$a" = aarch64-lse ] && flags=-march=armv8.1-a
	src=$tmp/pair.c
	label=$a
	case $v in
	dependency) src=$tmp/deref.c; label="$a | dependency (default)" ;;
	acquire) src=$tmp/deref.c; label="$a | acquire"; flags="$flags -DSRCU_DEREFERENCE_ACQUIRE" ;;
	pair) [ -n "$fast" ] && label="$a | srcu_read_lock()" ;;
	fast) src=$tmp/fast.c; label="$a | srcu_read_lock_fast()" ;;
	esac
	# shellcheck disable=SC2086
	"$cc" -O2 -fPIC $flags -I "$here/include" -c "$src" -o "$tmp/$a.o"
	od=$t-objdump
	command -v "$od" > /dev/null || od=objdump
	"$od" -d --no-show-raw-insn "$tmp/$a.o" | awk -v arch="$label" '
	/<srcu_pair>:/ { on = 1; next }
	on && NF == 0 { next }
	on && /^[0-9a-f]+ <\.L/ { next }   # a local label (riscv64)
	on && /^[0-9a-f]+ </ { exit }       # the next function
	on {
		sub(/^[ \t]*[0-9a-f]+:[ \t]*/, "")
		split($0, f, /[ \t]+/)
		op = f[1]
		n++
		if (op ~ /^(lock|ldadd|ldaddl|ldadda|ldaddal|ldarx|stdcx\.|lwarx|stwcx\.|ldrex|strex|amoadd\.d|amoadd\.w|lr\.|sc\.|laag|lrarx|xadd|dmb|lwsync|sync|isync|fence|bcr|mfence|ldar|ldapr)/ || $0 ~ /lock /)
			rmw = rmw (rmw ? ", " : "") op
		if ($0 ~ /__aarch64_|__atomic_|__sync_/) {
			h = $0; sub(/.*</, "", h); sub(/>.*/, "", h); sub(/\+.*/, "", h)
			help = help (help ? ", " : "") h
		}
		if (op ~ /^(ret|blr|bx)$/ || $0 ~ /br[ \t]+%r14/ || ($0 ~ /^pop/ && $0 ~ /pc/) || $0 ~ /^ldmia.*pc/) {
			printf("| %s | %d | %s | %s |\n", arch, n, rmw ? rmw : "none", help ? help : "none")
			exit
		}
	}'
	done
done
