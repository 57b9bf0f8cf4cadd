#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Hostile MADs on the wire.  cm_fuzz (tools/testing/fuzz/cm_fuzz.c) sends
# IBCM_FUZZ_COUNT (30000) CM MADs from rxe1, in namespace $NS, to rxe0's
# QP1: random payloads, wrong base and class versions and methods,
# boundary field values, bit-flipped REQs for a live listener, messages
# naming live connections, REQ and SIDR_REQ floods.  The listener and the
# live connections are cm_peer's (no QPs).  rping connects between the
# namespaces over and over while the fuzzer runs; rping and ucmatose
# connect after it.  Then:
#   - every legitimate connection succeeded and the kernel log is clean;
#   - the MADs add up.  ib_core's MAD layer (its receive trace point,
#     counted in histograms) handed ib_cm, per attribute, exactly what
#     cm_fuzz predicts plus what rxe1's CM sent; ib_cm counted each of
#     them (cm_rx_msgs and, for our module, cm_rx_drops); ib_core logged
#     one line per wrong base version; the MADs for no agent are the ones
#     cm_fuzz predicts; rxe1's CM counted what reached it, no more than
#     rxe0's CM sent;
#   - slab memory comes back to its level before (see SLAB_SLACK_KB);
#   - every module unloads.
# cm_fuzz's send rate is in the log.  stress/fuzz_long.sh runs the same
# with a million MADs ("make stress").
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

# A sanitised kernel (kernel.sh: IBCM_TIMEOUT_SCALE, 3) sends 50-90 MADs
# a second, not 500 (stop 32: 79/s; stop 33: 30000 were not sent within
# the 540 s allowed; stop 37 on KCSAN: 91/s), so there the default is a
# third as many.
COUNT=${IBCM_FUZZ_COUNT:-$((30000 / ${IBCM_TIMEOUT_SCALE:-1}))}
SEED=${IBCM_FUZZ_SEED:-1}
# MADs per second (0: as fast as cm_fuzz can, about 4000-4800 here).
# Faster than rxe0 can answer, MADs queue up: sends wait for address
# handles until rxe's 32767 run out, and its QP1 receive queue (512)
# overflows.  Either breaks legitimate connections or loses MADs, on
# both modules; see stress/fuzz_long.sh.
RATE=${IBCM_FUZZ_RATE:-3000}
# The target accepts one request in ACCEPT_EVERY and rejects the others.
# An accepted one keeps its ids until the REP times out (about a second)
# and the listener destroys them; a long run must not pile them up.
ACCEPT_EVERY=${IBCM_FUZZ_ACCEPT_EVERY:-2}
# The listener cm_fuzz aims at (TCP and UDP port spaces) and the live
# connections' one.  A few flipped bits must not turn a REQ for them into
# one for rping's port 7174, which the legitimate connections use: these
# differ from it in all 16 bits, and in 15.
TARGET_PORT=$((7174 ^ 0xffff))
LIVE_PORT=$((TARGET_PORT - 1))
N_LIVE=8
# The server's made-up QP numbers (cm_peer.c's SERVER_QPN + request index).
SERVER_QPN=$((0x5e0000))
# Slab memory after the run may exceed its level before by SLAB_SLACK_KB
# and the live objects in it (slab_live_kb) by LIVE_SLACK_KB.  Measured
# after 30000 MADs, on both modules: Slab +0.1 to +2.6 MB, which is
# mostly SLUB's partly used slabs (it peaks 15-20 MB higher during the
# run), and live objects -0.1 to +0.3 MB (task, inode and file caches,
# the neighbour entries of fuzzed GIDs, the few ids whose REQ asked for
# hours of timewait).  Some 12000 REQs reach ib_cm: leaking 100 bytes
# for each would be 1.2 MB of live objects, a cm_id for each far more.
SLAB_SLACK_KB=4096
LIVE_SLACK_KB=1024

if [ ! -x "$FUZZ_BIN/cm_fuzz" ] || [ ! -x "$FUZZ_BIN/cm_peer" ]; then
	skip_all "no cm_fuzz and cm_peer in $FUZZ_BIN (run.sh builds them)"
fi
# A long run logs more than the kernel's log buffer holds (rate-limited
# warnings of rdma_cm about fuzzed P_Keys, for one): follow the log from
# here on instead of reading the buffer at the end.
KMSG=/tmp/ibcm-fuzz-kmsg.$$
dmesg -W >"$KMSG" 2>&1 &
kmsg_pid=$!
dmesg_new() { cat "$KMSG"; }
trap 'cleanup; rm -f "$KMSG"' EXIT
modprobe_all ib_umad
net_two

# cm_fuzz sends at least 500 MADs/s, 50 on a sanitised kernel (above);
# the end points must outlive it.
FUZZ_MIN_RATE=$((${IBCM_TIMEOUT_SCALE:-1} > 1 ? 50 : 500))
FUZZ_SECS=$(((COUNT / FUZZ_MIN_RATE + 120) * ${IBCM_TIMEOUT_SCALE:-1}))
PEER_SECS=$((FUZZ_SECS + 300))

check "rping before the fuzzing" legit_rping before
slab0=$(slab_kb)
live0=$(slab_live_kb)
cp /proc/slabinfo "$T/slabinfo0"
log "slab before: $slab0 kB, $live0 kB live"

IBCM_TIMEOUT=$PEER_SECS spawn target "$FUZZ_BIN/cm_peer" -s -u \
	-k "$ACCEPT_EVERY" -a "$IP0" -p $TARGET_PORT
IBCM_TIMEOUT=$PEER_SECS spawn live "$FUZZ_BIN/cm_peer" -s -a "$IP0" -p $LIVE_PORT
wait_listen $TARGET_PORT
wait_listen $LIVE_PORT

# The live connections; their comm IDs from the REPs rxe0 sends.
echo 0 >"$TRACE/tracing_on"
echo >"$TRACE/trace"
echo 1 >"$TRACE/events/ib_cma/icm_send_rep/enable"
echo 1 >"$TRACE/tracing_on"
IBCM_TIMEOUT=$PEER_SECS spawn peers "${PEER[@]}" "$FUZZ_BIN/cm_peer" \
	-c -n $N_LIVE -a "$IP0" -p $LIVE_PORT
for _ in $(seq 100); do
	grep -q '^cm_peer established' "$T/peers.out" && break
	sleep 0.2
done
echo 0 >"$TRACE/events/ib_cma/icm_send_rep/enable"
check "$N_LIVE live connections" \
	grep -q "^cm_peer established $N_LIVE of $N_LIVE" "$T/peers.out"
live=()
while read -r target peer; do
	live+=(-L "$target:$peer")
done < <(sed -n 's/.*icm_send_rep: local_id=\([0-9]*\) remote_id=\([0-9]*\).*/\1 \2/p' \
	"$TRACE/trace")
check "their comm IDs from ib_cma:icm_send_rep (${#live[@]} words)" \
	test ${#live[@]} -eq $((2 * N_LIVE))
for ((i = 1; i <= N_LIVE; i++)); do
	live+=(-Q $((SERVER_QPN + i)))
done

snap rxe0
snap rxe1
hw0=$(hw_counters sent_pkts rcvd_pkts)
base0=$(grep -c 'MAD received with unsupported base version' "$KMSG")
check "histograms on ib_mad:ib_mad_recv_done_handler" mad_hist_on

IBCM_TIMEOUT=$FUZZ_SECS spawn fuzz "$FUZZ_BIN/cm_fuzz" \
	-d rxe1 -D "$IP0" -s "$SEED" -n "$COUNT" -r "$RATE" \
	-S $((0x1060000 + TARGET_PORT)) -U $((0x1110000 + TARGET_PORT)) \
	"${live[@]}"
rounds=0 good=0
while kill -0 "$(cat "$T/fuzz.pid")" 2>/dev/null; do
	rounds=$((rounds + 1))
	legit_rping "during$rounds" && good=$((good + 1))
done
check "cm_fuzz exits cleanly" reap fuzz
check "rping while cm_fuzz ran: $good of $rounds connections" \
	test $rounds -ge 1 -a $good -eq $rounds
fz() { kv "$T/fuzz.out" "$@"; }
check "cm_fuzz sent $COUNT MADs, $(fz cm_fuzz errors) send errors" \
	test "$(fz cm_fuzz sent)" -eq "$COUNT" -a "$(fz cm_fuzz errors)" -eq 0
log "cm_fuzz: $(fz cm_fuzz sent) MADs in $(fz cm_fuzz elapsed_ms) ms, $(fz cm_fuzz rate) MADs/s"
log "slab at the end of the fuzzing: $(awk '$1 == "Slab:" { print $2 }' /proc/meminfo) kB"

# Tear the end points down: whatever they still had goes (REJ, DREQ).
for p in peers target live; do
	kill "$(cat "$T/$p.pid")" 2>/dev/null
done
check "cm_peer client exits cleanly" settle peers 30
check "cm_peer target server exits cleanly" settle target 30
check "cm_peer live server exits cleanly" settle live 30
check "the CM counters settle" quiesce 3 120 rxe0 rxe1
show_counters rxe0
show_counters rxe1
log "rxe packets (rxe0 sent, rxe0 received, rxe1 sent, rxe1 received): before $hw0, after $(hw_counters sent_pkts rcvd_pkts)"
log "neighbours never resolved (GIDs from fuzzed REQs): $(ip neigh show dev veth0 | grep -c FAILED)"

# ---- the accounting ----
declare -A H
total=0 unknown=0
while read -r kind a b c; do
	case $kind in
	cm)
		H[$a]=$b
		total=$((total + b))
		[ $((0x$a)) -ge $((0x10)) ] && [ $((0x$a)) -le $((0x1a)) ] ||
			unknown=$((unknown + b))
		;;
	other) H[other]=$((${H[other]:-0} + c)) ;;
	dropped) H[dropped]=$a ;;
	esac
done < <(mad_hist rxe0)
check "the histograms had room for every key" test "${H[dropped]}" -eq 0
log "rxe0's MAD layer handed ib_cm $total MADs, $unknown with unknown attribute IDs"
a=16 rx=0
for m in $CM_MSGS; do
	h=${H[$(printf %04x $a)]:-0}
	f=$(fz cm "$m")
	t=$(delta rxe1 cm_tx_msgs "$m")
	r=$(delta rxe0 cm_rx_msgs "$m")
	check "$m to ib_cm: $h = $f from cm_fuzz + $t from rxe1's CM" \
		test "$h" -eq $((f + t))
	check "rxe0 cm_rx_msgs/$m = $r, as many" test "$r" -eq "$h"
	rx=$((rx + r))
	a=$((a + 1))
done
check "unknown attribute IDs to ib_cm: $unknown, cm_fuzz $(fz cm unknown)" \
	test "$unknown" -eq "$(fz cm unknown)"
check "for no agent (class version, method): ${H[other]:-0}, cm_fuzz $(fz mad no_agent)" \
	test "${H[other]:-0}" -eq "$(fz mad no_agent)"
base=$(($(grep -c 'MAD received with unsupported base version' "$KMSG") - base0))
check "wrong base versions: ib_core logged $base, cm_fuzz $(fz mad base_version)" \
	test "$base" -eq "$(fz mad base_version)"
log "validate_mad() dropped $(fz mad not_send) with another method than SEND (uncounted)"
if [ -d /sys/class/infiniband/rxe0/ports/1/cm_rx_drops ]; then
	line=
	for r in $CM_DROPS; do line="$line $r=$(delta rxe0 cm_rx_drops "$r")"; done
	log "rxe0 cm_rx_drops:$line"
	# The MAD layer lets no short MAD, other version or method through.
	for r in short version method nomem; do
		expect rxe0 cm_rx_drops "$r" -eq 0
	done
	# On RoCE a LAP counts in cm_rx_msgs and then in "attribute".
	lap=$(delta rxe0 cm_rx_msgs lap)
	attr=$(delta rxe0 cm_rx_drops attribute)
	check "rxe0 cm_rx_drops/attribute = $attr: $unknown unknown IDs + $lap LAPs" \
		test "$attr" -eq $((unknown + lap))
	check "reached ib_cm: $total = cm_rx_msgs $rx + attribute drops $attr - $lap LAPs" \
		test "$total" -eq $((rx + attr - lap))
else
	log "stock: no cm_rx_drops; the $unknown MADs with unknown IDs went uncounted"
fi
# And the other way.  rxe1's CM counted what its MAD layer got, which is
# not more than rxe0's CM sent.  cm_tx_msgs counts an answer resent for a
# duplicate twice (1 + 1 retry, as the stock module does), and the CM
# sends where fuzzed REQs tell it to: not all of it reaches rxe1.
declare -A H1
while read -r kind a b _; do
	[ "$kind" = cm ] && H1[$a]=$b
done < <(mad_hist rxe1)
a=16
for m in $CM_MSGS; do
	t=$(delta rxe0 cm_tx_msgs "$m")
	h=${H1[$(printf %04x $a)]:-0}
	r=$(delta rxe1 cm_rx_msgs "$m")
	check "$m from rxe0's CM: rxe1 received $h, counted $r, of $t sent ($(delta rxe0 cm_tx_retries "$m") retries)" \
		test "$r" -eq "$h" -a "$h" -le "$t"
	a=$((a + 1))
done

mad_hist_off

check "rping after the fuzzing" legit_rping after
spawn ucserver ucmatose -b "$IP0" -c 10
wait_listen 7471
check "ucmatose after the fuzzing: 10 connections" \
	run ucclient "${PEER[@]}" ucmatose -s "$IP0" -c 10
check "ucmatose server exits cleanly" reap ucserver

# Timewait is short here (the fuzzer's REQs ask for about 128 ms, rping's
# connections a few seconds), but give it time.
for _ in $(seq 10); do
	slab1=$(slab_kb)
	live1=$(slab_live_kb)
	[ $((slab1 - slab0)) -le $SLAB_SLACK_KB ] &&
		[ $((live1 - live0)) -le $LIVE_SLACK_KB ] && break
	sleep 3
done
check "slab back to $slab1 kB from $slab0 kB (slack $SLAB_SLACK_KB kB)" \
	test $((slab1 - slab0)) -le $SLAB_SLACK_KB
check "live slab objects back to $live1 kB from $live0 kB (slack $LIVE_SLACK_KB kB)" \
	test $((live1 - live0)) -le $LIVE_SLACK_KB
slab_growth "$T/slabinfo0" | head -n 8 | sed 's/^/# slab grew (kB): /'

cleanup
unload rdma_ucm ib_umad rdma_rxe rdma_cm iw_cm ib_cm
sleep 0.5
kill "$kmsg_pid"
# Every send of the CM needs an address handle, and rxe has 32767.
ah=$(grep -cE 'rxe_create_ah: returned err|ib_create_ah_from_wc error' "$KMSG")
check "rxe never ran out of address handles ($ah failures logged)" test "$ah" -eq 0
finish
