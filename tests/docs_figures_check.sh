#!/bin/sh
# docs_figures_check.sh: scripts/docs-figures.sh --check can fail.  On a
# scratch page quoting the current run: a marker whose text --update
# wrote passes; the same marker with its number changed fails, naming
# the line, the marker and both texts; a key the run lacks fails; a
# measurement without a marker fails; the same number in a code span or
# a fenced block does not.  --compare NEW.json passes for a figure that
# moved by less than the wider of the two runs' spreads, fails for one
# that moved more and for a key NEW lacks.
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


# --compare: a new run (a small JSON written here) against the current
# run, for the keys a page quotes: a figure may move by the wider of the
# two runs' spreads (max - min); a quoted M_min by M's.
cur=$root/$(sed -n 1p "$root/doc/runs/current")
line=$(grep '"figure": "read_pair", "peer": "libsrcu", "metric": "ns_1thread",' "$cur")
val=$(printf '%s\n' "$line" | sed -n 's/.*"value": *\([^,}]*\).*/\1/p')
lo=$(printf '%s\n' "$line" | sed -n 's/.*"min": *\([^,}]*\).*/\1/p')
hi=$(printf '%s\n' "$line" | sed -n 's/.*"max": *\([^,}]*\).*/\1/p')
printf 'Pair <!--fig read_pair/libsrcu/ns_1thread %%.2f ns-->?<!--/fig-->, at best <!--fig read_pair/libsrcu/ns_1thread_min %%.2f ns-->?<!--/fig-->.\n' >"$dir/cmp.md"
# NEW.json with ns_1thread = $1 (spread $3-$4 if given), ns_1thread_min = $2 (if given)
newrun() {
	printf '{\n  "date": "2026-01-01T00:00:00Z",\n  "results": [\n' >"$dir/new.json"
	printf '    {"figure": "read_pair", "peer": "libsrcu", "metric": "ns_1thread", "value": %s, "unit": "ns"%s}%s\n' \
		"$1" "${3:+, \"min\": $3, \"max\": $4}" "${2:+,}" >>"$dir/new.json"
	[ -n "$2" ] && printf '    {"figure": "read_pair", "peer": "libsrcu", "metric": "ns_1thread_min", "value": %s, "unit": "ns"}\n' "$2" >>"$dir/new.json"
	printf '  ]\n}\n' >>"$dir/new.json"
}
calc() { awk -v v="$val" -v lo="$lo" -v hi="$hi" "BEGIN { printf \"%.9g\", ($1) }"; }
if [ -z "$lo" ] || [ -z "$hi" ] || [ "$(calc 'hi > lo')" != 1 ]; then
	fail "the current run $cur has no spread for read_pair/libsrcu/ns_1thread ('$lo'-'$hi')"
else
	newrun "$(calc 'v + 0.9 * (hi - lo)')" "$(calc 'lo - 0.9 * (hi - lo)')"
	"$check" --compare "$dir/new.json" "$dir/cmp.md" >"$dir/out" 2>&1 ||
		{ fail "moves within the spread failed --compare:"; cat "$dir/out"; }
	grep -q '^read_pair/libsrcu/ns_1thread  recorded .* \[.*-.*\]  new .*  within (change .* <= spread .*)$' "$dir/out" &&
		grep -q '^read_pair/libsrcu/ns_1thread_min  recorded .*  new .*  within (change .* <= spread .*)$' "$dir/out" &&
		grep -q ': 2 keys: 2 within their spread, 0 OUTSIDE it (0 of the keys have no spread), 0 missing$' "$dir/out" ||
		{ fail "within: no key, recorded [min-max], new, within, or no summary line:"; cat "$dir/out"; }
	newrun "$(calc 'v + 1.1 * (hi - lo)')" "$(calc 'lo')"
	"$check" --compare "$dir/new.json" "$dir/cmp.md" >"$dir/out" 2>&1 &&
		fail "a move beyond the spread passed --compare"
	grep -q '^read_pair/libsrcu/ns_1thread  recorded .*  new .*  OUTSIDE (change .* > spread .*)$' "$dir/out" &&
		grep -q ': 2 keys: 1 within their spread, 1 OUTSIDE it (0 of the keys have no spread), 0 missing$' "$dir/out" ||
		{ fail "outside: no OUTSIDE line or summary:"; cat "$dir/out"; }
	# The same move, but the new run measured a spread that wide itself.
	newrun "$(calc 'v + 1.1 * (hi - lo)')" "$(calc 'lo')" "$(calc 'lo')" "$(calc 'hi + 1.2 * (hi - lo)')"
	"$check" --compare "$dir/new.json" "$dir/cmp.md" >"$dir/out" 2>&1 ||
		{ fail "a move within the new run's own spread failed --compare:"; cat "$dir/out"; }
	newrun "$val" ""
	"$check" --compare "$dir/new.json" "$dir/cmp.md" >"$dir/out" 2>&1 &&
		fail "a key missing from the new run passed --compare"
	grep -q '^read_pair/libsrcu/ns_1thread_min  recorded .*  new -  MISSING$' "$dir/out" ||
		{ fail "missing: no MISSING line:"; cat "$dir/out"; }
fi

[ $fails -eq 0 ] && echo "docs_figures_check: PASS" || exit 1
