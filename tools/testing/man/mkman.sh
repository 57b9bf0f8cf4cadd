#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make section 9 man pages of the ib_cm API from include/rdma/ib_cm.h.
#
#   tools/testing/man/mkman.sh [OUTDIR]      (default: out/man)
#
# kernel-doc -man writes all pages into one stream; this script cuts it
# into one file per function, typedef, struct and enum (NAME.9, with
# struct_NAME.9 and enum_NAME.9 for types, as their titles say), and
# replaces kernel-doc's SEE ALSO, a flat list of every symbol in the
# header, with one naming the API pages and the types the page mentions.
# Read a page with "man -l OUTDIR/man9/ib_send_cm_req.9", or point
# MANPATH at OUTDIR.
set -euo pipefail
# shellcheck source=tools/testing/man/common.sh
. "$(dirname "$0")/common.sh"

out=${1:-$IBCM_SRC/out/man}
hdr=include/rdma/ib_cm.h
cd "$IBCM_SRC"

kdoc=$(ibcm_kernel_doc)

# A stable date: the header's last commit, else its modification time.
stamp=$(git log -1 --format=%cs -- "$hdr" 2>/dev/null || true)
[ -n "$stamp" ] || stamp=$(date -u -r "$hdr" +%Y-%m-%d)

rm -rf "$out/man9"
mkdir -p "$out/man9"
all=$(mktemp)
trap 'rm -f "$all"' EXIT
KBUILD_BUILD_TIMESTAMP=$stamp python3 "$kdoc" -man -M ib_cm "$hdr" >"$all"

# Cut at each title line. "struct ib_cm_id" becomes struct_ib_cm_id so
# that the page name is something one can type after "man".
awk -v dir="$out/man9" '
/^\.TH "/ {
	if (f)
		close(f)
	split($0, q, "\"")
	name = q[2]
	gsub(/ /, "_", name)
	f = dir "/" name ".9"
	sub(/^\.TH "[^"]*"/, ".TH \"" name "\"")
	skip = 0
}
/^\.SH "SEE ALSO"/ { skip = 1 }
f && !skip { print > f }
' "$all"

# Our own SEE ALSO: the API pages (but this one), then the type pages
# this page refers to, then where the sources and the design notes are.
for page in "$out"/man9/*.9; do
	self=$(basename "$page" .9)
	refs=()
	for p in $IBCM_API_PAGES; do
		[ "$p" = "$self" ] || refs+=("$p")
	done
	for t in "$out"/man9/struct_*.9 "$out"/man9/enum_*.9; do
		t=$(basename "$t" .9)
		[ "$t" = "$self" ] && continue
		# kernel-doc writes a type as "struct\ ib_cm_id" or "struct ib_cm_id".
		if grep -Eq "${t%%_*}(\\\\)? ${t#*_}([^a-z_]|$)" "$page"; then
			refs+=("$t")
		fi
	done
	{
		echo '.SH "SEE ALSO"'
		# Names are long and full of underscores: no hyphenation, ragged right.
		echo '.nh'
		echo '.ad l'
		n=${#refs[@]}
		for i in "${!refs[@]}"; do
			if [ "$i" -lt $((n - 1)) ]; then
				echo ".BR ${refs[$i]} (9),"
			else
				echo ".BR ${refs[$i]} (9)"
			fi
		done
		echo '.PP'
		echo '.ad l'
		echo 'The header \%include/rdma/ib_cm.h, and the design notes in'
		echo '\%Documentation/infiniband/ib_cm.rst of the ib_cm sources.'
	} >>"$page"
done

echo "mkman: $(find "$out/man9" -name '*.9' | wc -l) pages in $out/man9"
