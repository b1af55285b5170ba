#!/bin/sh
# docs-figures.sh: every performance figure in README.md and doc/*.md is
# read from a recorded run of srcu-bench (`srcu-bench --json`, kept in
# doc/runs/ with its text output), never typed in.
#
#   scripts/docs-figures.sh --update [FILE...]   rewrite every marker's text from the run
#   scripts/docs-figures.sh --check  [FILE...]   fail if a page differs from what --update
#                                                would write, quotes a key the run lacks,
#                                                or quotes a measurement with no marker
#   scripts/docs-figures.sh --compare NEW.json [FILE...]
#                                                each key the pages quote: the current
#                                                run's value [min-max], NEW's, and whether
#                                                it moved by no more than the wider of
#                                                the two runs' spreads (max - min; a
#                                                quoted M_min or M_max by M's); fails if
#                                                one moved more, or a key without a
#                                                spread changed, or NEW lacks one
#
# FILEs default to README.md and doc/*.md (CHANGELOG.md is history, and
# doc/runs/ holds the records themselves: neither is read).  POSIX sh and
# awk only (CI has no python, no jq).  The grammar, in full (doc/testing.md,
# "Figures in the documentation"):
#
#   <!--fig KEY [/DIV] [FORMAT]-->TEXT<!--/fig-->
#       KEY is figure/peer/metric, the JSON result's three fields
#       (read_pair/libsrcu/ns_1thread).  TEXT becomes FORMAT (awk printf,
#       one conversion; `%,d` is an integer with thousands commas; default
#       %.3g) of the value, divided by DIV if given (/1e6 for M).
#   <!--fig ratio KEY1 KEY2 [/DIV] [FORMAT]-->TEXT<!--/fig-->
#       the same for KEY1's value over KEY2's.
#   <!--fig machine-->TEXT<!--/fig-->, <!--fig date-->TEXT<!--/fig-->
#       the run's machine line (without "srcu-bench: ") and its date.
#   <!--run PATH-->
#       markers below it in this file read PATH (from the repository
#       root) instead of the current run, which doc/runs/current names.
#   <!--excerpt N...-->, a fenced block, <!--/excerpt-->  (each on its own line)
#       the block is the run's tables of figures N..., drawn from the
#       JSON: a table for each JSON figure name of srcu-bench figure N,
#       each cell a median [min-max] over the run's rounds (the values
#       the markers quote, not one round's).
#
# A marker and its TEXT stay on one line.  A measurement outside a marker
# is a number with a unit of time, rate or ratio (ns, us, µs, ms, s,
# min, x, instructions, /s, M/s, k calls/s, ...) or an m:ss time, in prose: fenced and indented code
# blocks, `code spans` and HTML comments are not read.  A number that is
# no measurement (a design constant: the 10 ms dead-owner interval) is
# listed in scripts/docs-figures.allow with the reason; an entry that
# matches no line is reported too.
set -u
cd "$(dirname "$0")/.." || exit 2

# Both awk programs: field(), the string field NAME of a JSON result line.
. scripts/bench-json.sh
awk_common=$awk_bench_json

# --compare NEW.json: the keys the pages quote (every marker's, as
# --check reads them; a ratio's two keys), each compared with the run
# the pages quote: did it move by more than the spread either run
# measured?  (issue 25's test of the figures: "a fresh make bench
# changes no figure by more than the run's own spread")
compare() {
	new=$1; shift
	if [ ! -f "$new" ]; then
		echo "docs-figures: no run $new" >&2
		exit 2
	fi
	awk -v current="$current" -v new="$new" "$awk_common"'
# Run p: value, and its "min"/"max" where it has them, by figure/peer/metric.
function load(p, v, lo, hi,    line, k, n) {
	n = 0
	while ((getline line < p) > 0) {
		if (line !~ /"figure": *"[^"]*", *"peer"/)
			continue
		k = field(line, "figure") "/" field(line, "peer") "/" field(line, "metric")
		v[k] = numfield(line, "value") + 0
		if (line ~ /"min": / && line ~ /"max": /) {
			lo[k] = numfield(line, "min") + 0; hi[k] = numfield(line, "max") + 0
		}
		n++
	}
	close(p)
	return n
}
function ticks(s) { return gsub(/`/, "`", s) }
function want(k) {
	if (k in seen) return
	seen[k] = 1; keys[++nkeys] = k
}
function g(x) { return sprintf("%.6g", x) }
BEGIN {
	if (!load(current, rv, rlo, rhi)) { print "docs-figures: no results in " current > "/dev/stderr"; exit 2 }
	if (!load(new, nv, nlo, nhi)) { print "docs-figures: no results in " new > "/dev/stderr"; exit 2 }
}
# The markers, as --update reads them: not in a code span; <!--run-->
# pins those below it to another run, which a new run does not change.
FNR == 1 { run = current }
{
	line = $0; before = ""
	if (match(line, /<!--run [^>]*-->/) && ticks(substr(line, 1, RSTART - 1)) % 2 == 0) {
		run = substr(line, RSTART + 8, RLENGTH - 11)
		if (run == "current") run = current
	}
	while (match(line, /<!--fig [^>]*-->/)) {
		code = (ticks(before) + ticks(substr(line, 1, RSTART - 1))) % 2
		spec = substr(line, RSTART + 8, RLENGTH - 11)
		before = before substr(line, 1, RSTART + RLENGTH - 1)
		line = substr(line, RSTART + RLENGTH)
		if (code || spec == "machine" || spec == "date")
			continue
		n = split(spec, w, " ")
		if (run != current) {
			for (i = (w[1] == "ratio" ? 2 : 1); i <= (w[1] == "ratio" ? 3 : 1); i++)
				if (!((w[i]) in pinned)) pinned[w[i]] = run
			continue
		}
		if (w[1] == "ratio") { want(w[2]); want(w[3]) } else want(w[1])
	}
}
END {
	for (i = 1; i <= nkeys; i++) {
		k = keys[i]
		if (!(k in rv)) { printf "%s: not in %s (--check reports it)\n", k, current; unrec++; continue }
		rec = g(rv[k]) ((k in rlo) ? " [" g(rlo[k]) "-" g(rhi[k]) "]" : "")
		if (!(k in nv)) {
			printf "%s  recorded %s  new -  MISSING\n", k, rec; missing++; continue
		}
		new_ = g(nv[k]) ((k in nlo) ? " [" g(nlo[k]) "-" g(nhi[k]) "]" : "")
		# The change against the wider spread (max - min) of the two runs;
		# a quoted M_min or M_max against the spread of M.
		change = nv[k] - rv[k]; if (change < 0) change = -change
		sk = k
		if (!(k in rlo) && !(k in nlo)) sub(/_(min|max)$/, "", sk)
		spread = (sk in rlo) ? rhi[sk] - rlo[sk] : -1
		if ((sk in nlo) && nhi[sk] - nlo[sk] > spread) spread = nhi[sk] - nlo[sk]
		# An exact count (the instructions a pair from callgrind: 27.0005 against
		# 27.0004, the loop around 100,000 pairs) has no spread: a change
		# under 0.1% of it is rounding, not a move.
		tol = 0.001 * (rv[k] < 0 ? -rv[k] : rv[k])
		if (spread >= 0 && spread < tol) spread = tol
		if (spread < 0 && change <= tol) change = 0
		if (spread < 0) {
			if (change == 0) { verdict = "no-spread, unchanged"; inside++ }
			else { verdict = sprintf("no-spread, CHANGED %.0f%%", rv[k] ? 100 * change / (rv[k] < 0 ? -rv[k] : rv[k]) : 100); outside++ }
			nospread++
		} else if (change <= spread) {
			verdict = sprintf("within (change %s <= spread %s)", g(change), g(spread)); inside++
		} else {
			verdict = sprintf("OUTSIDE (change %s > spread %s)", g(change), g(spread)); outside++
		}
		printf "%s  recorded %s  new %s  %s\n", k, rec, new_, verdict
	}
	for (k in pinned) { printf "%s: pinned to %s by <!--run-->, not compared\n", k, pinned[k]; npinned++ }
	printf "docs-figures: %s against %s: %d keys: %d within their spread, %d OUTSIDE it (%d of the keys have no spread), %d missing%s%s\n",
		new, current, nkeys, inside, outside, nospread, missing,
		unrec ? sprintf(", %d not in the recorded run", unrec) : "", npinned ? sprintf(" (%d pinned)", npinned) : ""
	exit (outside || missing) ? 1 : 0
}' "$@"
	exit $?
}
mode=${1:-}
case $mode in
--update|--check) shift ;;
--compare) [ $# -ge 2 ] || { echo "usage: $0 --compare NEW.json [FILE...]" >&2; exit 2; }
	newrun=$2; shift 2
	case $newrun in /*) ;; *) newrun=$OLDPWD/$newrun ;; esac ;;   # cd set OLDPWD
*) echo "usage: $0 --update|--check [FILE...] | --compare NEW.json [FILE...]" >&2; exit 2 ;;
esac
[ $# -gt 0 ] || set -- README.md doc/*.md
current=$(sed -n '1{s/[[:space:]]*$//;p;}' doc/runs/current 2>/dev/null)
if [ -z "$current" ] || [ ! -f "$current" ]; then
	echo "docs-figures: doc/runs/current names no run ('$current')" >&2
	exit 2
fi
[ "$mode" = --compare ] && compare "$newrun" "$@"
allow=scripts/docs-figures.allow
used=$(mktemp)
trap 'rm -f "$used" "$used".out' EXIT
status=0

for f in "$@"; do
	awk -v mode="$mode" -v current="$current" -v allowfile="$allow" -v used="$used" "$awk_common"'
function die(msg) { printf "%s:%d: %s\n", FILENAME, FNR, msg; bad = 1 }

# The run at path p, loaded once: its results by "figure/peer/metric",
# its machine line and date (the .txt and the file name where the JSON
# predates them).
function load(p,    line, k, v, fig, peer, met, txt) {
	if (p in loaded)
		return loaded[p]
	loaded[p] = 0
	while ((getline line < p) > 0) {
		if (line ~ /"figure": *"[^"]*", *"peer"/) {
			fig = field(line, "figure"); peer = field(line, "peer"); met = field(line, "metric")
			val[p, fig "/" peer "/" met] = numfield(line, "value") + 0
			loaded[p] = 1
			# In order, with spread and unit, for the excerpts.
			nres[p]++
			rkey[p, nres[p]] = fig "/" peer "/" met
			runit[p, nres[p]] = field(line, "unit")
			rmin[p, nres[p]] = numfield(line, "min"); rmax[p, nres[p]] = numfield(line, "max")
		} else if (line ~ /^ *"machine_line": /)
			mline[p] = field(line, "machine_line")
		else if (line ~ /^ *"date": /)
			rdate[p] = field(line, "date")
	}
	close(p)
	if (!loaded[p])
		die("no results in " p)
	if (!((p) in mline)) {
		txt = p; sub(/\.json$/, ".txt", txt)
		while ((getline line < txt) > 0)
			if (line ~ /^srcu-bench: /) { mline[p] = line; break }
		close(txt)
	}
	if (!((p) in rdate)) {
		k = p; sub(/.*\//, "", k)
		rdate[p] = k ~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]/ ? substr(k, 1, 10) : "?"
	}
	return loaded[p]
}
function ticks(s) { return gsub(/`/, "`", s) }
function commas(n,    s, neg) {
	s = sprintf("%.0f", n); neg = ""
	if (s ~ /^-/) { neg = "-"; s = substr(s, 2) }
	while (s ~ /[0-9][0-9][0-9][0-9]/)
		if (!sub(/[0-9][0-9][0-9]($|,)/, ",&", s))
			break
	sub(/^,/, "", s); gsub(/,,/, ",", s)
	return neg s
}
function fmtval(fmt, v,    pre, post) {
	if (index(fmt, "%,d")) {
		pre = substr(fmt, 1, index(fmt, "%,d") - 1); post = substr(fmt, index(fmt, "%,d") + 3)
		return pre commas(v) post
	}
	return sprintf(fmt, v)
}
# The text marker spec s (what follows "fig ") stands for, or "" with
# err set.
function render(s,    w, n, i, a, b, div, fmt, p) {
	err = ""
	p = run
	n = split(s, w, " ")
	if (s == "machine" || s == "date") {
		if (!load(p)) { err = "no run " p; return "" }
		if (s == "date")
			return substr(rdate[p], 1, 10)
		s = mline[p]; sub(/^srcu-bench: /, "", s)
		return s
	}
	i = 1
	if (w[1] == "ratio") {
		if (n < 3) { err = "ratio wants two keys"; return "" }
		a = w[2]; b = w[3]; i = 4
	} else {
		a = w[1]; b = ""; i = 2
	}
	div = 1
	if (i <= n && w[i] ~ /^\/[0-9.eE+-]+$/) { div = substr(w[i], 2) + 0; i++ }
	fmt = ""
	for (; i <= n; i++)
		fmt = fmt (fmt == "" ? "" : " ") w[i]
	if (fmt == "")
		fmt = "%.3g"
	if (!load(p)) { err = "no run " p; return "" }
	if (!((p, a) in val)) { err = "key " a " is not in " p; return "" }
	if (b != "" && !((p, b) in val)) { err = "key " b " is not in " p; return "" }
	if (b != "" && val[p, b] == 0) { err = "key " b " is 0 in " p; return "" }
	return fmtval(fmt, (b != "" ? val[p, a] / val[p, b] : val[p, a]) / div)
}
# The figure numbers of srcu-bench and the JSON "figure" names each one
# records (the figures of tools/srcu-bench.c; instructions are the callgrind
# column of figure 1, poll is the polled API of figure 8).
function fignames(n) {
	return n == 1 ? "instructions read_pair" : n == 2 ? "read_pair_under_updates" : \
	    n == 3 ? "gp_latency" : n == 4 ? "throughput" : n == 5 ? "wakeup" : \
	    n == 6 ? "isolation" : n == 7 ? "scaling_threads scaling_domains" : \
	    n == 8 ? "call poll" : n == 9 ? "machine" : n == 10 ? "lfht" : \
	    n == 11 ? "shared" : n == 12 ? "sharing" : ""
}
# A value in a table: 4 significant digits, a large one whole with commas.
function g(v) { return v == "" ? "-" : (v + 0 >= 10000 ? commas(v) : sprintf("%.4g", v)) }
# The tables of figures "1 6 8" of run p: one a JSON figure, each cell the
# median of the run over its rounds with its spread [min-max], as --json
# recorded it: the values the pages quote (issue 40: one table a figure,
# not the table of a round beside the prose of the medians).  Rows are
# the peers and columns the metrics, or the other way round where there
# are more metrics than peers, so that a table stays narrow.
function excerpt(figs, p,    w, n, i, f, nf, fw, out) {
	err = ""
	if (!load(p)) { err = "no run " p; return "" }
	n = split(figs, w, " ")
	out = ""
	for (i = 1; i <= n; i++) {
		nf = split(fignames(w[i]), fw, " ")
		if (!nf) { err = "no figure " w[i] " in srcu-bench"; return "" }
		for (f = 1; f <= nf; f++)
			out = out (out == "" ? "" : "\n") figtable(w[i], fw[f], p)
		if (err != "") return ""
	}
	return out
}
function figtable(num, fig, p,    j, kw, np, nm, pi, mi, peer, met, unit, cell, tr, nr, nc, rlab, clab, lw, width, per, k, r, c, c0, key, line, any, out) {
	np = nm = 0
	split("", pi); split("", mi); split("", cell)
	for (j = 1; j <= nres[p]; j++) {
		split(rkey[p, j], kw, "/")
		if (kw[1] != fig || kw[3] ~ /_(min|max)$/)
			continue
		if (!(kw[2] in pi)) { pi[kw[2]] = ++np; peer[np] = kw[2] }
		if (!(kw[3] in mi)) { mi[kw[3]] = ++nm; met[nm] = kw[3]; unit[nm] = runit[p, j] }
		cell[pi[kw[2]], mi[kw[3]]] = g(val[p, rkey[p, j]]) " [" g(rmin[p, j]) "-" g(rmax[p, j]) "]"
	}
	if (!np) { err = "no figure " num " (" fig ") in " p; return "" }
	# Peers down and metrics across, unless that makes more columns (tr:
	# transposed, metrics down).
	tr = nm > np; nr = tr ? nm : np; nc = tr ? np : nm
	for (k = 1; k <= np; k++)
		if (tr) clab[k] = peer[k]; else rlab[k] = peer[k]
	for (k = 1; k <= nm; k++)
		if (tr) rlab[k] = met[k] " (" unit[k] ")"; else clab[k] = met[k] " (" unit[k] ")"
	lw = 12; width = 18
	for (r = 1; r <= nr; r++) if (length(rlab[r]) + 2 > lw) lw = length(rlab[r]) + 2
	for (c = 1; c <= nc; c++) if (length(clab[c]) + 2 > width) width = length(clab[c]) + 2
	for (k in cell) if (length(cell[k]) + 2 > width) width = length(cell[k]) + 2
	out = sprintf("(%s) %s: median [min-max] over the rounds of the run\n", num, fig)
	# Columns in groups that fit 120 characters: each group its own rows.
	per = int((120 - lw) / width); if (per < 1) per = 1
	for (c0 = 1; c0 <= nc; c0 += per) {
		line = sprintf("%-" lw "s", "")
		for (c = c0; c <= nc && c < c0 + per; c++)
			line = line sprintf("%-" width "s", clab[c])
		sub(/ +$/, "", line)
		out = out (c0 > 1 ? "\n" : "") line "\n"
		for (r = 1; r <= nr; r++) {
			line = sprintf("%-" lw "s", rlab[r])
			any = 0
			for (c = c0; c <= nc && c < c0 + per; c++) {
				key = tr ? c SUBSEP r : r SUBSEP c
				any += key in cell
				line = line sprintf("%-" width "s", (key in cell) ? cell[key] : "-")
			}
			sub(/ +$/, "", line)
			if (any) out = out line "\n"
		}
	}
	return out
}
BEGIN {
	run = current
	while ((getline line < allowfile) > 0) {
		if (line ~ /^(#|$)/)
			continue
		nallow++
		if (!match(line, /  # ./) || !index(line, ": ")) {
			print allowfile ": not FILE: FRAGMENT  # REASON: " line > "/dev/stderr"
			bad = 1
			continue
		}
		afile[nallow] = substr(line, 1, index(line, ": ") - 1)
		afrag[nallow] = substr(line, length(afile[nallow]) + 3, RSTART - length(afile[nallow]) - 3)
	}
	close(allowfile)
	unit = "^(:[0-5][0-9]| ?(ns|us|µs|ms|s|sec|second|seconds|min|minutes|hours|x|instructions|[kM]? ?(calls|callbacks|lookups|deletions|updates)?/s))"
}
# Inside an excerpt: its old lines are dropped (and compared), the new
# ones written at its end.
inexc {
	if ($0 ~ /^<!--\/excerpt-->/) {
		if (old != new) {
			if (mode == "--check")
				printf "%s:%d: excerpt %s: the block differs from %s (run --update)\n", FILENAME, excline, excfigs, run
			changed = 1
		}
		printf "%s", new > out
		print > out
		inexc = 0
	} else
		old = old $0 "\n"
	next
}
{
	line = $0; res = ""; scan = ""
	if (line ~ /^ ? ? ?(```|~~~)/) fence = !fence
	incode = fence || line ~ /^ ? ? ?(```|~~~)/ || (line ~ /^(    |\t)/ && (prevblank || previndent))
	previndent = incode && !fence && line !~ /^ ? ? ?(```|~~~)/
	prevblank = line ~ /^[ \t]*$/
	if (match(line, /<!--run [^>]*-->/) && ticks(substr(line, 1, RSTART - 1)) % 2 == 0) {
		run = substr(line, RSTART + 8, RLENGTH - 11)
		if (run == "current") run = current
		if (!load(run)) die("no run " run)
	}
	if (match(line, /^<!--excerpt [0-9 ]+-->/)) {
		excfigs = substr(line, 13, RLENGTH - 15); excline = FNR
		new = "```\n" excerpt(excfigs, run) "```\n"
		if (err != "") die(err)
		print > out
		inexc = 1; old = ""
		next
	}
	while (match(line, /<!--fig [^>]*-->/)) {
		if ((ticks(res) + ticks(substr(line, 1, RSTART - 1))) % 2) {
			# In a code span: an example, not a marker.
			res = res substr(line, 1, RSTART + RLENGTH - 1)
			scan = scan substr(line, 1, RSTART + RLENGTH - 1)
			line = substr(line, RSTART + RLENGTH)
			continue
		}
		spec = substr(line, RSTART + 8, RLENGTH - 11)
		res = res substr(line, 1, RSTART + RLENGTH - 1)
		scan = scan substr(line, 1, RSTART - 1) " "
		line = substr(line, RSTART + RLENGTH)
		e = index(line, "<!--/fig-->")
		if (!e) { die("<!--fig " spec "--> without <!--/fig--> on its line"); break }
		quoted = substr(line, 1, e - 1)
		want = render(spec)
		if (err != "") { die(err); want = quoted }
		else if (want != quoted) {
			changed = 1
			if (mode == "--check")
				printf "%s:%d: %s: quoted \"%s\", recorded \"%s\" (%s)\n", FILENAME, FNR, spec, quoted, want, run
		}
		res = res want "<!--/fig-->"
		line = substr(line, e + 11)
	}
	res = res line; scan = scan line
	print res > out
	if (incode)
		next
	# What is left to read: no allowed fragment, code span or comment.
	for (i = 1; i <= nallow; i++)
		if (afile[i] == FILENAME && index(scan, afrag[i])) {
			print i >> used
			while ((k = index(scan, afrag[i])) > 0)
				scan = substr(scan, 1, k - 1) " " substr(scan, k + length(afrag[i]))
		}
	gsub(/`[^`]*`/, " ", scan)
	gsub(/<!--[^>]*-->/, " ", scan)
	s = scan
	while (match(s, /[0-9][0-9.,]*/)) {
		pre = RSTART > 1 ? substr(s, RSTART - 1, 1) : " "
		num = substr(s, RSTART, RLENGTH); rest = substr(s, RSTART + RLENGTH)
		while (num ~ /[.,]$/) { rest = substr(num, length(num)) rest; num = substr(num, 1, length(num) - 1) }
		if (pre !~ /[A-Za-z0-9_^]/ && match(rest, unit)) {
			after = substr(rest, RLENGTH + 1, 1)
			if (after !~ /[A-Za-z0-9_]/) {
				printf "%s:%d: unmarked measurement \"%s%s\": mark it (<!--fig KEY-->), or list it in %s\n", FILENAME, FNR, num, substr(rest, 1, RLENGTH), allowfile
				bad = 1
			}
		}
		s = rest
	}
}
END {
	if (inexc) die("<!--excerpt--> without <!--/excerpt-->")
	if (mode == "--check" && changed) bad = 1
	exit bad ? 1 : (changed ? 3 : 0)
}' out="$used.out" "$f"
	rc=$?
	case $rc in
	0) ;;
	3) if [ "$mode" = --update ]; then cp "$used.out" "$f" && echo "docs-figures: updated $f"; fi ;;
	*) status=1 ;;
	esac
done

# An allowlist entry that excuses nothing is stale (only when every page was read).
if [ "$mode" = --check ] && [ "$#" -gt 0 ] && [ -f "$allow" ]; then
	n=0
	while IFS= read -r line; do
		case $line in ''|'#'*) continue ;; esac
		n=$((n + 1))
		f=${line%%: *}
		case " $* " in *" $f "*) ;; *) continue ;; esac
		grep -qx "$n" "$used" || { echo "$allow: stale entry (matches no line): $line"; status=1; }
	done < "$allow"
fi
[ $status -eq 0 ] && [ "$mode" = --check ] && echo "docs-figures: every figure matches $current"
exit $status
