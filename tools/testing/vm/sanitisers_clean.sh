#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The last test of a run on a sanitised kernel (kernel.sh puts it last):
# no report of any debugging facility in the whole kernel log (KASAN,
# KCSAN, KFENCE, lockdep, suspicious RCU usage, sleeping in atomic
# context, debugobjects, UBSAN, and every other BUG: and WARNING:), no
# memory leak that kmemleak suspects after the tests (sanitisers_on.sh
# cleared the boot's), and lockdep still on: it turns itself off after its
# first report, and then sees nothing more.  Each test checks its own
# stretch of the log as well (lib.sh's dmesg_clean); this also covers the
# boot and what happened between the tests.  TAP out, with lib.sh.
# shellcheck source=tools/testing/vm/sanitisers.bash
. "$(dirname "$0")/sanitisers.bash"

# The reports' first lines.  kmemleak's own lines come from the scans,
# below, and from sanitisers_on.sh's scan of the boot.
REPORTS='BUG: |WARNING: |INFO: trying to register non-static key|ODEBUG:|UBSAN:|Oops|general protection fault|list_(add|del) corruption|refcount_t: '
bad=$(dmesg | grep -E "$REPORTS")
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" | head -n 100 | sed 's/^/# dmesg: /'
	echo "# the whole kernel log is in dmesg.txt"
fi
check "no report in the kernel log ($(printf '%s' "$bad" | grep -c .) lines)" test -z "$bad"

# kmemleak reports objects older than five seconds that were unreferenced
# in two scans in a row; what the tests freed late (RCU, work items) goes
# first.
sleep 6
kmemleak_scan kmemleak 400
check "kmemleak: no suspected leak after the tests ($count)" test "$count" = 0

check "lockdep is still on (debug_locks $(debug_locks))" test "$(debug_locks)" = 1
finish
