# model/find-tool.sh, sourced by the checkers that run a tool Debian does
# not package (model/litmus/check.sh: herd7; model/genmc/verify.sh: GenMC).
#
# find_tool NAME GIVEN ROOT prints where tool NAME is: GIVEN (the caller's
# argument or environment variable) when it is not empty, else the copy in
# ../shared/tools/NAME/NAME beside the checkout at ROOT, else NAME on
# PATH; nothing when there is none, and the caller says SKIP.
#
# SPDX-License-Identifier: MIT
find_tool() {
	if [ -n "$2" ]; then
		echo "$2"
		return
	fi
	for c in "$3/../shared/tools/$1/$1" "$(command -v "$1" || true)"; do
		[ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return; }
	done
	return 0   # not found: an empty answer, not a failure (callers run set -e)
}
