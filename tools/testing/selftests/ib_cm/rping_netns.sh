#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rping between two rxe devices in two network namespaces joined by a veth:
# the client's device (rxe0) sends REQ and RTU and receives REP, the
# server's (rxe1) the other way round; then one DREQ/DREP exchange.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

net_two
spawn server "${PEER[@]}" rping -s -a "$IP1" -C 10
wait_listen 7174 "$NS"
check "rping client: 10 verified pings" run client rping -c -a "$IP1" -C 10 -v -V
check "rping server exits cleanly" reap server

show_counters rxe0
show_counters rxe1
expect rxe0 cm_tx_msgs req -eq 1
expect rxe1 cm_rx_msgs req -eq 1
expect rxe1 cm_tx_msgs rep -eq 1
expect rxe0 cm_rx_msgs rep -eq 1
expect rxe0 cm_tx_msgs rtu -eq 1
expect rxe1 cm_rx_msgs rtu -eq 1
for d in rxe0 rxe1; do
	expect $d cm_tx_msgs rej -eq 0
	expect $d cm_tx_retries req -eq 0
done
# Whoever disconnects first sends the DREQ, the other answers with a DREP;
# see expect_disconnects in lib.sh for crossing DREQs.
dreq=$(($(delta rxe0 cm_tx_msgs dreq) + $(delta rxe1 cm_tx_msgs dreq)))
drep=$(($(delta rxe0 cm_tx_msgs drep) + $(delta rxe1 cm_tx_msgs drep)))
check "one disconnect (dreq=$dreq drep=$drep)" \
	test "$dreq" -ge 1 -a "$dreq" -le 2 -a "$drep" -le 2 -a $((dreq + drep)) -ge 2
finish
