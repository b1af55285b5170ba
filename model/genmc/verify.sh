#!/bin/sh
# model/genmc/verify.sh [GENMC]: the engine's own C code under GenMC
# (doc/verification.md).  Each scenario compiles src/ as it ships, through
# engine.h (every file but backend.c, which backend.c here replaces), and
# runs under one memory model; a line per run says `verified` (every
# execution explored, no error), or the violation.  The broken variants
# remove one lettered fence (-DSRCU_VERIFY_DROP) and must be caught: an
# assertion, a race, a use of freed memory, or a wait that can never end
# (GenMC's liveness check), wherever GenMC finds it.
# Ends with "verify: N passed, M failed".
#
# GenMC is not a Debian package: GENMC=..., the first argument, the copy
# in ../shared/tools/genmc beside the checkout, or genmc on PATH; without
# one the check is skipped (the SKIP line names what to set).
#
# SPDX-License-Identifier: MIT
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../find-tool.sh"
genmc=$(find_tool genmc "${1:-${GENMC:-}}" "$root")
if [ -z "$genmc" ]; then
	echo "verify: SKIP (no GenMC: set GENMC=/path/to/genmc; doc/verification.md says how to build it)"
	exit 0
fi
limit=${VERIFY_TIMEOUT:-300}
out=${VERIFY_OUT:-$root/build/verify}
mkdir -p "$out"
pass=0 fail=0

# run NAME EXPECT MODEL FILE [CFLAGS...]: EXPECT is verified or caught.
# --disable-instruction-caching: GenMC 0.11's instruction cache replays a
# thread's allocations with their old addresses without reserving them,
# so a later allocation can overlap a live one and GenMC reports a use
# of freed memory or a mixed-size access that the program never makes
# (doc/verification.md, "GenMC's limits").
# wait_at LOG EVENT: the source line of the last loop that EVENT's
# thread began before it blocked.
wait_at() {
	awk -v ev="$2" '
		BEGIN { t = ev; sub(/^\(/, "", t); sub(/,.*/, "", t) }
		index($0, "\t" ev ":") == 1 { print last; exit }
		$0 ~ "^\t\\(" t ", [0-9]+\\): LOOP_BEGIN" { last = $NF }
	' "$1"
}

# liveness: GenMC's liveness check, on but for the runs where callers
# sleep on a combiner's event (below, and doc/verification.md).
liveness=--check-liveness
run() {
	name=$1 expect=$2 model=$3 file=$4
	shift 4
	log=$out/$name.$model.log
	t0=$(date +%s)
	rc=0
	# shellcheck disable=SC2086
	timeout "$limit" "$genmc" --disable-estimation $liveness --disable-instruction-caching \
		${GENMC_OPTS:-} --"$model" -- -DSRCU_NO_ASM -I"$root/include" -I"$root/src" \
		-gline-tables-only -w "$@" "$here/$file" >"$log" 2>&1 || rc=$?
	secs=$(($(date +%s) - t0))
	execs=$(sed -n 's/^Number of complete executions explored: //p' "$log")
	err=$(sed -n 's/^Error: //p' "$log" | head -1)
	# Where: GenMC names the event, then lists it with its source line
	# ("L.35" in the scenario file, "gp.c:163" elsewhere).
	ev=$(grep -A1 '^Error: ' "$log" | sed -n 's/^Event \(([0-9]*, [0-9]*)\).* in graph:$/\1/p' | head -1)
	at=""
	[ -n "$ev" ] && at=$(grep -F "	$ev:" "$log" | head -1 | awk '{print $NF}')
	case $at in L.*) at="$file:${at#L.}" ;; esac
	case $rc in
	0) got=verified; what="verified ($execs executions, ${secs} s)" ;;
	42)
		got=caught
		what="caught: $err at $at (${secs} s)"
		grep -q '^Assertion violation' "$log" && what="caught: $(grep -m1 '^Assertion violation' "$log") (${secs} s)"
		# A wait that can never end: where its loop begins.
		[ "$err" = "Liveness violation!" ] &&
			what="caught: a wait that never ends, $(wait_at "$log" "$ev") (${secs} s)"
		;;
	124) got=timeout; what="no verdict in ${limit} s" ;;
	*) got=error; what="GenMC exit $rc: $(grep -m1 -i 'error' "$log" || tail -1 "$log")" ;;
	esac
	if [ "$got" = "$expect" ]; then
		pass=$((pass + 1))
		printf 'verify: %-44s %-5s %s\n' "$name" "$model" "$what"
	else
		fail=$((fail + 1))
		printf 'verify: %-44s %-5s %s, expected %s: FAIL (%s)\n' "$name" "$model" "$what" "$expect" "$log"
	fi
}

# The grace-period guarantee, one reader and one updater, fence backend.
for m in rc11 imm tso; do
	run gp-1reader-fence verified "$m" gp_guarantee.c
done
# The same with the reader's thread exit (its record handed back), the
# fast readers, a nested section, an expedited grace period, and the
# polled API's cookie.
run gp-1reader-fence-thread-exit verified rc11 gp_guarantee.c -DEXIT_HOOKS=true
run gp-1reader-fence-fast-reader verified rc11 gp_guarantee.c -DFAST
run gp-1reader-fence-nested verified rc11 gp_guarantee.c -DNESTED
run gp-1reader-fence-expedited verified rc11 gp_guarantee.c -DEXPEDITED
run gp-1reader-fence-polled-cookie verified rc11 gp_guarantee.c -DPOLLED
# The membarrier backend, with the IPI model of membarrier (backend.c),
# and with a membarrier that fences its caller only, which must fail.
run gp-1reader-membarrier verified rc11 gp_guarantee.c -DVERIFY_MEMBARRIER
run gp-1reader-membarrier-fast-reader verified rc11 gp_guarantee.c -DVERIFY_MEMBARRIER -DFAST
run gp-1reader-membarrier-expedited verified rc11 gp_guarantee.c -DVERIFY_MEMBARRIER -DEXPEDITED
run gp-1reader-membarrier-thread-exit verified rc11 gp_guarantee.c -DVERIFY_MEMBARRIER \
	-DEXIT_HOOKS=true
run gp-1reader-membarrier-without-IPI caught rc11 gp_guarantee.c -DVERIFY_MEMBARRIER \
	-DVERIFY_NO_IPI
# The backend switched from fences to membarrier (the constructor, late)
# while the reader and the grace period run.
run gp-1reader-backend-switch verified rc11 gp_guarantee.c -DVERIFY_SWITCH
# A record past the dense table (no reader set), released by a reader
# that exited and claimed by the one beside the update.
run gp-1reader-membarrier-past-dense-reclaim verified rc11 gp_guarantee.c -DVERIFY_MEMBARRIER \
	-DPAST_DENSE -DRECLAIM
# The updater's cookie served by a grace period another thread runs
# (-DPOLL_BESIDE): the caller's snapshot against that GP's start.
run gp-1reader-polled-beside verified rc11 gp_guarantee.c -DPOLL_BESIDE
# Two updaters: their grace periods shared (no
# reader inside, so the guarantee is not at stake here); then on the
# membarrier backend, with an idle reader's record owned, so that every
# check's A is a membarrier through the fence service, which serves the
# two callers together.
# Without GenMC's liveness check: a caller that sleeps on the event marks
# it (combine.c), and GenMC 0.11 then reports its futex wait as never
# ending right after the wait read the value that ends it (a spin-assume
# block kept after a revisit: doc/verification.md).  Every such wait's end
# is model/wake.pml's (Spin); these runs check the rest.
liveness=
run gp-2updaters-fence verified rc11 gp_guarantee.c -DREADERS=0 -DUPDATERS=2
run gp-2updaters-membarrier-shared verified rc11 gp_guarantee.c -DVERIFY_MEMBARRIER \
	-DIDLE_READER -DREADERS=0 -DUPDATERS=2
liveness=--check-liveness
# Each broken variant the scenarios catch (doc/verification.md's table
# says which letters no scenario here catches yet, and why).
run gp-1reader-fence-without-N caught rc11 gp_guarantee.c -DSRCU_VERIFY_DROP=SRCU__MB_N
run gp-1reader-fence-without-A caught rc11 gp_guarantee.c -DSRCU_VERIFY_DROP=SRCU__MB_A
run gp-1reader-fence-without-BC caught rc11 gp_guarantee.c -DSRCU_VERIFY_DROP=SRCU__MB_BC
run gp-1reader-membarrier-thread-exit-without-Q caught rc11 gp_guarantee.c \
	-DVERIFY_MEMBARRIER -DEXIT_HOOKS=true -DSRCU_VERIFY_DROP=SRCU__MB_Q
run gp-1reader-backend-switch-without-T caught rc11 gp_guarantee.c -DVERIFY_SWITCH \
	-DSRCU_VERIFY_DROP=SRCU__MB_T
run gp-1reader-polled-beside-without-P caught rc11 gp_guarantee.c -DPOLL_BESIDE \
	-DSRCU_VERIFY_DROP=SRCU__MB_P
run gp-1reader-polled-beside-without-S caught rc11 gp_guarantee.c -DPOLL_BESIDE \
	-DSRCU_VERIFY_DROP=SRCU__MB_S
# The fence service: two callers served by its shared membarriers, a
# thread without fences beside them; every caller served as by its own
# membarrier (every wait's end: model/wake.pml, as above).
liveness=
run fence-service-shared verified rc11 fence_service.c -DVERIFY_MEMBARRIER
run fence-service-shared-without-FS caught rc11 fence_service.c -DVERIFY_MEMBARRIER \
	-DSRCU_VERIFY_DROP=SRCU__MB_FS
liveness=--check-liveness
# Fences shown redundant (doc/verification.md says why each is kept):
# without them the scenario that reaches them still verifies.
run gp-1reader-polled-at-once-without-F verified rc11 gp_guarantee.c -DPOLL_BESIDE -DNO_WAIT \
	-DSRCU_VERIFY_DROP=SRCU__MB_F
run gp-1reader-polled-beside-without-D verified rc11 gp_guarantee.c -DPOLL_BESIDE \
	-DSRCU_VERIFY_DROP=SRCU__MB_D
run gp-1reader-backend-switch-without-D verified rc11 gp_guarantee.c -DVERIFY_SWITCH \
	-DSRCU_VERIFY_DROP=SRCU__MB_D
# FE for two callers (three reach the case model/litmus/FE-next covers).
liveness=
run fence-service-shared-without-FE verified rc11 fence_service.c -DVERIFY_MEMBARRIER \
	-DSRCU_VERIFY_DROP=SRCU__MB_FE
liveness=--check-liveness
# R and N cover each other on a thread's first section (both follow its
# record's claim): without both, the reader reads the freed object.
run gp-1reader-membarrier-without-R-and-N caught rc11 gp_guarantee.c -DVERIFY_MEMBARRIER \
	-DSRCU_VERIFY_DROP=SRCU__MB_R -DSRCU_VERIFY_DROP2=SRCU__MB_N

# VERIFY_DEEP=1 (make verify-deep): larger bounds, up to half an hour
# each (VERIFY_TIMEOUT defaults to 1800 s here; doc/verification.md's
# table has their times).
if [ "${VERIFY_DEEP:-0}" = 1 ]; then
	limit=${VERIFY_TIMEOUT:-1800}
	run gp-1reader-membarrier verified imm gp_guarantee.c -DVERIFY_MEMBARRIER
	run gp-1reader-fence-2-sections verified rc11 gp_guarantee.c -DSECTIONS=2
	run gp-1reader-polled-beside verified imm gp_guarantee.c -DPOLL_BESIDE
	run gp-1reader-membarrier-polled-beside verified rc11 gp_guarantee.c -DVERIFY_MEMBARRIER \
		-DPOLL_BESIDE
	# The hand-over with W (moved) in place gave no verdict in 1800 s
	# (doc/verification.md); without it, the lost wake-up shows at once.
	run updown-handover-at-exit-without-W caught rc11 updown_handover.c \
		-DSRCU_VERIFY_DROP=SRCU__MB_W
fi

echo "verify: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
