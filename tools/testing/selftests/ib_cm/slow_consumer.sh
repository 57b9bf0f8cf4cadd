#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A flood at a slow kernel consumer.  cm_slow.ko (tools/testing/fuzz)
# listens on rxe0 and takes DELAY_MS in its handler for every request it
# answers, as a ULP that sets up QPs there does; it answers about 1000 /
# DELAY_MS requests a second.  cm_fuzz floods it from rxe1, in namespace
# $NS, with REQs and SIDR_REQs at RATE a second, far more than it can
# answer, while rping connects between the namespaces over and over.
# Then:
#   - every rping connection during the flood succeeded: the slow
#     listener's queue delays nobody else;
#   - slab memory grew by less than GROWTH_MAX_KB at its peak: the CM
#     keeps at most CM_ID_BACKLOG (512) messages waiting for one id;
#   - the MADs add up: each flood REQ and SIDR_REQ that reached ib_cm
#     was either answered by cm_slow or counted in cm_rx_drops/backlog
#     (our module; the stock one has no such counter);
#   - the kernel log is clean and every module unloads.
# The stock module queues every message on one ordered workqueue without
# a bound: its memory grows with the flood and rping's requests wait
# behind it.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

# A sanitised kernel (IBCM_TIMEOUT_SCALE > 1) sends far more slowly (about
# 85 MADs/s seen under KASAN): a smaller flood, still above what the slow
# listener takes, fits cm_fuzz's limit there.
COUNT=${IBCM_SLOW_COUNT:-$((40000 / ${IBCM_TIMEOUT_SCALE:-1}))}
RATE=${IBCM_SLOW_RATE:-2000}
DELAY_MS=${IBCM_SLOW_DELAY_MS:-20}
SLOW_PORT=7400
SID=$((0x1060000 + SLOW_PORT))
# A waiting MAD holds the MAD layer's receive buffer (about half a kB)
# and a work item of under 64 bytes: 512 of them cost ours about 0.3 MB.
# Measured peaks: ours +2.3 MB, stock +38.7 MB (its queue holds most of
# the flood, with a larger work item each).
GROWTH_MAX_KB=8192

if [ ! -x "$FUZZ_BIN/cm_fuzz" ] || [ ! -f "$FUZZ_BIN/cm_slow.ko" ]; then
	skip_all "no cm_fuzz and cm_slow.ko in $FUZZ_BIN (run.sh builds them)"
fi

net_two
modprobe_all ib_umad
dmesg_mark

slow_count() { cat "/sys/module/cm_slow/parameters/$1"; }

# A round takes a few seconds here; behind a stalled CM it would wait.
RPING_TIMEOUT=30

check "insmod cm_slow.ko (${DELAY_MS} ms per request)" \
	insmod "$FUZZ_BIN/cm_slow.ko" device=rxe0 service_id=$SID \
	delay_ms="$DELAY_MS"
slab0=$(slab_kb)
live0=$(slab_live_kb)
log "slab before: $slab0 kB, $live0 kB live"
snap rxe0
snap rxe1
backlog0=0
[ -e /sys/class/infiniband/rxe0/ports/1/cm_rx_drops/backlog ] &&
	backlog0=$(cat /sys/class/infiniband/rxe0/ports/1/cm_rx_drops/backlog)

spawn fuzz "${PEER[@]}" "$FUZZ_BIN/cm_fuzz" -d rxe1 -D "$IP0" -s 5 \
	-n "$COUNT" -r "$RATE" -m flood_req=3,flood_sidr=1 -S $SID -U $SID
# The peak of the live slab objects, sampled while the flood runs.
(
	peak=$live0
	while kill -0 "$(cat "$T/fuzz.pid")" 2>/dev/null; do
		v=$(slab_live_kb)
		[ "$v" -le "$peak" ] || peak=$v
		echo "$peak" >"$T/peak"
		sleep 1
	done
) &
sampler=$!

stock_known_failure "one ordered workqueue: a legitimate REQ waits behind every queued request of the slow listener"
rounds=0 good=0
while kill -0 "$(cat "$T/fuzz.pid")" 2>/dev/null; do
	rounds=$((rounds + 1))
	legit_rping "during$rounds" && good=$((good + 1))
done
check "rping during the flood: $good of $rounds connections" \
	test $rounds -ge 1 -a $good -eq $rounds
stock_known_failure ""
check "cm_fuzz exits cleanly" reap fuzz
wait $sampler
fz() { kv "$T/fuzz.out" "$@"; }
log "cm_fuzz: $(fz cm_fuzz sent) MADs in $(fz cm_fuzz elapsed_ms) ms, $(fz cm_fuzz rate) MADs/s"
peak=$(cat "$T/peak")
stock_known_failure "no bound on the messages waiting for a listener"
check "live slab at its peak: $((peak - live0)) kB above its level before, < $GROWTH_MAX_KB" \
	test $((peak - live0)) -lt $GROWTH_MAX_KB
stock_known_failure ""
log "cm_slow so far: $(slow_count req_handled) REQs, $(slow_count sidr_handled) SIDR_REQs answered"

# What is still queued drains at cm_slow's pace on our module; the stock
# one would take COUNT * DELAY_MS.  Unloading cm_slow destroys the
# listener: what is left is then answered without it.
if [ "$IBCM_MODE" = ours ]; then
	check "the slow listener's queue drains" quiesce 3 120 rxe0 rxe1
fi
req=$(slow_count req_handled) sidr=$(slow_count sidr_handled)
check "rmmod cm_slow" timeout 120 rmmod cm_slow
check "the CM counters settle" quiesce 3 300 rxe0 rxe1
show_counters rxe0
show_counters rxe1

rx_req=$(delta rxe0 cm_rx_msgs req)
rx_sidr=$(delta rxe0 cm_rx_msgs sidr_req)
legit=$(delta rxe1 cm_tx_msgs req)
check "REQs to ib_cm: $rx_req = $(fz cm req) from cm_fuzz + $legit from rxe1's CM" \
	test "$rx_req" -eq $(($(fz cm req) + legit))
check "SIDR_REQs to ib_cm: $rx_sidr = $(fz cm sidr_req) from cm_fuzz" \
	test "$rx_sidr" -eq "$(fz cm sidr_req)"
if [ "$IBCM_MODE" = ours ]; then
	backlog=$(($(cat /sys/class/infiniband/rxe0/ports/1/cm_rx_drops/backlog) - backlog0))
	flood=$(($(fz cm req) + $(fz cm sidr_req)))
	log "of $flood flood requests: $req REQs and $sidr SIDR_REQs answered, $backlog dropped as backlog"
	check "each one answered or counted: $req + $sidr + $backlog = $flood" \
		test $((req + sidr + backlog)) -eq $flood
	check "the excess was dropped" test "$backlog" -gt 0
fi
live1=$(slab_live_kb)
log "slab after: $(slab_kb) kB, $live1 kB live"
if [ -e "$CM_IDS" ]; then
	check_no_ids "no ids are left" 10
fi

cleanup
unload rdma_ucm ib_umad rdma_rxe rdma_cm iw_cm ib_cm
finish
