#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deleting an rxe device under a live connection: rping runs across two
# namespaces, rxe0 is removed; both rpings must end, nothing may hang, and
# afterwards the modules must unload (no leaked references).
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

net_two
spawn server "${PEER[@]}" rping -s -a "$IP1" -C 100000
wait_listen 7174 "$NS"
spawn client rping -c -a "$IP1" -C 100000 -S 64
# Wait until the connection is established, then pull the device.
for _ in $(seq 50); do
	[ "$(delta rxe0 cm_tx_msgs rtu)" -ge 1 ] && break
	sleep 0.2
done
check "connection established" test "$(delta rxe0 cm_tx_msgs rtu)" -eq 1
sleep 1
check "rdma link delete rxe0" timeout 60 rdma link delete rxe0
start=$(date +%s)
reap client
rc=$?
check "client ends (rc $rc), not by timeout" test $rc -ne 124
check "it ends promptly ($(($(date +%s) - start))s)" test $(($(date +%s) - start)) -lt 60
# The server's device is still there; it learns of the loss by the CM's
# timeouts or a DREQ.  Give it the test's full time.
reap server
rc=$?
check "server ends (rc $rc), not by timeout" test $rc -ne 124
show_counters rxe1
check "rdma link delete rxe1" timeout 60 ip netns exec "$NS" rdma link delete rxe1
for m in rdma_ucm rdma_rxe rdma_cm iw_cm ib_cm; do
	check "modprobe -r $m" timeout 60 modprobe -r $m
done
check "ib_cm unloaded" test ! -e /sys/module/ib_cm
finish
