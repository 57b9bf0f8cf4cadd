#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# <debugfs>/ib_cm/ids lists the live ids: the listener of a cm_peer
# server, then N connections that a cm_peer client holds open, ESTABLISHED
# on rxe0 (passive) and rxe1 (active) with the service ID of the port;
# after both exit every line goes (the timewait records end too).  The
# stock module has no listing.  Also: the state names of the ib_cma
# tracepoints resolve to numbers for perf and trace-cmd, on either module,
# and on ours the cause names of icm_state.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

N=8
PORT=7471
# rdma_cm's service ID: port space TCP (0x0106) and the port.
SID=$(printf '0x00000000%04x%04x' 0x0106 $PORT)
ids=$CM_IDS
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs none /sys/kernel/tracing

net_two
fmt=$(grep -h '"ESTABLISHED"' /sys/kernel/tracing/events/ib_cma/*/format | head -n1)
check "tracepoint state names have values ($(grep -o '{ [^}]*"ESTABLISHED" }' <<<"$fmt"))" \
	grep -qE '\{ 10, "ESTABLISHED" \}' <<<"$fmt"

if [ "$IBCM_MODE" = stock ]; then
	check "stock: there is no id listing" test ! -e "$ids"
	finish
fi
fmt=$(cat /sys/kernel/tracing/events/ib_cma/icm_state/format)
check "icm_state's cause names have values ($(grep -o '{ [^}]*"DESTROY" }' <<<"$fmt"))" \
	grep -qE '\{ 27, "DESTROY" \}' <<<"$fmt"
check "the listing exists, readable by root alone" \
	test "$(stat -c %a "$ids" 2>&1)" = 400

if [ ! -x "$FUZZ_BIN/cm_peer" ]; then
	check "cm_peer is built in $FUZZ_BIN (run.sh builds it)" false
	finish
fi

# cm_peer holds its connections (no QPs) until it is told to go.
spawn server "$FUZZ_BIN/cm_peer" -s -a "$IP0" -p $PORT
wait_listen $PORT
cat "$ids" >"$T/listen"
check "the listener is listed (LISTEN, $SID)" \
	grep -qE "^rxe0 0 LISTEN LAP_UNINIT .* $SID [0-9]+ 0 listener$|^- 0 LISTEN .* $SID [0-9]+ 0 listener$" "$T/listen"
sed 's/^/# listen: /' "$T/listen"

spawn client "${PEER[@]}" "$FUZZ_BIN/cm_peer" -c -n $N -a "$IP0" -p $PORT
for _ in $(seq 150); do
	grep -q '^cm_peer established' "$T/client.out" && break
	sleep 0.2
done
check "cm_peer made its $N connections" \
	grep -q "^cm_peer established $N of $N" "$T/client.out"
cat "$ids" >"$T/during"
est=$(grep -cE "^rxe0 1 ESTABLISHED LAP_UNINIT 0x[0-9a-f]{8} 0x[0-9a-f]{8} 0x[0-9a-f]{6} 0x[0-9a-f]{6} $SID [0-9]+ [0-9]+$" "$T/during")
check "all $N passive connections are listed ESTABLISHED on rxe0 port 1 (saw $est)" \
	test "$est" -eq $N
act=$(grep -cE "^rxe1 1 ESTABLISHED LAP_UNINIT .* $SID [0-9]+ [0-9]+$" "$T/during")
check "and the $N active ones on rxe1 (saw $act)" test "$act" -eq $N
sed 's/^/# during: /' "$T/during"

kill "$(cat "$T/client.pid")"
check "cm_peer client disconnects and exits" settle client 30
kill "$(cat "$T/server.pid")"
check "cm_peer server exits" settle server 30

check_no_ids "afterwards nothing is listed" 30
finish
