#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The VM suite on a sanitised Linux 7.2 of our own build: "make vm-test
# KERNEL=debug" (KASAN), "make vm-test KERNEL=kcsan" (KCSAN in place of
# KASAN), "make stress KERNEL=...".  Both have lockdep with RCU checking,
# sleeping-in-atomic checks, debugobjects, KFENCE and kmemleak
# (kconfig/sanitisers.config), and any report of theirs fails the run.
#
# usage: kernel.sh --kernel NAME [--stock] [--build-only] [--out DIR]
#                  [TEST...] [IBCM_NAME=VALUE...]
#   NAME is a flavour with a file kconfig/NAME.config: debug or kcsan.
#   The kernel is built from the sid root's linux-source-7.2 with the
#   series of "make patch" applied, so that our CM is the tree's own
#   ib_cm.ko, and the tests run on that module.  NAME-stock, or --stock,
#   is the baseline: the same kernel, with the stock cm.c (from the
#   untouched tree) built as its ib_cm.ko against it, and the tests in
#   stock mode; a report that comes there as well is not ours.
#   --build-only builds (or brings up to date) and stops.  TEST and
#   IBCM_NAME=VALUE are those of run.sh; results in out/vm/NAME-ours or
#   out/vm/NAME-stock unless --out says otherwise.
#
# Everything is cached under ~/.cache/ib_cm/vmkernel: the two source
# trees, the build tree (build-NAME), the stock module's (stock-cm-NAME)
# and what the VM boots (install-NAME, install-NAME-stock:
# boot/vmlinuz-RELEASE and lib/modules/RELEASE; the baseline's is a
# hard-linked copy with the stock ib_cm.ko in place of ours).
# Builds are incremental: a second run rebuilds what changed, such as
# cm.c.  They run at nice 19 with IBCM_KERNEL_JOBS (2) jobs, inside the
# sid root with its gcc-16.  The configuration is x86_64 defconfig, then
# virtme-ng's fragment (vng --kconfig), then kconfig/vm.config,
# kconfig/sanitisers.config and kconfig/NAME.config; every line of those
# three must hold in the final .config.
#
# The VM is run.sh's with this kernel: run.sh installs the module under
# test and runs the tests as on the root's kernel.  The suite is framed
# by two checks of this directory: sanitisers_on.sh first (the kernel is
# the one built, every facility is on), sanitisers_clean.sh last (a
# kmemleak scan, and no report of any facility in the whole kernel log).
set -euo pipefail
# shellcheck source=tools/testing/vm/config.sh
. "$(dirname "$0")/config.sh"

orig_args=("$@")
kernel='' stock='' build_only='' out=''
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) kernel=$2; shift ;;
	--stock) stock=1 ;;
	--build-only) build_only=1 ;;
	--out) out=$2; shift ;;
	-h | --help) sed -n '3,37s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "kernel.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done
case $kernel in
*-stock) kernel=${kernel%-stock} stock=1 ;;
esac
KCONF=$IBCM_VM_DIR/kconfig
if [ -z "$kernel" ] || [ ! -f "$KCONF/$kernel.config" ] ||
   [ "$kernel" = vm ] || [ "$kernel" = sanitisers ]; then
	echo "kernel.sh: KERNEL must be one of:" \
		"$(find "$KCONF" -name '*.config' -printf '%f\n' | sed 's/\.config$//' | grep -vx 'vm\|sanitisers' | sort | xargs)" \
		"(or NAME-stock), not '$kernel'" >&2
	exit 2
fi
variant=${stock:+stock}
variant=${variant:-ours}
name=$kernel${stock:+-stock}

VMK=${IBCM_KERNEL_CACHE:-$IBCM_CACHE/vmkernel}
SERIES=$(echo "$IBCM_KVER" | cut -d. -f1-2)
TARBALL=/usr/src/linux-source-$SERIES.tar.xz
SRC_STOCK=$VMK/linux-$SERIES-stock
SRC_OURS=$VMK/linux-$SERIES-ours
BUILD=$VMK/build-$kernel
INSTALL=$VMK/install-$kernel
STOCK_CM=$VMK/stock-cm-$kernel
INSTALL_STOCK=$VMK/install-$kernel-stock
JOBS=${IBCM_KERNEL_JOBS:-2}
KCC=${IBCM_KUNIT_CC:-gcc-16}
SRC=$SRC_OURS

note() { printf '# [%(%T)T] kernel: %s\n' -1 "$*"; }
die() { echo "kernel.sh: $*" >&2; exit 1; }

# The sid root holds the source package, the compiler and QEMU.  The
# cache is bound into it at its own path, in a mount namespace of this
# script's own, for the builds and for the VM, which sees the module tree
# and the kernel image there.
if [ -z "${IBCM_KERNEL_NS:-}" ]; then
	"$IBCM_VM_DIR/mkroot.sh"
	[ -f "$IBCM_ROOT$TARBALL" ] ||
		die "$TARBALL is missing from the sid root (expected for $IBCM_KVER)"
	mkdir -p "$VMK" "$IBCM_ROOT$VMK"
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec env IBCM_KERNEL_NS=1 unshare -m --propagation private bash -c '
		mount --bind "$1" "$2"
		shift 2
		exec "$@"
	' kernel "$VMK" "$IBCM_ROOT$VMK" "$0" "${orig_args[@]}"
fi
in_root() { "$IBCM_VM_DIR/inroot.sh" "$@"; }
kmake() {
	in_root nice -n 19 make -C "$SRC" O="$BUILD" -j"$JOBS" \
		CC="$KCC" HOSTCC="$KCC" "$@"
}

# One build of a flavour at a time; a VM run holds the flavour's lock
# shared, so that nothing it boots is rebuilt under it.
exec 7>"$VMK/.lock-$kernel"
if ! flock -n 7; then
	note "waiting for another build or run of $kernel"
	flock 7
fi

# unpack: the stock tree, once per source package (the stamp names the
# tarball), and our tree as a copy of it.  A new package means new trees
# and new builds.  Under a lock of its own, as it makes both trees.
unpack() {
	local want tmp
	exec 6>"$VMK/.lock-unpack"
	flock 6
	want="$TARBALL $(stat -c '%s %Y' "$IBCM_ROOT$TARBALL")"
	if [ -f "$SRC_STOCK/.ibcm-unpacked" ] &&
	   [ "$(cat "$SRC_STOCK/.ibcm-unpacked")" = "$want" ] &&
	   [ -f "$SRC_OURS/.ibcm-unpacked" ]; then
		exec 6>&-
		return
	fi
	note "unpacking $TARBALL into $VMK (once, 2 x 1.8 GB)"
	rm -rf "$SRC_STOCK" "$SRC_OURS" "$VMK/applied" "$VMK"/build-* "$VMK"/install-*
	tmp=$(mktemp -d "$VMK/unpack.XXXXXX")
	tar -xJf "$IBCM_ROOT$TARBALL" -C "$tmp"
	mv "$tmp/linux-source-$SERIES" "$SRC_STOCK"
	rmdir "$tmp"
	cp -a "$SRC_STOCK" "$SRC_OURS.tmp"
	mv "$SRC_OURS.tmp" "$SRC_OURS"
	echo "$want" >"$SRC_OURS/.ibcm-unpacked"
	echo "$want" >"$SRC_STOCK/.ibcm-unpacked"
	exec 6>&-
}

# apply_series: exactly the series of "make patch" on our tree, on top of
# the stock tree's files; what comes out as last time keeps its time
# stamps, so that kbuild rebuilds only what changed (patch/apply.sh).
apply_series() {
	local n series=$VMK/series
	# mkpatch.sh with a work directory of our own: the KUnit runner may
	# be making the series at the same time in the shared one.
	mkdir -p "$VMK/patch-cache"
	[ -e "$VMK/patch-cache/kernel-scripts" ] ||
		ln -s "$IBCM_CACHE/kernel-scripts" "$VMK/patch-cache/kernel-scripts"
	IBCM_CACHE=$VMK/patch-cache IBCM_ROOT=$IBCM_ROOT \
		"$IBCM_SRC/tools/testing/patch/mkpatch.sh" "$series" >/dev/null
	n=$("$IBCM_SRC/tools/testing/patch/apply.sh" "$SRC_OURS" "$SRC_STOCK" \
		"$VMK/applied" "$series") || exit 1
	cmp -s "$SRC_OURS/drivers/infiniband/core/cm.c" "$IBCM_SRC/cm.c" ||
		die "$SRC_OURS has not got this tree's cm.c"
	note "applied the $n patches of make patch to $SRC_OURS"
}

# The lines of our fragments, which must all hold in the final .config.
fragments() {
	cat "$KCONF/vm.config" "$KCONF/sanitisers.config" "$KCONF/$kernel.config"
	echo "CONFIG_LOCALVERSION=\"-ibcm-$kernel\""
}

# configure: defconfig, virtme-ng's fragment, ours (in that order: the
# last word on a symbol wins), olddefconfig.  Only when an input changed,
# so that an unchanged configuration rebuilds nothing.
configure() {
	local vng want bad=0 line sym
	vng=$(in_root virtme-configkernel --defconfig --dry-run)
	want=$({ echo "$vng"; fragments; cat "$SRC/.ibcm-unpacked"; } | sha256sum | cut -c1-16)
	if [ -f "$BUILD/.config" ] && [ "$(cat "$BUILD/.ibcm-config" 2>/dev/null)" = "$want" ]; then
		return
	fi
	note "configuring $BUILD"
	mkdir -p "$BUILD"
	rm -f "$BUILD/.ibcm-config"
	# olddefconfig names every symbol set twice: see ibcm-config.log.
	{
		kmake -s defconfig
		{ echo "$vng"; fragments; } | grep -v '^##' >>"$BUILD/.config"
		kmake -s olddefconfig
	} >"$BUILD/ibcm-config.log" 2>&1 || {
		cat "$BUILD/ibcm-config.log" >&2
		die "configuring $BUILD failed"
	}
	while IFS= read -r line; do
		case $line in
		CONFIG_*=*)
			grep -qxF "$line" "$BUILD/.config" || {
				echo "kernel.sh: wanted $line, got: $(grep "^${line%%=*}=" "$BUILD/.config" || echo 'not set')" >&2
				bad=1
			} ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# } sym=${sym%% *}
			if grep -q "^$sym=" "$BUILD/.config"; then
				echo "kernel.sh: wanted $sym unset, got $(grep "^$sym=" "$BUILD/.config")" >&2
				bad=1
			fi ;;
		esac
	done < <(fragments)
	[ $bad = 0 ] || die "the configuration of $BUILD is not what kconfig/ asks for"
	echo "$want" >"$BUILD/.ibcm-config"
}

# build: bzImage and modules, at nice 19; a line every five minutes while
# it runs.  Its output is in build-NAME/ibcm-build.log.
build() {
	local t0 pid last rc=0
	t0=$(date +%s)
	note "building $name in $BUILD (make -j$JOBS at nice 19; log in $BUILD/ibcm-build.log)"
	kmake bzImage modules >"$BUILD/ibcm-build.log" 2>&1 &
	pid=$!
	last=$t0
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		if [ $(($(date +%s) - last)) -ge 300 ]; then
			last=$(date +%s)
			note "still building ($(((last - t0) / 60)) min): $(grep -E '^  [A-Z]' "$BUILD/ibcm-build.log" | tail -n 1 | xargs)"
		fi
	done
	wait "$pid" || rc=$?
	if [ $rc != 0 ]; then
		tail -n 40 "$BUILD/ibcm-build.log" >&2
		die "building $name failed (see $BUILD/ibcm-build.log)"
	fi
	note "built $name in $(($(date +%s) - t0)) s"
}

# install: what the VM boots, from the build tree: INSTALL/boot/vmlinuz-
# RELEASE and INSTALL/lib/modules/RELEASE (make modules_install, depmod).
# vng finds the modules next to the image.  Only when the build changed.
install_kernel() {
	local kver=$1 tmp=$INSTALL.tmp
	if [ -f "$INSTALL/.stamp" ] &&
	   [ -z "$(find "$BUILD" \( -name '*.ko' -o -name bzImage -o -name modules.order \) \
		-newer "$INSTALL/.stamp" -print -quit)" ]; then
		return
	fi
	note "installing $kver into $INSTALL"
	rm -rf "$tmp"
	mkdir -p "$tmp/boot"
	touch "$tmp/.stamp"
	kmake -s modules_install INSTALL_MOD_PATH="$tmp" >/dev/null
	cp "$BUILD/arch/x86/boot/bzImage" "$tmp/boot/vmlinuz-$kver"
	cp "$BUILD/System.map" "$tmp/boot/System.map-$kver"
	cp "$BUILD/.config" "$tmp/boot/config-$kver"
	rm -rf "$INSTALL"
	mv "$tmp" "$INSTALL"
}

# stock_cm: the baseline's ib_cm.ko, the untouched tree's cm.c and
# cm_trace.c built as an external module against BUILD (the rest of
# the kernel is the same in both trees but for ib_cm.h, which declares
# the same ABI).  The files are copied into STOCK_CM, so that the
# quoted includes find the stock cm_msgs.h and cm_trace.h; the trace
# header's include path is pointed there too.
stock_cm() {
	local core=$SRC_STOCK/drivers/infiniband/core f
	mkdir -p "$STOCK_CM"
	for f in cm.c cm_trace.c cm_msgs.h cm_trace.h; do
		cmp -s "$core/$f" "$STOCK_CM/$f" || cp "$core/$f" "$STOCK_CM/$f"
	done
	sed -i "s@^#define TRACE_INCLUDE_PATH .*@#define TRACE_INCLUDE_PATH $STOCK_CM@" \
		"$STOCK_CM/cm_trace.h"
	printf '%s\n' 'obj-m := ib_cm.o' 'ib_cm-y := cm.o cm_trace.o' \
		"ccflags-y := -I$core" >"$STOCK_CM/Kbuild"
	note "building the stock ib_cm.ko against $BUILD"
	kmake -s M="$STOCK_CM" modules >"$STOCK_CM/ibcm-build.log" 2>&1 || {
		tail -n 40 "$STOCK_CM/ibcm-build.log" >&2
		die "building the stock CM failed (see $STOCK_CM/ibcm-build.log)"
	}
}

# install_stock: INSTALL_STOCK, INSTALL hard-linked but for the stock
# ib_cm.ko.xz in place of ours, and depmod over it.
install_stock() {
	local kver=$1 tmp=$INSTALL_STOCK.tmp ko f
	ko=lib/modules/$kver/kernel/drivers/infiniband/core/ib_cm.ko.xz
	note "installing the baseline into $INSTALL_STOCK"
	rm -rf "$tmp"
	cp -al "$INSTALL" "$tmp"
	# New files, not writes through the links into INSTALL.
	rm -f "$tmp/$ko"
	for f in "$INSTALL/lib/modules/$kver"/modules.*; do
		cp --remove-destination "$f" "$tmp/lib/modules/$kver/"
	done
	xz -c --check=crc32 --lzma2=dict=1MiB "$STOCK_CM/ib_cm.ko" >"$tmp/$ko"
	in_root depmod -b "$tmp" "$kver"
	rm -rf "$INSTALL_STOCK"
	mv "$tmp" "$INSTALL_STOCK"
}

t0=$(date +%s)
unpack
apply_series
configure
build
kver=$(cat "$BUILD/include/config/kernel.release")
install_kernel "$kver"
if [ -n "$stock" ]; then
	stock_cm
	install_stock "$kver"
	INSTALL=$INSTALL_STOCK
fi
note "$name ready after $(($(date +%s) - t0)) s: Linux $kver"
[ -z "$build_only" ] || exit 0

# The run: the build stays as it is while the VM uses it.
flock -s 7
# KVM or TCG as for the root's kernel (accel.sh probes that one).
IBCM_ACCEL=$("$IBCM_VM_DIR/accel.sh")
export IBCM_ACCEL
export IBCM_VM_KVER=$kver
export IBCM_VM_KIMG=$INSTALL/boot/vmlinuz-$kver
export IBCM_VM_MODBASE=$INSTALL
export IBCM_VM_KBUILD=$BUILD
export IBCM_VM_KBUILD_ARGS="CC=$KCC HOSTCC=$KCC"
if [ -z "$stock" ]; then
	export IBCM_VM_CM=$BUILD/drivers/infiniband/core/ib_cm.ko
fi
# Every KASAN report, not only the first; and 4-level paging.  QEMU's
# TCG offers 5-level paging (la57), and while identify_cpu() fills in the
# boot CPU's feature bits anew, LA57 reads as off for a moment: KASAN's
# idea of where its shadow starts moves with it, and an interrupt in that
# window reports a valid address as a wild-memory-access (seen at 0.009 s
# of every boot), which also turns lockdep off for the rest of the run.
export IBCM_VM_APPEND=${IBCM_VM_APPEND:-kasan_multi_shot no5lvl}
# Everything takes longer under the sanitisers: IBCM_KERNEL_SLOWDOWN (3)
# times the VM's limit, each test's limit (guest.sh) and its clients'
# (lib.sh's IBCM_TIMEOUT), unless they are given.
slow=${IBCM_KERNEL_SLOWDOWN:-3}
export IBCM_VM_TIMEOUT=$((${IBCM_VM_TIMEOUT:-2400} * slow))

tests=() params=("IBCM_TIMEOUT_SCALE=$slow" "IBCM_TIMEOUT=$((120 * slow))")
for a in "$@"; do
	case $a in
	IBCM_*=*) params+=("$a") ;;
	*) tests+=("$a") ;;
	esac
done
# The whole suite by name: guest.sh finds them, and the list goes to the
# guest on the kernel's command line, which has room for names only.
if [ ${#tests[@]} = 0 ]; then
	for t in "$IBCM_SRC"/tools/testing/selftests/ib_cm/*.sh; do
		t=${t##*/}
		[ "$t" = lib.sh ] || tests+=("${t%.sh}")
	done
fi
out=${out:-$IBCM_SRC/out/vm/$kernel-$variant}
exec "$IBCM_VM_DIR/run.sh" ${stock:+--stock} --out "$out" \
	"$IBCM_VM_DIR/sanitisers_on.sh" "${tests[@]}" "$IBCM_VM_DIR/sanitisers_clean.sh" \
	IBCM_KERNEL="$name" IBCM_KERNEL_RELEASE="$kver" "${params[@]}"
