#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Requests from a peer whose address does not resolve.  rxe1, in
# namespace $NS, gets a second address, $IPX, for which nobody answers
# ARP (arp_ignore 2 on veth1: rxe0 asks from another subnet); rxe0 has an
# on-link route to it.  cm_fuzz sends REQs and SIDR_REQs from $IPX,
# COUNT of them at RATE a second, in two phases:
#   nobody    to services nobody listens for.  Each needs an answer (REJ,
#             SIDR_REP), and on RoCE making its address handle means
#             resolving $IPX: ib_core waits a second for that, then fails.
#   listener  REQs alone, to the service of a persistent rping server
#             (rping -P: one listener for the whole phase; rdma_cm's
#             service ID for the TCP port space, 0x1060000 + port 7174).
#             Each reaches the listener, whose CM must make the
#             connection's address handle (the same second's wait) before
#             it can hand the request on, or drop it.
# Meanwhile rping connects between the namespaces' first addresses over
# and over (in the listener phase, clients of that one server).  Then, in
# each phase:
#   - every rping connection during the flood succeeded within SLOWEST
#     seconds: waiting for an unresolvable peer's address holds up
#     nothing else, not even other requests for the same listener;
#   - the CM settles soon after the flood (within seconds on our module),
#     and one more rping connects then (without the bound: on the stock
#     module it waits for the flood's work, which moves no counter);
# and over both:
#   - rxe0's MAD layer handed ib_cm every MAD (ib_mad's receive trace
#     point, as in fuzz.sh): QP1's receive queue never ran dry;
#   - our module: the answers to nobody that could not be made in time
#     were dropped and counted (cm_rx_drops/backlog);
#   - the kernel log is clean and every module unloads.
# The stock module makes these answers on its one ordered workqueue, so
# each holds up every CM event of the machine for a second: rping's
# requests wait behind the flood, in both phases.
# ibcm-timeout: 600
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

COUNT=${IBCM_UNRESOLVED_COUNT:-60}
RATE=${IBCM_UNRESOLVED_RATE:-6}
IPX=10.77.5.1
NOBODY_PORT=7402
RPING_PORT=7174
# Seconds an rping round (connect, 5 pings, disconnect) may take: 5, and
# on a sanitised kernel (kernel.sh: IBCM_TIMEOUT_SCALE, 3) that many
# times 5, as everything there, the round without a flood too, is slower.
SLOWEST=$((5 * ${IBCM_TIMEOUT_SCALE:-1}))

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
backlog() {
	cat /sys/class/infiniband/rxe0/ports/1/cm_rx_drops/backlog 2>/dev/null ||
		echo 0
}
backlog0=$(backlog)
check "histograms on ib_mad:ib_mad_recv_done_handler" mad_hist_on

# fz PHASE GROUP KEY: what that phase's cm_fuzz printed.
fz() { kv "$T/fuzz-$1.out" "$2" "$3"; }

# client_round NAME: one rping client (5 pings) from $NS to the
# persistent server, under RPING_TIMEOUT; how long it took, in tenths of
# a second, goes to $T/NAME.time.
client_round() {
	local ok=0 t0=${EPOCHREALTIME/./}
	IBCM_TIMEOUT=$RPING_TIMEOUT run "$1" "${PEER[@]}" rping -c -a "$IP0" \
		-C 5 -V && ok=1
	echo $(((${EPOCHREALTIME/./} - t0) / 100000)) >"$T/$1.time"
	[ "$ok" = 1 ]
}

# phase NAME SEED MIX SID ROUND: flood with cm_fuzz's categories MIX,
# REQs at service SID and SIDR_REQs at nobody's, while ROUND
# (legit_rping or client_round) connects rping over and over; assert on
# the rounds.
phase() {
	local name=$1 round=$5 rounds=0 good=0 slowest=0 t times=''
	local bound=$((SLOWEST * 10))
	# On a sanitised kernel, starting rping alone takes seconds: there a
	# round that starts its own server (legit_rping) took 16.6-24.1 s
	# without any flood (debug kernel, stop 35).  Such a round may take
	# as long as the one before the flood, plus 5 s times the scale (the
	# flood's 60 MADs, answered in turn a second each, would hold a
	# round up for up to a minute).
	if [ "$round" = legit_rping ] && [ "${IBCM_TIMEOUT_SCALE:-1}" -gt 1 ]; then
		bound=$(($(cat "$T/before.time") + SLOWEST * 10))
	fi
	log "phase $name: $3, REQs to service $(printf '0x%x' "$4")"
	spawn "fuzz-$name" "${PEER[@]}" "$FUZZ_BIN/cm_fuzz" -d rxe1 -D "$IP0" \
		-I "$IPX" -s "$2" -n "$COUNT" -r "$RATE" -m "$3" -S "$4" \
		-U $((0x1110000 + NOBODY_PORT))
	stock_known_failure "one ordered workqueue: each answer to an unresolvable peer holds up every CM event for a second"
	while kill -0 "$(cat "$T/fuzz-$name.pid")" 2>/dev/null; do
		rounds=$((rounds + 1))
		if "$round" "$name$rounds"; then
			good=$((good + 1))
		else
			times="$times(failed)"
		fi
		t=$(cat "$T/$name$rounds.time")
		times="$times $((t / 10)).$((t % 10))s"
		[ "$t" -le "$slowest" ] || slowest=$t
	done
	log "phase $name: rping rounds took$times"
	check "$name: rping during the flood: $good of $rounds connections" \
		test $rounds -ge 1 -a $good -eq $rounds
	# About a second each here, without the flood.
	check "$name: each within $((bound / 10)).$((bound % 10))s (slowest $((slowest / 10)).$((slowest % 10))s)" \
		test "$slowest" -lt "$bound"
	stock_known_failure ""
	check "$name: cm_fuzz exits cleanly" reap "fuzz-$name"
	if [ -e "$T/pserver.pid" ]; then
		kill "$(cat "$T/pserver.pid")" 2>/dev/null
		settle pserver 30
		t=$?
		check "$name: the persistent rping server ends when told ($t)" \
			test $t -ne 124
	fi
	log "cm_fuzz: $(fz "$name" cm_fuzz sent) MADs in $(fz "$name" cm_fuzz elapsed_ms) ms, $(fz "$name" cm_fuzz rate) MADs/s"
	if [ "$IBCM_MODE" = ours ]; then
		check "$name: the CM settles within seconds" quiesce 3 15 rxe0 rxe1
	else
		# Each answer waits a second on its one workqueue.
		check "$name: the CM counters settle" \
			quiesce 3 $((COUNT * 2 + 60)) rxe0 rxe1
	fi
	# An answer given up on moves no counter: one more round, without a
	# bound of 5 s, sees the flood's work done (on the stock module its
	# REQ is queued behind all of it) before the next phase.
	# On the stock module that was seen to take longer still, past 120 s
	# (after the listener phase, its REP resent 22 times meanwhile).
	local RPING_TIMEOUT=$((COUNT + 60))
	stock_known_failure "one ordered workqueue: each answer to an unresolvable peer holds up every CM event for a second"
	check "$name: rping after the flood" legit_rping "after-$name"
	stock_known_failure ""
	t=$(cat "$T/after-$name.time")
	log "phase $name: the round after took $((t / 10)).$((t % 10))s"
}

phase nobody 6 flood_req=1,flood_sidr=1 $((0x1060000 + NOBODY_PORT)) \
	legit_rping
backlog1=$(backlog)
spawn pserver rping -s -P -a "$IP0" -p $RPING_PORT -C 5
check "a persistent rping server listens" wait_listen $RPING_PORT
phase listener 7 flood_req=1 $((0x1060000 + RPING_PORT)) client_round
backlog2=$(backlog)
show_counters rxe0
show_counters rxe1

declare -A H
while read -r kind a b _; do
	[ "$kind" = cm ] && H[$a]=$b
done < <(mad_hist rxe0)
mad_hist_off
h_req=${H[0010]:-0} h_sidr=${H[0017]:-0}
legit=$(delta rxe1 cm_tx_msgs req)
f_req=$(($(fz nobody cm req) + $(fz listener cm req)))
f_sidr=$(($(fz nobody cm sidr_req) + $(fz listener cm sidr_req)))
check "REQs to ib_cm: $h_req = $f_req from cm_fuzz + $legit from rxe1's CM" \
	test "$h_req" -eq $((f_req + legit))
check "SIDR_REQs to ib_cm: $h_sidr = $f_sidr from cm_fuzz" \
	test "$h_sidr" -eq "$f_sidr"
expect rxe0 cm_rx_msgs req -eq "$h_req"
expect rxe0 cm_rx_msgs sidr_req -eq "$h_sidr"
if [ "$IBCM_MODE" = ours ]; then
	log "answers made: rej=$(delta rxe0 cm_tx_msgs rej) sidr_rep=$(delta rxe0 cm_tx_msgs sidr_rep); dropped unanswered: $((backlog1 - backlog0)) (nobody), $((backlog2 - backlog1)) (listener)"
	check "answers that could not be made in time were counted ($((backlog1 - backlog0)))" \
		test $((backlog1 - backlog0)) -gt 0
fi
log "ARP for $IPX: $(ip neigh show "$IPX" dev veth0)"

cleanup
unload rdma_ucm ib_umad rdma_rxe rdma_cm iw_cm ib_cm
finish
