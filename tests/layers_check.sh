#!/bin/sh
# layers_check.sh [--layers "F1 F2 ..."] OBJ...: src/ is a stack of layers,
# each file calling only the files below it.  From the objects' symbols
# (nm: what each defines, what each uses), every file-to-file dependency
# must point downward in LAYERS, lowest first; an upward one (hence any
# loop) fails, named with the symbol that makes it.  LAYERS is src/'s
# unless --layers names another program's files (tools/CMakeLists.txt:
# srcu-torture's and srcu-bench's).  The same command, by hand:
#   tests/layers_check.sh build/CMakeFiles/srcu_objects.dir/src/*.o
# Bug caught: a lower layer calling up (the web of six files in one loop
# that issue 13 untangled; in tools/, the entry point that owned the
# configuration every file read), creeping back in.
set -eu
LAYERS="report backend combine fence domain shared_file reader stall users counts_slots counts_records gp async shared_domain lifecycle process gate"
if [ "${1:-}" = --layers ]; then
	LAYERS=$2
	shift 2
fi

rank() {
	i=0
	for l in $LAYERS; do
		[ "$l" = "$1" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo "layers_check: $1.c is in no layer: add it to LAYERS" >&2
	exit 1
}

syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
for o in "$@"; do
	f=$(basename "$o"); f=${f%%.*}
	nm "$o" | awk -v f="$f" '$1 == "U" { print f, "U", $2 }
		$2 ~ /^[TDBRVWC]$/ { print f, "D", $3 }' >>"$syms"
done
edges=$(awk '$2 == "D" { def[$3] = $1 }
	$2 == "U" { use[NR] = $1 " " $3 }
	END { for (i in use) { split(use[i], a, " ")
		if ((a[2] in def) && def[a[2]] != a[1]) print a[1], def[a[2]], a[2] } }' "$syms" | sort -u)
bad=0 n=0
while read -r from to sym; do
	[ -n "$from" ] || continue
	n=$((n + 1))
	if [ "$(rank "$from")" -le "$(rank "$to")" ]; then
		echo "layers_check: $from.c calls up into $to.c ($sym)"
		bad=$((bad + 1))
	fi
done <<EOF2
$edges
EOF2
[ "$n" -gt 0 ] || { echo "layers_check: no dependency found: wrong objects?"; exit 1; }
if [ "$bad" -gt 0 ]; then
	echo "layers_check: FAIL ($bad upward dependencies of $n; layers, lowest first: $LAYERS)"
	exit 1
fi
echo "layers_check: PASS ($n file-to-file dependencies, all downward: $LAYERS)"
