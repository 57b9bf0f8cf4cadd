# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the kernel-ULP tests (nvme_rdma.sh, iser.sh, srp.sh), sourced
# after lib.sh.  Not a test itself: the name does not end in .sh, so
# guest.sh does not run it.
#
# The ULPs (NVMe-oF, iSER, SRP initiators and targets) are configured
# through configfs and sysfs; any write there, any mkdir or rmdir, may block
# on a connection, so every one of them runs under a timeout.

ULP_TIMEOUT=${ULP_TIMEOUT:-60}
CFS=/sys/kernel/config

# put VALUE FILE: write VALUE to a configfs or sysfs attribute.
put() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	if ! timeout "$ULP_TIMEOUT" sh -c 'echo "$1" >"$2"' put "$1" "$2"; then
		log "writing '$1' to $2 failed"
		return 1
	fi
}

# tmkdir DIR / trmdir DIR / tln TARGET LINK / trm LINK: timed configfs ops.
tmkdir() { timeout "$ULP_TIMEOUT" mkdir "$@" || { log "mkdir $* failed"; return 1; }; }
trmdir() { timeout "$ULP_TIMEOUT" rmdir "$1" 2>/dev/null; }
tln() { timeout "$ULP_TIMEOUT" ln -s "$1" "$2" || { log "ln -s $1 $2 failed"; return 1; }; }
trm() { timeout "$ULP_TIMEOUT" rm -f "$1" 2>/dev/null; }

configfs_up() {
	modprobe configfs 2>/dev/null
	mountpoint -q $CFS || mount -t configfs none $CFS || skip_all "no configfs"
}

# ram_disk MIB: a brd RAM disk /dev/ram0 of MIB MiB (brd keeps the data;
# null_blk would discard it).
ram_disk() {
	timeout "$ULP_TIMEOUT" modprobe -r brd 2>/dev/null
	modprobe brd rd_nr=1 rd_size=$(($1 * 1024)) || skip_all "cannot load brd"
	[ -b /dev/ram0 ] || skip_all "brd made no /dev/ram0"
	log "/dev/ram0: $(($(blockdev --getsize64 /dev/ram0) >> 20)) MiB"
}

# cm_refs: the reference counts and holders of the CM modules.
cm_refs() {
	local m h hs
	for m in rdma_cm iw_cm ib_cm; do
		hs=
		for h in "/sys/module/$m/holders"/*; do
			[ -e "$h" ] && hs=$hs${hs:+,}${h##*/}
		done
		printf '%s=%s(%s) ' "$m" "$(cat "/sys/module/$m/refcnt" 2>/dev/null || echo -)" "$hs"
	done
}

# wait_path GLOB [SECONDS]: wait until GLOB matches; prints the first match.
wait_path() {
	local glob=$1 p
	for _ in $(seq $((${2:-30} * 5))); do
		for p in $glob; do
			if [ -e "$p" ]; then
				echo "$p"
				return 0
			fi
		done
		sleep 0.2
	done
	return 1
}

# wait_gone GLOB [SECONDS]: wait until GLOB matches nothing.
wait_gone() {
	local glob=$1 p left
	for _ in $(seq $((${2:-30} * 5))); do
		left=
		for p in $glob; do [ -e "$p" ] && left=$p; done
		[ -z "$left" ] && return 0
		sleep 0.2
	done
	return 1
}

# pattern NAME MIB: a random pattern file $T/NAME of MIB MiB.
pattern() {
	head -c $(($2 << 20)) /dev/urandom >"$T/$1"
}

# write_dev FILE DEV / read_same DEV FILE: O_DIRECT I/O of FILE's size;
# read_same reads DEV back and compares it with FILE.
write_dev() {
	local mib=$(($(stat -c %s "$1") >> 20))
	timeout "$ULP_TIMEOUT" dd if="$1" of="$2" bs=1M count="$mib" oflag=direct status=none ||
		{ log "writing $mib MiB to $2 failed"; return 1; }
}

read_same() {
	local mib=$(($(stat -c %s "$2") >> 20))
	rm -f "$T/readback"
	timeout "$ULP_TIMEOUT" dd if="$1" of="$T/readback" bs=1M count="$mib" iflag=direct status=none ||
		{ log "reading $mib MiB from $1 failed"; return 1; }
	if ! cmp "$2" "$T/readback"; then
		log "$1: data read back differs from $2"
		return 1
	fi
	log "$1: $mib MiB read back, identical (sha256 $(sha256sum <"$2" | cut -c1-16))"
}

# rmmods MOD...: unload modules (and what they alone pulled in), asserting
# each; a module still in use means a connection or an object leaked.
rmmods() {
	local m
	for m in "$@"; do
		if [ -d "/sys/module/$m" ]; then
			check "modprobe -r $m" timeout "$ULP_TIMEOUT" modprobe -r "$m"
		fi
	done
}

# no_cm_ids: assert that no rdma_cm id is left (no connection, no listener).
no_cm_ids() {
	local ids
	ids=$(timeout 10 rdma resource show cm_id 2>&1)
	[ -z "$ids" ] || printf '%s\n' "$ids" | sed 's/^/# cm_id left: /'
	check "no rdma_cm ids left" test -z "$ids"
}

# cm_conns DEV N: assert the CM traffic of N connections set up and torn
# down on one device (every message both sent and received on port 1):
# N REQ/REP/RTU and N DREP each way, a DREQ for each DREP (both ends may
# start the disconnect at once, so not more than 2N), no REJ, no MRA and
# no retries or duplicates.
cm_conns() {
	local dev=$1 n=$2 dir m
	for dir in cm_tx_msgs cm_rx_msgs; do
		for m in req rep rtu drep; do expect "$dev" $dir $m -eq "$n"; done
		expect "$dev" $dir dreq -ge "$n"
		expect "$dev" $dir dreq -le $((2 * n))
		expect "$dev" $dir rej -eq 0
		expect "$dev" $dir mra -eq 0
	done
	for m in req rep rtu dreq drep; do
		expect "$dev" cm_tx_retries $m -eq 0
	done
	for m in req rep rtu dreq drep; do
		expect "$dev" cm_rx_duplicates $m -eq 0
	done
}
