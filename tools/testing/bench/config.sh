# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
# The settings of "make bench", each overridable from the environment or
# make's command line ("make bench BENCH_ROUNDS=5 BENCH_SIZES=1000").
# Sourced on the host by run.sh and prepare.sh; the guest reads the values
# prepare.sh recorded in OUT/settings.sh.

# Rounds; each runs every case on both modules, the order alternating.
BENCH_ROUNDS=${BENCH_ROUNDS:-3}
# Which cases run: any of cmtime perf mem storm.
BENCH_CASES=${BENCH_CASES:-cmtime perf mem storm}
# cmtime: connections and event threads (-n), every combination.
BENCH_SIZES=${BENCH_SIZES:-1000 10000}
BENCH_THREADS=${BENCH_THREADS:-1 4}
# The perf profile is taken over one cmtime run of this many connections.
BENCH_PERF_CONNS=${BENCH_PERF_CONNS:-1000}
# Connections held open for the memory figures.  SLUB's per-CPU caches of
# free objects blur the counts by some tens of KiB: the more, the sharper.
BENCH_MEM_CONNS=${BENCH_MEM_CONNS:-2000}
# Storm: this many servers and as many clients, each of BENCH_STORM_CONNS
# connections.
BENCH_STORM=${BENCH_STORM:-512}
BENCH_STORM_CONNS=${BENCH_STORM_CONNS:-32}
# The VM; run.sh's own default (2G) is too small for the larger cases.
BENCH_MEMORY=${BENCH_MEMORY:-4G}
# Seconds the whole VM run may take (the defaults take about half).
BENCH_TIMEOUT=${BENCH_TIMEOUT:-3600}

BENCH_VARS="BENCH_ROUNDS BENCH_CASES BENCH_SIZES BENCH_THREADS BENCH_PERF_CONNS
	BENCH_MEM_CONNS BENCH_STORM BENCH_STORM_CONNS BENCH_MEMORY BENCH_TIMEOUT"

# bench_settings: the values in force, as shell assignments.
bench_settings() {
	local v
	for v in $BENCH_VARS; do
		printf '%s=%q\n' "$v" "${!v}"
	done
}
