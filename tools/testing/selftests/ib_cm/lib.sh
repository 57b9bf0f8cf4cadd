# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared helpers for the ib_cm selftests.  Sourced by every test script.
#
# A test prints TAP: one "ok"/"not ok" line per assertion and the plan at
# the end.  Its exit code follows kselftest: 0 pass, 1 fail, 2 expected
# failure (a known failure of the stock module), 3 unexpected pass, 4 skip.
#
# Environment:
#   IBCM_MODE     "ours" or "stock": which ib_cm.ko is loaded.  Known
#                 failures of the stock module are excused only in "stock".
#   IBCM_TIMEOUT  seconds any one client may run (default 120).

set -uo pipefail

IBCM_MODE=${IBCM_MODE:-ours}
IBCM_TIMEOUT=${IBCM_TIMEOUT:-120}
KSFT_PASS=0 KSFT_FAIL=1 KSFT_XFAIL=2 KSFT_XPASS=3 KSFT_SKIP=4

IP0=10.77.0.1
IP1=10.77.0.2
NS=ibcm_peer
PEER=(ip netns exec "$NS")
T=$(mktemp -d /tmp/ibcm.XXXXXX)

n_tests=0 n_fail=0 n_xfail=0 n_xok=0
xfail_reason='' xfail_seen=''

# ---- TAP ------------------------------------------------------------------

echo "TAP version 13"

# Log lines carry the time since the test started, in tenths of seconds.
t_start=${EPOCHREALTIME/./}
log() {
	local t=$(((${EPOCHREALTIME/./} - t_start) / 100000))
	printf '# [%4d.%ds] %s\n' $((t / 10)) $((t % 10)) "$*"
}

# result OK DESC: record one assertion.
result() {
	local ok=$1 desc=$2
	n_tests=$((n_tests + 1))
	if [ -n "$xfail_reason" ]; then
		xfail_seen=$xfail_reason
		if [ "$ok" = 1 ]; then
			n_xok=$((n_xok + 1))
			echo "ok $n_tests - $desc"
		else
			n_xfail=$((n_xfail + 1))
			echo "not ok $n_tests - $desc # TODO known stock failure: $xfail_reason"
		fi
	elif [ "$ok" = 1 ]; then
		echo "ok $n_tests - $desc"
	else
		n_fail=$((n_fail + 1))
		echo "not ok $n_tests - $desc"
	fi
}

# check DESC CMD...: assert that CMD succeeds.
check() {
	local desc=$1
	shift
	if "$@"; then result 1 "$desc"; else result 0 "$desc"; fi
}

# stock_known_failure REASON: the assertions that follow fail on the stock
# module for a known reason, given as REASON; "" ends the excused stretch.
# Outside stock mode this does nothing: our module must pass them.
stock_known_failure() {
	if [ "$IBCM_MODE" = stock ]; then xfail_reason=$1; fi
}

skip_all() {
	echo "1..0 # SKIP $*"
	exit $KSFT_SKIP
}

# finish: tear the set-up down, check the kernel log over the whole test
# including the teardown, print the plan and exit with the verdict.
finish() {
	xfail_reason=
	cleanup
	dmesg_clean
	echo "1..$n_tests"
	if [ $n_fail -gt 0 ]; then exit $KSFT_FAIL; fi
	if [ $n_xfail -gt 0 ]; then exit $KSFT_XFAIL; fi
	# Every excused assertion passed: the known failure did not happen.
	if [ $n_xok -gt 0 ]; then
		echo "# XPASS known stock failure did not happen: $xfail_seen"
		exit $KSFT_XPASS
	fi
	exit $KSFT_PASS
}

# ---- CM counters ----------------------------------------------------------

CM_GROUPS="cm_tx_msgs cm_tx_retries cm_rx_msgs cm_rx_duplicates"
CM_MSGS="req mra rej rep rtu dreq drep sidr_req sidr_rep lap apr"
# Our module's cm_rx_drops group (the stock module has none).
CM_DROPS="short version method attribute field nomem unmatched"

# Counters are read with bash builtins only: forking a process per file
# costs seconds under emulation.
declare -A snapshot

# snap DEV [NAME]: remember DEV's counters, as NAME (DEV's name when there
# is none); delta DEV GROUP MSG [NAME] is relative to it (GROUP
# cm_rx_drops with a reason for MSG, where the group exists).
snap() {
	local g m v d=/sys/class/infiniband/$1/ports/1 as=${2:-$1}
	for g in $CM_GROUPS; do
		for m in $CM_MSGS; do
			read -r v <"$d/$g/$m"
			snapshot[$as/$g/$m]=$v
		done
	done
	if [ -d "$d/cm_rx_drops" ]; then
		for m in $CM_DROPS; do
			read -r v <"$d/cm_rx_drops/$m"
			snapshot[$as/cm_rx_drops/$m]=$v
		done
	fi
}

delta() {
	local v
	read -r v <"/sys/class/infiniband/$1/ports/1/$2/$3"
	echo $((v - ${snapshot[${4:-$1}/$2/$3]}))
}

# snap_diff FROM TO GROUP MSG: the counter's change from snapshot FROM to
# snapshot TO.
snap_diff() { echo $((${snapshot[$2/$3/$4]} - ${snapshot[$1/$3/$4]})); }

# expect DEV GROUP MSG OP N: assert on a counter delta, e.g.
# "expect rxe0 cm_tx_msgs req -eq 1".
expect() {
	local d
	d=$(delta "$1" "$2" "$3")
	check "$1 $2/$3 = $d, $4 $5" test "$d" "$4" "$5"
}

# expect_disconnects DEV GROUP N: N connections were torn down.  Either
# end may send the DREQ and both may at once; a DREQ that crosses another
# need not be answered.  So per connection: one or two DREQs, at most two
# DREPs, and at least two messages in all.  cm_tx_msgs counts every
# transmission, and a DREP resent for a DREQ that reaches an id already in
# timewait (both ends destroyed their ids at once) counts twice there and
# once in cm_tx_retries: count messages, not transmissions.
expect_disconnects() {
	local dreq drep
	dreq=$(delta "$1" "$2" dreq)
	drep=$(delta "$1" "$2" drep)
	if [ "$2" = cm_tx_msgs ]; then
		dreq=$((dreq - $(delta "$1" cm_tx_retries dreq)))
		drep=$((drep - $(delta "$1" cm_tx_retries drep)))
	fi
	check "$1 $2: $3 disconnects (dreq=$dreq drep=$drep)" \
		test "$dreq" -ge "$3" -a "$dreq" -le $((2 * $3)) -a \
		"$drep" -le $((2 * $3)) -a $((dreq + drep)) -ge $((2 * $3))
}

# show_counters DEV: log every counter that moved since snap.
show_counters() {
	local g m d line
	for g in $CM_GROUPS; do
		line=
		for m in $CM_MSGS; do
			d=$(delta "$1" "$g" "$m")
			[ "$d" = 0 ] || line="$line $m=$d"
		done
		log "$1 $g:${line:- (none)}"
	done
}

# ---- kernel log -----------------------------------------------------------

DMESG_BAD='WARNING:|BUG:|UBSAN|KFENCE|soft lockup|hard LOCKUP|hung_task|blocked for more than|refcount_t|Oops|general protection|list_(add|del) corruption|ib_cm.*(error|fail|leak)'
# Lines that mention ib_cm but are no error: loading an unsigned,
# out-of-tree module.
DMESG_OK='loading out-of-tree module taints kernel|module verification failed: signature and/or required key missing'

# A test may name a report of a ULP's own that is no fault of the CM's
# (DMESG_ULP, an extended regexp, with DMESG_ULP_WHY saying why): such a
# line is logged with the reason and does not fail the test.
DMESG_ULP=
DMESG_ULP_WHY=

dmesg_mark() { dmesg_lines=$(dmesg | wc -l); }

dmesg_new() { dmesg | tail -n +$((dmesg_lines + 1)); }

# dmesg_clean: assert that nothing bad was logged since dmesg_mark.
dmesg_clean() {
	local bad line
	bad=$(dmesg_new | grep -E "$DMESG_BAD" | grep -vE "$DMESG_OK")
	if [ -n "$DMESG_ULP" ] && [ -n "$bad" ]; then
		printf '%s\n' "$bad" | grep -E "$DMESG_ULP" |
			while IFS= read -r line; do
				printf '# dmesg, known (%s): %s\n' "$DMESG_ULP_WHY" "$line"
			done
		bad=$(printf '%s\n' "$bad" | grep -vE "$DMESG_ULP")
	fi
	if [ -n "$bad" ]; then
		printf '%s\n' "$bad" | sed 's/^/# dmesg: /'
		# The first report in full (a lockdep report says what it is
		# only in the lines after its WARNING line, and lockdep turns
		# itself off after it): up to 150 lines from its first line.
		dmesg_new | grep -F -x -m 1 -A 149 -- "${bad%%$'\n'*}" |
			sed 's/^/# dmesg| /'
		result 0 "kernel log clean"
	else
		result 1 "kernel log clean"
	fi
}

# ---- rdma_cm events -------------------------------------------------------

# rdma_cm (the stock module, unchanged by us) traces every event it hands
# to its users, with the event's status: for REJECTED that is the REJ's
# reason.  This is how a test sees the reject reason a program swallowed.
TRACE=/sys/kernel/tracing

cma_trace_on() {
	echo 0 >"$TRACE/tracing_on"
	echo >"$TRACE/trace"
	echo 1 >"$TRACE/events/rdma_cma/cm_event_handler/enable"
	echo 1 >"$TRACE/tracing_on"
}

# cma_events: the traced events so far, one per line, e.g.
# "REJECTED (8/28)".
cma_events() {
	grep -oE '[A-Z_]+ \([0-9]+/-?[0-9]+\)$' "$TRACE/trace"
}

# ---- MADs on the wire -----------------------------------------------------

# ib_core traces every MAD that passes its checks on receive
# (ib_mad:ib_mad_recv_done_handler, before it looks for an agent).  Two
# histograms count them per device: the CM MADs that go to ib_cm (class
# version 2, method SEND) by attribute ID, and the CM MADs that no agent
# takes, by class version and method.
MAD_EVENT=$TRACE/events/ib_mad/ib_mad_recv_done_handler
MAD_HIST_CM='hist:keys=dev_index,attr_id:size=4096 if mgmt_class == 7 && class_version == 2 && method == 3'
MAD_HIST_OTHER='hist:keys=dev_index,class_version,method:size=4096 if mgmt_class == 7 && (class_version != 2 || method != 3)'
mad_hist=''

mad_hist_on() {
	echo "$MAD_HIST_CM" >>"$MAD_EVENT/trigger" &&
		echo "$MAD_HIST_OTHER" >>"$MAD_EVENT/trigger" && mad_hist=1
}

# Truncating the trigger file removes every trigger of the event.
mad_hist_off() {
	[ -z "$mad_hist" ] || : >"$MAD_EVENT/trigger"
	mad_hist=''
}

# mad_hist DEV: what DEV's MAD layer counted since mad_hist_on, one line
# per key: "cm ATTR N" (ATTR in hex, as on the wire), "other CLASSVER
# METHOD N", and "dropped N" for keys the histograms had no room for.
mad_hist() {
	local i
	i=$(rdma dev show "$1" | cut -d: -f1)
	awk -v dev="$i" '
		/^# trigger info: hist:keys=dev_index,attr_id/ { kind = "cm" }
		/^# trigger info: hist:keys=dev_index,class_version/ { kind = "other" }
		/^ *Dropped:/ { dropped += $2 }
		/^\{/ {
			gsub(/[{},:]/, " ")
			if ($2 != dev)
				next
			if (kind == "cm") {
				# attr_id is big-endian: the key shows it swapped.
				a = ($4 % 256) * 256 + int($4 / 256)
				printf "cm %04x %d\n", a, $6
			} else {
				printf "other %d %d %d\n", $4, $6, $8
			}
		}
		END { print "dropped", dropped + 0 }
	' "$MAD_EVENT/hist"
}

# The fuzz tests' tools (tools/testing/fuzz), which run.sh builds into
# out/fuzz at the top of the tree.
# shellcheck disable=SC2034 # for the tests
FUZZ_BIN=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)/out/fuzz

# kv FILE GROUP KEY: the value of a "GROUP KEY VALUE" line of FILE (0 if
# there is none), as cm_fuzz and cm_peer print them.
kv() {
	awk -v g="$2" -v k="$3" '$1 == g && $2 == k { v = $3 } END { print v + 0 }' "$1"
}

# slab_kb: the kernel's slab memory in kB, after dropping what the kernel
# can drop anyway (dentries and inodes) and letting SLUB give back its
# empty slabs: both are noise here.
slab_kb() {
	local f
	sync
	echo 3 >/proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/*/shrink; do
		echo 1 2>/dev/null >"$f"
	done
	awk '$1 == "Slab:" { print $2 }' /proc/meminfo
}

# slab_live_kb: the kB in live slab objects (active objects times their
# size, from /proc/slabinfo): slab memory without SLUB's free space.
slab_live_kb() {
	awk 'NR > 2 { b += $2 * $4 } END { printf "%d\n", b / 1024 }' /proc/slabinfo
}

# slab_growth FILE: the caches that grew since FILE (a copy of
# /proc/slabinfo), largest first: "NAME KB".
slab_growth() {
	awk 'FNR <= 2 { next }
		NR == FNR { was[$1] = $2 * $4; next }
		{ d = ($2 * $4 - was[$1]) / 1024; if (d >= 1) printf "%s %d\n", $1, d }' \
		"$1" /proc/slabinfo | sort -k2,2nr
}

# cm_sum DEV: the sum of DEV's message counters, to see them settle.
cm_sum() {
	local g m v sum=0
	for g in cm_tx_msgs cm_rx_msgs; do
		for m in $CM_MSGS; do
			read -r v <"/sys/class/infiniband/$1/ports/1/$g/$m"
			sum=$((sum + v))
		done
	done
	echo $sum
}

# quiesce SECS MAX DEV...: wait until no message counter of the DEVs has
# moved for SECS seconds, at most MAX seconds.  Fails on timeout.
quiesce() {
	local secs=$1 max=$2 now last='' still=0 t d
	shift 2
	for ((t = 0; t < max; t++)); do
		now=''
		for d in "$@"; do now="$now $(cm_sum "$d")"; done
		if [ "$now" = "$last" ]; then
			still=$((still + 1))
			[ $still -ge "$secs" ] && return 0
		else
			still=0
		fi
		last=$now
		sleep 1
	done
	return 1
}

# ---- processes ------------------------------------------------------------

# run NAME CMD...: run a client in the foreground under the timeout; its
# output goes to $T/NAME.out and into the test log.
run() {
	local name=$1 rc
	shift
	log "run $name: $*"
	timeout "$IBCM_TIMEOUT" "$@" >"$T/$name.out" 2>&1
	rc=$?
	sed "s/^/# $name: /" "$T/$name.out" | tail -n 40
	log "$name exited with $rc"
	return $rc
}

# spawn NAME CMD...: start a server in the background under the timeout.
spawn() {
	local name=$1
	shift
	log "spawn $name: $*"
	timeout "$IBCM_TIMEOUT" "$@" >"$T/$name.out" 2>&1 &
	echo $! >"$T/$name.pid"
}

# reap NAME: wait for a spawned process; returns its exit code.
reap() {
	local rc=0
	wait "$(cat "$T/$1.pid")" || rc=$?
	sed "s/^/# $1: /" "$T/$1.out" | tail -n 40
	log "$1 exited with $rc"
	rm -f "$T/$1.pid"
	return $rc
}

# legit_rping NAME: one rping connection (5 pings) from $NS to rxe0, the
# client under RPING_TIMEOUT seconds (default IBCM_TIMEOUT); how long it
# all took, in tenths of a second, goes to $T/NAME.time.
# A client still running 5 s before its limit has its connection's state
# logged first (rping_state), while it is still there to be seen.
legit_rping() {
	local ok=0 t0=${EPOCHREALTIME/./} limit=${RPING_TIMEOUT:-$IBCM_TIMEOUT} pid
	spawn "$1-server" rping -s -a "$IP0" -C 5
	if wait_listen 7174; then
		IBCM_TIMEOUT=$limit spawn "$1-client" "${PEER[@]}" rping -c -a "$IP0" -C 5 -V
		pid=$(cat "$T/$1-client.pid")
		if ! finished "$pid" $((limit > 10 ? limit - 5 : limit)); then
			log "$1-client still running after $((limit - 5))s"
			rping_state
		fi
		reap "$1-client" && ok=1
	fi
	if [ $ok = 0 ]; then
		kill "$(cat "$T/$1-server.pid")" 2>/dev/null
	fi
	reap "$1-server" || ok=0
	echo $(((${EPOCHREALTIME/./} - t0) / 100000)) >"$T/$1.time"
	[ $ok = 1 ]
}

# rping_state: what a hung rping connection is waiting on: the QPs and
# cm_ids of port 7174 (rdma tool), rxe's counters that are not zero, and
# our module's listing of its ids.
rping_state() {
	local d
	rdma resource show qp 2>&1 | grep -v ' type UD \| qpn 1 ' | sed 's/^/# qp: /'
	rdma resource show cm_id 2>&1 | grep ':7174' | sed 's/^/# cm_id: /'
	for d in rxe0 rxe1; do
		echo "# $d hw_counters: $(hw_nonzero "$d")"
	done
	[ ! -r "$CM_IDS" ] || sed 's/^/# ids: /' "$CM_IDS" | grep -v 'timewait record' | head -n 40
}

# hw_nonzero DEV: DEV's rxe hw counters that are not zero, "NAME:VALUE"
# on one line.
hw_nonzero() {
	(cd "/sys/class/infiniband/$1/ports/1/hw_counters" &&
		grep -v '^0$' -- * 2>/dev/null | tr '\n' ' ')
}

# cm_ids_by_state: every rdma_cm id of the machine (the rdma tool shows
# all namespaces' ids), counted by state, as log lines.
cm_ids_by_state() {
	rdma resource show cm_id 2>&1 | grep -oE ' state [A-Z_]+' | sort | uniq -c |
		sed 's/^/# ids: /'
}

# CM_IDS: our module's listing of its live ids (debugfs; none on stock).
CM_IDS=/sys/kernel/debug/ib_cm/ids

# check_no_ids DESC SECS [RECORDS]: assert that within SECS seconds the
# id listing is empty, timewait records included unless RECORDS is
# "records" (they may stay); what is left is logged.
check_no_ids() {
	local i left='' keep='^$'
	[ "${3:-}" = records ] && keep=' timewait record '
	for ((i = 0; ; i++)); do
		left=$(tail -n +2 "$CM_IDS" | grep -v -- "$keep")
		if [ -z "$left" ] || [ "$i" -ge $(($2 * 5)) ]; then
			break
		fi
		sleep 0.2
	done
	check "$1" test -z "$left"
	[ -z "$left" ] || printf '%s\n' "$left" | head -n 40 | sed 's/^/# left: /'
}

# hw_counters NAME...: rxe0's hw counters NAME..., then rxe1's, on one line.
hw_counters() {
	local d c v out=''
	for d in rxe0 rxe1; do
		for c in "$@"; do
			read -r v <"/sys/class/infiniband/$d/ports/1/hw_counters/$c"
			out="$out $v"
		done
	done
	echo "${out# }"
}

# gone DEV: the RDMA device DEV is unregistered.
gone() {
	[ ! -e "/sys/class/infiniband/$1" ]
}

# finished PID SECS: wait up to SECS seconds for PID to go away.  By the
# clock: under TCG a loop of short sleeps takes a third longer than it
# counts, and so would outlast a server's timeout.
finished() {
	local end=$((SECONDS + $2))
	while [ "$SECONDS" -lt "$end" ]; do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.2
	done
	! kill -0 "$1" 2>/dev/null
}

# stacks PID: log the kernel stacks of PID and of its children.
stacks() {
	local p
	for p in $1 $(pgrep -P "$1"); do
		sed "s/^/# [$p] /" "/proc/$p/stack" 2>/dev/null
	done
}

# settle NAME SECS: like reap, but give up after SECS seconds when the
# process hangs in the kernel; its kernel stack goes into the log.
settle() {
	local pid
	pid=$(cat "$T/$1.pid")
	if ! finished "$pid" "$2"; then
		log "$1 still running after $2s; kernel stacks:"
		stacks "$pid"
		hung="$hung $1"
		return 124
	fi
	reap "$1"
}

# wait_listen PORT [NS]: wait until an rdma_cm id listens on PORT.
wait_listen() {
	local ns=${2:-}
	for _ in $(seq 100); do
		if ${ns:+ip netns exec "$ns"} rdma resource show cm_id 2>/dev/null |
			grep -E "state LISTEN .*:$1( |$)" >/dev/null; then
			return 0
		fi
		sleep 0.2
	done
	log "nothing listens on port $1"
	return 1
}

# wait_tcp_listen PORT [NS]: wait up to 30 s until a TCP socket listens
# on PORT (in namespace NS).
wait_tcp_listen() {
	local ns=${2:-}
	for _ in $(seq 150); do
		${ns:+ip netns exec "$ns"} ss -Hltn "sport = :$1" | grep -q . && return 0
		sleep 0.2
	done
	log "no TCP socket listens on port $1"
	return 1
}

# unload_one MOD: unload MOD, waiting up to 30 s for its last user.  On a
# lockdep kernel every socket pins the module that made it, and an rxe
# QP's send socket goes with the last packet it sent, which can be
# queued on the peer's veth for a while after the device is deleted.
# A failure logs MOD's reference count and holders.
unload_one() {
	timeout 60 modprobe -r --wait=30000 "$1" && return 0
	log "$1 refcnt $(cat "/sys/module/$1/refcnt" 2>&1), holders:" \
		"$(find "/sys/module/$1/holders" -mindepth 1 -printf '%f ' 2>&1)"
	return 1
}

# unload MOD...: assert that the modules unload, in this order, and that
# ib_cm is gone then.
unload() {
	local m
	for m in "$@"; do
		check "modprobe -r $m" unload_one "$m"
	done
	check "ib_cm unloaded" test ! -e /sys/module/ib_cm
}

# ---- network set-ups ------------------------------------------------------

modprobe_all() {
	local m
	for m in "$@"; do
		modprobe "$m" || skip_all "cannot load $m"
	done
	log "modules loaded"
}

# net_one: one rxe device, rxe0, on a veth end with address $IP0.
net_one() {
	modprobe_all rdma_rxe rdma_ucm
	ip link add veth0 type veth peer name veth1
	ip addr add "$IP0/24" dev veth0
	ip link set veth0 up
	ip link set veth1 up
	rdma link add rxe0 type rxe netdev veth0
	snap rxe0
	log "rxe0 on veth0 ($IP0) is up"
}

# net_two: rxe0 on veth0 ($IP0) here, rxe1 on veth1 ($IP1) in namespace
# $NS; the veth pair is the wire.  Run peer commands with $PEER.
net_two() {
	modprobe_all rdma_rxe rdma_ucm
	ip netns add "$NS"
	ip link add veth0 type veth peer name veth1 netns "$NS"
	ip addr add "$IP0/24" dev veth0
	ip link set veth0 up
	"${PEER[@]}" ip addr add "$IP1/24" dev veth1
	"${PEER[@]}" ip link set veth1 up
	"${PEER[@]}" ip link set lo up
	rdma link add rxe0 type rxe netdev veth0
	"${PEER[@]}" rdma link add rxe1 type rxe netdev veth1
	snap rxe0
	snap rxe1
	log "rxe0 on veth0 ($IP0) and rxe1 on veth1 ($IP1, netns $NS) are up"
}

# netem ARGS...: impair the wire (veth0's egress), e.g. "netem loss 10%".
netem() {
	tc qdisc replace dev veth0 root netem "$@"
}

# A process stuck in the kernel cannot be killed; cleanup must not wait
# for it nor repeat what got it stuck.
hung=''

cleanup() {
	local f pid left=''
	[ -d "$T" ] || return 0
	log "cleaning up"
	for f in "$T"/*.pid; do
		[ -e "$f" ] || continue
		pid=$(cat "$f")
		kill "$pid" 2>/dev/null
		finished "$pid" 5 || left="$left $pid"
	done
	if [ -n "$left$hung" ]; then
		log "left stuck:$left$hung; not removing the devices"
	else
		rdma link delete rxe0 2>/dev/null
		ip netns exec "$NS" rdma link delete rxe1 2>/dev/null
		ip link delete veth0 2>/dev/null
		ip netns delete "$NS" 2>/dev/null
	fi
	log "cleaned up"
	echo 0 2>/dev/null >"$TRACE/events/rdma_cma/cm_event_handler/enable"
	mad_hist_off
	rm -rf "$T"
	return 0
}
trap cleanup EXIT

dmesg_mark
