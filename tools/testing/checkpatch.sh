#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the kernel's checkpatch.pl --strict over our source files, and over
# patches (FILE.patch, e.g. the series of make patch) as patches.
# The script comes from $CHECKPATCH if set, else from a full kernel tree at
# $KDIR, else from the scripts mkroot.sh extracts out of linux-source.
set -euo pipefail
vm=$(cd "$(dirname "$0")/vm" && pwd)
# shellcheck source=tools/testing/vm/config.sh
. "$vm/config.sh"

[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
cp=${CHECKPATCH:-}
if [ -z "$cp" ] && [ -n "${KDIR:-}" ] && [ -f "$KDIR/scripts/checkpatch.pl" ]; then
	cp=$KDIR/scripts/checkpatch.pl
fi
if [ -z "$cp" ]; then
	"$vm/mkroot.sh" >&2
	cp=$IBCM_CACHE/kernel-scripts/checkpatch.pl
fi
cd "$IBCM_SRC"
files=() patches=()
for f in "$@"; do
	[ -f "$f" ] || { echo "checkpatch: $f: no such file" >&2; exit 1; }
	case $f in
	*.patch) patches+=("$f") ;;
	*) files+=("$f") ;;
	esac
done
# xmacro_filter: checkpatch's output, less what it says about the
# X-macro lists and their expanders in cm_trace.h (every such list is a
# "complex macro" to it, its expanders "bracket spaces" and unused
# arguments; include/trace/events has the same): a report of those types
# in that file is dropped and counted.  Fails if any other report stays.
xmacro_filter() {
	perl -e '
		my %xm = map { $_ => 1 } qw(COMPLEX_MACRO MACRO_ARG_REUSE
			MACRO_ARG_UNUSED BRACKET_SPACE TRAILING_SEMICOLON);
		my ($left, $dropped, @report) = (0, 0);
		sub flush {
			return unless @report;
			my $r = join("", @report);
			@report = ();
			my ($type) = $r =~ /^(?:ERROR|WARNING|CHECK):(\w+):/;
			if ($xm{$type} && $r =~ /FILE: (?:\S*\/)?cm_trace\.h:/) {
				$dropped++;
				return;
			}
			$left++;
			print $r;
		}
		while (my $l = <STDIN>) {
			# A report runs to the next one or to the total: its
			# advice may hold blank lines.
			flush() if $l =~ /^(?:ERROR|WARNING|CHECK):|^total: /;
			if (@report || $l =~ /^(?:ERROR|WARNING|CHECK):/) {
				push @report, $l;
			} else {
				print $l;
			}
		}
		flush();
		print "checkpatch: $dropped reports on cm_trace.h\x27s X-macro lists left out\n"
			if $dropped;
		exit($left ? 1 : 0);
	'
}

rc=0
if [ ${#files[@]} -gt 0 ]; then
	# checkpatch's own status counts the reports left out too.
	{ perl "$cp" --strict --no-tree --show-types -f "${files[@]}" || :; } |
		xmacro_filter || rc=1
fi
if [ ${#patches[@]} -gt 0 ]; then
	{ perl "$cp" --strict --no-tree --show-types "${patches[@]}" || :; } |
		xmacro_filter || rc=1
fi
exit $rc
