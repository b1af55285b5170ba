#!/bin/sh
# model/litmus/check.sh [HERD7]: run every litmus test here through herd7
# and compare its Observation with the answer the test states as a comment,
# `(* Result: Never *)` or `(* Result: Sometimes *)`, in the style of the
# kernel's tools/memory-model/litmus-tests.  C tests run under RC11
# (rc11.cat); architecture tests under their own model (AArch64:
# aarch64.cat, PPC: ppc.cat, X86_64: x86tso.cat), picked from the test's
# first line.
# Each correct pattern must say Never and each broken variant (a fence
# removed or weakened) Sometimes: a checker that could not tell them apart
# would fail here.
#
# herd7 is not a Debian package: HERD7=..., the first argument, the copy
# in ../shared/tools/herd7 beside the checkout, or herd7 on PATH; without
# one the check is skipped (README, "Model checking").
set -eu
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../find-tool.sh"
herd=$(find_tool herd7 "${1:-${HERD7:-}}" "$here/../..")
if [ -z "$herd" ]; then
	echo "litmus: SKIP (no herd7: set HERD7=/path/to/herd7)"
	exit 0
fi
pass=0 fail=0
for t in "$here"/*.litmus; do
	name=$(basename "$t" .litmus)
	want=$(sed -n 's/^(\* Result: \([A-Za-z]*\) \*)$/\1/p' "$t" | head -1)
	# The model from the first line: herd7's own choice for an
	# architecture is the same file, named here so that a test of a kind
	# this script does not know fails instead of running under a default.
	case $(head -1 "$t") in
	C\ *) model="-model rc11.cat" ;;
	AArch64\ *) model="-model aarch64.cat" ;;
	PPC\ *) model="-model ppc.cat" ;;
	X86_64\ * | X86\ *) model="-model x86tso.cat" ;;
	*)
		fail=$((fail + 1))
		printf 'litmus: %-46s unknown architecture %s: FAIL\n' "$name" "$(head -1 "$t" | cut -d' ' -f1)"
		continue
		;;
	esac
	# shellcheck disable=SC2086
	got=$("$herd" $model "$t" 2>&1 | awk '$1 == "Observation" { print $3 }')
	if [ -n "$want" ] && [ "$got" = "$want" ]; then
		pass=$((pass + 1))
		printf 'litmus: %-46s %s\n' "$name" "$got"
	else
		fail=$((fail + 1))
		printf 'litmus: %-46s %s, expected %s: FAIL\n' "$name" "${got:-no answer}" "${want:-(no Result comment)}"
	fi
done
echo "litmus: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
