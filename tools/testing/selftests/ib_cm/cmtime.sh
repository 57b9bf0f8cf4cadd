#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# cmtime sets up and tears down 1000 connections on one device: first with
# real QPs, then a "no QPs" pass that runs the CM protocol alone with
# made-up QP numbers.  Every connection of both passes must be established
# and torn down: each pass prints its timing table only when all of its
# steps succeeded, and any failed event ends the program.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

# pass_ok FILE: the pass printed its timing table and no failed event.
pass_ok() {
	grep -q '^full connect' "$1" && ! grep -q 'event:' "$1"
}

N=1000
net_one
spawn server cmtime -B veth0 -C "$IP0" -L -c $N
# cmtime's out-of-band root is whichever process binds port 7471 first,
# and it listens only after setting up its RDMA listener.  A client that
# binds in between (a slow kernel takes seconds there) becomes a second
# root, and both wait for a peer forever: start it once the server listens.
wait_tcp_listen 7471
spawn client cmtime -B veth0 -C "$IP0" -c $N
# A client still running 10 s before its limit leaves in the log where it
# waits: its kernel stacks and its ids by state (cmtime prints nothing
# until a pass is over).
if ! finished "$(cat "$T/client.pid")" $((IBCM_TIMEOUT - 10)); then
	log "client still running after $((IBCM_TIMEOUT - 10))s; kernel stacks, ids by state:"
	stacks "$(cat "$T/client.pid")"
	cm_ids_by_state
	show_counters rxe0
fi
reap client
rc=$?
reap server
src=$?
sed -n "1,/test - no QPs/p" "$T/client.out" >"$T/qps"
sed -n "/test - no QPs/,\$p" "$T/client.out" >"$T/noqps"

check "QPs pass: $N connections up and down" pass_ok "$T/qps"
show_counters rxe0
# In the no-QPs pass both halves of each loopback connection carry the
# same fake QPN and CA GUID, which the stock module takes for a
# stale connection (REJ, reason 10 STALE_CONN on the server).
stock_known_failure "cmtime no-QPs pass, $N conns on one device: stale-connection check (remote QPN, CA GUID) collides"
check "no-QPs pass: $N connections up and down" pass_ok "$T/noqps"
check "client exits 0 ($rc)" test $rc -eq 0
check "server exits 0 ($src)" test $src -eq 0
# Both passes, plus the one warm-up connection cmtime makes first.
for dir in cm_tx_msgs cm_rx_msgs; do
	expect rxe0 $dir rtu -ge $((2 * N))
	expect rxe0 $dir drep -ge $((2 * N))
	expect rxe0 $dir rej -eq 0
done
stock_known_failure ""
# The excuse holds only for the documented failure.
if [ "$IBCM_MODE" = stock ] && ! pass_ok "$T/noqps"; then
	check "stock failed as documented: server REJECTED, reason 10 STALE_CONN" \
		grep -q 'REJECTED, error: 10$' "$T/server.out"
fi
finish
