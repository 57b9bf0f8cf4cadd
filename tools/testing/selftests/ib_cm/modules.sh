#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Module life cycle: ib_cm loads alone, every in-kernel user of the CM
# loads against it, and with no users everything unloads again.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

ULPS="rdma_cm ib_srp ib_srpt ib_iser ib_isert nvme_rdma nvmet_rdma ib_ipoib"

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
for m in ib_ipoib nvmet_rdma nvme_rdma ib_isert ib_iser ib_srpt ib_srp rdma_ucm rdma_cm; do
	check "modprobe -r $m" modprobe -r "$m"
done
check "modprobe -r ib_cm" modprobe -r ib_cm
check "ib_cm is gone" test ! -e /sys/module/ib_cm
check "modprobe ib_cm again" modprobe ib_cm
check "modprobe -r ib_cm again" modprobe -r ib_cm
lsmod | sed 's/^/# lsmod: /'
finish
