#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Which QEMU accelerator the VM harness and the KUnit runner use: prints
# "kvm" or "tcg".  KVM is used where it works, which is found out once by a
# short boot of the root's kernel under KVM that must reach the guest's
# init and see KVM there (at most 60 s; a hung boot is killed).  The
# verdict is cached in ~/.cache/ib_cm/accel/, keyed by the host kernel, the
# target kernel and the root's QEMU, so later runs only read it.  Where KVM
# does not work (no /dev/kvm, or one that cannot run a stock kernel, such
# as PVM's), the answer is tcg with a one-line notice on stderr.
#
#   IBCM_ACCEL=kvm|tcg     no probe: use this
#   IBCM_VM_LOCKED=1       the caller holds /tmp/ibcm-vm-run.lock already;
#                          otherwise the probe takes it (one VM at a time)
set -euo pipefail
# shellcheck source=tools/testing/vm/config.sh
. "$(dirname "$0")/config.sh"

probe_timeout=60
note() { printf '# [%(%T)T] accel: %s\n' -1 "$*" >&2; }

case ${IBCM_ACCEL:-} in
kvm | tcg) echo "$IBCM_ACCEL"; exit 0 ;;
'') ;;
*) echo "accel.sh: IBCM_ACCEL must be kvm or tcg, not '$IBCM_ACCEL'" >&2; exit 2 ;;
esac

if [ ! -e /dev/kvm ]; then
	note "no /dev/kvm; QEMU uses TCG (software emulation)"
	echo tcg
	exit 0
fi

qemu=$("$IBCM_VM_DIR/inroot.sh" qemu-system-x86_64 --version | head -n1)
key=$(printf '%s\n' "$(uname -r) $(uname -v)" "$IBCM_KVER" "$qemu" | sha256sum | cut -c1-16)
cache=$IBCM_CACHE/accel/$key

# report: print the cached verdict, with the notice for TCG.
report() {
	local v
	v=$(cat "$cache")
	case $v in
	kvm) echo kvm ;;
	*) note "KVM does not work here (${v#tcg: }); QEMU uses TCG"; echo tcg ;;
	esac
}

if [ -f "$cache" ]; then
	report
	exit 0
fi

if [ -z "${IBCM_VM_LOCKED:-}" ]; then
	exec 9>/tmp/ibcm-vm-run.lock
	if ! flock -n 9; then
		note "waiting for another VM run to finish before probing KVM"
		flock 9
	fi
	# Someone else may have probed meanwhile.
	if [ -f "$cache" ]; then
		report
		exit 0
	fi
fi

mkdir -p "$IBCM_CACHE/accel"
log=$IBCM_CACHE/accel/$key.log
: >"$log"
note "probing KVM: a short boot of Linux $IBCM_KVER (once, at most ${probe_timeout}s)"
t0=$(date +%s)
# The guest prints the marker only when its kernel saw KVM; the marker is
# computed there, so the command line that carries it cannot match.
# inroot.sh leaves /dev/kvm visible with IBCM_INROOT_KVM; vng then asks
# QEMU for KVM.  The fd of the lock stays here.
# shellcheck disable=SC2016 # expanded in the guest
IBCM_INROOT_KVM=1 "$IBCM_VM_DIR/inroot.sh" timeout -k 5 "$probe_timeout" \
	vng --run "/boot/vmlinuz-$IBCM_KVER" --memory 512M --cpus 1 \
	--exec 'dmesg | grep -q "Hypervisor detected: KVM" && echo "IBCM_KVM_PROBE_$((6 * 7))"' \
	</dev/null > >(cat >"$log") 2>&1 9>&- &
pid=$!
verdict=''
while kill -0 "$pid" 2>/dev/null; do
	if grep -q 'IBCM_KVM_PROBE_42' "$log"; then
		verdict=kvm
	elif grep -q 'KVM internal error' "$log"; then
		verdict="tcg: QEMU reported a KVM internal error"
	fi
	[ -z "$verdict" ] || break
	sleep 0.5
done
# timeout(1) passes the signal on to the whole boot, QEMU included.
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
if [ -z "$verdict" ]; then
	if grep -q 'IBCM_KVM_PROBE_42' "$log"; then
		verdict=kvm
	elif [ $(($(date +%s) - t0)) -ge "$probe_timeout" ]; then
		verdict="tcg: the probe boot did not reach init in ${probe_timeout}s"
	else
		verdict="tcg: the probe boot ended without seeing KVM (see $log)"
	fi
fi
echo "$verdict" >"$cache"
note "probe took $(($(date +%s) - t0))s: ${verdict%%:*}"
report
