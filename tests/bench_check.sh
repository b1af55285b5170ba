#!/bin/sh
# bench_check.sh SRCU_BENCH: srcu-bench reports a figure that fails.  A
# failure is injected into figure 9 (the cheapest, well under a second)
# with SRCU_BENCH_FAIL, the test-only switch: the run must exit non-zero,
# name the figure on a FAILED line, and its SUMMARY must say which figures
# failed or did not run instead of printing zeros for them.  A clean run
# of the same figure exits 0 and says "failed=none".
# With gnuplot, --plot draws figure 9's PNG, titled "Figure 9" with
# "lower is better" on its axis, only when the figure ran: a failed run
# leaves none, and removes an earlier run's.
# --background-load starts its spinning child and leaves none behind.
# Bug caught: `make bench` exited 0 when figure 11 stopped ("figure 11
# stops here"), and the SUMMARY printed 0.00 for every figure not run;
# --plot drew a chart for a figure that failed, titled with JSON keys.
set -u
bench=$1
# A cross run: the emulator's command line goes before it (check.h).
run() { ${SRCU_TEST_EXEC_PREFIX:-} "$bench" "$@"; }
out=$(mktemp)
plots=$(mktemp -d)
trap 'rm -rf "$out" "$plots"' EXIT
png=$plots/fig09-machine.png
gnuplot --version >/dev/null 2>&1 && have_gnuplot=1 || have_gnuplot=0
fails=0
fail() { echo "bench_check: $*"; fails=$((fails + 1)); }
summary() { grep '^SUMMARY ' "$out"; }

(export SRCU_BENCH_FAIL=9; run --quick --no-callgrind --only 9 --plot "$plots") >"$out" 2>&1
rc=$?
[ -e "$png" ] && fail "a failed figure 9 got a plot: $png"
[ $rc -ne 0 ] || fail "a failed figure 9: exit status 0"
grep -q '^FAILED: figure 9' "$out" || fail "no 'FAILED: figure 9' line"
summary | grep -q ' failed=9\( \|$\)' || fail "SUMMARY lacks failed=9: $(summary)"
summary | grep -q ' read_pair_ns=not-run' || fail "SUMMARY: figure 1 not run, yet: $(summary)"
summary | grep -Eq '=(0\.0+|-?nan)( |$)' && fail "SUMMARY prints zeros: $(summary)"

run --quick --no-callgrind --only 9 --plot "$plots" >"$out" 2>&1
rc=$?
[ $rc -eq 0 ] || { fail "a clean figure 9: exit status $rc"; cat "$out"; }
summary | grep -q ' failed=none' || fail "clean run, SUMMARY lacks failed=none: $(summary)"
if [ $have_gnuplot -eq 1 ]; then
	[ -s "$png" ] || fail "a clean figure 9 drew no $png"
	grep -q "title 'Figure 9: " "$plots/plots.gp" || fail "figure 9's plot is not titled 'Figure 9: ...'"
	grep -q 'lower is better' "$plots/plots.gp" || fail "figure 9's axis does not say 'lower is better'"
	(export SRCU_BENCH_FAIL=9; run --quick --no-callgrind --only 9 --plot "$plots") >/dev/null 2>&1
	[ -e "$png" ] && fail "a failed figure 9 left the earlier run's $png"
fi

# Rounds: the JSON's value is the median of the rounds' medians, its min
# and max the extremes of the rounds' spreads (what the docs quote,
# scripts/docs-figures.sh).  Bug caught: a merge that kept the last
# round's value, or one round's spread, or dropped a round (the futex
# row: figure 9 prints it with either backend).
json=$plots/run.json
run --quick --no-callgrind --only 9 --rounds 3 --json "$json" >"$out" 2>&1 ||
	fail "figure 9 in 3 rounds: exit status $?"
[ "$(grep -c '^== round [123] of 3 ==$' "$out")" -eq 3 ] || fail "3 rounds did not each say so"
want=$(awk '/^futex wake-up and answer, round trip/ {
		s = $0; sub(/^[^0-9]*/, "", s); split(s, w, /[][ -]+/)
		m[++n] = w[1]; if (n == 1 || w[2] < lo) lo = w[2]; if (n == 1 || w[3] > hi) hi = w[3] }
	END { if (n != 3) { print "rounds:" n; exit }
	      for (i = 1; i <= 3; i++) for (j = i + 1; j <= 3; j++) if (m[j] < m[i]) { t = m[i]; m[i] = m[j]; m[j] = t }
	      printf "%.2f %.2f %.2f", m[2], lo, hi }' "$out")
got=$(awk '/"metric": "round_trip_us"/ {
	s = $0; sub(/.*"value": /, "", s); v = s + 0
	s = $0; sub(/.*"min": /, "", s); lo = s + 0
	s = $0; sub(/.*"max": /, "", s); hi = s + 0
	printf "%.2f %.2f %.2f", v, lo, hi }' "$json")
[ -n "$want" ] && [ "$want" = "$got" ] ||
	fail "3 rounds: rounds' median min max '$want', JSON value min max '$got'"

# --background-load: the run says so, a second process (the spinning
# child) runs beside it, and none is left after it.  Bug caught: a load
# child that outlives the run (a CPU lost for good) or that never ran.
# The processes whose command line has the option, from /proc (procps,
# for pgrep, is not on every fresh Debian), in one grep: a grep per
# process took long enough under make check's sanitizer suites that a
# look could miss the whole run.  The pattern's brackets keep the grep
# from matching itself; processes that end meanwhile are no error.
tagged() {
	grep -l -a -e '--background-loa[d]' /proc/[0-9]*/cmdline 2>/dev/null |
		sed 's|^/proc/||; s|/cmdline$||'
}
run --quick --no-callgrind --only 9 --rounds 3 --background-load >"$out" 2>&1 &
bench_pid=$!
seen=0
for _ in $(seq 50); do
	n=$(tagged | wc -l)
	[ "$n" -ge 2 ] && seen=1 && break
	kill -0 $bench_pid 2>/dev/null || break
	sleep 0.05
done
wait $bench_pid || fail "--background-load run: exit status $?"
grep -q -- '--background-load (one CPU-bound process beside)' "$out" ||
	fail "--background-load: the header line does not say so"
[ $seen -eq 1 ] || fail "--background-load: no second process seen while it ran"
sleep 0.2
left=$(tagged)
[ -z "$left" ] || { fail "--background-load: processes left after the run: $left"; kill $left; }

[ $fails -eq 0 ] && echo "bench_check: PASS" || { sed 's/^/  | /' "$out" | tail -5; exit 1; }
