#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Create (or bring up to date) the Debian sid root filesystem in which the
# module is built for Linux 7.2 and the VM tests run. The host's own apt
# sources are never touched. Idempotent: a second run with the same package
# list does nothing.  While it works it says what it is doing in
# "# [TIME] mkroot: ..." lines.
set -euo pipefail
# shellcheck source=tools/testing/vm/config.sh
. "$(dirname "$0")/config.sh"

note() { printf '# [%(%T)T] mkroot: %s\n' -1 "$*"; }

pkgs=$(sed -e 's/#.*//' -e "s/@KVER@/$IBCM_KVER/" "$IBCM_VM_DIR/packages.txt" | xargs)
want=$(printf '%s\n' "$pkgs" | sha256sum | cut -c1-16)
stamp="$IBCM_ROOT/.ibcm-stamp"

# The headers package lacks a few scripts of the kernel tree that the
# build checks need (sparse's checker-valid.sh, checkpatch.pl and its data
# files). Take just those from the linux-source tarball in the root.
kscripts() {
	local dir="$IBCM_CACHE/kernel-scripts" tarball
	local files="checker-valid.sh checkpatch.pl spelling.txt const_structs.checkpatch"
	local hdr="$IBCM_ROOT/usr/src/linux-headers-${IBCM_KVER%-*}-common/scripts"
	local f pats=()
	if [ ! -f "$dir/.done" ]; then
		tarball=$(find "$IBCM_ROOT/usr/src" -maxdepth 1 -name 'linux-source-*.tar.xz' | head -n1)
		tarball=${tarball##*/}
		note "extracting kernel scripts from $tarball"
		rm -rf "$dir" && mkdir -p "$dir"
		for f in $files; do pats+=("*/scripts/$f"); done
		tar -xJf "$IBCM_ROOT/usr/src/$tarball" -C "$dir" --strip-components=2 \
			--wildcards "${pats[@]}"
		touch "$dir/.done"
	fi
	# kbuild looks for checker-valid.sh next to its own scripts.
	[ -e "$hdr/checker-valid.sh" ] || install -m 755 "$dir/checker-valid.sh" "$hdr/"
}

# DKMS signs each module it builds with /var/lib/dkms/mok.key and, on a
# machine that has none yet, first makes that key and its certificate.
# Under emulation making an RSA key takes anything from seconds to
# minutes, inside the time the DKMS test (selftests/ib_cm/dkms.sh) allows
# the whole build, so the root gets its key here, made natively once: the
# VM is then a machine that has signed a DKMS module before.
dkms_key() {
	local d=/var/lib/dkms
	[ -f "$IBCM_ROOT$d/mok.key" ] && [ -f "$IBCM_ROOT$d/mok.pub" ] && return 0
	[ -x "$IBCM_ROOT/usr/bin/openssl" ] || return 0
	note "making DKMS's module signing key, $d/mok.key"
	mkdir -p "$IBCM_ROOT$d"
	"$IBCM_VM_DIR/inroot.sh" openssl req -x509 -new -nodes -newkey rsa:2048 \
		-days 36500 -subj "/CN=ib_cm test root DKMS signing key" \
		-addext extendedKeyUsage=codeSigning -keyout "$d/mok.key" \
		-outform DER -out "$d/mok.pub" >/dev/null 2>&1 || {
		echo "mkroot: openssl could not make $d/mok.key" >&2
		rm -f "$IBCM_ROOT$d/mok.key" "$IBCM_ROOT$d/mok.pub"
		return 1
	}
}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	kscripts
	dkms_key
	echo "mkroot: $IBCM_ROOT is up to date"
	exit 0
fi

need_host() {
	command -v "$1" >/dev/null && return 0
	note "installing $2 on the host"
	apt-get update -qq && apt-get install -y -qq "$2" >/dev/null
}
need_host mmdebstrap mmdebstrap

# stages: show mmdebstrap's "I: ..." lines, its stages, as progress lines;
# everything else as it is.
stages() {
	local l
	while IFS= read -r l; do
		case $l in
		I:*) note "${l#I: }" ;;
		*) printf '%s\n' "$l" ;;
		esac
	done
}

t0=$(date +%s)
mkdir -p "$IBCM_CACHE"
if [ ! -x "$IBCM_ROOT/usr/bin/apt-get" ]; then
	note "creating the $IBCM_SUITE root in $IBCM_ROOT (about 2-5 minutes)"
	rm -rf "$IBCM_ROOT.tmp"
	mmdebstrap --variant=apt \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-include=/usr/share/doc/*/copyright' \
		--include="$(echo "$pkgs" | tr ' ' ',')" \
		"$IBCM_SUITE" "$IBCM_ROOT.tmp" 2>&1 | stages || {
		echo "mkroot: mmdebstrap failed. If a package is missing, the archive may" >&2
		echo "mkroot: have moved on from Linux $IBCM_KVER; inside a sid root run" >&2
		echo "mkroot: 'apt-cache madison linux-image-amd64' to see what it offers." >&2
		exit 1
	}
	mv "$IBCM_ROOT.tmp" "$IBCM_ROOT"
else
	note "package list changed, installing what is missing"
	"$IBCM_VM_DIR/inroot.sh" sh -c "apt-get -o Acquire::Check-Valid-Until=false update -qq && \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $pkgs"
fi

if [ ! -e "$IBCM_ROOT/lib/modules/$IBCM_KVER/build/Makefile" ]; then
	echo "mkroot: Linux $IBCM_KVER headers missing in the root." >&2
	"$IBCM_VM_DIR/inroot.sh" apt-cache madison linux-image-amd64 >&2 || true
	exit 1
fi
kscripts
dkms_key
echo "$want" >"$stamp"
note "ready after $(($(date +%s) - t0))s ($(du -sh "$IBCM_ROOT" 2>/dev/null | cut -f1))"
