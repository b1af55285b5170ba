# bench-json.sh: sourced by scripts/docs-figures.sh and scripts/claims.sh.
# srcu-bench --json writes one result a line; $awk_bench_json holds the
# awk functions both read such a line with: field(line, NAME), the string
# field NAME ("figure", "peer", "metric", "unit"), or "" if it has none;
# numfield(line, NAME), the number field NAME ("value", "min", "max"), or
# "" if it has none.
# POSIX sh and awk only.
awk_bench_json='
function field(line, name,    s) {
	s = line
	if (!sub(".*\"" name "\": *\"", "", s))
		return ""
	sub(/".*/, "", s)
	return s
}
function numfield(line, name,    s) {
	s = line
	if (!sub(".*\"" name "\": *", "", s))
		return ""
	sub(/[,}].*/, "", s)
	return s
}
'
