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
rc=0
if [ ${#files[@]} -gt 0 ]; then
	perl "$cp" --strict --no-tree --show-types -f "${files[@]}" || rc=1
fi
if [ ${#patches[@]} -gt 0 ]; then
	perl "$cp" --strict --no-tree --show-types "${patches[@]}" || rc=1
fi
exit $rc
