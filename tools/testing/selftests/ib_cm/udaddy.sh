#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# udaddy resolves four UD endpoints on one device (four SIDR_REQ/SIDR_REP
# exchanges, no RC message) and sends datagrams over them.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

N=4
net_one
spawn server udaddy -b "$IP0" -c $N
wait_listen 7174
check "udaddy client: $N UD endpoints" run client udaddy -s "$IP0" -c $N
check "udaddy server exits cleanly" reap server
show_counters rxe0
for dir in cm_tx_msgs cm_rx_msgs; do
	expect rxe0 $dir sidr_req -eq $N
	expect rxe0 $dir sidr_rep -eq $N
	expect rxe0 $dir req -eq 0
done
expect rxe0 cm_tx_retries sidr_req -eq 0
finish
