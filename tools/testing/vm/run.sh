#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot Linux 7.2 from the sid root under QEMU with virtme-ng and run the
# ib_cm selftests in it, on our freshly built module or (--stock) on the
# stock one.  Everything the run leaves is in out/vm/MODE/.  QEMU uses KVM
# where it works, TCG otherwise (accel.sh; IBCM_ACCEL=kvm|tcg decides).
#
# usage: run.sh [--stock] [--demo] [--bench] [--out DIR] [TEST...]
#               [IBCM_NAME=VALUE...]
#   TEST is a script name from tools/testing/selftests/ib_cm (rping,
#   rping.sh) or a path; none means all of them.  IBCM_NAME=VALUE sets
#   an environment variable for the tests.  DIR must be inside the
#   project tree (the VM sees only the root and the tree).
#   --bench runs the A/B benchmark of tools/testing/bench instead, in
#   out/bench: the VM boots with the stock module and swaps ours in.
#   IBCM_VM_CPUS (2) and IBCM_VM_QEMU_OPTS (none) set the VM's vCPUs and
#   extra QEMU options; the benchmark's icount mode sets them itself.
# Prints the TAP lines as tests finish, and "# [TIME] ..." lines saying
# what it is doing; exits non-zero if any test failed.
# One VM at a time: concurrent runs wait for each other.
set -euo pipefail
# shellcheck source=tools/testing/vm/config.sh
. "$(dirname "$0")/config.sh"

mode=ours demo='' bench='' out=''
while [ $# -gt 0 ]; do
	case $1 in
	--stock) mode=stock ;;
	--demo) demo=--demo ;;
	--bench) bench=--bench mode=stock ;;
	--out) out=$(realpath -m "$2"); shift ;;
	-h | --help) sed -n '3,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
	shift
done

# A kernel of our own (kernel.sh sets these; none for the benchmark): its
# release, image, build tree and make arguments for modules against it,
# the base of its lib/modules, kernel arguments, and the ib_cm.ko built
# in its tree, ours, which then is installed instead of building one.
# By default the root's kernel.
kver=${IBCM_VM_KVER:-$IBCM_KVER}
kimg=${IBCM_VM_KIMG:-/boot/vmlinuz-$IBCM_KVER}
kbuild=${IBCM_VM_KBUILD:-/lib/modules/$IBCM_KVER/build}
kbuild_args=()
[ -z "${IBCM_VM_KBUILD_ARGS:-}" ] || read -ra kbuild_args <<<"$IBCM_VM_KBUILD_ARGS"
modbase=${IBCM_VM_MODBASE:-}
append=()
[ -z "${IBCM_VM_APPEND:-}" ] || append=(--append "$IBCM_VM_APPEND")
# IBCM_VM_VERBOSE=1: the guest kernel's whole console into console.log,
# for a boot that hangs or reports before the tests start.
verbose=()
[ -z "${IBCM_VM_VERBOSE:-}" ] || verbose=(--verbose)

# The benchmark boots the stock tree (no updates/) and loads ours itself.
name=${bench:+bench}
name=${name:-$mode}
memory=2G
# The whole suite's limit: about 1,300 s of tests under TCG here, the
# DKMS build (selftests/ib_cm/dkms.sh) up to 400 s of them.
vm_timeout=${IBCM_VM_TIMEOUT:-2400}
if [ -n "$bench" ]; then
	# shellcheck source=tools/testing/bench/config.sh
	. "$IBCM_SRC/tools/testing/bench/config.sh"
	memory=$BENCH_MEMORY vm_timeout=$BENCH_TIMEOUT
	out=${out:-$IBCM_SRC/out/bench}
fi
out=${out:-$IBCM_SRC/out/vm/$mode}
case $out in
"$IBCM_SRC"/*) ;;
*) echo "run.sh: --out must be inside $IBCM_SRC" >&2; exit 2 ;;
esac
# Runs of the same mode share $out: let them take turns.  Its own
# descriptor: reopening 9 below would let go of it.
exec 8>"${TMPDIR:-/tmp}/ibcm-vm-$name.lock"
flock 8
t0=$(date +%s)

# Progress lines: "# [TIME] what".
note() { printf '# [%(%T)T] %s\n' -1 "$*"; }

# The two cores are shared: never two VMs at once.
exec 9>/tmp/ibcm-vm-run.lock
if ! flock -n 9; then
	note "vm: waiting for another VM run to finish"
	flock 9
fi

"$IBCM_VM_DIR/mkroot.sh"
# This run holds the lock that a probe boot would take.
accel=$(IBCM_VM_LOCKED=1 "$IBCM_VM_DIR/accel.sh")
if [ -n "$bench" ]; then
	bench_vm "$accel"
	# prepare.sh records the settings for the guest.
	export BENCH_CLOCK BENCH_ROUNDS
fi
# IBCM_VM_CPUS: the VM's vCPUs (2); IBCM_VM_QEMU_OPTS: more options for
# QEMU (none).  Only the benchmark changes them by default (bench_vm).
cpus=${IBCM_VM_CPUS:-2}
qemu_opts=()
[ -z "${IBCM_VM_QEMU_OPTS:-}" ] || qemu_opts=(--qemu-opts "$IBCM_VM_QEMU_OPTS")
rm -rf "$out"
mkdir -p "$out/moddb" "$out/tests"

if [ -n "${IBCM_VM_CM:-}" ] && [ "$mode" = ours ]; then
	note "vm: our module, built in the tree of Linux $kver"
	cp "$IBCM_VM_CM" "$out/ib_cm.ko"
	sha256sum <"$out/ib_cm.ko" | cut -d' ' -f1 >"$out/ib_cm.ko.sha256"
elif [ "$mode" = ours ] || [ -n "$bench" ]; then
	note "vm: building the module against the root's $IBCM_KVER headers"
	# Built against the root's headers even where the host runs 7.2: the
	# VM boots the root's kernel.
	"$IBCM_VM_DIR/inroot.sh" make -s -C "/lib/modules/$IBCM_KVER/build" M="$IBCM_SRC" modules
	cp "$IBCM_SRC/ib_cm.ko" "$out/ib_cm.ko"
	sha256sum <"$out/ib_cm.ko" | cut -d' ' -f1 >"$out/ib_cm.ko.sha256"
fi
# The fuzz tests' tools, into out/fuzz (tools/testing/fuzz/Makefile).
"$IBCM_VM_DIR/inroot.sh" make -s -C "$IBCM_SRC/tools/testing/fuzz"
# And the flood test's slow kernel consumer (tools/testing/fuzz/Kbuild).
"$IBCM_VM_DIR/inroot.sh" make -s -C "$kbuild" "${kbuild_args[@]}" \
	M="$IBCM_SRC/tools/testing/fuzz" modules
cp "$IBCM_SRC/tools/testing/fuzz/cm_slow.ko" "$IBCM_SRC/out/fuzz/"

note "vm: depmod over the root's modules"
# depmod over the root's module tree plus our updates/, in a private
# overlay: the root itself is not changed.  The guest installs the result.
# shellcheck disable=SC2016 # expanded by the inner shell
"$IBCM_VM_DIR/inroot.sh" bash -c '
	set -e
	mode=$1 out=$2 kver=$3 base=$4 mods=$4/lib/modules/$3
	mkdir -p /run/ibcm-depmod
	mount -t tmpfs ibcm /run/ibcm-depmod
	mkdir /run/ibcm-depmod/upper /run/ibcm-depmod/work
	mount -t overlay ibcm-modules -o lowerdir=$mods,upperdir=/run/ibcm-depmod/upper,workdir=/run/ibcm-depmod/work $mods
	rm -rf "$mods/updates"
	mkdir "$mods/updates"
	[ "$mode" = stock ] || cp "$out/ib_cm.ko" "$mods/updates/"
	depmod ${base:+-b "$base"} "$kver"
	cp "$mods"/modules.* "$out/moddb/"
' depmod "$mode" "$out" "$kver" "$modbase"
[ -z "$bench" ] || "$IBCM_SRC/tools/testing/bench/prepare.sh" "$out"
t1=$(date +%s)

note "vm: booting Linux $kver ($mode ib_cm${bench:+ at boot, ours swapped in}, $accel, $cpus vCPU(s)${IBCM_VM_QEMU_OPTS:+, QEMU $IBCM_VM_QEMU_OPTS}), results in $out"
: >"$out/results.tap"
: >"$out/progress"
# follow: print the guest's progress lines as they come, with the time
# they arrive, and its TAP lines as they are, until $out/.follow-stop
# appears; then what is left, and return.
follow() {
	local l part='' last=0
	exec 3<"$out/progress"
	while :; do
		[ ! -e "$out/.follow-stop" ] || last=1
		while IFS= read -r l <&3; do
			l=$part$l part=''
			case $l in
			"TAP: "*) echo "${l#TAP: }" ;;
			*) note "$l" ;;
			esac
		done
		# A line the guest has half written stays for the next round.
		part+=$l
		[ $last = 0 ] || return 0
		sleep 1
	done
}
# The follower must not keep the run's locks (fds 8, 9) alive, and must not
# outlive the run if it is interrupted.
follow 8>&- 9>&- &
follower=$!
tailer=''
if [ -n "$bench" ]; then
	: >"$out/bench.log"
	tail -q -n +1 -F "$out/bench.log" 2>/dev/null 8>&- 9>&- &
	tailer=$!
fi
trap 'kill "$follower" $tailer 2>/dev/null || true' EXIT
# vng writes the console through /proc/self/fd/1; a pipe keeps it whole.
# Under TCG inroot.sh hides /dev/kvm and --disable-kvm keeps QEMU off it.
if [ "$accel" = kvm ]; then
	export IBCM_INROOT_KVM=1
	accel_opt=()
else
	accel_opt=(--disable-kvm)
fi
"$IBCM_VM_DIR/inroot.sh" timeout "$vm_timeout" vng --run "$kimg" \
	"${accel_opt[@]}" "${append[@]}" "${verbose[@]}" "${qemu_opts[@]}" \
	--memory "$memory" --cpus "$cpus" --rwdir "$out" \
	--exec "$IBCM_VM_DIR/guest.sh $mode $out $demo$bench $*" 2>&1 | cat >"$out/console.log" || true
touch "$out/.follow-stop"
wait "$follower" 2>/dev/null || true
rm -f "$out/.follow-stop"
if [ -n "$tailer" ]; then
	sleep 0.5
	kill "$tailer" 2>/dev/null || true
	wait "$tailer" 2>/dev/null || true
fi
t2=$(date +%s)

if [ -n "$demo" ] && [ -f "$out/demo.txt" ]; then
	cat "$out/demo.txt"
fi
echo "# prepare $((t1 - t0))s, VM $((t2 - t1))s, QEMU with $accel, $cpus vCPU(s)${IBCM_VM_QEMU_OPTS:+, $IBCM_VM_QEMU_OPTS}"
# The benchmark's table is what the run is for: it comes last, also from
# a run that broke off.
bench_report() {
	[ -z "$bench" ] ||
		"$IBCM_VM_DIR/inroot.sh" python3 "$IBCM_SRC/tools/testing/bench/report.py" "$out"
}
if [ ! -f "$out/done" ]; then
	echo "not ok - VM run did not finish; see $out/console.log and $out/guest.log"
	bench_report || true
	exit 1
fi
failed=$(grep '^not ok' "$out/results.tap" | grep -vc '# TODO' || true)
echo "# $failed failed"
bench_report || failed=report
[ "$failed" = 0 ]
