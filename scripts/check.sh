#!/bin/sh
# scripts/check.sh SUITE...: make check's runner.  Runs each SUITE (a make
# target: test asan tsan clang model check-cross-ci) in turn, its output
# shown and kept in $BUILD/make-check/SUITE.log, with a line as each
# starts and ends (its time and the total so far); stops at the first that
# fails.  At the end, a summary: each suite's result and time, then every
# test or check that was skipped, with its reason (a ctest SKIP's own
# message, from the build's Testing/Temporary/LastTest.log; a script's
# "SKIP (...)" line), so that a run that skipped something never reads as
# a clean pass.
#
# Environment: MAKE (the make to run), BUILD (default build).
#
# SPDX-License-Identifier: MIT
set -u
cd "$(dirname "$0")/.." || exit 2
MAKE=${MAKE:-make}
BUILD=${BUILD:-build}
LOGS=$BUILD/make-check
mkdir -p "$LOGS"
rm -f "$LOGS"/*.log "$LOGS"/*.rc "$LOGS"/summary "$LOGS"/skipped
n=$#
i=0
t_start=$(date +%s)
mmss() { printf '%dm %02ds' $(($1 / 60)) $(($1 % 60)); }

# The build directories whose ctest a suite ran.
dirs_of() {
	case $1 in
	test) echo "$BUILD" ;;
	asan|tsan|clang) echo "$BUILD-$1" ;;
	check-cross-ci) echo build-cross-aarch64 build-cross-armhf ;;
	check-cross*) ls -d build-cross-* 2>/dev/null ;;
	esac
}
# reason DIR TEST: the first line of TEST's output in DIR's last ctest run.
reason() {
	awk -v t="$2" '
	$0 ~ "^[0-9]+/[0-9]+ Test: " t "$" { on = 1; next }
	on && /^Output:/ { out = 1; next }
	on && out && /^-+$/ { next }
	on && out && /^<end of output>/ { exit }
	on && out && NF { print; exit }' "$1/Testing/Temporary/LastTest.log" 2>/dev/null
}

# skipped_in LOG DIR...: a line per test LOG's ctest run skipped, with
# the reason the test printed (from the first DIR whose last run has it).
skipped_in() {
	log=$1; shift
	[ -f "$log" ] || return 0
	for name in $(sed -n 's/^[[:space:]]*[0-9][0-9]* - \([^ ]*\) (\(Skipped\|Not Run\|Disabled\))$/\1/p' "$log" | sort -u); do
		why=""
		for d in "$@"; do
			why=$(reason "$d" "$name")
			[ -n "$why" ] && { why="$why [$d]"; break; }
		done
		printf '    %s: %s: %s\n' "$s" "$name" "${why:-no message (see its build directory's Testing/Temporary/LastTest.log)}"
	done
}

printf '' >"$LOGS/summary"
for s in "$@"; do
	i=$((i + 1))
	t0=$(date +%s)
	echo "== make check [$i/$n] $s: started ($(mmss $((t0 - t_start))) into the run)"
	{ $MAKE --no-print-directory "$s" 2>&1; echo $? >"$LOGS/$s.rc"; } | tee "$LOGS/$s.log"
	rc=$(cat "$LOGS/$s.rc")
	t1=$(date +%s)
	if [ "$rc" = 0 ]; then result=passed; else result="FAILED (exit $rc)"; fi
	echo "== make check [$i/$n] $s: $result in $(mmss $((t1 - t0))) (total $(mmss $((t1 - t_start))))"
	printf '  %-16s %-18s %s\n' "$s" "$result" "$(mmss $((t1 - t0)))" >>"$LOGS/summary"
	# ctest's skipped tests ("NN - name (Skipped)" after "did not run"):
	# in the suite's output, or, for the cross suites, in each
	# build-cross-ARCH/check-cross-ctest.log (check-cross.sh keeps ctest's
	# output there); then the scripts' own SKIP lines.
	case $s in
	check-cross*) for d in $(dirs_of "$s"); do skipped_in "$d/check-cross-ctest.log" "$d"; done ;;
	*) skipped_in "$LOGS/$s.log" $(dirs_of "$s") ;;
	esac >>"$LOGS/skipped"
	grep -E '^[a-z_-]+(\([a-z]+\))?: SKIP' "$LOGS/$s.log" | sort -u | while read -r line; do
		printf '    %s: %s\n' "$s" "$line"
	done >>"$LOGS/skipped"
	[ "$rc" = 0 ] || break
done
total=$(( $(date +%s) - t_start ))
skips=$(cat "$LOGS/skipped" 2>/dev/null | wc -l)
echo
echo "== make check: summary ($(mmss $total) in all; logs in $LOGS/)"
printf '  %-16s %-18s %s\n' suite result time
cat "$LOGS/summary"
if [ "$skips" -gt 0 ]; then
	echo "  skipped ($skips; each with its reason):"
	cat "$LOGS/skipped"
fi
if [ "${rc:-1}" != 0 ]; then
	echo "make check: FAILED in suite $s (its log: $LOGS/$s.log)"
	exit 1
fi
if [ $i -lt $n ]; then exit 1; fi
if [ "$skips" -gt 0 ]; then
	echo "make check: all suites passed, with $skips skipped (listed above, each with its reason)"
else
	echo "make check: all suites passed, nothing skipped"
fi
