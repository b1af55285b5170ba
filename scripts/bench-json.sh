# bench-json.sh: sourced by scripts/docs-figures.sh and scripts/claims.sh.
# srcu-bench --json writes one result a line; $awk_bench_json holds the
# awk function both read such a line with: field(line, NAME), the string
# field NAME ("figure", "peer", "metric", "unit"), or "" if it has none.
# POSIX sh and awk only.
awk_bench_json='
function field(line, name,    s) {
	s = line
	if (!sub(".*\"" name "\": *\"", "", s))
		return ""
	sub(/".*/, "", s)
	return s
}
'
