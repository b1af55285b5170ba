#!/bin/sh
# claims.sh: the performance claims the documentation makes, each a ratio
# with the bound it must keep, checked against a run of srcu-bench.
#
#   scripts/claims.sh --check RUN.json   evaluate every claim of doc/claims.txt
#                                        on RUN (`srcu-bench --json`): a line per
#                                        claim, then the ones that did not hold;
#                                        exit 1 if any failed or RUN lacks a key
#                                        (of a run that left figures out, --only,
#                                        a missing key is "not run", no failure)
#   scripts/claims.sh --pages            every claim's sentence is on its page
#                                        (a claim backs text a reader sees); exit 1
#                                        if one is not
#
# CLAIMS=FILE reads another claims file (the ctest claims_check feeds it
# made-up ones).  The file's grammar, a claim a line (doc/claims.txt):
#
#   ID | VALUE | BOUND | PAGE: SENTENCE
#
# A claim backed on several pages is several lines with its ID, its VALUE
# and its BOUND alike: one claim, checked once, each sentence on its page.
#
# VALUE is a result's key, figure/peer/metric (sharing/libsrcu/reader_x_normal),
# or KEY1 / KEY2, the first's value over the second's (a ratio measured side
# by side in one run).  BOUND is <=, <, >= or > and a number.  SENTENCE is a
# fragment of PAGE (README.md, doc/*.md or doc/man/*) that the claim backs,
# on one line of it.  Lines starting with # and blank lines are skipped.
#
# POSIX sh and awk only (a fresh Debian machine has neither python nor jq).
set -u
cd "$(dirname "$0")/.." || exit 2
. scripts/bench-json.sh
claims=${CLAIMS:-doc/claims.txt}

usage() {
	echo "usage: scripts/claims.sh --check RUN.json | --pages" >&2
	exit 2
}

[ -f "$claims" ] || { echo "claims.sh: no $claims" >&2; exit 2; }

# Fields of a claim line, trimmed: ID, VALUE, BOUND, PAGE, SENTENCE.
awk_parse='
function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function parse(line,    n, f, rest, k) {
	n = split(line, f, "|")
	if (n < 4)
		return 0
	id = trim(f[1]); value = trim(f[2]); bound = trim(f[3])
	rest = f[4]
	for (k = 5; k <= n; k++)
		rest = rest "|" f[k]
	rest = trim(rest)
	k = index(rest, ": ")
	if (k == 0)
		return 0
	page = substr(rest, 1, k - 1); sentence = trim(substr(rest, k + 2))
	return id != "" && value != "" && bound != "" && page != "" && sentence != ""
}
'

case "${1:-}" in
--pages)
	[ $# -eq 1 ] || usage
	awk -v claims="$claims" "$awk_parse"'
	BEGIN {
		while ((getline line < claims) > 0) {
			if (line ~ /^[ \t]*(#|$)/)
				continue
			if (!parse(line)) {
				print claims ": not ID | VALUE | BOUND | PAGE: SENTENCE: " line
				bad++
				continue
			}
			found = 0
			while ((getline text < page) > 0)
				if (index(text, sentence))
					found = 1
			close(page)
			if (!found) {
				print claims ": claim " id ": \"" sentence "\" is not on " page
				bad++
			}
			n++
		}
		if (!n) {
			print claims ": no claims"
			bad++
		}
		if (!bad)
			print "claims: every claim'"'"'s sentence (" n ") is on its page"
		exit bad ? 1 : 0
	}'
	;;
--check)
	[ $# -eq 2 ] || usage
	[ -f "$2" ] || { echo "claims.sh: no run $2" >&2; exit 2; }
	awk -v claims="$claims" -v run="$2" "$awk_parse$awk_bench_json"'
	# The value of VALUE on the run, or "" with why in err.
	function evaluate(v,    k, a, b) {
		k = index(v, " / ")
		if (k == 0) {
			if (!(v in val)) { err = "the run has no " v; return "" }
			return val[v] + 0
		}
		a = substr(v, 1, k - 1); b = substr(v, k + 3)
		if (!(a in val)) { err = "the run has no " a; return "" }
		if (!(b in val)) { err = "the run has no " b; return "" }
		if (val[b] + 0 == 0) { err = b " is 0"; return "" }
		return (val[a] + 0) / (val[b] + 0)
	}
	function holds(x, b,    op, lim) {
		op = b; sub(/[ \t]*[-+0-9.].*/, "", op)
		lim = b; sub(/^[<>=]+[ \t]*/, "", lim); lim += 0
		if (op == "<=") return x <= lim
		if (op == "<") return x < lim
		if (op == ">=") return x >= lim
		if (op == ">") return x > lim
		err = "bound " b " is not <=, <, >= or > a number"
		return -1
	}
	BEGIN {
		while ((getline line < run) > 0) {
			if (line ~ /"figure": *"[^"]*", *"peer"/)
				val[field(line, "figure") "/" field(line, "peer") "/" field(line, "metric")] = numfield(line, "value")
			else if (line ~ /^ *"figures": .*"not-run"/)
				partial = 1   # srcu-bench --only: some figures left out
		}
		while ((getline line < claims) > 0) {
			if (line ~ /^[ \t]*(#|$)/)
				continue
			if (!parse(line)) {
				printf "  %-28s  BAD LINE  %s\n", "?", line
				failed[++nf] = "? (a line that is not a claim)"
				continue
			}
			# A further line of an ID is one more sentence of that claim:
			# the same ratio and bound, on another page; evaluated once.
			if (id in seenv) {
				if (seenv[id] != value || seenb[id] != bound) {
					printf "  %-28s  %8s %-8s FAILED  (its lines differ in VALUE or BOUND)\n", id, "-", bound
					failed[++nf] = id
				}
				continue
			}
			seenv[id] = value; seenb[id] = bound
			n++
			err = ""
			x = evaluate(value)
			h = x == "" ? -1 : holds(x, bound)
			if (h == -1 && partial && err ~ /^the run has no /) {
				# A key of a figure the run left out: no verdict.
				printf "  %-28s  %8s %-8s not run (%s)\n", id, "-", bound, err
				notrun++
			} else if (h == 1) {
				printf "  %-28s  %8.3f %-8s held    (%s)\n", id, x, bound, page
				held++
			} else {
				if (h == 0)
					printf "  %-28s  %8.3f %-8s FAILED  (%s: \"%s\")\n", id, x, bound, page, sentence
				else
					printf "  %-28s  %8s %-8s FAILED  (%s)\n", id, "-", bound, err
				failed[++nf] = id
			}
		}
		printf "claims: %d of %d held", held, n
		if (notrun)
			printf ", %d not run (srcu-bench --only left their figures out)", notrun
		if (nf) {
			printf "; did not hold:"
			for (i = 1; i <= nf; i++)
				printf " %s", failed[i]
		}
		printf "\n"
		exit nf || !n ? 1 : 0
	}'
	;;
*)
	usage
	;;
esac
