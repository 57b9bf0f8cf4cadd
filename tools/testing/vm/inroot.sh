#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command inside the sid root with /dev, /proc and /sys bound, in a
# private mount namespace so nothing stays mounted when it exits.
# The project tree is visible at the same path inside the root.  /dev/kvm
# is hidden (QEMU then uses TCG) unless IBCM_INROOT_KVM is set: accel.sh
# decides that.
set -euo pipefail
# shellcheck source=tools/testing/vm/config.sh
. "$(dirname "$0")/config.sh"

[ $# -gt 0 ] || set -- bash
# shellcheck disable=SC2016 # expanded by the inner shell
exec unshare -m --propagation private bash -c '
	set -e
	r=$1; src=$2; kvm=$3; shift 3
	for d in dev dev/pts proc sys; do mount --rbind /$d "$r/$d"; done
	mkdir -p "$r$src"
	mount --bind "$src" "$r$src"
	[ -n "$kvm" ] || [ ! -e /dev/kvm ] || mount --bind /dev/null "$r/dev/kvm"
	cd "$r$src" 2>/dev/null || true
	exec chroot "$r" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin TERM=dumb \
		LANG=C.UTF-8 bash -c "cd \"$src\" 2>/dev/null; exec \"\$@\"" inroot "$@"
' inroot "$IBCM_ROOT" "$IBCM_SRC" "${IBCM_INROOT_KVM:-}" "$@"
