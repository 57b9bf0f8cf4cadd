#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Apply exactly a series of "make patch" (mkpatch.sh) to a kernel tree
# that an earlier run may have patched already, so that kbuild rebuilds
# only what changed (the KUnit runner and kernel.sh use it).
#
# usage: apply.sh TREE BASE APPLIED SERIES
#   TREE     the kernel tree to patch
#   BASE     a tree (or copies of its files) with the stock version of
#            every file a series may touch
#   APPLIED  a directory of our own: the list of files the last
#            application touched (.list) and a copy of each as it came out
#   SERIES   the directory of *.patch files
#
# Every file the last application touched goes back to its stock version
# first (a file the stock tree has not got is removed), then the patches
# go on.  A file that comes out as it did last time gets its old time
# stamp back.  Prints the number of patches applied.
set -euo pipefail

[ $# = 4 ] || { echo "usage: $0 TREE BASE APPLIED SERIES" >&2; exit 2; }
tree=$1 base=$2 applied=$3 series=$4

# The files a series touches, one path per line.
series_files() {
	sed -n 's@^+++ b/@@p; s@^--- a/@@p' "$@" | sort -u
}

mkdir -p "$applied"
touch "$applied/.list"
series_files "$series"/*.patch >>"$applied/.list"
sort -u -o "$applied/.list" "$applied/.list"
while IFS= read -r f; do
	if [ -f "$base/$f" ]; then
		cp "$base/$f" "$tree/$f"
	else
		rm -f "$tree/$f"
	fi
done <"$applied/.list"
for f in "$series"/*.patch; do
	patch -s -p1 -N -r - --no-backup-if-mismatch -d "$tree" <"$f" || {
		echo "apply.sh: ${f##*/} does not apply to $tree" >&2
		exit 1
	}
done
series_files "$series"/*.patch >"$applied/.list"
while IFS= read -r f; do
	if [ ! -e "$tree/$f" ]; then
		rm -f "$applied/$f"
	elif cmp -s "$tree/$f" "$applied/$f"; then
		touch -r "$applied/$f" "$tree/$f"
	else
		mkdir -p "$(dirname "$applied/$f")"
		cp -p "$tree/$f" "$applied/$f"
	fi
done <"$applied/.list"
set -- "$series"/*.patch
echo $#
