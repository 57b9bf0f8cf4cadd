# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# What sanitisers_on.sh and sanitisers_clean.sh share, sourced by both:
# lib.sh (TAP, check, finish) with the kernel log marked, debugfs
# mounted at $D, and the readings both take.  Not a test itself: the name
# does not end in .sh.
set -uo pipefail
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/../selftests/ib_cm/lib.sh"
dmesg_mark

mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
D=/sys/kernel/debug

# debug_locks: 1 while lockdep is on; it turns itself off after its first
# report.
debug_locks() { awk '$1 == "debug_locks:" { print $2 }' /proc/lockdep_stats 2>/dev/null; }

# kmemleak_scan LABEL LINES: two scans (kmemleak reports an object that
# stayed unreferenced from one scan to the next), the first LINES lines of
# its report in the test log as "# LABEL: ...", the whole report in
# $leaks and the number of suspects in $count.
kmemleak_scan() {
	echo scan >$D/kmemleak 2>/dev/null
	echo scan >$D/kmemleak 2>/dev/null
	leaks=$(cat $D/kmemleak 2>/dev/null)
	count=$(printf '%s\n' "$leaks" | grep -c '^unreferenced object')
	printf '%s\n' "$leaks" | head -n "$2" | sed "s/^/# $1: /"
}
