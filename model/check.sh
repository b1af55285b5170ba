#!/bin/sh
# model/check.sh: verify model/srcu.pml, fence.pml and wake.pml exhaustively with Spin, and prove
# that the model can fail: each deliberately broken variant must produce
# an assertion violation or, in wake.pml, a caller left asleep (an invalid
# end state).  Prints each run's state count and time.
#
#   model/check.sh [spin]        (run by `make model` and by ctest)
#
# SPDX-License-Identifier: MIT
set -eu
SPIN=${1:-spin}
HERE=$(cd "$(dirname "$0")" && pwd)
MODEL=srcu.pml
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
status=0
count=0
TOTAL=$(grep -c '^verify ' "$HERE/check.sh")
echo "model: $TOTAL exhaustive verifications with $("$SPIN" -V 2>/dev/null | head -1)"

# verify EXPECT NAME DEFINES...: EXPECT is "pass" or "fail".
verify() {
	expect=$1 name=$2
	shift 2
	count=$((count + 1))
	printf 'model: [%2d/%d] %s ...\n' "$count" "$TOTAL" "$name"
	"$SPIN" "$@" -a "$HERE/$MODEL" >spin.log 2>&1 || { cat spin.log; exit 2; }
	# -DSAFETY: assertions only; -DCOLLAPSE: compressed state vectors.
	# pan.c is generated code: its warnings are not ours.
	${CC:-cc} -O2 -w -DSAFETY -DCOLLAPSE -o pan pan.c
	./pan -m100000 >pan.log 2>&1 || true
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.log)
	states=$(sed -n 's/^ *\([0-9][0-9]*\) states, stored.*/\1/p' pan.log)
	secs=$(sed -n 's/^pan: elapsed time \([0-9.e+-]*\) seconds.*/\1/p' pan.log)
	if grep -q "max search depth too small" pan.log; then
		echo "model: $name: search depth too small (not exhaustive)"; status=1; return
	fi
	case "$expect:$errors" in
	pass:0) verdict="verified, no violation" ;;
	fail:0) verdict="NOT CAUGHT: the model cannot see this bug"; status=1 ;;
	fail:*) verdict="counterexample found, as it must be" ;;
	*)      verdict="VIOLATION"; status=1; sed -n '/pan:1:/,/^$/p' pan.log ;;
	esac
	printf 'model:         %9s states %6ss  %s\n' "$states" "${secs:-0}" "$verdict"
}

# The algorithm as built: readers interleaved with the scans' per-thread
# sums; a reader across several grace periods; sharing between updaters.
# The runs with 2 updaters are where a caller arrives while the other
# runs a GP (the runner does not wait for callers: no gathering since
# issue 38).
verify pass "2 readers, 1 updater x 2 calls"   -DNR=2 -DUPDATERS=1 -DCALLS=2
verify pass "1 reader x 2 rounds, 1 updater x 3 calls" -DNR=1 -DROUNDS=2 -DUPDATERS=1 -DCALLS=3
verify pass "1 reader x 2 rounds, 2 updaters x 1 call" -DNR=1 -DROUNDS=2 -DUPDATERS=2 -DCALLS=1
verify pass "1 reader, 2 updaters x 2 calls"   -DNR=1 -DUPDATERS=2 -DCALLS=2
# Threads exit and records are reused; the scans skip free records.
verify pass "2 readers, records reused, 1 updater x 2" -DREUSE -DNR=2 -DUPDATERS=1 -DCALLS=2
verify pass "1 reader x 2 rounds, reused, 1 updater x 3" -DREUSE -DNR=1 -DROUNDS=2 -DUPDATERS=1 -DCALLS=3
# Reader sets: checks count only the records that noted the domain.
verify pass "reader sets, 2 readers, 1 updater x 2" -DSETS -DNR=2 -DUPDATERS=1 -DCALLS=2
verify pass "reader sets, reused, 1 reader x 2, 1 updater x 3" -DSETS -DREUSE -DNR=1 -DROUNDS=2 -DUPDATERS=1 -DCALLS=3
# Dead owners (issue 11): readers that may die anywhere, their slots
# recovered by the waiting grace period once they are dead.
verify pass "dead owners: 2 readers that may die, 1 updater x 2" -DDEAD -DNR=2 -DUPDATERS=1 -DCALLS=2
verify pass "dead owners: 1 reader x 2 rounds, 2 updaters x 1" -DDEAD -DNR=1 -DROUNDS=2 -DUPDATERS=2 -DCALLS=1
# Slot takeover: a dead reader's idle slot claimed by a new process (CAS
# of the owner word), raced by the recovery's mark, balance and free.
verify pass "takeover: 1 reader x 2 rounds, 1 updater x 2" -DDEAD -DTAKEOVER -DNR=1 -DROUNDS=2 -DUPDATERS=1 -DCALLS=2
verify pass "takeover: 1 reader, 2 new owners, 1 updater x 3" -DDEAD -DTAKEOVER -DTAKEOVERS=2 -DNR=1 -DUPDATERS=1 -DCALLS=3
verify pass "takeover: 1 reader, 2 updaters x 1 call" -DDEAD -DTAKEOVER -DNR=1 -DUPDATERS=2 -DCALLS=1
# Broken variants: each must be caught.
verify fail "dead owners: a live reader's counts discarded" -DDEAD -DDISCARDLIVE -DNR=2 -DUPDATERS=1 -DCALLS=2
verify fail "takeover: slot balanced before the owner CAS" -DDEAD -DTAKEOVER -DLATEMARK -DNR=1 -DUPDATERS=1 -DCALLS=2
verify fail "reader set noted after the section began" -DSETS -DNOTELATE -DNR=2 -DUPDATERS=1 -DCALLS=2
verify fail "reused record keeps its NOTED mark" -DSETS -DREUSE -DKEEPMARK -DNR=1 -DROUNDS=2 -DUPDATERS=1 -DCALLS=3
verify fail "one scan (SCAN1 skipped)"          -DONESCAN -DNR=2 -DUPDATERS=1 -DCALLS=2
verify fail "one scan, shared grace periods"    -DONESCAN -DNR=1 -DUPDATERS=2 -DCALLS=2
verify fail "lock counts summed first"          -DLOCKSFIRST -DNR=2 -DUPDATERS=1 -DCALLS=2
verify fail "snapshot of the GP in flight"      -DEARLYSNAP -DNR=1 -DUPDATERS=2 -DCALLS=2
verify fail "one check of both, current index ignored" -DFASTHALF -DNR=2 -DUPDATERS=1 -DCALLS=2
verify fail "lock sum re-reads ownership"       -DREUSE -DREREAD -DNR=2 -DUPDATERS=1 -DCALLS=2
verify fail "a caller joins the running GP (LATEJOIN)" -DLATEJOIN -DNR=1 -DUPDATERS=2 -DCALLS=2
# The fence service (fence.pml): readers with store buffers, two domains'
# updaters sharing membarriers.  EARLYFENCE: a late request accepting the
# membarrier in flight.
MODEL=fence.pml
verify pass "fence service: 1 reader x 2, 2 domains x 1 call" -DROUNDS=2 -DCALLS=1
verify pass "fence service: 1 reader x 3, 2 domains x 2 calls" -DROUNDS=3 -DCALLS=2
verify fail "fence service: served by the membarrier in flight" -DEARLYFENCE
verify fail "fence service: no fence A (store buffers)" -DNOFENCE
# The combiner's waits (wake.pml): every caller's wait ends (a lost
# wake-up leaves one asleep: an invalid end state).
MODEL=wake.pml
verify pass "wake-ups: 3 callers x 2 calls" -DCALLERS=3 -DCALLS=2
verify pass "wake-ups: 2 callers x 4 calls" -DCALLERS=2 -DCALLS=4
verify pass "wake-ups: sleepers that leave their wait early" -DTIMEOUT -DCALLERS=2 -DCALLS=3
verify pass "wake-ups: a waker stalled before its wake-up" -DSTALL -DCALLERS=3 -DCALLS=1
verify pass "wake-ups: a waker stalled, 2 callers x 3 calls" -DSTALL -DCALLERS=2 -DCALLS=3
verify fail "wake-ups: the waker takes a count of sleepers" -DWAKECOUNT
verify fail "wake-ups: the add and the clear as two RMWs" -DSPLIT -DSTALL -DCALLERS=3 -DCALLS=1
verify fail "wake-ups: the mark read before the bump" -DCHECK_FIRST
verify fail "wake-ups: the same, with sleepers that leave early" -DCHECK_FIRST -DTIMEOUT
verify fail "wake-ups: one sleeper woken for the mark" -DWAKE_ONE
[ $status = 0 ] && echo "model: PASS" || echo "model: FAIL"
exit $status
