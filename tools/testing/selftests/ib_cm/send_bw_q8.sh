#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ib_send_bw -R -q 8: perftest connects eight RC QPs through rdma_cm, plus
# one RC connection of its own for exchanging test parameters: nine
# REQ/REP/RTU and nine DREQ/DREP.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

Q=8
net_one
spawn server ib_send_bw -d rxe0 -R -q $Q -n 100
sleep 2
check "ib_send_bw -R -q $Q client" run client ib_send_bw -d rxe0 -R -q $Q -n 100 "$IP0"
check "ib_send_bw -R -q $Q server" reap server

show_counters rxe0
for dir in cm_tx_msgs cm_rx_msgs; do
	for m in req rep rtu; do expect rxe0 $dir $m -eq $((Q + 1)); done
	expect_disconnects rxe0 $dir $((Q + 1))
	expect rxe0 $dir rej -eq 0
done
expect rxe0 cm_tx_retries req -eq 0
finish
