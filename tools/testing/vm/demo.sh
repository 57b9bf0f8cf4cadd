#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make demo", inside the VM: a few connections over soft-RoCE and what the
# CM did for them.  guest.sh has installed the module; run.sh prints this
# script's output when the VM is done.
#
# usage: demo.sh ours|stock
export IBCM_MODE=$1 IBCM_TIMEOUT=60
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/../selftests/ib_cm/lib.sh" >/dev/null

say() { printf '\n== %s\n' "$*"; }

say "ib_cm demo on Linux $(uname -r), $IBCM_MODE module"
net_one >/dev/null
echo "rxe0 is a soft-RoCE device on veth0, address $IP0; it talks to itself."

say "rping: one RC connection, 5 pings verified, disconnect"
spawn server rping -s -a "$IP0" -C 5 >/dev/null
wait_listen 7174
timeout 60 rping -c -a "$IP0" -C 5 -v -V 2>&1 | sed 's/^/  /'
reap server >/dev/null

say "ucmatose: 10 RC connections, messages over each, disconnect"
spawn server ucmatose -b "$IP0" -c 10 >/dev/null
wait_listen 7471
timeout 60 ucmatose -s "$IP0" -c 10 2>&1 | sed 's/^/  /'
reap server >/dev/null

say "rping to a port nobody listens on: rejected at once"
timeout 60 rping -c -a "$IP0" -p 9999 -C 1 2>&1 | sed 's/^/  /'

say "CM messages counted on rxe0 port 1 (sent/received; one device sees both ends)"
for m in $CM_MSGS; do
	tx=$(delta rxe0 cm_tx_msgs "$m")
	rx=$(delta rxe0 cm_rx_msgs "$m")
	[ "$tx$rx" = 00 ] || printf '  %-9s %4d/%d\n' "$m" "$tx" "$rx"
done
retries=$(cat /sys/class/infiniband/rxe0/ports/1/cm_tx_retries/* | paste -sd+ | bc)
echo "  retries: $retries"

say "the ib_cm that served them"
echo "  modinfo -n ib_cm:   $(modinfo -n ib_cm)"
echo "  users (holders):    $(cd /sys/module/ib_cm/holders && echo *)"
echo "  taint:              $(cat /sys/module/ib_cm/taint) (O: out of tree, E: unsigned)"
echo "  build id (loaded):  $(od -An -tx1 -v /sys/module/ib_cm/notes/.note.gnu.build-id | tr -d ' \n' | tail -c 40)"
cleanup >/dev/null
