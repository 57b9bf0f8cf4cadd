#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs inside the VM (run.sh boots it).  Installs the module under test in a
# private overlay of /lib/modules, proves which ib_cm.ko is live, runs the
# selftests and leaves everything in OUT, the directory shared with the host:
#   results.tap      one TAP line per test
#   tests/NAME.log   each test's own TAP output
#   guest.log        this script's log; dmesg.txt  the whole kernel log
#   progress         what it is doing, a line at each step, and the lines
#                    of results.tap as "TAP: ..." in their order (run.sh
#                    shows them as they come)
#   done             written last; its absence means the run broke off
#
# usage: guest.sh ours|stock OUT [--demo | --bench | TEST...] [IBCM_NAME=VALUE...]
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

mode=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
tests_dir=$(cd "$here/../selftests/ib_cm" && pwd)
# shellcheck source=tools/testing/vm/modid.sh
. "$here/modid.sh"
exec >"$out/guest.log" 2>&1

kver=$(uname -r)
mods=/lib/modules/$kver
n=0
# A test's own clients time out after 120s; a whole test after this
# (or what it asks for; see run_test).
test_timeout=300
# Set to the name of a test that timed out leaving tasks stuck in the
# kernel: every later test would only hang on them, so none is run.
wedged=''

tap() {
	echo "$*" >>"$out/results.tap"
	echo "TAP: $*" >>"$out/progress"
}
progress() { echo "$*" >>"$out/progress"; }

# The VM's / is the sid root itself: install the module into a tmpfs
# overlay so that nothing of it survives the VM, and a stock run sees only
# the stock tree.  modules.* come from run.sh, which ran depmod over the
# same tree with the same updates/ on the host (depmod takes about three
# minutes under emulation, seven seconds on the host).
install_module() {
	mkdir -p /run/ibcm
	mount -t tmpfs ibcm /run/ibcm
	mkdir /run/ibcm/upper /run/ibcm/work
	mount -t overlay ibcm-modules -o \
		"lowerdir=$mods,upperdir=/run/ibcm/upper,workdir=/run/ibcm/work" "$mods"
	rm -rf "$mods/updates"
	mkdir "$mods/updates"
	if [ "$mode" = ours ]; then
		cp "$out/ib_cm.ko" "$mods/updates/ib_cm.ko"
	fi
	cp "$out"/moddb/modules.* "$mods/"
}

# Test 1: the module that serves the tests is the one we meant.
module_identity() {
	local path want ok=1 fid lid
	path=$(modinfo -n ib_cm)
	if [ "$mode" = ours ]; then
		want=$mods/updates/ib_cm.ko
		if [ "$(sha256sum <"$want" | cut -d' ' -f1)" != "$(cat "$out/ib_cm.ko.sha256")" ]; then
			echo "identity: $want differs from the module just built"
			ok=0
		fi
	else
		want=$mods/kernel/drivers/infiniband/core/ib_cm.ko.xz
	fi
	echo "identity: modinfo -n ib_cm: $path (want $want)"
	[ "$path" = "$want" ] || ok=0
	modprobe ib_cm || ok=0
	fid=$(file_build_id "$path")
	lid=$(live_build_id)
	echo "identity: build id of file $fid, of loaded module $lid"
	echo "identity: taint $(cat /sys/module/ib_cm/taint 2>/dev/null)"
	[ -n "$fid" ] && [ "$fid" = "$lid" ] || ok=0
	{
		echo "mode=$mode"
		echo "modinfo_path=$path"
		echo "build_id=$lid"
		echo "taint=$(cat /sys/module/ib_cm/taint 2>/dev/null)"
	} >"$out/identity.txt"
	modprobe -r ib_cm
	n=$((n + 1))
	if [ $ok = 1 ]; then
		tap "ok $n - module_identity: $path is live"
	else
		tap "not ok $n - module_identity: want $want, got $path"
	fi
}

# stuck_tasks: the tasks in uninterruptible sleep (state D) now and still,
# the same ones, after each of 6 looks 5 s apart; their pids.
stuck_tasks() {
	local now prev='' i
	for i in 0 1 2 3 4 5 6; do
		[ "$i" = 0 ] || sleep 5
		# The state follows the name in parentheses, which may hold spaces.
		now=$(awk '{ s = $0; sub(/.*\) /, "", s) } s ~ /^D / { print $1 }' \
			/proc/[0-9]*/stat 2>/dev/null | sort)
		if [ "$i" = 0 ]; then
			prev=$now
		else
			prev=$(printf '%s\n' "$now" | grep -Fx -- "$prev")
		fi
		[ -n "$prev" ] || return 0
	done
	echo "$prev"
}

# show_task PID: a task's command line and kernel stack, for a test's log.
show_task() {
	echo "# task $1: $(tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null)"
	sed 's/^/#   /' "/proc/$1/stack" 2>/dev/null
}

# left_over SID: what a test left running in its session (run_test makes
# one per test) is logged and killed, so that it cannot hold a module or a
# device that a later test removes.  A test's servers run under timeouts
# of their own, each in its own process group, so the session is what
# holds them all.
left_over() {
	local pids p
	pids=$(pgrep -s "$1" | xargs) || return 0
	echo "# left running after the test, killed now: $pids"
	for p in $pids; do
		show_task "$p"
	done
	pkill -KILL -s "$1"
	for _ in $(seq 50); do
		pgrep -s "$1" >/dev/null || return 0
		sleep 0.2
	done
	echo "# still there 10s after SIGKILL: $(pgrep -s "$1" | xargs)"
}

# run_test SCRIPT OF: run one test, the n-th of OF.
run_test() {
	local t=$1 name rc line start limit stuck p sid
	name=$(basename "$t" .sh)
	n=$((n + 1))
	if [ -n "$wedged" ]; then
		tap "not ok $n - $name # not run: tasks were stuck in the kernel after $wedged timed out"
		return
	fi
	# A test that needs longer says so in a line "# ibcm-timeout: SECS".
	limit=$(sed -n 's/^# ibcm-timeout: *\([0-9][0-9]*\)$/\1/p' "$t" | head -n 1)
	limit=${limit:-$test_timeout}
	# A slower kernel (kernel.sh's sanitised ones) scales every limit.
	limit=$((limit * ${IBCM_TIMEOUT_SCALE:-1}))
	echo "test $name: start $(date +%T)"
	progress "vm: test $((n - 1)) of $2, $name, started"
	start=$(date +%s)
	# A background job of this shell leads no process group, so setsid
	# makes the test a session of its own in place: its pid is the
	# session's id.
	IBCM_MODE=$mode setsid -w timeout "$limit" "$t" \
		>"$out/tests/$name.log" 2>&1 &
	sid=$!
	wait "$sid"
	rc=$?
	echo "test $name: rc $rc after $(($(date +%s) - start))s"
	if [ $rc = 124 ]; then
		# Something hung: log the blocked tasks' stacks for the record.
		echo w >/proc/sysrq-trigger
		sleep 1
		{
			echo "# timed out after ${limit}s; blocked tasks:"
			dmesg | tail -n 200 | sed 's/^/# /'
		} >>"$out/tests/$name.log"
		stuck=$(stuck_tasks)
		if [ -n "$stuck" ]; then
			wedged=$name
			{
				echo "# still in state D 30s after the timeout, so no later test runs:"
				for p in $stuck; do
					show_task "$p"
				done
			} >>"$out/tests/$name.log"
		fi
	fi
	left_over "$sid" >>"$out/tests/$name.log"
	case $rc in
	0) line="ok $n - $name" ;;
	2) line="not ok $n - $name # TODO known stock failure:$(grep -o '# TODO known stock failure:.*' "$out/tests/$name.log" | sort -u | cut -d: -f2- | tr '\n' ' ')" ;;
	3) line="ok $n - $name # XPASS known stock failure did not happen" ;;
	4) line="ok $n - $name # SKIP" ;;
	124) line="not ok $n - $name # TIMEOUT${wedged:+, tasks left stuck in the kernel}" ;;
	*) line="not ok $n - $name" ;;
	esac
	tap "$line ($(($(date +%s) - start))s)"
}

mkdir -p "$out/tests"
: >"$out/results.tap"
progress "vm: guest up after $(cut -d' ' -f1 /proc/uptime)s; installing the $mode module"
install_module
module_identity

# Arguments NAME=VALUE with an IBCM_ name set the tests' environment
# (e.g. IBCM_FUZZ_RATE=0); the rest name tests.
tests=()
for a in "$@"; do
	case $a in
	IBCM_*=*) export "${a?}" ;;
	*) tests+=("$a") ;;
	esac
done
set -- "${tests[@]}"

if [ "${1:-}" = --demo ]; then
	progress "vm: running the demo"
	"$here/demo.sh" "$mode" >"$out/demo.txt" 2>&1
elif [ "${1:-}" = --bench ]; then
	"$here/../bench/guest-bench.sh" "$out"
else
	if [ $# -eq 0 ]; then
		set -- "$tests_dir"/*.sh
	fi
	tests=()
	for t in "$@"; do
		case $t in
		*/lib.sh | lib.sh) continue ;;
		*/*) ;;
		*) t=$tests_dir/${t%.sh}.sh ;;
		esac
		tests+=("$t")
	done
	for t in "${tests[@]}"; do
		run_test "$t" ${#tests[@]}
	done
fi
progress "vm: tests done, saving the kernel log"
dmesg >"$out/dmesg.txt"
echo "$n" >"$out/done"
