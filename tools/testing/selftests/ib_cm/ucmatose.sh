#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# ucmatose makes 100 RC connections on one device, sends messages over
# each and disconnects them all.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

N=100
net_one
spawn server ucmatose -b "$IP0" -c $N
wait_listen 7471
check "ucmatose client: $N connections" run client ucmatose -s "$IP0" -c $N
check "ucmatose server exits cleanly" reap server

show_counters rxe0
for dir in cm_tx_msgs cm_rx_msgs; do
	for m in req rep rtu; do expect rxe0 $dir $m -eq $N; done
	expect_disconnects rxe0 $dir $N
	expect rxe0 $dir rej -eq 0
done
expect rxe0 cm_tx_retries req -eq 0
finish
