# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Which ib_cm.ko is live: the GNU build ID of a module file and of the
# loaded module.  Sourced by guest.sh and the benchmark, inside the VM.

# file_build_id FILE: FILE may be xz-compressed, as the stock modules are.
file_build_id() {
	local f=$1 tmp=/run/ibcm/probe.ko
	mkdir -p /run/ibcm
	case $f in
	*.xz) xz -dc "$f" >"$tmp" && f=$tmp ;;
	esac
	readelf -n "$f" | awk '/Build ID:/ { print $3 }'
}

live_build_id() {
	od -An -tx1 -v /sys/module/ib_cm/notes/.note.gnu.build-id |
		tr -d ' \n' | tail -c 40
}
