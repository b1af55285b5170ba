#!/bin/sh
# claims_check: scripts/claims.sh, on made-up claims and a made-up run.
# Bugs caught: a claim that fails (or whose key the run lacks) reported as
# held, or make bench's check exiting 0 after one; a bound read the wrong
# way round; a ratio taken upside down; a claim whose sentence is on no
# page passing --pages; one claim on two pages counted twice, or its two
# lines allowed different bounds; a partial run (--only) failing the
# claims of the figures it left out, or passing a failing one of a figure
# it ran.  Then the real claims: every sentence on its page.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
t=$(mktemp -d) || exit 1
trap 'rm -rf "$t"' EXIT
fail() { echo "claims_check: FAIL: $*"; exit 1; }

cat > "$t/run.json" <<'JSON'
{
  "results": [
    {"figure": "f", "peer": "a", "metric": "ns", "value": 1.5, "unit": "ns", "min": 1.4, "max": 1.6},
    {"figure": "f", "peer": "b", "metric": "ns", "value": 1.0, "unit": "ns", "min": 1.0, "max": 1.0},
    {"figure": "g", "peer": "a", "metric": "x", "value": 0.8, "unit": "x"}
  ]
}
JSON
page="$t/page.md"
echo "a is at most 1.6 times b, and g is under 1.0." > "$page"

claims() { printf '%s\n' "$@" > "$t/claims.txt"; }
check() { CLAIMS="$t/claims.txt" sh "$here/scripts/claims.sh" --check "$t/run.json" > "$t/out" 2>&1; }

claims "ratio | f/a/ns / f/b/ns | <= 1.6 | $page: at most 1.6 times b" \
       "plain | g/a/x | < 1.0 | $page: g is under 1.0"
check || { cat "$t/out"; fail "claims that hold reported failed"; }
grep -q "claims: 2 of 2 held" "$t/out" || fail "no summary of two held claims"
grep -q "ratio .*1.500" "$t/out" || fail "the ratio is not 1.5 (f/a over f/b)"

claims "ratio | f/a/ns / f/b/ns | <= 1.4 | $page: at most 1.6 times b" \
       "plain | g/a/x | < 1.0 | $page: g is under 1.0"
check && fail "a ratio above its bound held (exit 0)"
grep -q "did not hold: ratio$" "$t/out" || fail "the failed claim is not named: $(cat "$t/out")"

claims "upside | f/b/ns / f/a/ns | >= 1.0 | $page: at most 1.6 times b"
check && fail "1/1.5 >= 1.0 held"

claims "twice | f/a/ns / f/b/ns | <= 1.6 | $page: at most 1.6 times b" \
       "twice | f/a/ns / f/b/ns | <= 1.6 | $page: g is under 1.0"
check || { cat "$t/out"; fail "a claim on two pages failed"; }
grep -q "claims: 1 of 1 held" "$t/out" || fail "a claim on two pages not counted once: $(cat "$t/out")"
claims "twice | f/a/ns / f/b/ns | <= 1.6 | $page: at most 1.6 times b" \
       "twice | f/a/ns / f/b/ns | <= 9 | $page: g is under 1.0"
check && fail "two lines of one claim with different bounds held"

claims "missing | f/c/ns | <= 1 | $page: g is under 1.0"
check && fail "a key the run lacks held"
grep -q "the run has no f/c/ns" "$t/out" || fail "the missing key is not named"

# A run of some figures (srcu-bench --only): a key of one left out is no
# verdict; a claim of a figure that ran still fails.
cp "$t/run.json" "$t/full-copy.json"
sed '1a\  "figures": {"1": "ran", "2": "not-run"},' "$t/full-copy.json" > "$t/run.json"
claims "missing | f/c/ns | <= 1 | $page: g is under 1.0" \
       "plain | g/a/x | < 1.0 | $page: g is under 1.0"
check || { cat "$t/out"; fail "a claim of a figure left out failed a partial run"; }
grep -q "1 of 2 held, 1 not run" "$t/out" || fail "the left-out claim not reported: $(cat "$t/out")"
claims "ratio | f/a/ns / f/b/ns | <= 1.4 | $page: at most 1.6 times b"
check && fail "a failing claim held in a partial run"
cp "$t/full-copy.json" "$t/run.json"

claims "nopage | g/a/x | < 1.0 | $page: a sentence nobody wrote"
CLAIMS="$t/claims.txt" sh "$here/scripts/claims.sh" --pages > "$t/out" 2>&1 &&
	fail "a sentence on no page passed --pages"

sh "$here/scripts/claims.sh" --pages || fail "doc/claims.txt: a sentence is not on its page"
echo "claims_check: PASS"
