#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# SRP over our CM: a LIO ib_srpt target (iblock backstore on a brd RAM
# disk, rdma_cm port $PORT, ACL = the initiator's IPv4 address) on rxe0,
# and ib_srp logging in over rdma_cm on the same device.  ib_srp opens one
# RC channel per CPU.  A random pattern is written and read back with
# O_DIRECT; the remote port is deleted (DREQ/DREP on every channel), the
# initiator logs in again and the data is read back once more.  At the end
# nothing may be left: the modules unload and the CM modules' reference
# counts are as before.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ulp.bash"

PORT=5555
BS=$CFS/target/core/iblock_0/ram0
SRPT=$CFS/target/srpt
ADD=/sys/class/infiniband_srp/srp-rxe0-1/add_target
tport='' tpg=''

ulp_cleanup() {
	local p
	for p in /sys/class/srp_remote_ports/port-*/delete; do
		[ -e "$p" ] && put 1 "$p"
	done
	wait_gone "/sys/class/srp_remote_ports/port-*" 30
	if [ -n "$tpg" ] && [ -d "$tpg" ]; then
		put 0 "$tpg/enable"
		trm "$tpg/acls/$IP0/lun_0/lun_0"
		trmdir "$tpg/acls/$IP0/lun_0"
		trmdir "$tpg/acls/$IP0"
		trm "$tpg/lun/lun_0/ram0"
		trmdir "$tpg/lun/lun_0"
		trmdir "$tpg"
	fi
	[ -n "$tport" ] && trmdir "$tport"
	[ -e "$SRPT/discovery_auth/rdma_cm_port" ] && put 0 "$SRPT/discovery_auth/rdma_cm_port"
	trmdir "$SRPT"
	trmdir "$BS"
	trmdir "${BS%/*}"
	return 0
}
trap 'ulp_cleanup; cleanup' EXIT

# disk: the SCSI disk behind the (one) ib_srp SCSI host, once it is there.
disk() {
	local h b
	for _ in $(seq 150); do
		for h in /sys/class/scsi_host/host*; do
			[ "$(cat "$h/proc_name" 2>/dev/null)" = ib_srp ] || continue
			for b in "$h"/device/target*/*/block/*; do
				if [ -e "$b" ]; then
					echo "/dev/${b##*/}"
					return 0
				fi
			done
		done
		sleep 0.2
	done
	return 1
}

do_login() {
	put "id_ext=$guid,ioc_guid=$guid,dest=$IP0:$PORT,src=$IP0" "$ADD"
}

# logout: delete the SRP remote port; ib_srp disconnects every channel.
do_logout() {
	local p
	p=$(wait_path "/sys/class/srp_remote_ports/port-*/delete" 5) || return 1
	put 1 "$p" && wait_gone "/sys/class/srp_remote_ports/port-*" 30
}

net_one
configfs_up
ram_disk 64
cm_refs_before
modprobe_all target_core_mod target_core_iblock ib_srpt ib_srp

# ---- target ----
guid=$(cat /sys/module/ib_srpt/parameters/srpt_service_guid)
guid=${guid#0x}
# ib_srpt names the port after GID 0's interface ID, as xxxx:xxxx:xxxx:xxxx.
gid=$(cat /sys/class/infiniband/rxe0/ports/1/gids/0)
tport=$SRPT/$(echo "$gid" | cut -d: -f5-8)
tpg=$tport/tpg_1
log "srpt_service_guid $guid, GID 0 $gid, target port ${tport##*/}"
tmkdir -p "$BS"
put udev_path=/dev/ram0 "$BS/control"
check "iblock backstore on /dev/ram0" put 1 "$BS/enable"
tmkdir -p "$SRPT"
check "srpt rdma_cm port $PORT" put $PORT "$SRPT/discovery_auth/rdma_cm_port"
check "ib_srpt listens on $PORT" wait_listen $PORT
check "target port ${tport##*/}" tmkdir -p "$tpg/lun/lun_0"
tln "$BS" "$tpg/lun/lun_0/ram0"
# srpt has no demo mode: over rdma_cm the session is named after the
# initiator's IP address, which must have an ACL with the LUN mapped.
tmkdir -p "$tpg/acls/$IP0/lun_0"
check "ACL $IP0 with LUN 0" tln "$tpg/lun/lun_0" "$tpg/acls/$IP0/lun_0/lun_0"
check "target portal group enabled" put 1 "$tpg/enable"
snap rxe0

# ---- login, verified I/O, port deleted ----
t0=$(date +%s)
check "ib_srp login to $IP0:$PORT" do_login
dev=$(disk)
check "SRP disk ${dev:-missing}" test -n "$dev"
log "login took $(($(date +%s) - t0))s"
chans=$(delta rxe0 cm_tx_msgs rtu)
check "one RC channel per CPU: $chans" test "$chans" -eq "$(nproc)"
pattern p4 4
check "4 MiB written with O_DIRECT" write_dev "$T/p4" "$dev"
check "4 MiB read back identical" read_same "$dev" "$T/p4"
check "remote port deleted" do_logout
show_counters rxe0

# ---- log in again ----
t0=$(date +%s)
check "ib_srp login again" do_login
dev=$(disk)
check "SRP disk ${dev:-missing} again" test -n "$dev"
log "second login took $(($(date +%s) - t0))s"
check "data read back identical after the new login" read_same "${dev:-/dev/null}" "$T/p4"
pattern p8 8
check "8 MiB written with O_DIRECT" write_dev "$T/p8" "$dev"
check "8 MiB read back identical" read_same "$dev" "$T/p8"
check "remote port deleted again" do_logout

# ---- counters ----
show_counters rxe0
log "2 logins of $chans channels"
cm_conns rxe0 $((2 * chans))

# ---- teardown: everything must go ----
ulp_teardown ib_srp ib_srpt "${LIO_BACKENDS[@]}" target_core_mod brd
finish
