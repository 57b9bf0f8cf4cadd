#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Loss, delay, duplication and reordering on the wire (tc netem on both
# ends of the veth between the namespaces).  Under loss, rping x10 and
# ucmatose -c 20 each finish inside the time the CM's retries allow,
# connected or failed (the reason is logged, a CM error event or a
# transport error); under delay, duplication and reordering ucmatose and
# udaddy (SIDR) connect; nothing hangs.  udaddy is not run under loss: its
# data goes over UD, which nothing resends, and it waits forever for a
# lost datagram on either module.
# Under loss the CM retries, also the DREQ of an id destroyed while
# connected (rping's and ucmatose's ends exit without waiting for the
# DREP; the stock module sends that DREQ once, so its peer may wait
# forever); afterwards no id is left (ours: the id listing is empty once
# timewait ends) and every module unloads.
# One way a client may run on for ever that is not the CM's: the data of
# a connection is lost so often that rxe runs out of retries for an RC
# send (ucmatose asks for 5; its hw counter retry_exceeded_err says so).
# The QP goes to the error state, but ucmatose counts completions without
# looking at their status, and both its ends then wait for messages that
# never come, with every connection up.  A client stuck like that is
# logged, killed and let pass, if (ours) every live id is connected.
#
#   IBCM_NETEM_ROUNDS  rounds of the whole set (default 1; make stress
#                      runs more, to catch a failure that is rare)
#   IBCM_NETEM_LOSS    the loss of the first part (default 20%; at 35%
#                      ucmatose's transport runs out of retries in about
#                      half the rounds, the case excused above)
# ibcm-timeout: 900
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

ROUNDS=${IBCM_NETEM_ROUNDS:-1}
LOSS=${IBCM_NETEM_LOSS:-20%}
# rdma_cm's defaults: 4 s per CM try and 15 retries make a connect give up
# after about a minute; a client that runs past LIMIT seconds is stuck.
LIMIT=100
IBCM_TIMEOUT=$((LIMIT + 20))
CM_ERRORS='RDMA_CM_EVENT_(UNREACHABLE|REJECTED|CONNECT_ERROR|ADDR_ERROR|ROUTE_ERROR)|cma event RDMA_CM_EVENT_(UNREACHABLE|REJECTED)'

impair() {
	tc qdisc replace dev veth0 root netem "$@"
	"${PEER[@]}" tc qdisc replace dev veth1 root netem "$@"
}

unimpair() {
	tc qdisc del dev veth0 root 2>/dev/null
	"${PEER[@]}" tc qdisc del dev veth1 root 2>/dev/null
	return 0
}

# outcome NAME RC SECS [EXCUSE]: it finished in time (connected, or
# failed: with a CM error event, or the transport gave up on a data
# transfer), or it waited only for data the transport gave up on (EXCUSE).
outcome() {
	local name=$1 rc=$2 secs=$3 why=ok
	if [ -n "${4:-}" ]; then
		log "$name: exit $rc after ${secs}s, past the limit: $4"
		return 0
	fi
	if [ "$rc" -ne 0 ]; then
		why=$(grep -oE "$CM_ERRORS" "$T/$name.out" | head -n1)
		why=${why:-no CM error event: $(tail -n1 "$T/$name.out")}
	fi
	log "$name: exit $rc after ${secs}s ($why)"
	[ "$rc" -ne 124 ] && [ "$secs" -le "$LIMIT" ]
}

# stuck PID: log what a client that runs too long is waiting for: the
# CM's ids (ours), both devices' counters, the kernel stacks of its tasks.
stuck() {
	if [ -e "$CM_IDS" ]; then
		sed 's/^/# ids: /' "$CM_IDS" | head -n 80
	fi
	show_counters rxe0
	show_counters rxe1
	stacks "$1"
}

# gave_up: the RC sends that the transports of both devices gave up on so
# far, their retries (or RNR retries) run out.
gave_up() {
	local v n=0
	for v in $(hw_counters retry_exceeded_err retry_rnr_exceeded_err); do
		n=$((n + v))
	done
	echo "$n"
}

# cm_settled: the CM waits for nothing: every live id is connected, and
# there is one at least (ours; stock lists no ids, so it is taken as so).
# What keeps it from being so is logged.  The flags may be followed by an
# id's timing (a destroyed id retrying its DREQ).
cm_settled() {
	[ -e "$CM_IDS" ] || return 0
	tail -n +2 "$CM_IDS" | awk '
		/ (destroyed|listener|timewait)( |$)/ { next }
		$3 == "ESTABLISHED" { up++; next }
		{ other++; print "# not settled: " $0 }
		END {
			if (!up)
				print "# not settled: no connection is up"
			exit !(up > 0 && other == 0)
		}'
}

# timed NAME CMD...: run a client, line-buffered so that even a killed one
# leaves its output.  One still running after LIMIT seconds is stuck: its
# state is logged and it is killed, excused if it can only have waited
# for data the transport gave up on.  Then judge it with outcome.  The
# CM's state is judged first: on a sanitised kernel logging the rest
# takes some 20 s, in which the client may finish and close its ids.
timed() {
	local name=$1 t0 pid rc=0 lost0 lost settled excuse=''
	shift
	t0=$(date +%s)
	lost0=$(gave_up)
	log "run $name: $*"
	stdbuf -oL -eL "$@" >"$T/$name.out" 2>&1 &
	pid=$!
	if ! finished "$pid" "$LIMIT"; then
		log "$name still running after ${LIMIT}s"
		settled=0
		cm_settled && settled=1
		stuck "$pid"
		lost=$(($(gave_up) - lost0))
		log "RC sends the transport gave up on meanwhile: $lost"
		if [ "$lost" -gt 0 ] && [ "$settled" = 1 ]; then
			excuse="rxe ran out of retries for $lost RC sends, and the client waits for their data; every connection was up at the limit"
		fi
		kill "$pid" 2>/dev/null
	fi
	wait "$pid" || rc=$?
	sed "s/^/# $name: /" "$T/$name.out" | tail -n 40
	outcome "$name" "$rc" $(($(date +%s) - t0)) "$excuse"
}

# Ten rpings, each against a server of its own: a server that is still
# ending its last connection takes a new REQ into its listen backlog and
# answers it only when it exits, which is not the CM's doing.
rpings() {
	local i bad='' told rc
	for i in $(seq 10); do
		spawn rserver "${PEER[@]}" rping -s -a "$IP1" -C 3
		wait_listen 7174 "$NS" || return 1
		timed rping rping -c -a "$IP1" -C 3 -v || bad="$bad $i"
		# After a CM error event (an address not resolved, a REJ) the
		# server may never have seen its client and waits for ever:
		# it is told to go, and then its exit code is that of the
		# signal.  Only a server that does not end counts against it.
		told=''
		if grep -qE "$CM_ERRORS" "$T/rping.out"; then
			kill "$(cat "$T/rserver.pid")" 2>/dev/null
			told=1
		fi
		rc=0
		settle rserver 30 >/dev/null || rc=$?
		if [ "$rc" != 0 ] && { [ -z "$told" ] || [ "$rc" = 124 ]; }; then
			bad="$bad server$i"
		fi
	done
	[ -z "$bad" ] || log "rping runs that did not finish in time:$bad"
	[ -z "$bad" ]
}

# pair NAME PORT -- SERVER ARGS -- CLIENT ARGS: a server in the peer's
# namespace on PORT and one timed client run against it.
pair() {
	local name=$1 port=$2 srv=() rc
	shift 3
	while [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	spawn "${name}_server" "${PEER[@]}" "${srv[@]}"
	wait_listen "$port" "$NS" || return 1
	timed "$name" "$@"
	rc=$?
	kill "$(cat "$T/${name}_server.pid")" 2>/dev/null
	settle "${name}_server" 30 >/dev/null
	return "$rc"
}

ucmatose20() {
	pair ucmatose 7471 -- ucmatose -b "$IP1" -c 20 -- ucmatose -s "$IP1" -c 20
}

udaddy4() {
	pair udaddy 7174 -- udaddy -b "$IP1" -c 4 -- udaddy -s "$IP1" -c 4
}

retries() {
	local d m n=0
	for d in rxe0 rxe1; do
		for m in req rep dreq sidr_req; do
			n=$((n + $(delta $d cm_tx_retries $m)))
		done
	done
	echo $n
}

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
net_two
for round in $(seq "$ROUNDS"); do
	r="round $round/$ROUNDS"
	snap rxe0
	snap rxe1
	impair loss "$LOSS"
	stock_known_failure "the DREQ sent when a connected id is destroyed is never retried; a peer that loses it waits for the disconnect forever"
	check "$r, $LOSS loss: rping x10 finish in time" rpings
	check "$r, $LOSS loss: ucmatose -c 20 finishes in time" ucmatose20
	stock_known_failure ""
	n=$(retries)
	check "$r, $LOSS loss: the CM retried ($n resends)" test "$n" -gt 0

	impair delay 200ms 50ms
	check "$r, 200+-50 ms delay: ucmatose -c 20 connects" ucmatose20
	check "$r, 200+-50 ms delay: udaddy connects" udaddy4

	snap rxe0
	snap rxe1
	impair duplicate 5%
	check "$r, 5% duplicates: ucmatose -c 20 connects" ucmatose20
	check "$r, 5% duplicates: udaddy connects" udaddy4
	dups=0
	for m in $CM_MSGS; do
		dups=$((dups + $(delta rxe0 cm_rx_duplicates "$m") + $(delta rxe1 cm_rx_duplicates "$m")))
	done
	log "duplicates the CM recognised: $dups"

	impair delay 20ms reorder 25% 50%
	check "$r, reordering: ucmatose -c 20 connects" ucmatose20
	unimpair
done

if [ -e "$CM_IDS" ]; then
	check_no_ids "no id left once timewait is over" 30
fi
if [ -z "$hung" ]; then
	rdma link delete rxe0
	"${PEER[@]}" rdma link delete rxe1
	for m in rdma_ucm rdma_rxe rdma_cm iw_cm ib_cm; do
		check "modprobe -r $m" unload_one $m
	done
fi
finish
