#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The project's test command ("make check"): every check prints one TAP
# line, the last line is "N passed, M failed", and the exit code is
# non-zero if anything failed.  Logs are in out/check/ and out/vm/.
#
#   sid root:    the Debian sid root with Linux 7.2 (created on first use)
#   lint:        shellcheck over our scripts (when it is installed)
#   build:       W=1 with warnings as errors
#   sparse:      C=2, any warning fails
#   checkpatch:  --strict over cm.c, cm_msgs.h, cm_trace.h, include/rdma/ib_cm.h
#                the fuzz tools (tools/testing/fuzz/*.c) and the KUnit
#                suites (tools/testing/kunit/cm_kunit_*.c)
#   abi:         tools/testing/abi/check.sh, when it exists
#   man:         tools/testing/man/check.sh (kernel-doc, man pages, the
#                design document's transition tables against cm.c)
#   kunit debug: the KUnit suites (tools/testing/kunit/run.sh --debug),
#                once, under KASAN, lockdep, kmemleak and debugobjects; a
#                failed case or any report of theirs fails.  Its
#                kunitconfig holds every line of the plain one, so the
#                plain run ("make kunit", 15 minutes more on a cold
#                machine) would add no case; it stays the quick loop.
#   seen:        the design document's "sent" and "event" columns against
#                what the KUnit suites saw each change do
#                (tools/testing/man/check_transitions.py --seen)
#   vm ours:     the VM suite on our module, one line per test
#   vm stock:    the same suite on the stock module (the baseline); its
#                known failures are "not ok ... # TODO" and count as passed
#
# While a step runs, the progress lines of the tools ("# [TIME] what", the
# root's creation, the KUnit build and boot, each VM test as it starts)
# show on the terminal as well as in the step's log.  The VMs and KUnit use
# KVM where it works (vm/accel.sh), and the summary says which.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/testing/vm/config.sh
. "$here/vm/config.sh"
src=$IBCM_SRC
logs=$src/out/check
mkdir -p "$logs"

n=0 passed=0 failed=0

note() { printf '# [%(%T)T] %s\n' -1 "$*"; }

# progress [MODE]: pass on the progress lines of a step's output, with
# "vm:" made "vm MODE:".
progress() {
	grep --line-buffered -E '^# \[[0-9]{2}:[0-9]{2}:[0-9]{2}\] ' |
		sed -u -E "s/^(# \[[0-9:]{8}\] )vm: /\1vm${1:+ $1}: /"
}

# line OK TEXT: print and count one TAP line.
line() {
	n=$((n + 1))
	if [ "$1" = 1 ]; then
		passed=$((passed + 1))
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
	fi
}

# step ID DESC CMD...: run CMD with its output in out/check/ID.log.
step() {
	local id=$1 desc=$2 t0 rc
	shift 2
	t0=$(date +%s)
	note "check: $desc"
	"$@" 2>&1 | tee "$logs/$id.log" | progress
	rc=${PIPESTATUS[0]}
	if [ "$rc" = 0 ]; then
		line 1 "$desc ($(($(date +%s) - t0))s)"
	else
		line 0 "$desc ($(($(date +%s) - t0))s, exit $rc, log out/check/$id.log)"
		tail -n 15 "$logs/$id.log" | sed 's/^/# /'
	fi
	return "$rc"
}

# why LOG: what a failed test said, for a CI log that is all one sees of
# a run: its failed checks and its last lines.
why() {
	[ -f "$1" ] || return 0
	grep '^not ok' "$1" | head -n 10 | sed 's/^/#   /'
	tail -n 12 "$1" | sed 's/^/#   | /'
}

# vm MODE: run the VM suite and turn its results into check lines.
vm() {
	local mode=$1 flag='' t0 res r
	[ "$mode" = stock ] && flag=--stock
	t0=$(date +%s)
	note "check: the VM suite on the $mode module"
	"$here/vm/run.sh" $flag --out "$logs/vm-$mode" 2>&1 | tee "$logs/vm-$mode.log" |
		progress "$mode"
	res=$logs/vm-$mode/results.tap
	if [ ! -f "$logs/vm-$mode/done" ]; then
		line 0 "vm $mode: the VM run did not finish (log out/check/vm-$mode.log)"
		tail -n 15 "$logs/vm-$mode.log" | sed 's/^/# /'
		echo "# the end of the guest's console:"
		tail -n 25 "$logs/vm-$mode/console.log" 2>/dev/null | sed 's/^/# /'
	fi
	[ -f "$res" ] || return 0
	while IFS= read -r r; do
		case $r in
		"ok "*) line 1 "vm $mode: ${r#ok * - }" ;;
		"not ok "*"# TODO"*)
			if [ "$mode" = stock ]; then
				line 1 "vm $mode: ${r#not ok * - }"
			else
				line 0 "vm $mode: ${r#not ok * - }"
			fi
			;;
		"not ok "*)
			line 0 "vm $mode: ${r#not ok * - } (log out/check/vm-$mode/tests/)"
			why "$logs/vm-$mode/tests/$(echo "${r#not ok * - }" | cut -d' ' -f1).log"
			;;
		esac
	done <"$res"
	echo "# vm $mode: $(($(date +%s) - t0))s, QEMU with $IBCM_ACCEL"
}

# The scripts of this harness; other tools under tools/testing have their
# own owners and checks.
lint() {
	cd "$src" && shellcheck -x -P SCRIPTDIR .ci/run tools/testing/check.sh \
		tools/testing/checkpatch.sh tools/testing/vm/*.sh \
		tools/testing/patch/*.sh tools/testing/kunit/*.sh tools/testing/bench/*.sh \
		tools/dkms/*.sh \
		tools/testing/selftests/ib_cm/*.sh \
		tools/testing/selftests/ib_cm/stress/*.sh
}

echo "TAP version 13"
if step root "sid root" "$here/vm/mkroot.sh"; then
	# One verdict for every VM and KUnit boot of this run; a probe boot
	# the first time (its notice goes to the terminal).
	if ! IBCM_ACCEL=$("$here/vm/accel.sh" 2>"$logs/accel.log"); then
		line 0 "choosing KVM or TCG (log out/check/accel.log)"
		IBCM_ACCEL=tcg
	fi
	cat "$logs/accel.log"
	export IBCM_ACCEL
	if command -v shellcheck >/dev/null; then
		step lint shellcheck lint
	fi
	step build "build W=1 -Werror" make -C "$src" werror
	step sparse sparse make -C "$src" sparse
	step checkpatch checkpatch make -C "$src" checkpatch
	if [ -x "$src/tools/testing/abi/check.sh" ]; then
		step abi "abi layout" "$src/tools/testing/abi/check.sh"
	else
		echo "# abi: no tools/testing/abi/check.sh yet"
	fi
	step man "kernel-doc, man pages, design document" \
		"$src/tools/testing/man/check.sh"
	step kunit-debug "KUnit suites under KASAN, lockdep, kmemleak, debugobjects" \
		"$src/tools/testing/kunit/run.sh" --debug
	step seen "design document: what each change sends and delivers, as KUnit saw" \
		python3 "$src/tools/testing/man/check_transitions.py" \
		--seen "$src/out/kunit/debug-ib_cm-kunit.log" \
		"$src/Documentation/infiniband/ib_cm.rst" "$src/cm.c" \
		"$src/cm_trace.h" "$src/include/rdma/ib_cm.h"
	vm ours
	vm stock
fi
[ -z "${IBCM_ACCEL:-}" ] || echo "# QEMU with $IBCM_ACCEL (KVM where it works; IBCM_ACCEL=kvm|tcg overrides)"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
