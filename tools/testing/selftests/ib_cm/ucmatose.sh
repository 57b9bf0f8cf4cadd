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
# that a REQ's or REP's wait runs out and it is resent, and a REP that
# comes again once the connection is up is answered with the RTU again.
# There, count messages: each of the N arrives, and every further arrival
# is a duplicate.  The send counters cannot say exactly how many went out:
# a resend of the MAD layer counts once in each, an answer to a duplicate
# (a message without its id, as the stock CM counts it) twice in
# cm_tx_msgs and once in cm_tx_retries.  So tx - retries is at least N
# and at most what arrived (both ends are rxe0, nothing is lost).
slow=$((${IBCM_TIMEOUT_SCALE:-1} > 1))
for m in req rep rtu; do
	if [ $slow = 1 ]; then
		rx=$(delta rxe0 cm_rx_msgs $m)
		dup=$(delta rxe0 cm_rx_duplicates $m)
		check "rxe0 cm_rx_msgs/$m = $rx with $dup duplicates: $N messages" \
			test $((rx - dup)) -eq $N
		tx=$(delta rxe0 cm_tx_msgs $m)
		re=$(delta rxe0 cm_tx_retries $m)
		check "rxe0 cm_tx_msgs/$m = $tx with $re retries: $N to $rx" \
			test $((tx - re)) -ge $N -a $((tx - re)) -le "$rx"
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
