#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A server that destroys each connection right after accepting it.
# cm_peer -s -x on rxe0 accepts every request with rdma_accept() and no
# QP (as cmtime's "no QPs" pass does) and destroys the id as soon as the
# event is acknowledged: its CM sends the REP and, the id being destroyed
# in REP_SENT, a REJ (reason 28, consumer defined) right behind it.  A
# cm_peer client in namespace $NS connects N times, one connection at a
# time; each either is rejected (before or after its RTU) or, once
# established, must hear the REJ (or a DREQ) within WAIT_MS.  Then:
#   - no connection stayed established with nothing more heard: the REJ
#     right behind the REP is not lost on the client;
#   - every connection is accounted for: N started, each rejected or
#     disconnected, none failed otherwise; the server saw and accepted N
#     requests;
#   - the CM counters add up: N REQs and N REPs (retries aside), the
#     client's device received every REJ the server's sent and at least
#     one per rejected connection, and rdma_cm reported every rejection
#     with reason 28;
#   - our module: no id is left; the kernel log is clean and every module
#     unloads.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

N=${IBCM_AD_CONNS:-200}
WAIT_MS=${IBCM_AD_WAIT_MS:-200}
PORT=7481

if [ ! -x "$FUZZ_BIN/cm_peer" ]; then
	skip_all "no cm_peer in $FUZZ_BIN (run.sh builds it)"
fi

net_two
cma_trace_on
spawn server "$FUZZ_BIN/cm_peer" -s -x -a "$IP0" -p $PORT
wait_listen $PORT
# About 25 ms a connection here; one that stays costs WAIT_MS more.
IBCM_TIMEOUT=90 run client "${PEER[@]}" "$FUZZ_BIN/cm_peer" -c -1 \
	-w "$WAIT_MS" -n "$N" -a "$IP0" -p $PORT
rc=$?
check "the client ends by itself (exit code $rc)" test $rc -ne 124
cl() { kv "$T/client.out" cm_peer "$1"; }
rejected=$(($(cl rejected) + $(cl rejected_established)))
log "client: $(cl started) started; $(cl rejected) rejected before the RTU," \
	"$(cl rejected_established) after it ($(cl establish_errors) RTUs" \
	"refused), $(cl disconnected) disconnected, $(cl stayed) stayed," \
	"$(cl failed) failed; an established one heard back within" \
	"$(cl slowest_ms) ms at the most (of $WAIT_MS)"
# The stock CM handles received MADs on a per-CPU workqueue: with two
# CPUs a REJ can be handled while the REP before it still is, find no id
# with that remote ID yet, and be dropped.  Seen once in 200 here: every
# REJ received, one never delivered.
stock_known_failure "now and then a REJ right behind its REP is received but never delivered"
check "no connection stayed established with nothing more heard ($(cl stayed) of $N)" \
	test "$(cl stayed)" -eq 0
check "every connection accounted for: $(cl started) started, $rejected rejected + $(cl disconnected) disconnected = $N" \
	test "$(cl started)" -eq "$N" -a $((rejected + $(cl disconnected))) -eq "$N"
stock_known_failure ""
check "no connection failed otherwise ($(cl failed))" test "$(cl failed)" -eq 0

check "the CM settles" quiesce 3 30 rxe0 rxe1
kill "$(cat "$T/server.pid")" 2>/dev/null
check "the server exits cleanly" reap server
sv() { kv "$T/server.out" cm_peer "$1"; }
check "the server accepted every request ($(sv accepted) of $(sv connect_requests), $N wanted)" \
	test "$(sv connect_requests)" -eq "$N" -a "$(sv accepted)" -eq "$N" -a \
	"$(sv errors)" -eq 0

show_counters rxe0
show_counters rxe1
sent() { echo $(($(delta "$1" cm_tx_msgs "$2") - $(delta "$1" cm_tx_retries "$2"))); }
check "REQs: $(sent rxe1 req) sent = $N" test "$(sent rxe1 req)" -eq "$N"
expect rxe0 cm_rx_msgs req -eq "$(delta rxe1 cm_tx_msgs req)"
check "REPs: $(sent rxe0 rep) sent = $N" test "$(sent rxe0 rep)" -eq "$N"
# Each accepted id is destroyed: before its RTU (REJ) or after (DREQ).
rej0=$(delta rxe0 cm_tx_msgs rej)
dreq0=$(sent rxe0 dreq)
check "rxe0 ended every connection: $rej0 REJs + $dreq0 DREQs >= $N" \
	test $((rej0 + dreq0)) -ge "$N"
expect rxe1 cm_rx_msgs rej -eq "$rej0"
expect rxe1 cm_rx_msgs rej -ge "$rejected"
log "rxe1 received $(delta rxe1 cm_rx_msgs rej) REJs; $rejected connections were rejected"
cma_events | sort | uniq -c | sed 's/^/# rdma_cm events: /'
check "rdma_cm reported $rejected rejections, each with reason 28" \
	test "$(cma_events | grep -c '^REJECTED (8/28)$')" -eq "$rejected" -a \
	"$(cma_events | grep -c '^REJECTED')" -eq "$rejected"
if [ -e "$CM_IDS" ]; then
	check_no_ids "no ids are left" 10 records
fi

cleanup
unload rdma_ucm rdma_rxe rdma_cm iw_cm ib_cm
finish
