# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# A many-node fabric in one machine, for fabric.sh and the bench's fabric
# case; sourced after lib.sh.  Not a test itself: the name does not end
# in .sh, so the VM suite does not run it.
#
# Node I (0..N-1) is network namespace ibcm_fI with an rxe device rxfI on
# veth fvI (address 10.78.0.I+1/24), whose other end fbI is a port of the
# bridge ibcmbr: every node reaches every other in one hop.  Each node
# runs one cm_mesh (tools/testing/fuzz/cm_mesh.c), which listens on
# FABRIC_PORT, connects to its peers and keeps its connections up.
#
#   fabric_up N             make the N nodes (fails if one cannot be made)
#   fabric_mesh LEG K       every node connects K times to every other, all
#                           let go at once; sets mesh_ms (the last node's
#                           share up, from the start), mesh_conns, and the
#                           counts below
#   fabric_storm LEG C      node 0 serves C connections from the others;
#                           then it is cut off for FABRIC_DOWN_S seconds
#                           (its link lost: see fabric_cut), its server
#                           is started again, and every client
#                           drops its connections and makes them again
#                           (with the policy of FABRIC_POLICY, "" for the
#                           defaults); sets back_ms (from node 0 coming
#                           back to all C up again), peak_rate (QP1
#                           messages per second at node 0, its highest
#                           second), and the counts below
#   fabric_down             remove it all (also on exit)
# The counts, as both legs leave them (-1 when a leg broke off): retries
# (the CM's resends, all nodes, all messages), req_retries, fails (made
# connections that failed and were made again: address or route error,
# rejected, unreachable), slab_kb (Slab: with the mesh up, less before),
# drops (what node 0's CM dropped as backlog during a storm; -1 on the
# stock module, which counts none), send_errs (rxe's send errors at node
# 0: one kills its QP1, see fabric_heal).
# A leg that fails logs node 0's CM counters and ids and the ends of the
# nodes' outputs.

FABRIC_PORT=${FABRIC_PORT:-7800}
FABRIC_DOWN_S=${FABRIC_DOWN_S:-10}
FABRIC_POLICY=${FABRIC_POLICY:-}
# The policy fabric.sh asserts and the bench measures for a fabric that
# restarts: a short response timeout, its resends spread by backoff.
FABRIC_RESTART_POLICY="max_response_timeout=17 schedule=backoff backoff_max_ms=1000 backoff_jitter=25"
# Seconds a mesh or a storm may take to come (back) up.
FABRIC_LIMIT=${FABRIC_LIMIT:-300}
fabric_n=0

fabric_ns() { echo "ibcm_f$1"; }
fabric_ip() { echo "10.78.0.$(($1 + 1))"; }

fabric_up() {
	local i ns
	modprobe_all rdma_rxe rdma_ucm
	fabric_n=$1
	if ! ip link add ibcmbr type bridge; then
		log "fabric: cannot make the bridge (a kernel without CONFIG_BRIDGE?)"
		return 1
	fi
	ip link set ibcmbr up
	for ((i = 0; i < fabric_n; i++)); do
		ns=$(fabric_ns "$i")
		ip netns add "$ns"
		ip link add "fb$i" type veth peer name "fv$i" netns "$ns"
		ip link set "fb$i" master ibcmbr up
		ip -n "$ns" addr add "$(fabric_ip "$i")/24" dev "fv$i"
		ip -n "$ns" link set "fv$i" up
		ip -n "$ns" link set lo up
		# Node 0's link gets its netem now, before its rxe device
		# sends anything: see fabric_netem.
		if [ "$i" = 0 ] && ! fabric_netem add; then
			log "fabric: cannot put netem on node 0's link (no CONFIG_NET_SCH_NETEM?)"
			return 1
		fi
		if ! ip netns exec "$ns" rdma link add "rxf$i" type rxe netdev "fv$i"; then
			log "fabric: cannot add rxf$i"
			return 1
		fi
	done
	log "fabric: $fabric_n nodes on bridge ibcmbr (10.78.0.1-$fabric_n)"
}

fabric_down() {
	local i ns
	fabric_stop
	for ((i = 0; i < fabric_n; i++)); do
		ns=$(fabric_ns "$i")
		ip netns exec "$ns" rdma link delete "rxf$i" 2>/dev/null
		ip link delete "fb$i" 2>/dev/null
		ip netns delete "$ns" 2>/dev/null
	done
	ip link delete ibcmbr 2>/dev/null
	fabric_n=0
}

# fabric_stop: end every cm_mesh (and the rate sampler), and wait.
fabric_stop() {
	local f pid
	for f in "$T"/fabric-*.pid; do
		[ -e "$f" ] || continue
		kill "$(cat "$f")" 2>/dev/null
	done
	for f in "$T"/fabric-*.pid; do
		[ -e "$f" ] || continue
		pid=$(cat "$f")
		finished "$pid" 30 || { log "$f: still running"; kill -9 "$pid"; }
		wait "$pid" 2>/dev/null
		rm -f "$f"
	done
}

# fabric_node NAME I ARGS...: cm_mesh on node I in the background.
fabric_node() {
	local name=$1 i=$2
	shift 2
	ip netns exec "$(fabric_ns "$i")" "$FUZZ_BIN/cm_mesh" -a "$(fabric_ip "$i")" \
		-p "$FABRIC_PORT" -T "$((FABRIC_LIMIT * 3))" "$@" >"$T/fabric-$name.out" 2>&1 &
	echo $! >"$T/fabric-$name.pid"
}

# fabric_signal SIG NAME...: send SIG to the named nodes.
fabric_signal() {
	local sig=$1 name pids=()
	shift
	for name in "$@"; do pids+=("$(cat "$T/fabric-$name.pid")"); done
	kill "-$sig" "${pids[@]}" 2>/dev/null
}

# fabric_sum GROUP MSG: a counter of every node's CM, summed (MSG "all":
# over every message).
fabric_sum() {
	local i f v sum=0
	for ((i = 0; i < fabric_n; i++)); do
		for f in "/sys/class/infiniband/rxf$i/ports/1/$1"/*; do
			case $2 in all | "${f##*/}") read -r v <"$f"; sum=$((sum + v)) ;; esac
		done
	done
	echo $sum
}

# fabric_counts NAME...: have the named nodes print their counts and stop
# making connections again (SIGHUP), before any of them is stopped: a
# node that ends disconnects the others, whose remaking would count.
# Waits (30 s at most) until every one has printed them.
fabric_counts() {
	local name
	fabric_signal HUP "$@"
	for name in "$@"; do
		for _ in $(seq 150); do
			grep -q '^cm_mesh counts end' "$T/fabric-$name.out" && continue 2
			sleep 0.2
		done
		log "fabric: $name printed no counts"
	done
}

# fabric_out_sum KEY NAME...: a "cm_mesh counts KEY N" count, summed over
# the outputs of the named nodes (the first counts each printed).
fabric_out_sum() {
	local key=$1 name files=()
	shift
	for name in "$@"; do files+=("$T/fabric-$name.out"); done
	awk -v k="$key" 'FNR == 1 { done = 0 }
		$2 == "counts" && $3 == "end" { done = 1 }
		!done && $2 == "counts" && $3 == k { s += $4 }
		END { print s + 0 }' "${files[@]}"
}

# fabric_wait_up SECS NAME...: wait until every named node is up (printed
# "up" after its last "down" or "dropped"); the latest of those times, in
# ms since the epoch, or nothing on timeout or when a node has ended.
fabric_wait_up() {
	local end=$((SECONDS + $1)) n last name t
	shift
	while [ "$SECONDS" -lt "$end" ]; do
		n=0 last=0
		for name in "$@"; do
			kill -0 "$(cat "$T/fabric-$name.pid")" 2>/dev/null || return 1
			t=$(fabric_up_at "$name")
			[ -n "$t" ] || break
			n=$((n + 1))
			[ "$t" -gt "$last" ] && last=$t
		done
		if [ "$n" -eq $# ]; then
			echo "$last"
			return 0
		fi
		sleep 0.5
	done
	return 1
}

# fabric_up_at NAME: when node NAME last had all its connections up (ms
# since the epoch), or nothing while they are not.
fabric_up_at() {
	awk '$2 == "dropped" || $2 == "down" { up = "" } $2 == "up" { up = $5 }
		END { print up }' "$T/fabric-$1.out"
}

# fabric_wait_listening NAME...: every named node listens.
fabric_wait_listening() {
	local name
	for name in "$@"; do
		for _ in $(seq 300); do
			grep -q '^cm_mesh listening' "$T/fabric-$name.out" && continue 2
			kill -0 "$(cat "$T/fabric-$name.pid")" 2>/dev/null || break
			sleep 0.2
		done
		log "fabric: $name does not listen:"
		sed 's/^/# /' "$T/fabric-$name.out"
		return 1
	done
}

# fabric_policy: FABRIC_POLICY ("file=value ...") on every node's port, or
# the defaults back with "".
fabric_policy() {
	local i kv p
	for ((i = 0; i < fabric_n; i++)); do
		p=/sys/class/infiniband/rxf$i/ports/1/cm_policy
		[ -d "$p" ] || continue
		for kv in schedule=fixed backoff_max_ms=65536 backoff_jitter=25 \
			max_retries=15 max_response_timeout=31 $FABRIC_POLICY; do
			echo "${kv#*=}" >"$p/${kv%%=*}"
		done
	done
}

# fabric_state NAME...: what a leg that failed left: node 0's CM counters
# over the leg, the ids by state, the last lines of the named nodes'
# outputs, rxe's counters and the network of nodes 0 and 1.
fabric_state() {
	local name i
	show_counters rxf0
	cm_ids_by_state
	[ ! -r "$CM_IDS" ] || awk 'NR > 1 { print $3 }' "$CM_IDS" | sort | uniq -c |
		sed 's/^/# our ids by state: /'
	for name in "$@"; do
		tail -n 3 "$T/fabric-$name.out" | sed "s/^/# $name: /"
	done
	for i in 0 1; do
		echo "# rxf$i hw_counters: $(hw_nonzero "rxf$i")"
	done
	ip -n "$(fabric_ns 0)" -s link show fv0 | sed 's/^/# fv0: /'
	ip -n "$(fabric_ns 1)" neigh show | sed 's/^/# node 1 neigh: /'
	bridge link show | sed 's/^/# bridge: /'
}

# fabric_send_errs I: rxe's send_err count of node I's device.
fabric_send_errs() {
	local v
	read -r v <"/sys/class/infiniband/rxf$1/ports/1/hw_counters/send_err"
	echo "$v"
}

# fabric_heal: make again the rxe device of every node whose sends
# failed.  rxe moves a QP to the error state when a send fails (rxe_req.c:
# any error from the network stack, such as a veth that dropped a packet
# under a flood), and so a node's QP1 is dead for good after one; a real
# adapter keeps its QP1.  A later leg would measure that instead of the CM.
fabric_heal() {
	local i e ns
	for ((i = 0; i < fabric_n; i++)); do
		e=$(fabric_send_errs "$i")
		[ "$e" = 0 ] && continue
		ns=$(fabric_ns "$i")
		log "fabric: rxf$i had $e send error(s), its QP1 is dead: making it again"
		ip netns exec "$ns" rdma link delete "rxf$i"
		ip netns exec "$ns" rdma link add "rxf$i" type rxe netdev "fv$i" || return 1
	done
}

# fabric_leg_start: the counts of a leg, unknown until it ends well.
fabric_leg_start() {
	mesh_ms=-1 back_ms=-1 fails=-1 retries=-1 req_retries=-1 peak_rate=-1 slab_kb=-1
	drops=-1 send_errs=-1
	fabric_stop
	fabric_heal
	fabric_policy
	snap rxf0
}

fabric_mesh() {
	local leg=$1 k=$2 i j peers names=() slab0 retries0 t0 up
	fabric_leg_start
	mesh_conns=$((fabric_n * (fabric_n - 1) * k))
	slab0=$(slab_kb)
	retries0=$(fabric_sum cm_tx_retries all)
	for ((i = 0; i < fabric_n; i++)); do
		peers=''
		for ((j = 0; j < fabric_n; j++)); do
			[ "$j" = "$i" ] || peers=$peers${peers:+,}$(fabric_ip "$j")
		done
		fabric_node "$leg-$i" "$i" -G -P "$peers" -n "$k" -e $((k * (fabric_n - 1)))
		names+=("$leg-$i")
	done
	if ! fabric_wait_listening "${names[@]}"; then
		fabric_stop
		return 1
	fi
	fabric_signal USR2 "${names[@]}"
	up=$(fabric_wait_up "$FABRIC_LIMIT" "${names[@]}")
	# From the first node that started.
	t0=$(for i in "${names[@]}"; do
		awk '$2 == "started" { print $3 }' "$T/fabric-$i.out"
	done | sort -n | head -n 1)
	if [ -n "$up" ] && [ -n "$t0" ]; then
		mesh_ms=$((up - t0))
		slab_kb=$(($(slab_kb) - slab0))
	else
		fabric_state "${names[@]}"
	fi
	retries=$(($(fabric_sum cm_tx_retries all) - retries0))
	fabric_counts "${names[@]}"
	fails=$(fabric_out_sum failed "${names[@]}")
	fabric_stop
	log "fabric $leg: $fabric_n nodes x $k: $mesh_conns connections up after $mesh_ms ms;" \
		"CM retries $retries, made again $fails, Slab: +$slab_kb kB"
	[ "$mesh_ms" -ge 0 ]
}

# fabric_drops: the messages node 0's CM dropped as backlog (our module's
# cm_rx_drops/backlog), or -1 (the stock module has no such counter).
fabric_drops() {
	local v=-1
	[ ! -r /sys/class/infiniband/rxf0/ports/1/cm_rx_drops/backlog ] ||
		read -r v </sys/class/infiniband/rxf0/ports/1/cm_rx_drops/backlog
	echo "$v"
}

# fabric_rate_sampler FILE: node 0's CM messages (sent and received),
# every 0.2 s, as "MS TOTAL" lines, until killed.
fabric_rate_sampler() {
	while :; do
		echo "$(($(date +%s%N) / 1000000)) $(cm_sum rxf0)"
		sleep 0.2
	done >"$1"
}

# fabric_peak FILE: the most messages in any one second of FILE.
fabric_peak() {
	awk '{ t[NR] = $1; v[NR] = $2 }
		END {
			j = 1
			for (i = 1; i <= NR; i++) {
				while (t[i] - t[j] > 1000) j++
				if (v[i] - v[j] > best) best = v[i] - v[j]
			}
			print best + 0
		}' "$1"
}

# fabric_netem VERB [NETEM...]: "tc qdisc VERB" node 0's netem on both
# ends of its link (fb0 and fv0).  fabric_up adds one that passes
# everything before node 0's rxe device exists, and fabric_cut only
# changes it.  While a root qdisc is added or deleted, the device sends
# through the noop qdisc, which drops the packet and returns
# NET_XMIT_CN; rxe takes any non-zero return for a failed send and moves
# the QP to the error state, so node 0's QP1 was dead for the rest of
# the leg.  Seen once on the debug kernel, where the delete took over a
# second: fv0 "TX dropped 1", send_err 1, and no REP of the capped storm
# left node 0.  Changing a netem's parameters swaps nothing.  Its queue
# limit is raised because a full netem queue refuses a packet too.
fabric_netem() {
	local verb=$1
	shift
	tc qdisc "$verb" dev fb0 root netem limit 100000 "$@" &&
		tc -n "$(fabric_ns 0)" qdisc "$verb" dev fv0 root netem limit 100000 "$@"
}

# fabric_cut [NETEM...]: node 0's traffic both ways through netem NETEM
# ("loss 100%": cut off), or back to normal without.
fabric_cut() {
	fabric_netem change "$@"
}

fabric_storm() {
	local leg=$1 c=$2 i n per clients=() mac t_up t_open back retries0 req_retries0 drops0
	fabric_leg_start
	# Every client knows node 0's MAC address, and node 0 the clients':
	# no ARP while node 0 is cut off, only the CM's resends.
	mac=$(ip netns exec "$(fabric_ns 0)" cat /sys/class/net/fv0/address)
	for ((i = 1; i < fabric_n; i++)); do
		ip -n "$(fabric_ns "$i")" neigh replace "$(fabric_ip 0)" lladdr "$mac" \
			dev "fv$i" nud permanent
		ip -n "$(fabric_ns 0)" neigh replace "$(fabric_ip "$i")" lladdr \
			"$(ip netns exec "$(fabric_ns "$i")" cat "/sys/class/net/fv$i/address")" \
			dev fv0 nud permanent
	done
	fabric_node "$leg-server" 0 -e "$c"
	if ! fabric_wait_listening "$leg-server"; then
		fabric_stop
		return 1
	fi
	n=$((fabric_n - 1))
	for ((i = 1; i <= n; i++)); do
		per=$((c / n + (i <= c % n)))
		[ "$per" -gt 0 ] || continue
		fabric_node "$leg-$i" "$i" -P "$(fabric_ip 0)" -n "$per"
		clients+=("$leg-$i")
	done
	if ! fabric_wait_up "$FABRIC_LIMIT" "$leg-server" "${clients[@]}" >/dev/null; then
		log "fabric $leg: the $c connections did not come up"
		fabric_state "$leg-server" "${clients[@]}"
		fabric_stop
		return 1
	fi
	log "fabric $leg: $c connections to node 0 are up"
	retries0=$(fabric_sum cm_tx_retries all)
	req_retries0=$(fabric_sum cm_tx_retries req)
	drops0=$(fabric_drops)
	fabric_rate_sampler "$T/$leg.rate" &
	echo $! >"$T/fabric-sampler.pid"
	# Node 0 goes: cut off from the bridge, its server ended and started
	# again.  Cut off by netem losing all in both directions, not by
	# taking the link down: rxe moves a QP to the error state when a
	# send fails (rxe_req.c), and a send over a link without carrier
	# fails, so node 0's QP1 (its old server's DREQs) would be dead for
	# good, which real adapters do not do on a link flap.
	fabric_cut loss 100%
	fabric_signal TERM "$leg-server"
	finished "$(cat "$T/fabric-$leg-server.pid")" 30 ||
		log "fabric $leg: node 0's server does not end"
	mv "$T/fabric-$leg-server.out" "$T/fabric-$leg-server-old.out"
	fabric_node "$leg-server" 0 -e "$c"
	# The clients notice at once (a ULP's keep-alive) and connect again.
	fabric_signal USR1 "${clients[@]}"
	fabric_wait_listening "$leg-server"
	sleep "$FABRIC_DOWN_S"
	# Node 0 is back from the moment its link is given back, somewhere
	# between t_up and t_open: on a sanitised kernel the two runs of tc
	# can take seconds, and clients were seen back before the second
	# ended.  So back_ms counts from t_up, which is never after it.
	t_up=$(($(date +%s%N) / 1000000))
	fabric_cut
	t_open=$(($(date +%s%N) / 1000000))
	back=$(fabric_wait_up "$FABRIC_LIMIT" "$leg-server" "${clients[@]}")
	if [ -n "$back" ]; then
		back_ms=$((back - t_up))
		log "fabric $leg: node 0's link given back in $((t_open - t_up)) ms;" \
			"each client node back after (ms):" \
			"$(for i in "${clients[@]}"; do
				echo $(($(fabric_up_at "$i") - t_up))
			done | sort -n | xargs)"
		sleep 1
	else
		fabric_state "$leg-server" "${clients[@]}"
	fi
	fabric_counts "${clients[@]}"
	fails=$(fabric_out_sum failed "${clients[@]}")
	retries=$(($(fabric_sum cm_tx_retries all) - retries0))
	req_retries=$(($(fabric_sum cm_tx_retries req) - req_retries0))
	[ "$drops0" -lt 0 ] || drops=$(($(fabric_drops) - drops0))
	send_errs=$(fabric_send_errs 0)
	fabric_stop
	peak_rate=$(fabric_peak "$T/$leg.rate")
	log "fabric $leg: policy '${FABRIC_POLICY:-defaults}': $c connections back" \
		"${back_ms} ms after node 0 came back; peak $peak_rate QP1 messages/s at" \
		"node 0; CM retries $retries (REQ $req_retries); made again $fails;" \
		"dropped as backlog at node 0 $drops; rxe send errors at node 0 $send_errs"
	[ "$back_ms" -ge 0 ]
}
