#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ib_cm as a DKMS package: "make dkms-install" and "make dkms-remove".
#
#   dkms.sh version BASE        print the package version
#   dkms.sh install BASE KVER   the sources to /usr/src/ib_cm-VERSION with a
#                               dkms.conf, then dkms add, build and install
#                               for kernel KVER; any other version of ib_cm
#                               that DKMS has goes first
#   dkms.sh remove              every version of ib_cm out of DKMS (and its
#                               modules out of /lib/modules) and /usr/src
#
# VERSION is BASE (the Makefile's IBCM_VERSION_BASE) where the tree is not a
# git checkout of its own (a tarball); in a checkout, BASE+g and the commit,
# with ".dirty" when files differ from it: 0.1+g07c82e7d1f2a.dirty.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
NAME=ib_cm

die() {
	echo "dkms.sh: $*" >&2
	exit 1
}

version() {
	local top hash dirty=''
	# Only this tree's own repository: a tarball unpacked inside some
	# other checkout must not take that one's commit.
	top=$(git -C "$SRC" rev-parse --show-toplevel 2>/dev/null) || top=''
	if [ "$top" = "$SRC" ] && hash=$(git -C "$SRC" rev-parse --short=12 HEAD 2>/dev/null); then
		git -C "$SRC" diff --quiet HEAD -- 2>/dev/null || dirty=.dirty
		echo "$1+g$hash$dirty"
	else
		echo "$1"
	fi
}

need_dkms() {
	[ "$(id -u)" = 0 ] || die "run as root (DKMS writes /usr/src, /var/lib/dkms and /lib/modules)"
	command -v dkms >/dev/null || die "dkms is not installed (Debian: apt-get install dkms)"
}

# The versions of ib_cm that DKMS knows, one per line.  dkms status prints
# "ib_cm/VERSION, KVER, ARCH: installed" or "ib_cm/VERSION: added".
known_versions() {
	dkms status -m "$NAME" 2>/dev/null | sed -n "s@^$NAME/\([^,:]*\)[,:].*@\1@p" | sort -u
}

remove() {
	local v
	need_dkms
	for v in $(known_versions); do
		echo "dkms.sh: removing $NAME/$v"
		dkms remove -m "$NAME" -v "$v" --all
		rm -rf "/usr/src/$NAME-$v"
	done
}

install() {
	local v kver=$2 dest f other
	need_dkms
	v=$(version "$1")
	dest=/usr/src/$NAME-$v
	# DKMS archives the kernel's own ib_cm.ko while its module is installed
	# and puts it back on removal, but only where it is the one other
	# ib_cm.ko: with a second one (make install's) it would keep both.
	other=$(find "/lib/modules/$kver" -name "$NAME.ko*" \
		-not -path "/lib/modules/$kver/kernel/*" -not -path "/lib/modules/$kver/updates/dkms/*" 2>/dev/null || true)
	if [ -n "$other" ]; then
		die "$(echo "$other" | head -n1) is in the way (make install put it there?); remove it and run depmod first"
	fi
	remove
	echo "dkms.sh: $NAME $v into $dest"
	rm -rf "$dest"
	mkdir -p "$dest"
	# What Kbuild builds from, and the license.
	(cd "$SRC" && cp --parents Kbuild LICENSE ./*.c ./*.h "$dest/")
	while IFS= read -r f; do
		(cd "$SRC" && cp --parents "$f" "$dest/")
	done < <(cd "$SRC" && find include -name '*.h')
	sed "s/@VERSION@/$v/" "$SRC/tools/dkms/dkms.conf.in" >"$dest/dkms.conf"
	dkms add -m "$NAME" -v "$v"
	dkms build -m "$NAME" -v "$v" -k "$kver"
	dkms install -m "$NAME" -v "$v" -k "$kver"
}

case ${1:-} in
version) [ $# = 2 ] || die "usage: dkms.sh version BASE"; version "$2" ;;
install) [ $# = 3 ] || die "usage: dkms.sh install BASE KVER"; install "$2" "$3" ;;
remove) [ $# = 1 ] || die "usage: dkms.sh remove"; remove ;;
*) die "usage: dkms.sh version|install|remove ..." ;;
esac
