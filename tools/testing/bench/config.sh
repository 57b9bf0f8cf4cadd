# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
# The settings of "make bench", each overridable from the environment or
# make's command line ("make bench BENCH_ROUNDS=5 BENCH_SIZES=1000").
# Sourced on the host by run.sh and prepare.sh; the guest reads the values
# prepare.sh recorded in OUT/settings.sh.

# What the guest's clock measures:
#   icount  (default) one vCPU under QEMU's instruction counting
#           ("-icount shift=1,sleep=off"): the guest's clock advances 2 ns
#           per instruction executed and skips idle time, so a duration is
#           a count of instructions, the same from run to run.  Blind to
#           concurrency.  Under KVM there is no instruction counting: the
#           mode then runs on one vCPU with the wall clock, and says so.
#   wall    two vCPUs and the wall clock, for what needs real concurrency
#           (the storm, several cmtime threads); noisy under TCG on shared
#           cores, hence more rounds and no ratio where they overlap.
BENCH_MODE=${BENCH_MODE:-icount}
case $BENCH_MODE in
icount)
	_rounds=3 _cases="cmtime perf counts floor mem" _sizes="1000 10000 30000" _threads=1
	_yield=1000
	;;
wall)
	_rounds=5 _cases="cmtime storm fabric" _sizes="1000 10000" _threads="1 4"
	_yield=0
	;;
*)
	echo "bench: BENCH_MODE must be icount or wall, not '$BENCH_MODE'" >&2
	exit 2
	;;
esac
# Rounds; each runs every case on both modules, the order alternating.
BENCH_ROUNDS=${BENCH_ROUNDS:-$_rounds}
# Which cases run: any of cmtime perf counts floor mem storm fabric.
BENCH_CASES=${BENCH_CASES:-$_cases}
# cmtime: connections and event threads (-n), every combination.  Not
# above 32,000: an rxe device has at most 32,767 address handles, and
# cmtime's client starts all its connections at once, each with an
# address handle on rxe0 (stock's REQ holds one until it is answered,
# ours' id one until it is destroyed).  At 50,000 both modules failed:
# "rdma_connect: Invalid argument", rxe0 logging "rxe_create_ah:
# returned err = -22".
BENCH_SIZES=${BENCH_SIZES:-$_sizes}
BENCH_THREADS=${BENCH_THREADS:-$_threads}
# cmtime's main threads wait for each step's end in a loop of
# sched_yield(); cmsettle.so makes such a yield a sleep of this many
# microseconds instead (0: a real yield).  On one vCPU the yielding
# threads take turns with the step's work: at 10,000 connections with
# QPs the rounds of one module then spread by 12 %, with 1 ms sleeps by
# 0.1-3.7 % in two runs.  The wall mode keeps cmtime's yields (its effect on two
# vCPUs was not measured).
BENCH_YIELD_US=${BENCH_YIELD_US:-$_yield}
unset _rounds _cases _sizes _threads _yield
# Above this many connections cmtime's QPs pass is not run, and its cell
# in the table says so: cmtime then replaces the QPs by a sleep (-m 0)
# and only its "no QPs" pass counts, which needs nothing but the CM's
# ids and address handles.  30,000 RC QPs with their queues on each of
# the two rxe devices of one VM have not been tried here; raise this to
# try.
BENCH_QPS_MAX=${BENCH_QPS_MAX:-10000}
# Before the recorded cases of each visit of a module, an unrecorded
# cmtime of this many connections (0: none): the first run after loading
# a module is slower (22 % seen on the QPs pass).  Each module's first
# visit also warms up at each larger size of BENCH_SIZES.
BENCH_WARMUP=${BENCH_WARMUP:-1000}
# The least pause of cmtime's client after each pass (cmsettle.c); 0: none.
BENCH_SETTLE_MS=${BENCH_SETTLE_MS:-2000}
# The perf profile (the CM's share) is taken over one cmtime run of this
# many connections; the more, the smaller the sampling error.
BENCH_PERF_CONNS=${BENCH_PERF_CONNS:-3000}
# The counts (allocations, work items, switches, MADs, address handles)
# and the floor (ib_core's calls any CM makes, timed)
# over one cmtime run of this many connections.
BENCH_COUNT_CONNS=${BENCH_COUNT_CONNS:-1000}
# Connections held open for the memory figures.  SLUB's per-CPU caches of
# free objects blur the counts by some tens of KiB: the more, the sharper.
BENCH_MEM_CONNS=${BENCH_MEM_CONNS:-2000}
# Storm: this many servers and as many clients, each of BENCH_STORM_CONNS
# connections.
BENCH_STORM=${BENCH_STORM:-512}
BENCH_STORM_CONNS=${BENCH_STORM_CONNS:-32}
# Fabric: this many nodes (namespaces with an rxe device each, on one
# bridge), BENCH_FABRIC_K connections from every node to every other, and
# a restart storm of BENCH_FABRIC_STORM connections to node 0.
BENCH_FABRIC_NODES=${BENCH_FABRIC_NODES:-16}
BENCH_FABRIC_K=${BENCH_FABRIC_K:-4}
BENCH_FABRIC_STORM=${BENCH_FABRIC_STORM:-512}
# The VM; run.sh's own default (2G) is too small for the larger cases.
BENCH_MEMORY=${BENCH_MEMORY:-4G}
# Seconds the whole VM run may take.
BENCH_TIMEOUT=${BENCH_TIMEOUT:-14400}
# What QEMU is given for the icount mode.
BENCH_ICOUNT_OPTS=${BENCH_ICOUNT_OPTS:--icount shift=1,sleep=off}
# Set by bench_clock: icount or wall, what the run's clock really was.
BENCH_CLOCK=${BENCH_CLOCK:-}

BENCH_VARS="BENCH_MODE BENCH_CLOCK BENCH_ROUNDS BENCH_CASES BENCH_SIZES
	BENCH_THREADS BENCH_QPS_MAX BENCH_WARMUP BENCH_SETTLE_MS BENCH_YIELD_US
	BENCH_PERF_CONNS
	BENCH_COUNT_CONNS BENCH_MEM_CONNS BENCH_STORM BENCH_STORM_CONNS
	BENCH_FABRIC_NODES BENCH_FABRIC_K BENCH_FABRIC_STORM
	BENCH_MEMORY BENCH_TIMEOUT BENCH_ICOUNT_OPTS"

# bench_vm ACCEL: settle the clock for QEMU's accelerator ACCEL (kvm or
# tcg) and set the VM's vCPUs and QEMU options for run.sh, unless
# IBCM_VM_CPUS / IBCM_VM_QEMU_OPTS say otherwise.  Notes on stderr.
bench_vm() {
	BENCH_CLOCK=$BENCH_MODE
	if [ "$BENCH_MODE" = icount ] && [ "$1" = kvm ]; then
		BENCH_CLOCK=wall
		echo "# bench: QEMU runs with KVM here, which has no instruction counting:" \
			"one vCPU as in the icount mode, but times are wall clock" >&2
	fi
	if [ "$BENCH_MODE" = wall ] && [ "$BENCH_ROUNDS" -lt 5 ]; then
		echo "# bench: the wall-clock mode runs at least 5 rounds, not $BENCH_ROUNDS" >&2
		BENCH_ROUNDS=5
	fi
	if [ "$BENCH_MODE" = icount ]; then
		IBCM_VM_CPUS=${IBCM_VM_CPUS:-1}
		[ "$BENCH_CLOCK" = wall ] || IBCM_VM_QEMU_OPTS=${IBCM_VM_QEMU_OPTS:-$BENCH_ICOUNT_OPTS}
	fi
}

# bench_settings: the values in force, as shell assignments.
bench_settings() {
	local v
	for v in $BENCH_VARS; do
		printf '%s=%q\n' "$v" "${!v}"
	done
}
