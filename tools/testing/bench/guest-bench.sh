#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make bench", inside the VM (guest.sh runs it): our ib_cm against the
# stock one in this one boot, which is the only fair comparison under
# emulation.  The modules are swapped between visits with the rxe devices
# staying; the order alternates from round to round (ours first in odd
# rounds) so that a drift of the machine's speed favours neither.  Every
# visit runs the cases of BENCH_CASES and leaves its raw outputs in
# OUT/rROUND-MODULE/:
#   warmup/     the unrecorded cmtime runs that each visit starts with
#               (cmtime-N.*: BENCH_WARMUP, and on a module's first visit
#               each larger size too)
#   cmtime-N-nT.{client,server}  cmtime across the two namespaces;
#               cmtime-N-nT.skipped  why its QPs pass was not run;
#               cmtime-N-nT.extra  the run's CM retries, CPU ticks and
#               cmsettle's pauses
#   perf/       a profile of one cmtime run (see profile.py)
#   counts/     perf stat and tracepoint records over one cmtime run
#               (see counts.py)
#   floor/      the ib_core calls any CM makes, timed by function_graph
#               over one cmtime run (see floor.py)
#   mem/        /proc/meminfo and /proc/slabinfo: before, with connections
#               held, with their ids in timewait, after timewait
#   storm/      the storm (see storm.py) and the CM counters it moved
#   fabric/     the many-node fabric: fabric.txt and each node's output
#   CASE.dmesg  bad kernel log lines seen during CASE; CASE.failed  its
#               exit status if it failed
# Progress lines go to OUT/bench.log, which run.sh shows as they come;
# report.py makes the table from the raw outputs afterwards.
#
# usage: guest-bench.sh OUT
out=$1
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/testing/bench/config.sh
. "$out/settings.sh"
# shellcheck source=tools/testing/vm/modid.sh
. "$here/../vm/modid.sh"
export IBCM_MODE=stock
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$here/../selftests/ib_cm/lib.sh" >/dev/null
# shellcheck source=tools/testing/selftests/ib_cm/fabric.bash
. "$here/../selftests/ib_cm/fabric.bash"

STOCK_KO=/run/ibcm/ib_cm-stock.ko
OURS_KO=$out/ib_cm.ko
# The modules visited so far ("ours stock"): a first visit warms up more.
visited=
# Ports: cmtime's out-of-band TCP socket, cmhold, the first storm server.
OOB_PORT=7471 HOLD_PORT=7600 STORM_PORT=7700
# Seconds any one cmtime (900 and more with its size), cmhold or the
# storm may take.
CMTIME_TIMEOUT=900 HOLD_TIMEOUT=600 STORM_TIMEOUT=900
# cmhold's ACK timeout 21 makes the CM's timewait 2^13 ms, about 8 s:
# long enough to look at the ids in it, short enough to wait out.
HOLD_ACK_TIMEOUT=21 HOLD_TIMEWAIT=20

say() {
	local line
	line="[$(date +%T)] $*"
	echo "$line" >>"$out/bench.log"
	echo "$line"
}

# wait_for SECS CMD...: until CMD succeeds, polling five times a second.
wait_for() {
	local i
	for ((i = 0; i < $1 * 5; i++)); do
		"${@:2}" && return 0
		sleep 0.2
	done
	return 1
}

module_file() {
	if [ "$1" = ours ]; then echo "$OURS_KO"; else echo "$STOCK_KO"; fi
}

# swap_to ours|stock: unload the CM and what sits on it, load the other
# ib_cm.ko, and prove that it is the one live.
swap_to() {
	local file want got
	file=$(module_file "$1")
	modprobe -r rdma_ucm rdma_cm iw_cm ib_cm || return 1
	insmod "$file" || return 1
	modprobe rdma_ucm || return 1
	want=$(file_build_id "$file")
	got=$(live_build_id)
	echo "$1: $file, build id $want, live $got, taint $(cat /sys/module/ib_cm/taint)"
	[ -n "$want" ] && [ "$want" = "$got" ] || return 1
	# The CM's counters are new with the module.
	snap rxe0
	snap rxe1
}

# ---- cmtime -----------------------------------------------------------------

# retries: CM retransmissions on both devices since the last snap.
retries() {
	local d m r=0
	for d in rxe0 rxe1; do
		for m in $CM_MSGS; do
			r=$((r + $(delta "$d" cm_tx_retries "$m")))
		done
	done
	echo $r
}

# cmtime_opts N: cmtime's options for N connections: above BENCH_QPS_MAX
# its QPs pass only sleeps instead of making QPs (-m 0).
cmtime_opts() {
	[ "$1" -le "$BENCH_QPS_MAX" ] || echo "-m 0"
}

# cmtime_pair DIR NAME N THREADS [WRAPPER...]: cmtime's server (the OOB
# root) in the peer namespace on rxe1, its client here on rxe0, with
# WRAPPER before the client's command.  Output in DIR/NAME.{server,client}.
# cmsettle.so is preloaded into both: their waits for a step's end
# (sched_yield() loops) sleep BENCH_YIELD_US at a time, and the client
# pauses at the end of each of its passes (its warm-up connection, N with
# QPs, N without) until what they leave behind has run out, before the
# next pass starts its clock.
cmtime_pair() {
	local dir=$1 name=$2 n=$3 t=$4 spid rc src limit opts preload
	shift 4
	limit=$((CMTIME_TIMEOUT + n / 20))
	read -ra opts <<<"$(cmtime_opts "$n")"
	preload=(env LD_PRELOAD="$out/cmsettle.so" CMSETTLE_YIELD_US="$BENCH_YIELD_US")
	"${PEER[@]}" timeout "$limit" "${preload[@]}" \
		cmtime -B veth1 -C "$IP1" -L "${opts[@]}" \
		-c "$n" -n "$t" -p "$OOB_PORT" >"$dir/$name.server" 2>&1 &
	spid=$!
	if ! wait_tcp_listen "$OOB_PORT" "$NS"; then
		kill "$spid"
		wait "$spid"
		return 1
	fi
	"$@" timeout "$limit" "${preload[@]}" CMSETTLE_MS="$BENCH_SETTLE_MS" \
		CMSETTLE_AT="1 $((1 + n)) $((1 + 2 * n))" \
		cmtime -B veth0 -C "$IP1" "${opts[@]}" -c "$n" -n "$t" \
		-p "$OOB_PORT" >"$dir/$name.client" 2>&1
	rc=$?
	# Without its client the server would wait for it until its timeout.
	[ $rc = 0 ] || kill "$spid" 2>/dev/null
	wait "$spid"
	src=$?
	[ $rc = 0 ] || return $rc
	[ $src = 0 ] || return $src
	preload_check "$dir/$name"
}

# preload_check DIR/NAME: ld.so only warns when it cannot preload, and
# cmsettle.so's lines are missing then: say so.
preload_check() {
	local f
	if [ "$BENCH_SETTLE_MS" -gt 0 ] &&
		[ "$(settle_stats "$1.client" | awk '$1 == "settle_pauses" { print $2 }')" -lt 3 ]; then
		say "$tag: WARNING: cmtime's client did not pause after each pass; see $1.client"
	fi
	[ "$BENCH_YIELD_US" -gt 0 ] || return 0
	for f in "$1.client" "$1.server"; do
		grep -q '^cmsettle: sched_yield slept ' "$f" ||
			say "$tag: WARNING: cmtime's yields did not sleep; see $f"
	done
}

# full_connect FILE: the "full connect" avg/conn of both passes.
full_connect() {
	awk '/^full connect/ { printf "%s%s", sep, $3; sep = " / " }' "$1"
}

# cpu_ticks: "BUSY IDLE", the guest's CPU time in USER_HZ ticks from
# /proc/stat (steal, when the vCPU did not run, is neither; cmsettle.c's
# busy_ticks() sums the same fields).  Under
# icount an idle stretch costs no instructions but moves the clock on to
# the next timer, so a run's idle ticks outside cmsettle's pauses say how
# much of its time was waiting (on a retry's timeout, say) and not work.
cpu_ticks() {
	awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat
}

# settle_stats FILE: cmsettle's pauses in a cmtime client's output: how
# many ("settle_pauses N"), their length in all ("settle_ms MS") and the
# CPU ticks used during each, at the end of the warm-up, the QPs pass and
# the no-QPs pass ("settle_ticks A/B/C").  The server destroys its ids
# while the client pauses, so a pause's ticks hold the server's teardown
# too.
settle_stats() {
	awk '/^cmsettle: / && match($0, /paused [0-9]+ ms, -?[0-9]+ busy/) {
		split(substr($0, RSTART, RLENGTH), f, " ")
		n++; ms += f[2]; ticks = ticks sep (f[4] + 0); sep = "/"
	}
	END { printf "settle_pauses %d\nsettle_ms %d\nsettle_ticks %s\n", n, ms, ticks }' "$1"
}

case_cmtime() {
	local dir=$1 n t name what b0 i0 b1 i1
	for n in $BENCH_SIZES; do
		for t in $BENCH_THREADS; do
			name=cmtime-$n-n$t
			what="cmtime $n conns, $t thread(s)"
			[ -z "$(cmtime_opts "$n")" ] ||
				echo "QPs pass not run: $n conns > BENCH_QPS_MAX=$BENCH_QPS_MAX" \
					"(rxe0: $(limits rxe0))" >"$dir/$name.skipped"
			snap rxe0
			snap rxe1
			read -r b0 i0 <<<"$(cpu_ticks)"
			if cmtime_pair "$dir" "$name" "$n" "$t"; then
				read -r b1 i1 <<<"$(cpu_ticks)"
				{
					printf 'cm_tx_retries %s\nbusy_ticks %s\nidle_ticks %s\ncpus %s\n' \
						"$(retries)" $((b1 - b0)) $((i1 - i0)) "$(nproc)"
					settle_stats "$dir/$name.client"
				} >"$dir/$name.extra"
				say "$tag: $what: full connect $(full_connect "$dir/$name.client") us/conn" \
					"(QPs / no QPs); $(awk '{ printf "%s%s %s", sep, $1, $2; sep = ", " }' \
					"$dir/$name.extra")"
			else
				say "$tag: $what: FAILED ($?); see $dir/$name.client"
				echo "$name" >>"$dir/cmtime.failed"
			fi
		done
	done
	[ ! -f "$dir/cmtime.failed" ]
}

# limits DEV: the device's limits of QPs and address handles.
limits() {
	ibv_devinfo -v -d "$1" 2>/dev/null |
		awk '$1 == "max_qp:" || $1 == "max_ah:" { printf "%s%s %s", sep, $1, $2; sep = ", " }'
}

# warm_up DIR N: an unrecorded cmtime run of N connections, after the
# module was loaded.
warm_up() {
	[ "$2" -gt 0 ] || return 0
	mkdir -p "$1/warmup"
	if ! cmtime_pair "$1/warmup" "cmtime-$2" "$2" 1; then
		say "$tag: warm-up cmtime of $2 conns FAILED; see $1/warmup"
		return 1
	fi
}

# ---- perf -------------------------------------------------------------------

# ibcm_symbols KALLSYMS: the ib_cm module's functions, as a regex for
# perf report --parent, which matches names: leave out the names that
# other code has too.
ibcm_symbols() {
	awk 'NR == FNR { seen[$3]++; next }
		$4 == "[ib_cm]" && tolower($2) == "t" && seen[$3] == 1 {
			printf "%s%s", sep, $3; sep = "|"
		}' "$1" "$1" | sed 's/.*/^(&)$/'
}

case_perf() {
	# perf cannot write its data to the 9p share ("Bad address"): the
	# guest's /tmp first.
	local dir=$1/perf n=$BENCH_PERF_CONNS data=/tmp/ibcm-perf.data
	local syms=/tmp/ibcm-kallsyms
	mkdir -p "$dir"
	cp /proc/kallsyms "$syms"
	cmtime_pair "$dir" cmtime "$n" 1 \
		perf record -q -e cpu-clock -a -g -o "$data" -- || return 1
	perf report -i "$data" --no-children --sort dso,sym --stdio -g none \
		>"$dir/report.txt" 2>"$dir/report.err"
	perf report -i "$data" --no-children --sort dso,sym --stdio -g caller \
		--parent "$(ibcm_symbols "$syms")" -x >"$dir/report-ibcm.txt" 2>>"$dir/report.err"
	# cmtime's warm-up connection, then N with QPs and N without.
	perf script -i "$data" -F comm,tid,period,ip,sym,dso 2>>"$dir/report.err" |
		python3 "$here/profile.py" "$dir" $((2 * n + 1)) "$syms" >"$dir/profile.log" || return 1
	# With perf.data, this is enough to report again elsewhere
	# (perf report --kallsyms).
	gzip -1 <"$syms" >"$dir/kallsyms.gz"
	mv "$data" "$dir/perf.data"
	say "$tag: perf over cmtime $n conns: $(cat "$dir/profile.log")"
}

# ---- counts -----------------------------------------------------------------

# Counted over the whole guest by perf stat: context switches, wake-ups,
# work items, allocations, timers armed, MADs posted and received, and
# address handles made (a kprobe, see main).  Those that do not exist
# here are left out.
COUNT_EVENTS="sched:sched_switch sched:sched_wakeup sched:sched_wakeup_new
	workqueue:workqueue_queue_work workqueue:workqueue_execute_start
	kmem:kmalloc kmem:kmem_cache_alloc timer:timer_start timer:hrtimer_start
	ib_mad:ib_mad_ib_send_mad ib_mad:ib_mad_recv_done_handler
	ibcm_bench:rdma_create_ah"

# ibcm_text KALLSYMS: "LO HI", the addresses from ib_cm's first function
# to the first symbol after its last one.
ibcm_text() {
	LC_ALL=C sort "$1" | awk '
		last && !hi { hi = $1 }
		$4 == "[ib_cm]" && tolower($2) == "t" { if (!lo) lo = $1; last = $1; hi = "" }
		END { if (lo) print lo, (hi ? hi : last) }'
}

case_counts() {
	local dir=$1/counts n=$BENCH_COUNT_CONNS data=/tmp/ibcm-counts.data stat=/tmp/ibcm-stat.csv
	local ev events=() lo hi site fn d g m
	mkdir -p "$dir"
	cp /proc/kallsyms "$dir/kallsyms"
	for ev in $COUNT_EVENTS; do
		[ ! -d "$TRACE/events/${ev/://}" ] || events+=(-e "$ev")
	done
	read -r lo hi <<<"$(ibcm_text "$dir/kallsyms")"
	if [ -z "$hi" ]; then
		say "$tag: counts: no ib_cm functions in /proc/kallsyms"
		return 1
	fi
	# ib_cm's own allocations and work items: a filter on its text.  Like
	# perf.data, perf stat's output is written to /tmp, not the 9p share.
	site="call_site >= 0x$lo && call_site < 0x$hi"
	fn="function >= 0x$lo && function < 0x$hi"
	snap rxe0
	snap rxe1
	cmtime_pair "$dir" cmtime "$n" 1 \
		perf stat -a -x, -o "$stat" "${events[@]}" -- \
		perf record -q -a -o "$data" \
		-e kmem:kmalloc --filter "$site" -e kmem:kmem_cache_alloc --filter "$site" \
		-e workqueue:workqueue_queue_work --filter "$fn" \
		-e workqueue:workqueue_execute_start --filter "$fn" -- || return 1
	{
		for d in rxe0 rxe1; do
			for g in cm_tx_msgs cm_tx_retries cm_rx_msgs; do
				for m in $CM_MSGS; do
					echo "$d $g $m $(delta "$d" "$g" "$m")"
				done
			done
		done
	} >"$dir/cm-counters.txt"
	mv "$stat" "$dir/stat.csv"
	perf script -i "$data" -F event,trace >"$dir/ibcm-events.txt" 2>"$dir/script.err"
	rm -f "$data"
	python3 "$here/counts.py" "$dir" $((2 * n + 1)) >"$dir/counts.log" || return 1
	gzip -1 "$dir/kallsyms"
	say "$tag: counts over cmtime $n conns: $(cat "$dir/counts.log")"
}

# ---- floor ------------------------------------------------------------------

# What any CM pays ib_core and the driver for (floor.py's groups): the
# MAD layer's send buffers, posts, cancels and frees, received buffers
# freed, address handles made and destroyed and the address resolution
# behind them.  The function_graph tracer times every call of these, and
# of nothing else, over one cmtime run.
FLOOR_FUNCS="ib_create_send_mad ib_post_send_mad ib_free_send_mad ib_modify_mad
	ib_free_recv_mad rdma_create_ah rdma_destroy_ah_user
	ib_init_ah_attr_from_wc ib_init_ah_attr_from_path"

# floor_tracer TRACER: current_tracer, with an empty filter for nop.
floor_tracer() {
	echo "$1" >"$TRACE/current_tracer"
	[ "$1" != nop ] || : >"$TRACE/set_ftrace_filter"
}

case_floor() {
	local dir=$1/floor n=$BENCH_COUNT_CONNS f rc overrun kb
	mkdir -p "$dir"
	# "7 (expanded: 1408)" before the buffer was first used.
	kb=$(sed -E 's/.*expanded: ([0-9]+).*/\1/; s/ .*//' "$TRACE/buffer_size_kb")
	floor_tracer nop
	for f in $FLOOR_FUNCS; do
		if ! echo "$f" >>"$TRACE/set_ftrace_filter"; then
			say "$tag: floor: cannot trace $f"
			floor_tracer nop
			return 1
		fi
	done
	# About 20 calls per connection made (2N + 1), two entries of some 40
	# bytes each; overrun tells if this was too little.
	echo $((n * 8 + 4096)) >"$TRACE/buffer_size_kb"
	# A closing brace names its function; a call's time leaves out the
	# time its task slept (floor.py).
	echo 1 >"$TRACE/options/funcgraph-tail"
	echo 0 >"$TRACE/options/sleep-time"
	floor_tracer function_graph
	: >"$TRACE/trace"
	cmtime_pair "$dir" cmtime "$n" 1
	rc=$?
	echo 0 >"$TRACE/tracing_on"
	overrun=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' \
		"$TRACE"/per_cpu/cpu*/stats)
	cat "$TRACE/trace" >"$dir/trace.txt"
	floor_tracer nop
	echo 1 >"$TRACE/tracing_on"
	echo 1 >"$TRACE/options/sleep-time"
	echo "$kb" >"$TRACE/buffer_size_kb"
	[ $rc = 0 ] || return $rc
	if [ "$overrun" != 0 ]; then
		say "$tag: floor: the trace buffer lost $overrun entries"
		return 1
	fi
	python3 "$here/floor.py" "$dir" $((2 * n + 1)) >"$dir/floor.log" || return 1
	gzip -1 "$dir/trace.txt"
	say "$tag: floor over cmtime $n conns: $(cat "$dir/floor.log")"
}

# ---- memory -----------------------------------------------------------------

# settle_memory: leave the dentries and inodes of earlier cases out of the
# memory figures; they are freed after an RCU grace period.
settle_memory() {
	sync
	echo 2 >/proc/sys/vm/drop_caches
	sleep 3
}

snapshot() {
	cp /proc/meminfo "$1/$2.meminfo"
	cp /proc/slabinfo "$1/$2.slabinfo"
}

# meminfo_slab_kb FILE: Slab: of a copy of /proc/meminfo (not lib.sh's
# slab_kb, which the fabric case uses).
meminfo_slab_kb() {
	awk '/^Slab:/ { print $2 }' "$1"
}

# per_conn DIR FROM TO N: the Slab: growth per connection, in bytes.
per_conn() {
	printf '%+d' $((($(meminfo_slab_kb "$1/$3.meminfo") - $(meminfo_slab_kb "$1/$2.meminfo")) * 1024 / $4))
}

established() {
	grep -q '^established' "$1/server.txt" && grep -q '^established' "$1/client.txt"
}

# N connections held open by cmhold (no QPs), then closed: both sides'
# ids are in timewait once both processes are gone.
case_mem() {
	local dir=$1/mem n=$BENCH_MEM_CONNS spid cpid rc=0
	mkdir -p "$dir"
	settle_memory
	snapshot "$dir" base
	"${PEER[@]}" "$out/cmhold" -l "$IP1" -p "$HOLD_PORT" -c "$n" \
		-T "$HOLD_TIMEOUT" >"$dir/server.txt" 2>&1 &
	spid=$!
	wait_for 30 grep -q '^listening' "$dir/server.txt" || rc=1
	"$out/cmhold" -s "$IP1" -p "$HOLD_PORT" -c "$n" -t "$HOLD_ACK_TIMEOUT" \
		-T "$HOLD_TIMEOUT" >"$dir/client.txt" 2>&1 &
	cpid=$!
	if [ $rc = 0 ] && wait_for "$HOLD_TIMEOUT" established "$dir"; then
		sleep 1
		snapshot "$dir" held
	else
		rc=1
	fi
	kill -USR1 "$cpid"
	wait "$cpid" || rc=1
	wait "$spid" || rc=1
	snapshot "$dir" timewait
	sleep "$HOLD_TIMEWAIT"
	snapshot "$dir" after
	if [ $rc != 0 ]; then
		say "$tag: memory, $n conns held: FAILED; see $dir/client.txt and server.txt"
		return 1
	fi
	say "$tag: memory, $n conns: Slab $(per_conn "$dir" base held "$n") B/conn held," \
		"$(per_conn "$dir" base timewait "$n") in timewait," \
		"$(per_conn "$dir" base after "$n") after it"
}

# ---- storm ------------------------------------------------------------------

# A thousand processes, each with every provider library that libibverbs
# finds in /etc/libibverbs.d open through 9p, would use up QEMU's file
# descriptors (see storm.py): the storm sees only rxe's.
VERBS_D=/run/ibcm/libibverbs.d

case_storm() {
	local dir=$1/storm rc
	mkdir -p "$dir" "$VERBS_D"
	cp /etc/libibverbs.d/rxe.driver "$VERBS_D/"
	settle_memory
	snap rxe0
	snap rxe1
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m sh -c 'mount --bind "$1" /etc/libibverbs.d && shift && exec "$@"' \
		storm "$VERBS_D" python3 "$here/storm.py" "$dir" "$NS" "$IP1" "$STORM_PORT" \
		"$BENCH_STORM" "$BENCH_STORM_CONNS" "$STORM_TIMEOUT" "$out/stormgate.so" \
		>"$dir/storm.log" 2>&1
	rc=$?
	{
		show_counters rxe0
		show_counters rxe1
	} >"$dir/counters.txt"
	if [ ! -f "$dir/storm.txt" ]; then
		say "$tag: storm FAILED ($rc):"
		tail -n 5 "$dir/storm.log" | while IFS= read -r l; do say "    $l"; done
		return 1
	fi
	echo "cm_tx_retries $(retries)" >>"$dir/storm.txt"
	say "$tag: storm of $BENCH_STORM x $BENCH_STORM_CONNS conns: $(awk '
		{ v[$1] = $2 }
		END {
			printf "%d/%d clients connected, all after %ss, per client p50 %ss p99 %ss, ",
				v["clients_ok"], v["clients"], v["all_connected_s"],
				v["client_connect_p50_s"], v["client_connect_p99_s"]
			printf "%d CM retries, Slab peak %d MiB, MemAvailable low %d MiB", v["cm_tx_retries"],
				v["slab_peak_kb"] / 1024, v["mem_available_low_kb"] / 1024
		}' "$dir/storm.txt")"
	return $rc
}

# ---- fabric -----------------------------------------------------------------

# The many-node fabric (selftests' fabric.bash): BENCH_FABRIC_NODES nodes
# of one bridge, a full mesh of BENCH_FABRIC_K connections per pair, then
# node 0's restart storm with BENCH_FABRIC_STORM connections, on the fixed
# schedule (both modules) and, on ours, under two policies an operator
# might set.  Writes DIR/fabric/fabric.txt ("KEY VALUE" lines) and the
# nodes' outputs.
FABRIC_LEGS=(
	"fixed:"
	"backoff:schedule=backoff backoff_jitter=25"
	"capped:max_response_timeout=17"
	"capped-backoff:$FABRIC_RESTART_POLICY"
)

case_fabric() {
	# fabric.bash keeps the nodes' outputs in T.
	local dir=$1/fabric leg name rc=0 T=$1/fabric
	mkdir -p "$dir"
	if ! fabric_up "$BENCH_FABRIC_NODES" >"$dir/fabric.log" 2>&1; then
		say "$tag: fabric FAILED: $(tail -n 1 "$dir/fabric.log")"
		fabric_down >>"$dir/fabric.log" 2>&1
		return 1
	fi
	if fabric_mesh mesh "$BENCH_FABRIC_K" >>"$dir/fabric.log" 2>&1; then
		printf 'mesh_conns %s\nmesh_ms %s\nmesh_retries %s\nmesh_fails %s\nmesh_slab_kb %s\n' \
			"$mesh_conns" "$mesh_ms" "$retries" "$fails" "$slab_kb" >"$dir/fabric.txt"
		say "$tag: fabric mesh of $BENCH_FABRIC_NODES nodes x $BENCH_FABRIC_K: $mesh_conns up" \
			"after $mesh_ms ms, $retries CM retries, $fails made again, Slab +$slab_kb kB"
	else
		say "$tag: fabric mesh FAILED: $(tail -n 1 "$dir/fabric.log")"
		rc=1
	fi
	for leg in "${FABRIC_LEGS[@]}"; do
		name=${leg%%:*}
		FABRIC_POLICY=${leg#*:}
		# The stock module has no policy: only the defaults.
		[ "$m" = stock ] && [ -n "$FABRIC_POLICY" ] && continue
		if fabric_storm "storm-$name" "$BENCH_FABRIC_STORM" >>"$dir/fabric.log" 2>&1; then
			printf 'storm_%s_%s %s\n' "$name" back_ms "$back_ms" "$name" peak "$peak_rate" \
				"$name" retries "$retries" "$name" req_retries "$req_retries" \
				"$name" fails "$fails" "$name" drops "$drops" \
				"$name" send_errs "$send_errs" >>"$dir/fabric.txt"
			say "$tag: fabric storm ($name) of $BENCH_FABRIC_STORM: back $back_ms ms after" \
				"node 0, peak $peak_rate QP1 msg/s, $retries CM retries ($req_retries REQ)," \
				"$fails made again, $drops dropped as backlog at node 0"
		else
			say "$tag: fabric storm ($name) FAILED (rxe send errors at node 0:" \
				"$send_errs): $(grep "fabric storm-$name: policy" "$dir/fabric.log" | tail -n 1)"
			rc=1
		fi
	done
	FABRIC_POLICY=
	fabric_down >>"$dir/fabric.log" 2>&1
	return $rc
}

# ---- rounds -----------------------------------------------------------------

# rdma_users: the processes that hold an RDMA device open.  A case that
# broke off may leave some; they keep the modules loaded, and deleting
# the rxe devices under them can hang the VM.
rdma_users() {
	local fd
	for fd in /proc/[0-9]*/fd/*; do
		case $(readlink "$fd" 2>/dev/null) in
		/dev/infiniband/*) fd=${fd#/proc/}; echo "${fd%%/*}" ;;
		esac
	done | sort -u
}

reap_leftovers() {
	local pids
	pids=$(rdma_users)
	[ -z "$pids" ] && return 0
	say "$tag: killing what the case left behind: $(echo "$pids" | xargs)"
	# shellcheck disable=SC2086 # one pid per word
	kill -9 $pids 2>/dev/null
	sleep 1
}

# run_case CASE DIR: one case, with the kernel log checked over it.
run_case() {
	local c=$1 dir=$2 rc bad
	if ! declare -F "case_$c" >/dev/null; then
		say "unknown case $c (BENCH_CASES: cmtime perf counts floor mem storm fabric)"
		return 1
	fi
	say "$tag: $c"
	dmesg_mark
	"case_$c" "$dir"
	rc=$?
	reap_leftovers
	[ $rc = 0 ] || echo "$rc" >"$dir/$c.failed"
	bad=$(dmesg_new | grep -E "$DMESG_BAD|rcu.*stall" | grep -vE "$DMESG_OK")
	if [ -n "$bad" ]; then
		printf '%s\n' "$bad" >"$dir/$c.dmesg"
		say "$tag: $c: the kernel logged $(wc -l <"$dir/$c.dmesg") bad line(s):"
		sed 's/^/    /' "$dir/$c.dmesg" | head -n 20 | while IFS= read -r l; do say "$l"; done
	fi
}

visit() {
	local r=$1 m=$2 c n dir=$out/r$1-$2
	tag="round $r/$BENCH_ROUNDS, $m"
	mkdir -p "$dir"
	say "$tag: loading the $m ib_cm"
	if ! swap_to "$m" >"$dir/swap.log" 2>&1; then
		say "$tag: could not load the $m module:"
		while IFS= read -r c; do say "    $c"; done <"$dir/swap.log"
		return 1
	fi
	case " $BENCH_CASES " in
	*" cmtime "* | *" perf "* | *" counts "* | *" floor "*)
		# Each module's first visit also warms up at each larger
		# size: at 10,000 connections a module's first visit of the
		# boot was 6-8 % slower on the QPs pass than its later ones
		# after a warm-up of 1000 only (ours when no visit warmed up
		# at 10,000; stock when only the boot's first visit did, in
		# the resolve steps), most likely caches and pools growing
		# for the first time.
		case " $visited " in
		*" $m "*) ;;
		*)
			for n in $BENCH_SIZES; do
				if [ "$BENCH_WARMUP" -gt 0 ] && [ "$n" -gt "$BENCH_WARMUP" ]; then
					warm_up "$dir" "$n" || return 1
				fi
			done
			;;
		esac
		warm_up "$dir" "$BENCH_WARMUP" || return 1
		;;
	esac
	visited="$visited $m"
	for c in $BENCH_CASES; do
		run_case "$c" "$dir"
	done
}

main() {
	local r m order t0=$SECONDS
	xz -dc "/lib/modules/$(uname -r)/kernel/drivers/infiniband/core/ib_cm.ko.xz" >"$STOCK_KO"
	{
		echo "ours $(file_build_id "$OURS_KO") $OURS_KO"
		echo "stock $(file_build_id "$STOCK_KO") $STOCK_KO"
	} >"$out/modules.txt"
	sysctl -q -w kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1
	mountpoint -q "$TRACE" || mount -t tracefs tracefs "$TRACE"
	net_two
	# cmtime's client binds each of its ids to a port of its own from the
	# namespace's ephemeral range, 28,232 ports by default: 50,000
	# connections failed in rdma_bind_addr (EADDRNOTAVAIL).
	sysctl -q -w net.ipv4.ip_local_port_range="1024 65535"
	"${PEER[@]}" sysctl -q -w net.ipv4.ip_local_port_range="1024 65535"
	# Address handles made: ib_core's rdma_create_ah, which
	# ib_create_ah_from_wc calls too (ib_core is loaded by now).
	echo "p:ibcm_bench/rdma_create_ah ib_core:rdma_create_ah" >>"$TRACE/kprobe_events" ||
		say "no kprobe on rdma_create_ah: address handles are not counted"
	say "benchmark on Linux $(uname -r), $(nproc) CPUs, $(awk '/^MemTotal/ { print int($2 / 1024) }' /proc/meminfo) MiB," \
		"clock: $BENCH_CLOCK ($BENCH_MODE mode): $BENCH_ROUNDS round(s) of: $BENCH_CASES"
	for ((r = 1; r <= BENCH_ROUNDS; r++)); do
		order="ours stock"
		[ $((r % 2)) = 1 ] || order="stock ours"
		for m in $order; do
			visit "$r" "$m" || break 2
		done
	done
	say "benchmark done in $((SECONDS - t0))s"
}

main
