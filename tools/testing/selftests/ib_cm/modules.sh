#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module life cycle: ib_cm loads alone, every in-kernel user of the CM
# loads against it, and with no users everything unloads again.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

ULPS="rdma_cm ib_srp ib_srpt ib_iser ib_isert nvme_rdma nvmet_rdma ib_ipoib"

# Loadable modules present now; whatever the ULPs pull in must go again.
mods_now() {
	local m
	for m in /sys/module/*/initstate; do
		m=${m%/initstate}
		echo "${m##*/}"
	done | sort
}
mods_now >"$T/before"

check "modprobe ib_cm" modprobe ib_cm
log "ib_cm from $(modinfo -n ib_cm)"
for m in $ULPS; do
	check "modprobe $m" modprobe "$m"
done
holders=$(echo /sys/module/ib_cm/holders/*)
log "ib_cm holders: $holders"
for m in rdma_cm ib_srp ib_srpt ib_ipoib; do
	check "$m uses ib_cm" test -e "/sys/module/ib_cm/holders/$m"
done
# Users first: rdma_cm goes after the ULPs on top of it (and rdma_ucm,
# which earlier tests may have left loaded).
if [ -e /sys/module/rdma_ucm ]; then
	check "modprobe -r rdma_ucm" modprobe -r rdma_ucm
fi
if [ -e /sys/module/rdma_ucm ]; then
	# Who holds it: a process with the rdma_cm device open.
	log "rdma_ucm refcnt $(cat /sys/module/rdma_ucm/refcnt)"
	for f in /proc/[0-9]*/fd/*; do
		[ "$(readlink "$f" 2>/dev/null)" = /dev/infiniband/rdma_cm ] || continue
		p=${f#/proc/}
		p=${p%%/*}
		log "held by $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
		stacks "$p"
	done
fi
for m in ib_ipoib nvmet_rdma nvme_rdma ib_isert ib_iser ib_srpt ib_srp rdma_cm; do
	check "modprobe -r $m" modprobe -r "$m"
done
check "modprobe -r ib_cm" modprobe -r ib_cm
check "ib_cm is gone" test ! -e /sys/module/ib_cm
# What the ULPs pulled in besides (target_core_mod, nvme_core, ...),
# now unused: remove until nothing more goes.
for _ in 1 2 3 4; do
	for m in $(comm -13 "$T/before" <(mods_now)); do
		modprobe -r "$m" 2>/dev/null
	done
done
left=$(comm -13 "$T/before" <(mods_now) | xargs)
check "every module loaded by this test unloads (left: ${left:-none})" test -z "$left"
check "modprobe ib_cm again" modprobe ib_cm
check "modprobe -r ib_cm again" modprobe -r ib_cm
lsmod | sed 's/^/# lsmod: /'
finish
