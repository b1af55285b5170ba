#!/bin/sh
# docs_figures_check.sh: scripts/docs-figures.sh --check can fail.  On a
# scratch page quoting the current run: a marker whose text --update
# wrote passes; the same marker with its number changed fails, naming
# the line, the marker and both texts; a key the run lacks fails; a
# measurement without a marker fails; the same number in a code span or
# a fenced block does not.
# Bug caught: a check that passes whatever the pages say (the figures it
# guards drifted for weeks: issue 25).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
check=$root/scripts/docs-figures.sh
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0
fail() { echo "docs_figures_check: $*"; fails=$((fails + 1)); }
page=$dir/page.md

# A key every full or --quick run has: figure 1's read pair.
printf 'The pair: <!--fig read_pair/libsrcu/ns_1thread %%.2f ns-->?<!--/fig-->.\n' >"$page"
"$check" --update "$page" >/dev/null || fail "--update failed on a good marker"
"$check" --check "$page" >"$dir/out" 2>&1 || { fail "a marker --update wrote does not pass:"; cat "$dir/out"; }

sed 's/-->[0-9.]* ns</-->9999.99 ns</' "$page" >"$dir/changed.md"
"$check" --check "$dir/changed.md" >"$dir/out" 2>&1 && fail "a changed number passed"
grep -q 'changed.md:1: read_pair/libsrcu/ns_1thread %.2f ns: quoted "9999.99 ns", recorded' "$dir/out" ||
	{ fail "a changed number: no file:line, key, quoted and recorded:"; cat "$dir/out"; }

printf 'x <!--fig read_pair/nobody/ns_1thread-->1<!--/fig-->\n' >"$dir/key.md"
"$check" --check "$dir/key.md" >"$dir/out" 2>&1 && fail "a key the run lacks passed"
grep -q 'key read_pair/nobody/ns_1thread is not in' "$dir/out" || { fail "a missing key: no message"; cat "$dir/out"; }

printf 'It reads in 1.23 ns, 0.77x of urcu-memb, 26 instructions.\n' >"$dir/bare.md"
"$check" --check "$dir/bare.md" >"$dir/out" 2>&1 && fail "an unmarked measurement passed"
for m in '1.23 ns' '0.77x' '26 instructions'; do
	grep -q "bare.md:1: unmarked measurement \"$m\"" "$dir/out" || fail "unmarked \"$m\" not reported"
done

printf 'Code: `1.23 ns`.\n\n```\n(1) 1.23 ns\n```\n\n    indented 1.23 ns\n' >"$dir/code.md"
"$check" --check "$dir/code.md" >"$dir/out" 2>&1 || { fail "a number in code was taken for prose:"; cat "$dir/out"; }

[ $fails -eq 0 ] && echo "docs_figures_check: PASS" || exit 1
