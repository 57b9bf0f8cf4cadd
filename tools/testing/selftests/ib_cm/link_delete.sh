#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deleting an rxe device under a live connection.  rping runs across two
# namespaces and rxe0 is removed under it.  rxe cannot disassociate user
# contexts, so the removal waits for the device's user-space users to close
# it, and rping does not close it on DEVICE_REMOVAL: the test ends the
# rpings itself after a few seconds, as their owner would.  Then the
# removal must complete promptly (the CM drops the device with live
# connections on it, and their ids are destroyed after it is gone), the
# other device must go too, and all modules must unload: nothing hangs and
# no reference leaks.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

net_two
spawn server "${PEER[@]}" rping -s -a "$IP1" -C 100000
wait_listen 7174 "$NS"
spawn client rping -c -a "$IP1" -C 100000 -S 64
for _ in $(seq 50); do
	[ "$(delta rxe0 cm_tx_msgs rtu)" -ge 1 ] && break
	sleep 0.2
done
check "connection established" test "$(delta rxe0 cm_tx_msgs rtu)" -eq 1
show_counters rxe1
sleep 1
spawn delete rdma link delete rxe0
sleep 5
if gone rxe0; then
	log "rxe0 went while rping still had it open"
else
	log "rxe0 removal waits for its users, ending the rpings"
fi
kill "$(cat "$T/client.pid")" "$(cat "$T/server.pid")" 2>/dev/null
settle client 30
settle server 30
start=$(date +%s)
check "rdma link delete rxe0 completes" settle delete 60
took=$(($(date +%s) - start))
check "promptly once its users are gone (${took}s < 30s)" test $took -lt 30
check "rxe0 is gone" gone rxe0
spawn delete1 "${PEER[@]}" rdma link delete rxe1
check "rdma link delete rxe1 completes" settle delete1 60
check "rxe1 is gone" gone rxe1
# Unloading would only queue up behind a stuck removal.
if [ -z "$hung" ]; then
	unload rdma_ucm rdma_rxe rdma_cm iw_cm ib_cm
fi
finish
