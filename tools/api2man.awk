# api2man.awk: the man pages.  doc/api.md gives one page (section 3)
# per "### name" section; "### name, other, ..." gives one page for all
# the names (NAME lists them), at OUTDIR/man3/name.3, and a link page
# (".so man3/name.3") for each other name.  The page's parts come from
# the section's layout: the indented block right after the heading is the
# SYNOPSIS, "**Errors.**" starts ERRORS, "**Example.**" starts EXAMPLE,
# the rest is DESCRIPTION.  LIBRARY comes from the header, SEE ALSO from
# the other pages the section names in backquotes (`name()`, `name`,
# `struct name`), then srcu(7).
#
# Inputs ending in .N (doc/man/*.3, doc/man/srcu.7: written in roff) are
# copied to OUTDIR/manN/, named by the first name of their NAME line,
# with "@VERSION@" replaced and a link page for each other name there.
# With DOCDIR set, every README.md and doc/NAME.md a page names becomes
# DOCDIR/README.md, DOCDIR/doc/NAME.md: where they are installed.
#
#   awk -v OUTDIR=DIR -v VERSION=X.Y.Z [-v DOCDIR=PATH] -f tools/api2man.awk doc/api.md doc/man/*
#
# SPDX-License-Identifier: MIT

# Every page name, from every input, first: SEE ALSO names only pages
# that exist.
BEGIN {
	for (i = 1; i < ARGC; i++) {
		f = ARGV[i]
		roffin = f ~ /\.[0-9]$/
		want_name = 0
		while ((getline l < f) > 0) {
			if (!roffin && l ~ /^### /) {
				n = split(names_of(substr(l, 5)), a, " ")
				for (j = 1; j <= n; j++)
					page[a[j]] = 3
			} else if (roffin && l ~ /^\.SH NAME/) {
				want_name = 1
			} else if (roffin && want_name) {
				sec = substr(f, length(f))
				n = split(names_of(roff_names(l)), a, " ")
				for (j = 1; j <= n; j++)
					page[a[j]] = sec
				want_name = 0
			}
		}
		close(f)
	}
}

# "a, b, c" -> "a b c"
function names_of(s) {
	gsub(/,/, " ", s)
	gsub(/  +/, " ", s)
	sub(/^ /, "", s)
	sub(/ $/, "", s)
	return s
}

# A roff NAME line's names: what comes before "\-".
function roff_names(l,   k) {
	k = index(l, "\\-")
	if (k)
		l = substr(l, 1, k - 1)
	gsub(/\\f[BIRP]/, "", l)
	gsub(/\\&/, "", l)
	gsub(/\\:/, "", l)
	return l
}

# A path of the documentation (README.md, doc/NAME.md), as installed:
# DOCDIR is the documentation directory of the install, so that a page
# names a file the reader has, not one of the source tree.
function docpaths(s) {
	if (DOCDIR == "")
		return s
	gsub(/(README|CHANGELOG)\.md|doc\/[a-z_]+\.(md|txt)/, DOCDIR "/&", s)
	return s
}

function roff(s) {
	s = docpaths(s)
	gsub(/\\/, "\\e", s)
	gsub(/`/, "", s)
	gsub(/\*\*/, "", s)
	if (s ~ /^[.']/)
		s = "\\&" s
	return s
}

function header_of(n) {
	if (n ~ /^(srcu_gate|SRCU_GATE|DEFINE_SRCU_GATE)/)
		return "srcu_gate.h"
	if (n ~ /^(scoped_)?guard$/)
		return "srcu_kernel.h"
	if (n ~ /^(srcu_urcu|DEFINE_SRCU_URCU|DECLARE_SRCU_URCU)/)
		return "srcu_urcu.h"
	return "srcu.h"
}

function library(hdr) {
	if (hdr == "srcu_urcu.h")
		return ".SH LIBRARY\nlibsrcu\\-urcu, libsrcu's liburcu flavours\n" \
		       ".RI ( libsrcu\\-urcu \", \" libsrcu ;\n" \
		       ".B \"pkg\\-config \\-\\-cflags \\-\\-libs srcu\\-urcu\"\n" \
		       "gives\n.BR \"\\-lsrcu\\-urcu \\-lsrcu \\-lurcu\\-common\" )"
	return ".SH LIBRARY\nlibsrcu, Sleepable RCU for userspace\n" \
	       ".RI ( libsrcu ,\n.BR \"\\-lsrcu \\-lpthread\" ;\n" \
	       ".BR \"pkg\\-config \\-\\-cflags \\-\\-libs srcu\" )"
}

# The page is kept in buf until its end: NAME needs the description's
# first sentence.
function emit(line) { buf = buf line "\n" }

# Note the pages a line names in backquotes, for SEE ALSO.
function refs(s,   t, k, w) {
	while (match(s, /`[^`]*`/)) {
		t = substr(s, RSTART + 1, RLENGTH - 2)
		s = substr(s, RSTART + RLENGTH)
		sub(/^struct /, "", t)
		sub(/^#include </, "", t)
		if (match(t, /^[A-Za-z_][A-Za-z0-9_]*/)) {
			w = substr(t, 1, RLENGTH)
			if ((w in page) && !(w in self) && !(w in seen)) {
				seen[w] = 1
				also[++nalso] = w
			}
		}
	}
}

function see_also(   i, j, t, s) {
	for (i = 2; i <= nalso; i++)   # sorted, as man-pages has them
		for (j = i; j > 1 && also[j - 1] > also[j]; j--) {
			t = also[j]; also[j] = also[j - 1]; also[j - 1] = t
		}
	s = ".SH SEE ALSO\n"
	for (i = 1; i <= nalso; i++)
		s = s ".BR " also[i] " (" page[also[i]] "),\n"
	return s ".BR srcu (7)"
}

function write_links(sec, first, n, a,   j, f) {
	for (j = 2; j <= n; j++) {
		f = OUTDIR "/man" sec "/" a[j] "." sec
		printf ".so man%s/%s.%s\n", sec, first, sec > f
		close(f)
	}
}

function finish(   n, a, j, nm) {
	if (out == "")
		return
	if (incode)
		emit(".fi\n.RE")
	emit(see_also())
	if (summary == "")
		summary = "part of libsrcu, Sleepable RCU for userspace"
	n = split(names, a, " ")
	nm = roff(a[1])
	for (j = 2; j <= n; j++)
		nm = nm ", " roff(a[j])
	printf ".TH %s 3 \"\" \"libsrcu %s\" \"libsrcu\"\n.SH NAME\n%s \\- %s\n%s\n%s",
	       toupper(a[1]), VERSION, nm, roff(summary), library(header_of(a[1])), buf > out
	close(out)
	write_links(3, a[1], n, a)
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

# ---- roff pages: copied ----

function roff_finish(   n, a, f) {
	if (rfile == "")
		return
	n = split(names_of(roff_names(rname)), a, " ")
	f = OUTDIR "/man" rsec "/" a[1] "." rsec
	printf "%s", rbuf > f
	close(f)
	write_links(rsec, a[1], n, a)
	rfile = ""
}

FILENAME ~ /\.[0-9]$/ {
	if (FNR == 1) {
		finish()
		roff_finish()
		rfile = FILENAME
		rsec = substr(FILENAME, length(FILENAME))
		rbuf = ""
		rname = ""
		rwant = 0
	}
	l = $0
	gsub(/@VERSION@/, VERSION, l)
	if (l !~ /^\.\\"/)
		l = docpaths(l)
	rbuf = rbuf l "\n"
	if (rwant) {
		rname = l
		rwant = 0
	}
	if (l ~ /^\.SH NAME/)
		rwant = 1
	next
}

# ---- doc/api.md ----

/^### / {
	finish()
	names = names_of(substr($0, 5))
	split(names, a, " ")
	name = a[1]
	delete self
	delete seen
	for (j in a)
		self[a[j]] = 1
	nalso = 0
	out = OUTDIR "/man3/" name ".3"
	buf = ""
	summary = ""
	summary_done = 0
	part("SYNOPSIS")
	emit(".nf\n.B #include <" header_of(name) ">\n.fi")
	section = "SYNOPSIS"
	incode = 0
	next
}

/^##? / { finish(); next }   # a chapter heading ends the page

out == "" { next }

{ refs($0) }

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

END { finish(); roff_finish() }
