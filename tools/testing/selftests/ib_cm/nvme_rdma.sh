#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics over our CM: an nvmet target (configfs) exports a brd
# RAM disk on rdma port 4420 of rxe0, and nvme-rdma connects to it on the
# same device.  A random pattern is written and read back with O_DIRECT;
# then $ROUNDS connect/disconnect rounds; then a controller reset while a
# writer runs, and the data is verified again.  Every connect opens one
# admin and one I/O queue per CPU, each queue one RC connection (REQ, REP,
# RTU; DREQ, DREP at the end).  At the end nothing may be left: the
# modules unload and the CM modules' reference counts are as before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulp.bash"

ROUNDS=20
NQN=nqn.2014-08.org.ibcm:ram0
PORT=4420
SUBSYS=$CFS/nvmet/subsystems/$NQN
NPORT=$CFS/nvmet/ports/1

ulp_cleanup() {
	timeout "$ULP_TIMEOUT" nvme disconnect -n "$NQN" >/dev/null 2>&1
	trm "$NPORT/subsystems/$NQN"
	trmdir "$NPORT"
	[ -d "$SUBSYS/namespaces/1" ] && put 0 "$SUBSYS/namespaces/1/enable"
	trmdir "$SUBSYS/namespaces/1"
	trmdir "$SUBSYS"
	return 0
}
trap 'ulp_cleanup; cleanup' EXIT

command -v nvme >/dev/null || skip_all "no nvme-cli"
net_one
configfs_up
ram_disk 64
cm_refs_before
modprobe_all nvmet nvmet_rdma nvme_rdma

# ---- target ----
tmkdir "$SUBSYS"
put 1 "$SUBSYS/attr_allow_any_host"
tmkdir "$SUBSYS/namespaces/1"
put /dev/ram0 "$SUBSYS/namespaces/1/device_path"
check "nvmet namespace on /dev/ram0 enabled" put 1 "$SUBSYS/namespaces/1/enable"
tmkdir "$NPORT"
put rdma "$NPORT/addr_trtype"
put ipv4 "$NPORT/addr_adrfam"
put "$IP0" "$NPORT/addr_traddr"
put $PORT "$NPORT/addr_trsvcid"
check "nvmet rdma port $IP0:$PORT enabled" tln "$SUBSYS" "$NPORT/subsystems/$NQN"
check "nvmet-rdma listens on $PORT" wait_listen $PORT
snap rxe0
conns=0

# ---- connect, verified I/O, disconnect ----
t0=$(date +%s)
check "nvme connect -t rdma $IP0:$PORT" nvme_connect
c=$(nvme_ctrl) && nvme_wait_live "$c"
dev=$(nvme_ns_dev)
check "controller ${c:-?} live, namespace ${dev:-missing}" test -n "$dev"
log "connect took $(($(date +%s) - t0))s"
queues=$(delta rxe0 cm_tx_msgs rtu)
check "one queue per CPU plus the admin queue: $queues RC connections" test "$queues" -eq $(($(nproc) + 1))
conns=$((conns + 1))
pattern p4 4
check "4 MiB written with O_DIRECT" write_dev "$T/p4" "$dev"
check "4 MiB read back identical" read_same "$dev" "$T/p4"
check "nvme disconnect" nvme_disconnect
check "controller gone" wait_gone "/sys/class/nvme/${c:-none}" 30
show_counters rxe0

# ---- connect/disconnect rounds ----
t0=$(date +%s)
bad=0
for i in $(seq $ROUNDS); do
	if nvme_connect && c=$(nvme_ctrl) && nvme_wait_live "$c" && nvme_disconnect; then
		:
	else
		bad=$((bad + 1))
		log "round $i failed"
	fi
	conns=$((conns + 1))
done
check "$ROUNDS connect/disconnect rounds, $bad failed" test $bad -eq 0
log "$ROUNDS rounds took $(($(date +%s) - t0))s"
check "no controller left" wait_gone "/sys/class/nvme/nvme*" 30

# ---- controller reset under I/O ----
check "connect for the reset" nvme_connect
c=$(nvme_ctrl) && nvme_wait_live "$c"
dev=$(nvme_ns_dev)
check "namespace ${dev:-missing} back" test -n "$dev"
conns=$((conns + 1))
check "the first pattern survived reconnects" read_same "$dev" "$T/p4"
pattern p16 16
rm -f "$T/stop" "$T/writer.rc"
(
	rc=0 i=0
	while [ ! -e "$T/stop" ] && [ $i -lt 20 ]; do
		write_dev "$T/p16" "$dev" || rc=1
		i=$((i + 1))
	done
	echo "$rc $i" >"$T/writer.rc"
) &
writer=$!
sleep 1
check "writer running when the reset is issued" kill -0 $writer
t0=$(date +%s)
check "nvme reset /dev/$c" timeout "$ULP_TIMEOUT" nvme reset "/dev/$c"
check "$c live again after the reset" nvme_wait_live "$c"
log "reset took $(($(date +%s) - t0))s"
conns=$((conns + 1))
sleep 1
touch "$T/stop"
timeout "$ULP_TIMEOUT" tail --pid=$writer -f /dev/null
read -r wrc passes <"$T/writer.rc" || wrc=1 passes=0
check "writer: $passes passes of 16 MiB through the reset, all succeeded" test "$wrc" = 0
check "16 MiB read back identical after the reset" read_same "$dev" "$T/p16"
check "nvme disconnect after the reset" nvme_disconnect

# ---- counters ----
check "no controller left" wait_gone "/sys/class/nvme/nvme*" 30
show_counters rxe0
log "$conns controller associations of $queues queues"
cm_conns rxe0 $((conns * queues))

# ---- teardown: everything must go ----
ulp_teardown nvme_rdma nvmet_rdma nvmet brd
finish
