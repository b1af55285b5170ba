#!/bin/sh
# man_check.sh BUILD_DIR: install into a scratch prefix, then check the
# installed reference against the installed headers:
#  - every public name the headers declare (functions, variables, macros,
#    struct tags; C++: the names of namespace srcu) has a man page,
#    man3/<name>.3 (C++: man3/srcu::<name>.3), a page or a link to one;
#    internals (srcu__*, SRCU__*, SRCU_GATE__*, include guards) are not
#    public.  A macro that only renames (srcu_urcu.h's liburcu names,
#    #define rcu_read_lock srcu_urcu_read_lock) must be named on a page:
#    liburcu documents it, srcu_urcu_flavor(3) what differs;
#  - every page has NAME, LIBRARY, SYNOPSIS (section 3), DESCRIPTION and
#    SEE ALSO, in that order; every page its SEE ALSO (or its text, as
#    .BR name (N)) names exists (a few system pages excepted); a link
#    (.so) points at a page that exists;
#  - srcu(7) exists, and every doc a page names (README.md, doc/api.md,
#    ...) by its installed path is installed there;
#  - with groff at hand, no page draws a warning (groff -ww).
# Bugs caught: a name added to a header without a section in doc/api.md
# (or doc/man/), a SEE ALSO to a page renamed or never written, a page
# without its LIBRARY line, a page not installed, broken roff.
set -eu
BUILD=$1
PREFIX=$(mktemp -d)
trap 'rm -rf "$PREFIX"' EXIT
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
INC=$PREFIX/include
MAN=$PREFIX/share/man
fail=0
err() { echo "man_check: $*"; fail=1; }

[ -d "$MAN/man3" ] || { echo "man_check: no man3 installed"; exit 1; }
[ -f "$MAN/man7/srcu.7" ] || err "srcu(7) not installed"

# The docs a page names are where the install puts them: the pages name
# the configured documentation directory; this install's is under PREFIX.
conf_prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:[A-Z]*=//p' "$BUILD/CMakeCache.txt")
conf_docdir=$(grep -o -E "$conf_prefix/[A-Za-z0-9_./-]+/README\.md" "$MAN/man7/srcu.7" | head -1)
conf_docdir=${conf_docdir%/README.md}
[ -n "$conf_docdir" ] || err "srcu(7) names no README.md under $conf_prefix"
named=$(cat "$MAN"/man7/*.7 "$MAN"/man3/*.3 | grep -o -E "$conf_docdir/[A-Za-z0-9_./-]+\.(md|txt)" | sort -u)
[ -n "$named" ] || err "no page names a doc under $conf_docdir (README.md, doc/api.md, ...)"
for f in $named; do
	[ -f "$PREFIX${f#"$conf_prefix"}" ] || err "a page names $f, which the install lacks"
done

# ---- the public names of the C headers ----
# One line each: "name" (needs a page) or "=name" (a renaming macro: needs
# a mention).  Comments are removed first; a declaration is taken where it
# starts in column 0 (bodies and macro continuations are indented).
c_names() {
	awk '
	{
		line = $0
		# comments, also across lines
		out = ""
		while (line != "") {
			if (incomment) {
				k = index(line, "*/")
				if (!k) { line = ""; break }
				line = substr(line, k + 2); incomment = 0
			} else {
				k = index(line, "/*")
				if (!k) { out = out line; break }
				out = out substr(line, 1, k - 1)
				line = substr(line, k + 2); incomment = 1
			}
		}
		sub(/\/\/.*/, "", out)
		l = out
		if (l ~ /^#[ \t]*define[ \t]+[A-Za-z_]/) {
			sub(/^#[ \t]*define[ \t]+/, "", l)
			n = l; sub(/[^A-Za-z0-9_].*/, "", n)
			rest = substr(l, length(n) + 1)
			if (n ~ /_H$/ && rest ~ /^[ \t]*$/)
				next                      # include guard
			if (rest ~ /^[ \t]+[A-Za-z_][A-Za-z0-9_]*[ \t]*$/ && n !~ /^(SRCU|srcu)/)
				print "=" n               # a renaming (liburcu names)
			else if (rest !~ /^[ \t]*$/)
				print n
			next
		}
		if (l !~ /^[A-Za-z_]/)
			next
		if (l ~ /^struct [A-Za-z_][A-Za-z0-9_]*[ \t]*[{;][ \t]*$/) {
			n = l; sub(/^struct /, "", n); sub(/[^A-Za-z0-9_].*/, "", n)
			print (n ~ /srcu/ ? "" : "=") n   # struct rcu_head: from liburcu
			next
		}
		gsub(/SRCU__API |SRCU__TLS_FAST|static |inline |extern /, "", l)
		if (match(l, /[A-Za-z_][A-Za-z0-9_]*[ \t]*\(/)) {   # a function
			n = substr(l, RSTART, RLENGTH); sub(/[ \t]*\($/, "", n)
			if (n != "__attribute__")
				print n
			next
		}
		if (l ~ /;[ \t]*$/ && match(l, /[A-Za-z_][A-Za-z0-9_]*[ \t]*;/)) {   # a variable
			n = substr(l, RSTART, RLENGTH); sub(/[ \t]*;$/, "", n)
			print n
		}
	}' "$@" | grep -v -E '^=?(srcu__|SRCU__|SRCU_GATE__|__)' | sort -u
}

# ---- the public names of srcu.hpp: namespace srcu, not srcu::detail ----
cpp_names() {
	awk '
	/^namespace detail \{/ { detail = 1; next }
	detail && /^\} \/\/ namespace detail/ { detail = 0; next }
	detail { next }
	/^namespace srcu \{/ { ns = 1; next }
	!ns { next }
	{
		l = $0
		sub(/\[\[nodiscard\]\] /, "", l)
		if (l ~ /^template </) { pending = 1; next }
		if (l ~ /^(class|struct) [A-Za-z_][A-Za-z0-9_]*[ :{;]/ || l ~ /^(class|struct) [A-Za-z_][A-Za-z0-9_]*$/) {
			n = l; sub(/^(class|struct) /, "", n); sub(/[^A-Za-z0-9_].*/, "", n)
			if (l !~ /;[ \t]*$/ || pending)   # not a forward declaration
				print "srcu::" n
			pending = 0
			next
		}
		if (l ~ /^(inline )?[A-Za-z_][A-Za-z0-9_:<>&* ]* &?[A-Za-z_][A-Za-z0-9_]*\(/ || pending) {
			if (match(l, /[A-Za-z_][A-Za-z0-9_]*\(/)) {
				n = substr(l, RSTART, RLENGTH - 1)
				print "srcu::" n
			}
		}
		pending = 0
	}' "$@" | sort -u
}

# The liburcu drop-in's headers (include/srcu-urcu/) are liburcu's names,
# documented by liburcu; doc/urcu.md and srcu_urcu_flavor(3) say what
# differs.
headers=$(find "$INC" -path "$INC/srcu-urcu" -prune -o -name '*.h' -print | sort)
names=$(c_names $headers)
[ -f "$INC/srcu.hpp" ] && names="$names
$(cpp_names "$INC/srcu.hpp")"
n=0
for name in $names; do
	case $name in
	=*)	name=${name#=}
		grep -l -w -r -- "$name" "$MAN/man3" "$MAN/man7" >/dev/null ||
			err "$name (a renaming macro in the headers) is named on no page" ;;
	*)	n=$((n + 1))
		[ -f "$MAN/man3/$name.3" ] ||
			err "$name: public in the installed headers, no man page (a '### $name' section in doc/api.md, or a name on a page in doc/man/)" ;;
	esac
done
[ "$n" -ge 60 ] || err "only $n public names found in $INC: the scan is broken"

# ---- every page: its sections, its SEE ALSO, its links ----
pages=0
for f in "$MAN"/man[37]/*; do
	base=${f#"$MAN"/}
	first=$(head -n 1 "$f")
	case $first in
	.so\ *)	target=${first#.so }
		[ -f "$MAN/$target" ] || err "$base: links to $target, which does not exist"
		continue ;;
	esac
	pages=$((pages + 1))
	sec=${f##*.}
	want="NAME LIBRARY"
	[ "$sec" = 3 ] && want="$want SYNOPSIS"
	want="$want DESCRIPTION SEE ALSO"
	have=$(sed -n 's/^\.SH "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$f" | tr '\n' ' ')
	# the wanted sections, in this order (others may come between)
	order=$(echo "$have" | tr ' ' '\n' | awk -v w="$want" '
		BEGIN { n = split(w, a, " "); i = 1 }
		i <= n && $0 == a[i] { i++ }
		END { print (i > n) ? "ok" : a[i] }')
	[ "$order" = ok ] || err "$base: no .SH $order (or out of order; want: $want)"
	# SEE ALSO: every entry; elsewhere: every ".BR name (N)"
	awk '/^\.SH/ { in_sa = ($0 ~ /SEE ALSO/); next }
	     in_sa && /^\.BR? / { print $2, $3; next }
	     /^\.BR [^ "]+ \([0-9]\)/ { print $2, $3 }' "$f" |
	while read -r ref secp; do
		s=$(echo "$secp" | sed -n 's/^(\([0-9]\)).*/\1/p')
		[ -n "$s" ] || { echo "man_check: $base: SEE ALSO entry '$ref $secp' is not .BR name (N)"; echo x; continue; }
		# pages of other projects: only the system's ones we name
		if [ -f "$MAN/man$s/$ref.$s" ]; then continue; fi
		case "$ref($s)" in
		membarrier\(2\)|futex\(2\)|fork\(2\)|clone\(2\)|pidfd_open\(2\)|memfd_create\(2\)|pthreads\(7\)|signal-safety\(7\)|pkg-config\(1\)) continue ;;
		esac
		echo "man_check: $base: refers to $ref($s), which is not installed"
		echo x
	done | { out=$(cat); if [ -n "$out" ]; then echo "$out" | grep -v '^x$'; exit 1; fi; } || fail=1
	grep -q 'pkg\\-config' "$f" || err "$base: LIBRARY has no pkg-config line"
done

# ---- roff warnings ----
if command -v groff >/dev/null 2>&1; then
	for f in "$MAN"/man[37]/*; do
		w=$(cd "$MAN" && LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "${f#"$MAN"/}" 2>&1 || true)
		[ -z "$w" ] || err "${f#"$MAN"/}: groff: $w"
	done
	groff_note="; groff -ww quiet"
fi

[ "$fail" = 0 ] || { echo "man_check: FAIL"; exit 1; }
echo "man_check: PASS ($n public names, each with a page; $pages pages with NAME, LIBRARY, SYNOPSIS, DESCRIPTION, SEE ALSO, every cross-reference installed${groff_note:-})"
