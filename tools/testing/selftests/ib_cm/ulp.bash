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
tln() { timeout "$ULP_TIMEOUT" ln -s "$1" "$2" || { log "ln -s $1 $2 failed"; return 1; }; }
# The removals are idempotent (the teardown may run twice); they say why
# when something that is there cannot be removed.
trmdir() {
	[ -d "$1" ] || return 0
	timeout "$ULP_TIMEOUT" rmdir "$1" 2>"$T/rmdir.err" ||
		{ log "rmdir $1: $(cat "$T/rmdir.err")"; return 1; }
}
trm() {
	[ -L "$1" ] || return 0
	timeout "$ULP_TIMEOUT" rm -f "$1" 2>"$T/rm.err" ||
		{ log "rm $1: $(cat "$T/rm.err")"; return 1; }
}

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
		[ -d "/sys/module/$m" ] || continue
		if ! timeout "$ULP_TIMEOUT" modprobe -r "$m"; then
			log "$m: refcnt $(cat "/sys/module/$m/refcnt")," \
				"holders: $(echo "/sys/module/$m/holders"/*)"
			find $CFS -mindepth 2 -maxdepth 5 -type d -not -path '*/alua*' \
				-not -path '*/statistics*' 2>/dev/null | head -n 30 | sed 's/^/# configfs: /'
		fi
		check "$m unloaded" test ! -d "/sys/module/$m"
	done
}

# LIO's backend modules: target_core_mod loads all of them when its
# configfs tree is first used, and each holds a reference on it.
# shellcheck disable=SC2034 # used by the tests that source this
LIO_BACKENDS=(target_core_iblock target_core_file target_core_pscsi target_core_user)

# no_cm_ids: assert that no rdma_cm id is left (no connection, no listener).
no_cm_ids() {
	local ids
	ids=$(timeout 10 rdma resource show cm_id 2>&1)
	[ -z "$ids" ] || printf '%s\n' "$ids" | sed 's/^/# cm_id left: /'
	check "no rdma_cm ids left" test -z "$ids"
}

# cm_conns DEV N: assert the CM traffic of N connections set up and torn
# down on one device (every message both sent and received on port 1):
# N REQ/REP/RTU each way, no REJ, no MRA, no retries, no duplicates.
# Teardown: each connection gets a DREQ and a DREP; when both ends start
# the disconnect at once each sends a DREQ, and each may answer the
# other's with a DREP, so N <= DREP <= DREQ <= 2N.
cm_conns() {
	local dev=$1 n=$2 dir m dreq drep
	for dir in cm_tx_msgs cm_rx_msgs; do
		for m in req rep rtu; do expect "$dev" $dir $m -eq "$n"; done
		dreq=$(delta "$dev" $dir dreq)
		drep=$(delta "$dev" $dir drep)
		check "$dev $dir: $n <= DREP ($drep) <= DREQ ($dreq) <= $((2 * n))" \
			test "$n" -le "$drep" -a "$drep" -le "$dreq" -a "$dreq" -le $((2 * n))
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

# cm_refs_before: the CM modules' references before the test loads its
# ULPs, in $refs0, for ulp_teardown.
cm_refs_before() {
	refs0=$(cm_refs)
	log "CM modules before: $refs0"
}

# ulp_teardown MODULE...: the test's own ulp_cleanup and MODULEs unloaded;
# then the CM modules' references are those of cm_refs_before and no
# rdma_cm id is left.
ulp_teardown() {
	local refs1
	ulp_cleanup
	rmmods "$@"
	refs1=$(cm_refs)
	log "CM modules after: $refs1"
	check "CM module references as before" test "$refs1" = "$refs0"
	no_cm_ids
}

# ---- the NVMe-oF host (nvme_rdma.sh, stress/nvme_recreate.sh) -------------
# Of the subsystem $NQN, served at $IP0 port $PORT.

# nvme_state NVME: the controller's state, "gone" once it has gone.
nvme_state() { cat "/sys/class/nvme/$1/state" 2>/dev/null || echo gone; }

# nvme_ctrl: the name (nvmeN) of the controller connected to $NQN.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/subsysnqn" ] || continue
		if [ "$(cat "$c/subsysnqn")" = "$NQN" ]; then
			basename "$c"
			return 0
		fi
	done
	return 1
}

# nvme_ns_dev [SECONDS]: the block device of namespace 1 of $NQN (the
# multipath head or the controller's own namespace), once it and its
# device node have appeared, within SECONDS (30).
# shellcheck disable=SC2120 # SECONDS has a default
nvme_ns_dev() {
	local b
	for _ in $(seq $((${1:-30} * 5))); do
		for b in /sys/block/nvme*n1; do
			case ${b##*/} in *c*) continue ;; esac
			# A multipath head's parent is the subsystem, a plain
			# namespace's the controller: both show subsysnqn.
			if [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] &&
				[ -b "/dev/${b##*/}" ]; then
				echo "/dev/${b##*/}"
				return 0
			fi
		done
		sleep 0.2
	done
	return 1
}

# nvme_connect [OPTION...]: nvme connect to $NQN with OPTIONs; what nvme
# said when it fails.
# shellcheck disable=SC2120 # as do the OPTIONs
nvme_connect() {
	timeout "$ULP_TIMEOUT" nvme connect -t rdma -a "$IP0" -s "$PORT" -n "$NQN" "$@" \
		>"$T/connect.out" 2>&1 && return 0
	sed 's/^/# nvme connect: /' "$T/connect.out"
	return 1
}

# nvme_disconnect: nvme disconnect from $NQN, which must disconnect one
# controller; what nvme said when it does not.
nvme_disconnect() {
	timeout "$ULP_TIMEOUT" nvme disconnect -n "$NQN" >"$T/disconnect.out" 2>&1 &&
		grep -q 'disconnected 1 controller' "$T/disconnect.out" && return 0
	sed 's/^/# nvme disconnect: /' "$T/disconnect.out"
	return 1
}

# nvme_wait_live NVME [SECONDS]: wait until the controller is "live",
# within SECONDS (60); its state when it is not.
nvme_wait_live() {
	for _ in $(seq $((${2:-60} * 5))); do
		[ "$(nvme_state "$1")" = live ] && return 0
		sleep 0.2
	done
	log "$1 state: $(nvme_state "$1")"
	return 1
}
