#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Mechanical ABI test: does our ib_cm.ko lay out every type of
# include/rdma/ib_cm.h, and declare every export, exactly as the stock
# Linux ib_cm.ko does?  And do the header's constants have the same values?
#
#   tools/testing/abi/check.sh [--self-test] [--header HEADER] [MODULE]
#
# MODULE defaults to ib_cm.ko in the repository root (built by "make").
# HEADER, the header whose constants are compared with the kernel's,
# defaults to our include/rdma/ib_cm.h.  --self-test compares the stock
# module and header with themselves, which must pass.  Output is TAP: one
# line per type, export and constant; the exit status is non-zero if any
# of them differs or is missing.
#
# How: the reference is the BTF of the stock module from the sid root.
# Our module's BTF is used as is when kbuild produced it; otherwise its
# DWARF is encoded to BTF with pahole first.  btfabi.py reads both and
# compares canonical renderings (names, types, offsets, bitfields, sizes,
# enum values, prototypes).  Constants leave no BTF, so a small probe
# module records each one twice, once through the kernel's ib_cm.h and once
# through ours, in one kbuild run, and the two records are compared.
#
# Needs the Linux 7.2 headers, the stock module, pahole and python3, i.e.
# the sid root; run on any other host it re-executes itself in that root
# through tools/testing/vm/inroot.sh (MODULE must then lie inside the
# repository, or be a path inside the root).
set -euo pipefail

abi_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/testing/vm/config.sh
. "$abi_dir/../vm/config.sh"

kver=$IBCM_KVER
build=/lib/modules/$kver/build
stock_xz=/lib/modules/$kver/kernel/drivers/infiniband/core/ib_cm.ko.xz
stock_hdr=/usr/src/linux-headers-${kver%-*}-common/include/rdma/ib_cm.h
[ -f "$stock_hdr" ] || stock_hdr=$build/include/rdma/ib_cm.h

usage() {
	echo "usage: $0 [--self-test] [--header HEADER] [MODULE]" >&2
	exit 2
}
self_test=
header=
while [ $# -gt 0 ]; do
	case $1 in
	--self-test) self_test=1 ;;
	--header) [ $# -ge 2 ] || usage; header=$2; shift ;;
	-*) usage ;;
	*) break ;;
	esac
	shift
done
[ $# -le 1 ] || usage
module=${1:-$IBCM_SRC/ib_cm.ko}
case $module in /*) ;; *) module=$PWD/$module ;; esac

in_root() {
	[ -f "$stock_xz" ] && [ -d "$build/" ] && command -v pahole >/dev/null &&
		command -v python3 >/dev/null
}

if ! in_root; then
	if [ ! -x "$IBCM_ROOT/usr/bin/python3" ]; then
		echo "abi: no sid root at $IBCM_ROOT; creating it" >&2
		"$IBCM_VM_DIR/mkroot.sh" >&2
	fi
	if [ -z "$self_test" ] && [ ! -e "$module" ] &&
		[ ! -e "$IBCM_ROOT$module" ]; then
		echo "abi: $module not found; build it first (make)" >&2
		exit 1
	fi
	case $module in
	"$IBCM_SRC"/*) ;;
	*) [ -n "$self_test" ] || [ -e "$IBCM_ROOT$module" ] || {
		echo "abi: $module is neither inside $IBCM_SRC nor inside the root" >&2
		exit 1
	} ;;
	esac
	case $header in "" | /*) ;; *) header=$PWD/$header ;; esac
	exec "$IBCM_VM_DIR/inroot.sh" "$abi_dir/check.sh" ${self_test:+--self-test} \
		${header:+--header "$header"} "$module"
fi

# From here on we are inside the sid root (or on a Linux 7.2 system).
work=$(mktemp -d /tmp/ibcm-abi.XXXXXX)
trap 'rm -rf "$work"' EXIT
extra=$work/extra.txt
: >"$extra"

# result ok|not ok|skip DESCRIPTION [DIAGNOSTIC...]
result() {
	local IFS=$'\t'
	echo "$*" >>"$extra"
}

xz -dc "$stock_xz" >"$work/stock.ko"
vmlinux=$build/vmlinux
die() {
	echo "abi: $*" >&2
	exit 1
}
[ -f "$vmlinux" ] || die "$vmlinux missing (no base BTF)"

if [ -n "$self_test" ]; then
	module=$work/stock.ko
	header=${header:-$stock_hdr}
	echo "# self-test: the stock module and header against themselves"
fi
header=${header:-$IBCM_SRC/include/rdma/ib_cm.h}
case $header in /*) ;; *) header=$PWD/$header ;; esac
[ -f "$module" ] || die "$module not found; build it first (make)"
[ -f "$header" ] || die "$header not found"
echo "# stock: $stock_xz"
echo "# ours:  $module"

# Our module's type information: kbuild's BTF if it made some, else
# DWARF turned into BTF the way kbuild would have.
ours=$module
readelf -SW "$module" >"$work/sections.txt"
if ! grep -q ' \.BTF ' "$work/sections.txt"; then
	if ! grep -q ' \.debug_info ' "$work/sections.txt"; then
		die "$module has neither BTF nor DWARF; nothing to compare"
	fi
	echo "# ours has no BTF; encoding its DWARF with pahole $(pahole --version)"
	ours=$work/ours.btf
	pahole -J --btf_base "$vmlinux" --btf_encode_detached="$ours" \
		--btf_features=encode_force,var,float,enum64,decl_tag,type_tag \
		--btf_features=optimized_func,consistent_func \
		"$module" >"$work/pahole.log" 2>&1 || {
		cat "$work/pahole.log" >&2
		exit 1
	}
else
	echo "# ours: using the module's own .BTF section"
fi

# Was the module compiled against our header at all?  kbuild's .o.cmd
# files list every header a compilation read.
mod_dir=$(dirname "$module")
header_use=$work/header-use.txt
grep -l 'rdma/ib_cm\.h' "$mod_dir"/.*.o.cmd >"$header_use" 2>/dev/null || true
kernel_copy='linux-headers-[^ ]*/include/rdma/ib_cm\.h'
if [ -n "$self_test" ]; then
	result skip "module built with our include/rdma/ib_cm.h" "self-test"
elif [ ! -s "$header_use" ]; then
	result skip "module built with our include/rdma/ib_cm.h" \
		"no kbuild .o.cmd next to the module"
elif xargs grep -lE "$kernel_copy" <"$header_use" >"$work/wrong.txt"; then
	result "not ok" "module built with our include/rdma/ib_cm.h" \
		"the kernel's copy was read by: $(xargs <"$work/wrong.txt")"
else
	result ok "module built with our include/rdma/ib_cm.h"
fi

# The constants probe: one kbuild run, one object per header.
probe=$work/consts
python3 "$abi_dir/btfabi.py" gen-consts --list "$abi_dir/consts.txt" \
	--scan "$stock_hdr" --ours-header "$header" "$probe"
make -C "$build" M="$probe" modules >"$probe/build.log" 2>&1 || true
# Which header did each half of the probe read?  (Missing .o.cmd: it
# did not compile, and the constants below say why.)
if grep -qsE "$kernel_copy" "$probe/.stock_consts.o.cmd"; then
	result ok "constants probe read the kernel's ib_cm.h"
else
	result "not ok" "constants probe read the kernel's ib_cm.h"
fi
if grep -qsF "$header" "$probe/.ours_consts.o.cmd"; then
	result ok "constants probe read $header"
else
	result "not ok" "constants probe read $header"
fi

python3 "$abi_dir/btfabi.py" check --base "$vmlinux" \
	--stock "$work/stock.ko" --ours "$ours" \
	--types "$abi_dir/types.txt" --scan "$stock_hdr" \
	--consts "$probe/names.txt" --consts-log "$probe/build.log" \
	--consts-stock "$probe/stock_consts.o" --consts-ours "$probe/ours_consts.o" \
	--extra "$extra"
