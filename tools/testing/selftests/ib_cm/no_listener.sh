#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Connecting to a port nobody listens on is rejected at once with REJ
# reason 8 (invalid service ID); the client must not wait for a timeout.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

net_one
start=$(date +%s)
run client rping -c -a "$IP0" -p 9999 -C 1 -v
rc=$?
took=$(($(date +%s) - start))
check "rping to a port without listener fails" test $rc -ne 0 -a $rc -ne 124
check "it fails fast (${took}s < 15s)" test $took -lt 15
check "client saw REJECTED with reason 8" grep -qE "REJECTED, error:? 8$" "$T/client.out"

show_counters rxe0
for dir in cm_tx_msgs cm_rx_msgs; do
	expect rxe0 $dir req -eq 1
	expect rxe0 $dir rej -eq 1
	expect rxe0 $dir rep -eq 0
done
expect rxe0 cm_tx_retries req -eq 0
finish
