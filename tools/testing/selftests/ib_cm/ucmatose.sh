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
# A sanitised kernel (kernel.sh: IBCM_TIMEOUT_SCALE > 1) can be slow enough
# that a REQ's or REP's wait runs out and it is resent: there, each
# message counts once (transmissions less retries), and every
# transmission (both ends are rxe0) must arrive.
slow=$((${IBCM_TIMEOUT_SCALE:-1} > 1))
for m in req rep rtu; do
	if [ $slow = 1 ]; then
		tx=$(delta rxe0 cm_tx_msgs $m)
		re=$(delta rxe0 cm_tx_retries $m)
		check "rxe0 cm_tx_msgs/$m = $tx with $re retries: $N messages" \
			test $((tx - re)) -eq $N
		expect rxe0 cm_rx_msgs $m -eq "$tx"
	else
		for dir in cm_tx_msgs cm_rx_msgs; do expect rxe0 $dir $m -eq $N; done
	fi
done
for dir in cm_tx_msgs cm_rx_msgs; do
	expect_disconnects rxe0 $dir $N
	expect rxe0 $dir rej -eq 0
done
[ $slow = 1 ] || expect rxe0 cm_tx_retries req -eq 0
finish
