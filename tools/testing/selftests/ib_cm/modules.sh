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
for m in $ULPS; do
	check "modprobe -r $m" modprobe -r "$m"
done
modprobe -r rdma_ucm 2>/dev/null
check "modprobe -r ib_cm" modprobe -r ib_cm
check "ib_cm is gone" test ! -e /sys/module/ib_cm
check "modprobe ib_cm again" modprobe ib_cm
check "modprobe -r ib_cm again" modprobe -r ib_cm
lsmod | sed 's/^/# lsmod: /'
finish
