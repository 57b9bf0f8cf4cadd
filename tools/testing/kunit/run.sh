#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the ib_cm KUnit suites in a Linux 7.2 kernel built from source.
#
#   tools/testing/kunit/run.sh [--debug] [extra kunit.py run arguments]
#
# The kernel source (linux-source-7.2 from the sid root) is unpacked once
# into a cache outside the repository, the series of "make patch" is
# applied to it (the same patches a kernel developer would apply), and
# kunit.py builds and boots it in QEMU inside the sid root.  The build
# directory is kept, so a second run only rebuilds what changed.
#
# --debug uses debug.kunitconfig (KASAN, lockdep, kmemleak, debugobjects)
# with its own build directory and fails on any report of theirs in the
# kernel log, even when every test case passed.
#
# QEMU uses KVM where it works and TCG otherwise (../vm/accel.sh decides;
# IBCM_ACCEL=kvm|tcg overrides).  While it works it says what it is doing
# in "# [TIME] kunit: ..." lines on stderr.
set -euo pipefail

KUNIT_DIR=$(cd "$(dirname "$0")" && pwd)
VM_DIR=$KUNIT_DIR/../vm
# shellcheck source=tools/testing/vm/config.sh
. "$VM_DIR/config.sh"

# The source package follows the target kernel: 7.2.13+deb14-amd64 -> 7.2.
SRC_SERIES=$(echo "$IBCM_KVER" | cut -d. -f1-2)
SRC_TARBALL=/usr/src/linux-source-$SRC_SERIES.tar.xz
CACHE=${IBCM_KUNIT_CACHE:-$IBCM_CACHE/kunit}
TREE=$CACHE/linux-$SRC_SERIES
# The series of "make patch", and what of it is in the tree now.
PATCH_DIR=$KUNIT_DIR/../patch
SERIES=$CACHE/series
APPLIED=$CACHE/applied
# The compiler Debian built the 7.2 kernel with; the root has no plain gcc.
KCC=${IBCM_KUNIT_CC:-gcc-16}

debug=
if [ "${1:-}" = --debug ]; then
	debug=1
	shift
fi
EXTRA=(--arch=x86_64)
if [ -n "$debug" ]; then
	KUNITCONFIG=$KUNIT_DIR/debug.kunitconfig
	BUILD=$CACHE/build-debug
	TIMEOUT=1800
	# After the suites the kernel runs kmemleak-init.sh from a built-in
	# initramfs (busybox from the sid root), which scans for leaks.
	EXTRA=(--qemu_config="$CACHE/qemu_x86_64_kmemleak.py"
	       --kconfig_add="CONFIG_INITRAMFS_SOURCE=\"$CACHE/kmemleak.list\"")
else
	KUNITCONFIG=$KUNIT_DIR/ib_cm.kunitconfig
	BUILD=$CACHE/build
	TIMEOUT=600
fi

log() { echo "kunit: $*" >&2; }
# Progress lines: "# [TIME] kunit: what".
note() { printf '# [%(%T)T] kunit: %s\n' -1 "$*" >&2; }

# make check runs the suites only under --debug, which stands for the
# plain run as long as its configuration asks for everything the plain
# one does.
if [ -n "$debug" ]; then
	missing=$(grep '^CONFIG_' "$KUNIT_DIR/ib_cm.kunitconfig" |
		grep -vxF -f "$KUNITCONFIG" || true)
	if [ -n "$missing" ]; then
		log "debug.kunitconfig lacks lines of ib_cm.kunitconfig:"
		echo "$missing" >&2
		exit 1
	fi
fi

# The sid root holds the source package, the compiler and QEMU.
"$VM_DIR/mkroot.sh" >&2
if [ ! -f "$IBCM_ROOT$SRC_TARBALL" ]; then
	log "$SRC_TARBALL is missing from the sid root $IBCM_ROOT"
	log "expected linux-source-$SRC_SERIES (for $IBCM_KVER); the archive offers:"
	"$VM_DIR/inroot.sh" apt-cache policy "linux-source-$SRC_SERIES" >&2 || true
	exit 1
fi

# Unpack once.  The stamp names the tarball it came from, so a new
# linux-source package leads to a fresh tree (and fresh builds).
unpack_tree() {
	local stamp want tmp
	stamp=$(stat -c '%s %Y' "$IBCM_ROOT$SRC_TARBALL")
	want="$SRC_TARBALL $stamp"
	if [ -f "$TREE/.ib_cm-unpacked" ] &&
	   [ "$(cat "$TREE/.ib_cm-unpacked")" = "$want" ]; then
		return
	fi
	note "unpacking $SRC_TARBALL into $TREE (once, about 1.8 GB)"
	mkdir -p "$CACHE"
	rm -rf "$TREE" "$APPLIED" "$CACHE/pristine-$SRC_SERIES" "$CACHE/build" \
		"$CACHE/build-debug"
	tmp=$(mktemp -d "$CACHE/unpack.XXXXXX")
	tar -xJf "$IBCM_ROOT$SRC_TARBALL" -C "$tmp"
	mv "$tmp"/linux-source-"$SRC_SERIES" "$TREE"
	rmdir "$tmp"
	echo "$want" >"$TREE/.ib_cm-unpacked"
}

# Apply exactly the series "make patch" writes (tools/testing/patch) to the
# tree, on top of the stock versions of its files (mkpatch.sh's copies);
# what comes out as last time keeps its time stamps (patch/apply.sh).
apply_series() {
	local n
	"$PATCH_DIR/mkpatch.sh" "$SERIES" >/dev/null
	# Files an older harness laid over the tree, never part of Linux.
	rm -rf "$TREE/drivers/infiniband/core/Kbuild" \
		"$TREE/drivers/infiniband/core/include"
	n=$("$PATCH_DIR/apply.sh" "$TREE" "$IBCM_CACHE/patch/base-$SRC_SERIES" \
		"$APPLIED" "$SERIES") || exit 1
	note "applied the $n patches of make patch to $TREE"
}

mkdir -p "$CACHE"
# One run at a time: runs share the source tree.
exec 9>"$CACHE/.lock"
flock 9

unpack_tree
apply_series
# The stock reject texts, for the suites to compare ibcm_reject_msg() with.
python3 "$KUNIT_DIR/stock_rej.py" \
	"$IBCM_CACHE/patch/base-$SRC_SERIES/drivers/infiniband/core/cm.c" \
	"$TREE/drivers/infiniband/core/cm_kunit_stock_rej.h"
mkdir -p "$BUILD"
if [ -n "$debug" ]; then
	# Copies, so that Python's byte code lands in the cache.
	# Time stamps kept, so that the initramfs is rebuilt only on change.
	cp -p "$KUNIT_DIR/kmemleak-init.sh" "$KUNIT_DIR/qemu_x86_64_kmemleak.py" \
		"$CACHE/"
	cat >"$CACHE/kmemleak.list.new" <<-EOF
	dir /dev 0755 0 0
	nod /dev/console 0600 0 0 c 5 1
	dir /bin 0755 0 0
	file /bin/busybox /bin/busybox 0755 0 0
	file /init $CACHE/kmemleak-init.sh 0755 0 0
	dir /sys 0755 0 0
	dir /proc 0755 0 0
	EOF
	if cmp -s "$CACHE/kmemleak.list.new" "$CACHE/kmemleak.list"; then
		rm "$CACHE/kmemleak.list.new"
	else
		mv "$CACHE/kmemleak.list.new" "$CACHE/kmemleak.list"
	fi
fi

# kunit.py asks QEMU for KVM first: under TCG inroot.sh hides /dev/kvm
# (a KVM that cannot run a stock kernel, like PVM's, would hang it) and
# QEMU falls back to TCG.
accel=$("$VM_DIR/accel.sh")
if [ "$accel" = kvm ]; then
	export IBCM_INROOT_KVM=1
fi

# Run a command in the sid root with the cache bound at the same path.
in_root() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private bash -c '
		set -e
		mkdir -p "$1$2"
		mount --bind "$2" "$1$2"
		shift 2
		exec "$@"
	' inroot "$IBCM_ROOT" "$CACHE" "$VM_DIR/inroot.sh" "$@"
}

# follow FILE: while kunit.py runs, show its own time-stamped lines
# (configuring, building, starting the kernel) as they come, and every two
# minutes without one that it is still at it, until FILE.stop appears.
follow() {
	local l part='' what=started since last=0
	since=$(date +%s)
	exec 3<"$1"
	while :; do
		[ ! -e "$1.stop" ] || last=1
		while IFS= read -r l <&3; do
			l=$part$l part=''
			if [[ $l =~ ^\[([0-9]{2}:[0-9]{2}:[0-9]{2})\]\ (.*) ]]; then
				printf '# [%s] kunit: %s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" >&2
				what=${BASH_REMATCH[2]%% ...*} since=$(date +%s)
			fi
		done
		part+=$l
		[ $last = 0 ] || return 0
		if [ $(($(date +%s) - since)) -ge 120 ]; then
			note "still at it: $what ($(($(date +%s) - start)) s in)"
			since=$(date +%s)
		fi
		sleep 1
	done
}

out=$(mktemp)
rm -f "$IBCM_SRC/out/kunit/${debug:+debug-}ib_cm-kunit.log"
trap 'rm -f "$out" "$out.stop"; [ -z "${follower:-}" ] || kill "$follower" 2>/dev/null || true' EXIT
start=$(date +%s)
note "kunit.py run: $(basename "$KUNITCONFIG"), build in $BUILD, QEMU with $accel"
follow "$out" 9>&- &
follower=$!
set +e
# shellcheck disable=SC2016 # expanded by the inner shell
in_root bash -c '
	set -e
	[ "$1" = kvm ] || [ ! -e /dev/kvm ] || [ "$(stat -c %t:%T /dev/kvm)" = 1:3 ] ||
		{ echo "kunit: /dev/kvm is not hidden" >&2; exit 1; }
	cd "$2"
	shift 2
	exec python3 tools/testing/kunit/kunit.py run "$@"
' kunit "$accel" "$TREE" --kunitconfig="$KUNITCONFIG" \
	--build_dir="$BUILD" --jobs=2 --timeout="$TIMEOUT" \
	--make_options="CC=$KCC" --make_options="HOSTCC=$KCC" \
	--raw_output=all "${EXTRA[@]}" "$@" >"$out" 2>&1
status=$?
set -e
touch "$out.stop"
wait "$follower" || true
follower=

# The raw log is kept next to the build; kunit.py parse prints the results
# and fails when a case failed or the log is incomplete (a crash).
cp "$out" "$BUILD/ib_cm-kunit.log"
# A copy in the tree's out/, where "make check" reads the ib_cm_seen: lines
# of the suites on the fake (tools/testing/man/check_transitions.py --seen).
mkdir -p "$IBCM_SRC/out/kunit"
cp "$out" "$IBCM_SRC/out/kunit/${debug:+debug-}ib_cm-kunit.log"
[ "$status" = 0 ] || tail -n 60 "$out" >&2
in_root python3 "$TREE/tools/testing/kunit/kunit.py" parse \
	"$BUILD/ib_cm-kunit.log" || status=1
log "full log: $BUILD/ib_cm-kunit.log"
note "took $(($(date +%s) - start)) s, QEMU with $accel"

if [ -n "$debug" ]; then
	# Any report of the debugging facilities fails the run.
	pattern='BUG: KASAN|WARNING: .*lock|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU usage|BUG: sleeping function|kmemleak: [0-9]+ new suspected memory leak|unreferenced object 0x|ODEBUG:|BUG: |WARNING: CPU|Call Trace:'
	if grep -nE "$pattern" "$out" >&2; then
		log "debug facilities reported problems (see above)"
		status=1
	fi
	grep -q '^ib_cm kunit: kmemleak scan done' "$out" ||
		{ log "the kmemleak scan did not run"; status=1; }
fi
exit "$status"
