#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# <debugfs>/ib_cm/ids lists the live ids: during a ucmatose run the
# server's listener and its N connections show up ESTABLISHED on rxe0,
# with the service ID of its port; after the run every line goes (the
# timewait records end too).  The stock module has no listing.  Also: the
# state names of the ib_cma tracepoints resolve to numbers for perf and
# trace-cmd, on either module.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

N=8
PORT=7471
# rdma_cm's service ID: port space TCP (0x0106) and the port.
SID=$(printf '0x00000000%04x%04x' 0x0106 $PORT)
ids=/sys/kernel/debug/ib_cm/ids
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
check "the listing exists, readable by root alone" \
	test "$(stat -c %a "$ids" 2>&1)" = 400

# A slow wire keeps the connections up long enough to be seen.
"${PEER[@]}" tc qdisc replace dev veth1 root netem delay 100ms
spawn server ucmatose -b "$IP0" -p $PORT -c $N -C 20
wait_listen $PORT
cat "$ids" >"$T/listen"
check "the listener is listed (LISTEN, $SID)" \
	grep -qE "^rxe0 0 LISTEN LAP_UNINIT .* $SID [0-9]+ 0 listener$|^- 0 LISTEN .* $SID [0-9]+ 0 listener$" "$T/listen"
sed 's/^/# listen: /' "$T/listen"

spawn client "${PEER[@]}" ucmatose -s "$IP0" -p $PORT -c $N -C 20
most=0
for _ in $(seq 150); do
	cat "$ids" >"$T/now"
	est=$(grep -cE "^rxe0 1 ESTABLISHED LAP_UNINIT 0x[0-9a-f]{8} 0x[0-9a-f]{8} 0x[0-9a-f]{6} 0x[0-9a-f]{6} $SID [0-9]+ 0$" "$T/now")
	if [ "$est" -gt "$most" ]; then
		most=$est
		cp "$T/now" "$T/most"
	fi
	[ "$most" -ge $N ] && break
	sleep 0.2
done
check "all $N passive connections were listed ESTABLISHED on rxe0 port 1 (saw $most)" \
	test "$most" -ge $N
sed 's/^/# during: /' "$T/most" 2>/dev/null | head -n 12
check "ucmatose client" reap client
check "ucmatose server" reap server

left=''
for _ in $(seq 150); do
	left=$(tail -n +2 "$ids")
	[ -z "$left" ] && break
	sleep 0.2
done
check "afterwards nothing is listed" test -z "$left"
[ -z "$left" ] || printf '%s\n' "$left" | sed 's/^/# left: /'
finish
