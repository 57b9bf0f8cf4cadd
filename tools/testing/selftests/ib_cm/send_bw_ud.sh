#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ib_send_bw over UD with rdma_cm (-c UD -R): the UD address is resolved by
# one SIDR_REQ/SIDR_REP pair.  perftest also opens one RC connection of its
# own for exchanging test parameters (REQ, REP, RTU, DREQ, DREP).
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

net_one
spawn server ib_send_bw -d rxe0 -c UD -R -n 100
sleep 2
check "ib_send_bw -c UD -R client" run client ib_send_bw -d rxe0 -c UD -R -n 100 "$IP0"
check "ib_send_bw -c UD -R server" reap server

show_counters rxe0
for dir in cm_tx_msgs cm_rx_msgs; do
	expect rxe0 $dir sidr_req -eq 1
	expect rxe0 $dir sidr_rep -eq 1
	for m in req rep rtu; do expect rxe0 $dir $m -eq 1; done
	expect_disconnects rxe0 $dir 1
	expect rxe0 $dir rej -eq 0
done
expect rxe0 cm_tx_retries sidr_req -eq 0
finish
