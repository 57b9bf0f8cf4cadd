#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Deleting an rxe device under load.  cm_peer connects N_CONNS
# connections (no QPs) from rxe1, in namespace $NS, to a cm_peer server
# on rxe0, while cm_fuzz floods rxe0 with REQs for that listener and for
# a port nobody listens on.  With part of the connections set up, rxe0 is
# deleted.  rxe cannot disassociate user contexts, so the removal waits
# for the server, which the test then ends as its owner would; the CM's
# own part of the removal then runs with REQs, RTUs and the flood still
# arriving for rxe0.  Then:
#   - the removal completes promptly and rxe0 is gone;
#   - the client, whose peer vanished under its connections, exits when
#     told: destroying its ids waits for nothing the peer withholds;
#   - rxe1 goes too, the kernel log is clean, and every module unloads.
# The log shows how many of the server's disconnects reached rxe1
# (rxe1 cm_rx_msgs dreq).
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

# On a sanitised kernel (kernel.sh: IBCM_TIMEOUT_SCALE, 3) the full size
# set up not one of 12000 connections in 550 s (stop 32's run: the
# server's REPs were resent 42733 times, the client sent no RTU), so
# there the load is divided by the scale squared.
SCALE=${IBCM_TIMEOUT_SCALE:-1}
N_CONNS=${IBCM_LOAD_CONNS:-$((12000 / (SCALE * SCALE)))}
FLOOD_RATE=$((2000 / (SCALE * SCALE)))
# The flood must outlast the removal: 110 s, times the scale.
FLOOD_SECS=$((110 * SCALE))
PORT=7471
# Connections set up before the removal starts: a storm in progress.
STARTED=$((N_CONNS / 12))

if [ ! -x "$FUZZ_BIN/cm_fuzz" ] || [ ! -x "$FUZZ_BIN/cm_peer" ]; then
	skip_all "no cm_fuzz and cm_peer in $FUZZ_BIN (run.sh builds them)"
fi

net_two
modprobe_all ib_umad
dmesg_mark
spawn server "$FUZZ_BIN/cm_peer" -s -a "$IP0" -p $PORT
wait_listen $PORT
spawn client "${PEER[@]}" "$FUZZ_BIN/cm_peer" -c -n "$N_CONNS" -a "$IP0" \
	-p $PORT
# REQs for the listener and for an unused port, as fast as they go.
spawn flood "${PEER[@]}" "$FUZZ_BIN/cm_fuzz" -d rxe1 -D "$IP0" -s 3 \
	-n 1000000 -r $FLOOD_RATE -t $FLOOD_SECS -m flood_req=3,flood_sidr=1 \
	-S $((0x1060000 + PORT)) -U $((0x1110000 + PORT + 1))
for _ in $(seq 300); do
	[ "$(delta rxe0 cm_rx_msgs rtu)" -ge $STARTED ] && break
	sleep 0.2
done
est=$(delta rxe0 cm_rx_msgs rtu)
check "a storm in progress: $est of $N_CONNS RTUs in before the removal" \
	test "$est" -ge $STARTED
show_counters rxe0
spawn delete rdma link delete rxe0
sleep 1
kill "$(cat "$T/server.pid")" 2>/dev/null
# Its exit destroys every id it holds, with the flood still arriving: on
# the debug kernel that took 79 s on ours and 151 s on the stock CM, its
# time going to KASAN's bookkeeping of rdma_ucm's frees, so the bound is
# 30 s times the scale there.
start=$(date +%s)
check "the server exits" settle server $((30 * SCALE))
log "the server took $(($(date +%s) - start))s to exit"
start=$(date +%s)
check "rdma link delete rxe0 completes" settle delete 60
took=$(($(date +%s) - start))
check "promptly once its user is gone (${took}s < 30s)" test $took -lt 30
check "rxe0 is gone" gone rxe0
check "the flood was still running" kill -0 "$(cat "$T/flood.pid")"
kill "$(cat "$T/flood.pid")" 2>/dev/null
settle flood 30
# It cannot have set up all its connections: exit code 1, not a hang.
kill "$(cat "$T/client.pid")" 2>/dev/null
settle client 30
rc=$?
check "the client exits when told (exit code $rc)" test $rc -ne 124
log "client: $(grep -E 'established|disconnected|errors|failed' \
	"$T/client.out" | tr '\n' ' ')"
show_counters rxe1
spawn delete1 "${PEER[@]}" rdma link delete rxe1
check "rdma link delete rxe1 completes" settle delete1 60
check "rxe1 is gone" gone rxe1
# Every id ends with its device, the destroyed ones whose DREQs the
# removal flushed included (only our module lists them); what may stay
# is timewait records, which belong to no device.
if [ -e "$CM_IDS" ]; then
	check_no_ids "no id left once both devices are gone" 0 records
fi
dmesg_clean
# Unloading would only queue up behind a stuck removal.
if [ -z "$hung" ]; then
	unload rdma_ucm rdma_rxe rdma_cm iw_cm ib_cm
fi
finish
