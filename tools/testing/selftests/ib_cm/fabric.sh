#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A many-node fabric (fabric.bash): 16 nodes, each an rxe device in its
# own namespace on one bridge, each running cm_mesh.
#
#   mesh:  every node connects to every other FABRIC_K times (default 2:
#          480 connections), all let go at the same moment, as an MPI job
#          starts.  The whole mesh must come up, and its ids must be gone
#          once the nodes have closed them.
#   storm: node 0 serves FABRIC_C connections (default 120) from the 15
#          others; it is cut off for 10 s (everything to and from it lost)
#          and its server is started again, and every client connects
#          again at once.  With the defaults (either module) all must come
#          back; the REQs lost meanwhile are resent on the IBTA's fixed
#          timer, 4.6 s on RoCE, so they get through up to that long
#          after node 0 is back.  Ours then again with the policy an
#          operator would set for a fabric that restarts
#          (max_response_timeout 17, backoff with 25 % jitter from 512 ms
#          up to backoff_max_ms 1000): all must be back within 6.5 s
#          of node 0 (times IBCM_TIMEOUT_SCALE on a sanitised kernel;
#          see BACK_MS).  The bench's fabric case measures more
#          policies.
#
# The bench's fabric case (make bench BENCH_CASES=fabric) runs the same at
# the issue's sizes and puts ours and stock side by side.  It takes about
# 100 s on Debian's kernel and 2540 s on the debug kernel (making and
# deleting the nodes is slow there), hence the limit.
# ibcm-timeout: 1200
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=tools/testing/selftests/ib_cm/fabric.bash
. "$(dirname "$0")/fabric.bash"

NODES=${FABRIC_NODES:-16}
K=${FABRIC_K:-2}
C=${FABRIC_C:-120}
# The capped storm's bound.  Most clients are back within about a
# second, but a tail about 4 s late is common (4618 and 4961 ms in two
# of four CI runs on Debian's kernel): most likely a REP lost under the
# storm and resent after the wait the client's REQ asked for (rdma_cm's
# 4096 ms, plus up to 25 % jitter: 5120 ms), which the policy does not
# shorten.  So the bound is that resend and 1.4 s to spare; the log line
# "each client node back after" shows the spread.  On a sanitised
# kernel (kernel.sh: IBCM_TIMEOUT_SCALE, 3) every step is slower (one
# KCSAN run was back after 5438 ms), so the bound scales as the clients'
# limits do; there it is only a sanity bound.
BACK_MS=$((6500 * ${IBCM_TIMEOUT_SCALE:-1}))

[ -x "$FUZZ_BIN/cm_mesh" ] || skip_all "no $FUZZ_BIN/cm_mesh (run.sh builds it)"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
trap 'fabric_down; cleanup' EXIT

if ! fabric_up "$NODES"; then
	result 0 "a fabric of $NODES nodes is made"
	finish
fi

check "mesh: $NODES nodes x $K connections to each other come up" fabric_mesh mesh "$K"
check "mesh: every node's connections made with no failure ($fails made again)" \
	test "$fails" -eq 0
if [ "$IBCM_MODE" = ours ]; then
	check_no_ids "mesh: no id left but timewait records, 60 s after the nodes closed" \
		60 records
fi

check "storm (defaults): all $C connections back after node 0's restart" \
	fabric_storm storm-fixed "$C"
check "storm (defaults): the REQs lost while node 0 was cut off were resent ($req_retries)" \
	test "$req_retries" -gt 0

if [ "$IBCM_MODE" = ours ]; then
	FABRIC_POLICY=$FABRIC_RESTART_POLICY
	check "storm (capped backoff): all $C connections back" \
		fabric_storm storm-backoff "$C"
	check "storm (capped backoff): back within $BACK_MS ms of node 0 (${back_ms} ms)" \
		test "$back_ms" -ge 0 -a "$back_ms" -le "$BACK_MS"
	FABRIC_POLICY=
	fabric_policy
fi
fabric_down
finish
