#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A ucmatose server that accepts 10 connections, asked for 14: it rejects
# the four it has no room for (rdma_reject: REJ reason 28, consumer
# defined), and both programs end at once instead of waiting for timeouts.
# Two devices, so that the server's messages are counted apart from the
# client's.  The client quits at its first failed connection and then
# rejects what it had pending itself, so only the server's side is exact.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

net_two
cma_trace_on
spawn server "${PEER[@]}" ucmatose -b "$IP1" -c 10
wait_listen 7471 "$NS"
run client ucmatose -s "$IP1" -c 14
rc=$?
check "ucmatose client fails ($rc), without timing out" test $rc -ne 0 -a $rc -ne 124
reap server
rc=$?
check "ucmatose server ends ($rc), without timing out" test $rc -ne 124
cma_events | sort | uniq -c | sed 's/^/# rdma_cm events: /'
check "rdma_cm reported REJECTED with reason 28" \
	test "$(cma_events | grep -c '^REJECTED (8/28)')" -ge 1
check "no REJECTED with another reason" \
	test "$(cma_events | grep '^REJECTED' | grep -vc '(8/28)')" -eq 0

show_counters rxe0
show_counters rxe1
expect rxe0 cm_tx_msgs req -eq 14
expect rxe1 cm_rx_msgs req -eq 14
expect rxe1 cm_tx_msgs rej -ge 4
expect rxe0 cm_rx_msgs rej -ge 4
expect rxe1 cm_tx_msgs rep -eq 10
expect rxe1 cm_tx_retries req -eq 0
finish
