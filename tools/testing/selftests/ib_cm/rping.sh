#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rping on one rxe device talking to itself: an RC connection is made
# (REQ, REP, RTU), ten pings are verified, and it is torn down (DREQ,
# DREP).  On one device every message is both sent and received on port 1.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

net_one
spawn server rping -s -a "$IP0" -C 10
wait_listen 7174
check "rping client: 10 verified pings" run client rping -c -a "$IP0" -C 10 -v -V
check "rping server exits cleanly" reap server
check "client printed 10 pings" test "$(grep -c 'ping data' "$T/client.out")" -eq 10

show_counters rxe0
for dir in cm_tx_msgs cm_rx_msgs; do
	for m in req rep rtu; do expect rxe0 $dir $m -eq 1; done
	expect_disconnects rxe0 $dir 1
	expect rxe0 $dir rej -eq 0
done
expect rxe0 cm_tx_retries req -eq 0
finish
