# api2man.awk: doc/api.md -> one man page (section 3) per "### name"
# section, written to OUTDIR/name.3.  The page's parts come from the
# section's layout: the indented block right after the heading is the
# SYNOPSIS, "**Errors.**" starts ERRORS, "**Example.**" starts EXAMPLE,
# the rest is DESCRIPTION.
#
#   awk -v OUTDIR=DIR -v VERSION=X.Y.Z -f tools/api2man.awk doc/api.md
#
# SPDX-License-Identifier: MIT

function roff(s) {
	gsub(/\\/, "\\e", s)
	gsub(/`/, "", s)
	gsub(/\*\*/, "", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}

# The page is kept in buf until its end: NAME needs the description's
# first sentence.
function emit(line) { buf = buf line "\n" }

function finish() {
	if (out == "")
		return
	if (incode)
		emit(".fi\n.RE")
	emit(".SH SEE ALSO\nThe libsrcu API reference, doc/api.md; the design, doc/design.md.")
	if (summary == "")
		summary = "part of libsrcu, Sleepable RCU for userspace"
	printf ".TH %s 3 \"\" \"libsrcu %s\" \"libsrcu\"\n.SH NAME\n%s \\- %s\n%s",
	       toupper(name), VERSION, roff(name), roff(summary), buf > out
	close(out)
	out = ""
}

function part(name) {
	if (incode) {
		emit(".fi\n.RE")
		incode = 0
	}
	emit(".SH " name)
	section = name
}

/^### / {
	finish()
	name = substr($0, 5)
	out = OUTDIR "/" name ".3"
	buf = ""
	summary = ""
	summary_done = 0
	part("SYNOPSIS")
	emit(".nf\n.B #include <" (name ~ /^srcu_gate/ ? "srcu_gate.h" : name ~ /^(scoped_)?guard$/ ? "srcu_kernel.h" : "srcu.h") ">\n.fi")
	section = "SYNOPSIS"
	incode = 0
	next
}

out == "" { next }

/^\*\*Errors\.\*\*/ { part("ERRORS"); sub(/^\*\*Errors\.\*\* */, ""); if ($0 != "") emit(roff($0)); next }
/^\*\*Example\.\*\*/ { part("EXAMPLE"); sub(/^\*\*Example\.\*\* */, ""); if ($0 != "") emit(roff($0)); next }

/^    / {
	if (!incode) {
		emit(".RS\n.nf")
		incode = 1
	}
	emit(roff(substr($0, 5)))
	next
}

/^$/ {
	if (incode) {
		emit(".fi\n.RE")
		incode = 0
		if (section == "SYNOPSIS")
			part("DESCRIPTION")
		next
	}
	if (section != "SYNOPSIS")
		emit(".PP")
	next
}

{
	if (section == "SYNOPSIS")
		part("DESCRIPTION")
	if (section == "DESCRIPTION" && !summary_done) {   # its first sentence
		summary = summary (summary == "" ? "" : " ") $0
		if (summary ~ /\.( |$)/) {
			sub(/\.( .*)?$/, "", summary)
			summary_done = 1
		}
	}
	emit(roff($0))
}

END { finish() }
