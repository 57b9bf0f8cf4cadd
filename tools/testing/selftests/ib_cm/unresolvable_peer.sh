#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Requests from a peer whose address does not resolve.  rxe1, in
# namespace $NS, gets a second address, $IPX, for which nobody answers
# ARP (arp_ignore 2 on veth1: rxe0 asks from another subnet); rxe0 has an
# on-link route to it.  cm_fuzz sends REQs and SIDR_REQs from $IPX to
# services nobody listens for, COUNT of them at RATE a second.  Each
# needs an answer (REJ, SIDR_REP), and on RoCE making its address handle
# means resolving $IPX: ib_core waits a second for that, then fails.
# Meanwhile rping connects between the namespaces' first addresses over
# and over.  Then:
#   - every rping connection during the flood succeeded: waiting for an
#     answer's address holds up nothing else;
#   - rxe0's MAD layer handed ib_cm every MAD (ib_mad's receive trace
#     point, as in fuzz.sh): QP1's receive queue never ran dry;
#   - our module: the answers that could not be made in time were
#     dropped and counted (cm_rx_drops/backlog), and the CM settles
#     within seconds of the flood's end;
#   - the kernel log is clean and every module unloads.
# The stock module makes these answers on its one ordered workqueue, so
# each holds up every CM event of the machine for a second: rping's
# requests wait behind the flood.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

COUNT=${IBCM_UNRESOLVED_COUNT:-60}
RATE=${IBCM_UNRESOLVED_RATE:-6}
IPX=10.77.5.1
NOBODY_PORT=7402
# Seconds an rping round (connect, 5 pings, disconnect) may take.
SLOWEST=5

if [ ! -x "$FUZZ_BIN/cm_fuzz" ]; then
	skip_all "no cm_fuzz in $FUZZ_BIN (run.sh builds it)"
fi

net_two
modprobe_all ib_umad
dmesg_mark

# rxe1's second address, which rxe0 can route to but never resolve.
mac0=$(cat /sys/class/net/veth0/address)
"${PEER[@]}" sysctl -qw net.ipv4.conf.veth1.arp_ignore=2
"${PEER[@]}" ip neigh replace "$IP0" lladdr "$mac0" dev veth1 nud permanent
"${PEER[@]}" ip addr add "$IPX/24" dev veth1
ip route add "${IPX%.*}.0/24" dev veth0
# sysfs shows the GID ::ffff:$IPX in full.
IFS=. read -r a b c d <<<"$IPX"
gidx=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' "$a" "$b" "$c" "$d")
for _ in $(seq 50); do
	grep -qs "$gidx" /sys/class/infiniband/rxe1/ports/1/gids/* && break
	sleep 0.2
done
check "rxe1 has a GID for $IPX" \
	grep -qs "$gidx" /sys/class/infiniband/rxe1/ports/1/gids/*

# A round takes a few seconds here; behind a stalled CM it would wait.
RPING_TIMEOUT=30

check "rping before the flood" legit_rping before
snap rxe0
snap rxe1
backlog0=0
[ -e /sys/class/infiniband/rxe0/ports/1/cm_rx_drops/backlog ] &&
	backlog0=$(cat /sys/class/infiniband/rxe0/ports/1/cm_rx_drops/backlog)
check "histograms on ib_mad:ib_mad_recv_done_handler" mad_hist_on

spawn fuzz "${PEER[@]}" "$FUZZ_BIN/cm_fuzz" -d rxe1 -D "$IP0" -I "$IPX" \
	-s 6 -n "$COUNT" -r "$RATE" -m flood_req=1,flood_sidr=1 \
	-S $((0x1060000 + NOBODY_PORT)) -U $((0x1110000 + NOBODY_PORT))
stock_known_failure "one ordered workqueue: each answer to an unresolvable peer holds up every CM event for a second"
rounds=0 good=0 slowest=0
while kill -0 "$(cat "$T/fuzz.pid")" 2>/dev/null; do
	rounds=$((rounds + 1))
	legit_rping "during$rounds" && good=$((good + 1))
	t=$(cat "$T/during$rounds.time")
	[ "$t" -le "$slowest" ] || slowest=$t
done
check "rping during the flood: $good of $rounds connections" \
	test $rounds -ge 1 -a $good -eq $rounds
# About a second each here, without the flood.
check "each within ${SLOWEST}s (slowest $((slowest / 10)).$((slowest % 10))s)" \
	test "$slowest" -lt $((SLOWEST * 10))
stock_known_failure ""
check "cm_fuzz exits cleanly" reap fuzz
fz() { kv "$T/fuzz.out" "$@"; }
log "cm_fuzz: $(fz cm_fuzz sent) MADs in $(fz cm_fuzz elapsed_ms) ms, $(fz cm_fuzz rate) MADs/s"

if [ "$IBCM_MODE" = ours ]; then
	check "the CM settles within seconds" quiesce 3 15 rxe0 rxe1
else
	# Each answer waits a second on its one workqueue.
	check "the CM counters settle" quiesce 3 $((COUNT * 2 + 60)) rxe0 rxe1
fi
show_counters rxe0
show_counters rxe1

declare -A H
while read -r kind a b _; do
	[ "$kind" = cm ] && H[$a]=$b
done < <(mad_hist rxe0)
mad_hist_off
h_req=${H[0010]:-0} h_sidr=${H[0017]:-0}
legit=$(delta rxe1 cm_tx_msgs req)
check "REQs to ib_cm: $h_req = $(fz cm req) from cm_fuzz + $legit from rxe1's CM" \
	test "$h_req" -eq $(($(fz cm req) + legit))
check "SIDR_REQs to ib_cm: $h_sidr = $(fz cm sidr_req) from cm_fuzz" \
	test "$h_sidr" -eq "$(fz cm sidr_req)"
expect rxe0 cm_rx_msgs req -eq "$h_req"
expect rxe0 cm_rx_msgs sidr_req -eq "$h_sidr"
if [ "$IBCM_MODE" = ours ]; then
	backlog=$(($(cat /sys/class/infiniband/rxe0/ports/1/cm_rx_drops/backlog) - backlog0))
	log "answers made: rej=$(delta rxe0 cm_tx_msgs rej) sidr_rep=$(delta rxe0 cm_tx_msgs sidr_rep); dropped unanswered: $backlog"
	check "answers that could not be made in time were counted ($backlog)" \
		test "$backlog" -gt 0
fi
log "ARP for $IPX: $(ip neigh show "$IPX" dev veth0)"

cleanup
unload rdma_ucm ib_umad rdma_rxe rdma_cm iw_cm ib_cm
finish
