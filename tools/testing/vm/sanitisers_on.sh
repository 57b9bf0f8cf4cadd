#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The first test of a run on a sanitised kernel (kernel.sh puts it first):
# the VM booted the kernel that was built (IBCM_KERNEL_RELEASE), its
# configuration has every debugging facility of kconfig/sanitisers.config
# and KASAN or KCSAN, and each of them is on.  Then a kmemleak scan of
# what the boot (and guest.sh's module_identity) left: its suspects are
# listed and then cleared, so that sanitisers_clean.sh's scan reports
# what the tests leaked; one with a module's frame in its allocation
# fails here.  TAP out, with lib.sh.
# shellcheck source=tools/testing/vm/sanitisers.bash
. "$(dirname "$0")/sanitisers.bash"

want=${IBCM_KERNEL_RELEASE:-}
check "the kernel built for this run: $(uname -r) (want ${want:-unknown})" \
	test -n "$want" -a "$(uname -r)" = "$want"
zcat /proc/config.gz >/tmp/ibcm-config 2>/dev/null
config() { grep -qx "CONFIG_$1=y" /tmp/ibcm-config; }
dmesg_has() { dmesg | grep -q "$1"; }
for c in PROVE_LOCKING PROVE_RCU DEBUG_ATOMIC_SLEEP DEBUG_OBJECTS KFENCE DEBUG_KMEMLEAK; do
	check "CONFIG_$c=y" config "$c"
done
if config KASAN; then
	check "KASAN is on: $(dmesg | grep -o 'KernelAddressSanitizer initialized.*' | head -n 1)" \
		dmesg_has 'KernelAddressSanitizer initialized'
elif config KCSAN; then
	# The file cannot seek: read it whole, then take the first line.
	check "KCSAN is on: $(cat $D/kcsan 2>&1 | head -n 1)" grep -qx 'enabled: 1' $D/kcsan
else
	check "CONFIG_KASAN=y or CONFIG_KCSAN=y" false
fi
check "lockdep is on: /proc/lockdep, debug_locks $(debug_locks)" \
	test -e /proc/lockdep -a "$(debug_locks)" = 1
check "KFENCE is on: $(head -n 1 $D/kfence/stats 2>&1)" grep -qx 'enabled: 1' $D/kfence/stats
check "debugobjects are on: $(grep -m1 '^pool_free' $D/debug_objects/stats 2>&1)" \
	test -r $D/debug_objects/stats
check "kmemleak is on: a scan runs" sh -c "echo scan >$D/kmemleak"
kmemleak_scan "boot kmemleak" 200
mod=$(printf '%s\n' "$leaks" | grep -E '\[[a-z0-9_]+\]$' | head -n 20)
check "kmemleak: $count suspects from the boot, none in a module" test -z "$mod"
echo clear >$D/kmemleak 2>/dev/null
finish
