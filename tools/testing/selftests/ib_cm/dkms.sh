#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The DKMS route of a real machine: "make dkms-install" run here, against
# the 7.2 headers, puts the sources in /usr/src/ib_cm-VERSION, builds and
# installs the module into updates/dkms; that file (by path and GNU build
# ID) is the ib_cm that serves an rping.  "make dkms-remove" takes it all
# away again: DKMS puts back the kernel's own ib_cm.ko.xz, which it kept
# while its module was installed, and that serves the next rping.
#
# DKMS runs depmod after each step, which over the whole module tree takes
# over a minute under emulation.  So the test gives DKMS a module tree of
# its own, on a tmpfs over /lib/modules/KVER: the RDMA stack rping needs
# (the stock ib_cm.ko.xz at its place), the kernel's lists of built-in
# modules and the build link, nothing of the harness's updates/.  When
# the test ends the tmpfs goes and the harness's tree is back as it was.
# Stock mode has nothing of ours to package: there the test skips.
#
# The root comes with DKMS's module signing key (vm/mkroot.sh), as a
# machine that has signed a DKMS module before: making an RSA key under
# emulation takes anything up to minutes, and would count against the
# build's time.
# ibcm-timeout: 1000
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

[ "$IBCM_MODE" = stock ] && skip_all "stock mode: DKMS packages our module, the stock one comes with the kernel"
command -v dkms >/dev/null || skip_all "no dkms in the root (tools/testing/vm/packages.txt)"
# A kernel of kernel.sh's own build is made with the root's gcc-16 by
# name; the root has no plain gcc, so a DKMS build against its tree fails
# before it compiles anything.  DKMS is a packaging test for the
# distribution's kernel, which "make check" runs it on.
[ -z "${IBCM_KERNEL:-}" ] || skip_all "kernel $IBCM_KERNEL of our own build: its tree names its compiler (gcc-16), DKMS calls gcc; run on the distribution's kernel"

src=$(cd "$(dirname "$0")/../../../.." && pwd)
kver=$(uname -r)
mods=/lib/modules/$kver
stock=$mods/kernel/drivers/infiniband/core/ib_cm.ko.xz
# The harness's module tree stays reachable here while the test's own
# covers $mods.  Outside $T: cleanup's rm -rf must never reach into it.
full=/run/ibcm-dkms-full
# Building takes one to four minutes under emulation (about 220 s on a
# machine where 240 s was seen to be too little for build and install);
# a make that hangs ends well before the harness's limit for the whole
# test (below), so that the harness's module tree comes back.
make_timeout=420

# file_build_id FILE and live_build_id: the GNU build ID of a module
# file, compressed or not, and of the loaded module.
# shellcheck source=tools/testing/vm/modid.sh
. "$src/tools/testing/vm/modid.sh"

# unload MOD: MOD and, first, everything that uses it.
unload() {
	local h
	[ -e "/sys/module/$1" ] || return 0
	for h in "/sys/module/$1/holders/"*; do
		[ -e "$h" ] && unload "${h##*/}"
	done
	modprobe -r "$1"
}

# own_tree: a tmpfs over $mods holding the RDMA stack of the harness's
# tree with the stock ib_cm.  The harness's indexes say what that is.
own_tree() {
	local f
	mkdir -p "$full"
	mount --bind "$mods" "$full" || return 1
	for f in rdma_rxe rdma_ucm ib_cm; do
		modprobe --show-depends "$f"
	done | sed -n 's@^insmod \([^ ]*\).*@\1@p' | grep -v "^$mods/updates/" >"$T/stack"
	echo "$stock" >>"$T/stack"
	mount -t tmpfs ibcm-dkms "$mods" || return 1
	own_mounted=1
	for f in $(sort -u "$T/stack") "$full"/build "$full"/source "$full"/config "$full"/System.map \
		"$full"/modules.order "$full"/modules.builtin*; do
		f=${f#"$mods"/} f=${f#"$full"/}
		[ -e "$full/$f" ] || [ -L "$full/$f" ] || continue
		mkdir -p "$mods/$(dirname "$f")"
		cp -a "$full/$f" "$mods/$f" || return 1
	done
	# Indexes of its own, as any machine has: dkms runs depmod only
	# where there are some.
	depmod "$kver" || return 1
	log "own module tree: $(find "$mods" -name '*.ko*' | wc -l) modules," \
		"$(cd "$mods" && echo modules.*)"
}

# Back to the harness's tree, however the test ends.  udevd keeps the
# module indexes it last read open, those of the test's tree: detach the
# tmpfs at once (it goes when udevd lets go; udevd notices new indexes).
own_mounted=''
restore_tree() {
	unload ib_cm
	if [ -n "$own_mounted" ]; then
		umount -l "$mods" && own_mounted=
	fi
	if mountpoint -q "$full"; then
		umount -l "$full" && rmdir "$full"
	fi
}
trap 'restore_tree; cleanup' EXIT

# serves WANT LABEL: WANT is what modinfo -n names, the loaded ib_cm has
# WANT's build ID, and an rping over it works.
serves() {
	local want=$1 label=$2 path fid lid
	path=$(modinfo -n ib_cm)
	check "$label: modinfo -n ib_cm is $want (is $path)" test "$path" = "$want"
	check "$label: modprobe ib_cm rdma_ucm" modprobe -a ib_cm rdma_ucm
	fid=$(file_build_id "$want")
	lid=$(live_build_id)
	log "$label: build ID of $want: $fid, of the loaded ib_cm: $lid"
	check "$label: the loaded ib_cm has the build ID of $want" \
		test -n "$fid" -a "$fid" = "$lid"
	snap rxe0
	spawn server rping -s -a "$IP0" -C 5
	wait_listen 7174
	check "$label: rping client, 5 verified pings" run client rping -c -a "$IP0" -C 5 -v -V
	check "$label: rping server exits cleanly" reap server
	expect rxe0 cm_rx_msgs rep -eq 1
	check "$label: the ib_cm that served it is still the one of $want" \
		test "$(live_build_id)" = "$fid"
}

version=$(make -s -C "$src" version)
stock_id=$(file_build_id "$stock")
log "ib_cm version $version, kernel $kver, stock build ID $stock_id"
if [ -f /var/lib/dkms/mok.key ]; then
	log "DKMS signing key: /var/lib/dkms/mok.key"
else
	log "DKMS signing key: none, DKMS makes one (slow under emulation; vm/mkroot.sh makes it)"
fi

# rxe0 comes up on the harness's tree; rdma_rxe and rxe0 stay while the
# CM and its users are unloaded and loaded again.
net_one
harness=$(modinfo -n ib_cm)
check "unload ib_cm and its users" unload ib_cm
check "a module tree of the test's own" own_tree

IBCM_TIMEOUT=$make_timeout check "make dkms-install" run dkms-install make -C "$src" dkms-install
dkms status -m ib_cm | sed 's/^/# dkms status: /'
check "sources in /usr/src/ib_cm-$version" test -f "/usr/src/ib_cm-$version/cm.c"
check "dkms.conf of version $version" \
	grep -qx "PACKAGE_VERSION=\"$version\"" "/usr/src/ib_cm-$version/dkms.conf"
check "dkms status: ib_cm/$version installed for $kver" \
	grep -q "^ib_cm/$version, $kver, [^:]*: installed" <(dkms status -m ib_cm)
installed=$(find "$mods/updates/dkms" -name 'ib_cm.ko*' 2>/dev/null)
built=$(find "/var/lib/dkms/ib_cm/$version/$kver" -path '*/module/ib_cm.ko*' 2>/dev/null)
log "installed: ${installed:-none}; built by DKMS: ${built:-none}"
check "one module in updates/dkms" test "$(echo "$installed" | wc -w)" = 1
check "DKMS built one module" test "$(echo "$built" | wc -w)" = 1
check "the installed module is the one DKMS built (build ID)" \
	test -n "$installed" -a -n "$built" -a \
	"$(file_build_id "$installed")" = "$(file_build_id "$built")"
check "DKMS keeps the stock module aside while its own is installed" test ! -e "$stock"
serves "$installed" dkms

check "unload ib_cm after the DKMS rping" unload ib_cm
IBCM_TIMEOUT=$make_timeout check "make dkms-remove" run dkms-remove make -C "$src" dkms-remove
check "dkms knows no ib_cm" test -z "$(dkms status -m ib_cm)"
check "/usr/src/ib_cm-$version is gone" test ! -e "/usr/src/ib_cm-$version"
check "no ib_cm.ko in updates/" \
	test -z "$(find "$mods/updates" -name 'ib_cm.ko*' 2>/dev/null)"
check "the stock module is back where it was, the same file (build ID)" \
	test -f "$stock" -a "$(file_build_id "$stock")" = "$stock_id"
serves "$stock" "stock after remove"

restore_tree
check "the harness's module tree is back: modinfo -n ib_cm is $harness" \
	test "$(modinfo -n ib_cm)" = "$harness"
finish
