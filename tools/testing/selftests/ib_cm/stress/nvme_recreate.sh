#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# An NVMe-oF target torn down and set up again under I/O.  nvme-rdma is
# connected to an nvmet subsystem on rxe0 (the same device, as in
# nvme_rdma.sh) with a reconnect delay of 1 s, and a writer runs.  Each
# round removes the port's link to the subsystem (nvmet deletes the
# host's controller: DREQs), the port (the listener goes: the host's
# reconnects are rejected, "invalid service ID") and the subsystem, waits
# until at least one reconnect has been rejected, and re-creates them in
# one of these orders:
#
#   allowed  the subsystem allows the host (attr_allow_any_host=1) before
#            the port is linked: the host's next reconnect must bring the
#            controller back live, and the writer must not see an error.
#   notyet   the port is linked to a subsystem that does not allow the
#            host yet; once a reconnect has reached it (nvmet logs "connect
#            by host ... not allowed") the host is allowed.  That reconnect
#            was a connection the CM set up (REQ, REP, RTU); nvmet fails
#            the NVMe Connect on it with a do-not-retry status, after which
#            nvme-rdma does not reconnect again and deletes the controller.
#   late     the host is allowed right after the port is linked: a race
#            between the host's reconnect and the write; only recorded.
#
# Around each round the test logs the CM's counters (rxe0 carries both
# ends: the host's REQs, RTUs and the target's REPs, REJs), a timeline of
# rdma_cm's trace points (H the host's ids, T the target's) merged with
# the nvme/nvmet lines of the kernel log, and a summary line per round, so
# that a run on our module and one on the stock module compare line by
# line.  What must hold on either: every REQ is answered (none resent, no
# duplicates, no UNREACHABLE), the "allowed" rounds come back live and the
# "notyet" rounds end as nvme-rdma decides on a do-not-retry status.
#
# IBCM_RECREATE_ROUNDS (default 3) rounds of allowed and of notyet each,
# IBCM_RECREATE_LATE (default 1) rounds of late.
#
# What it found (issue 18): a host that does not come back after the
# target is re-created lost a race of the target's set-up order, not a
# CM message.  On both modules every REQ was answered (REJ "invalid
# service ID" while no port listened, REP once one did), none was resent;
# the host gives up exactly when a reconnect lands between the port's
# listener coming up and the host being allowed, as nvmet then fails the
# NVMe Connect with do-not-retry.  Allow the host before linking the port.
# Part of "make stress", not of "make check" (3 minutes a module).
# ibcm-timeout: 400
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/testing/selftests/ib_cm/ulp.bash
. "$(dirname "$0")/../ulp.bash"

ROUNDS=${IBCM_RECREATE_ROUNDS:-3}
LATE=${IBCM_RECREATE_LATE:-1}
NQN=nqn.2014-08.org.ibcm:recreate
PORT=4420
SUBSYS=$CFS/nvmet/subsystems/$NQN
NPORT=$CFS/nvmet/ports/1
# How long a round may take to reach each of its steps, in seconds.
WAIT_REJ=10 WAIT_REFUSED=15 WAIT_OUTCOME=20
# The kernel log's line, in the timeline, once the port's listener is up
# (nvmet-rdma logs it after rdma_listen()).  A reconnect may come before
# the test's own mark that the link is made.
LISTENING=' K nvmet_rdma: enabling port'

CMA_EVENTS="cm_req_handler cm_event_handler cm_send_req cm_send_rep cm_send_rej
	cm_send_rtu cm_disconnect cm_sent_dreq cm_sent_drep cm_id_destroy"

trace_events() {
	local e
	for e in $CMA_EVENTS; do
		echo "$1" 2>/dev/null >"$TRACE/events/rdma_cma/$e/enable"
	done
}

ulp_cleanup() {
	[ -e "$T/stop" ] || touch "$T/stop" 2>/dev/null
	timeout "$ULP_TIMEOUT" nvme disconnect -n "$NQN" >/dev/null 2>&1
	port_down
	subsys_down
	trace_events 0
	echo local 2>/dev/null >"$TRACE/trace_clock"
	return 0
}
trap 'ulp_cleanup; cleanup' EXIT

# ---- the target ----------------------------------------------------------

# subsys_up ALLOW: the subsystem with namespace 1 on /dev/ram0; ALLOW is
# its attr_allow_any_host.  It is the same subsystem each time: the same
# serial, and the namespace the same UUID and NGUID (nvmet makes up a new
# UUID for a new namespace; the host would see "identifiers changed",
# drop the namespace and fail its I/O).
subsys_up() {
	tmkdir "$SUBSYS" &&
		put "$1" "$SUBSYS/attr_allow_any_host" &&
		put ibcmrecreate0001 "$SUBSYS/attr_serial" &&
		tmkdir "$SUBSYS/namespaces/1" &&
		put /dev/ram0 "$SUBSYS/namespaces/1/device_path" &&
		put 4a1c0e6e-8f3b-4d2a-9c1e-5b7d2f60a001 "$SUBSYS/namespaces/1/device_uuid" &&
		put 4a1c0e6e-8f3b-4d2a-9c1e-5b7d2f60a002 "$SUBSYS/namespaces/1/device_nguid" &&
		put 1 "$SUBSYS/namespaces/1/enable"
}

# port_up: the rdma port, linked to the subsystem (which enables it: the
# listener appears).
port_up() {
	tmkdir "$NPORT" &&
		put rdma "$NPORT/addr_trtype" &&
		put ipv4 "$NPORT/addr_adrfam" &&
		put "$IP0" "$NPORT/addr_traddr" &&
		put $PORT "$NPORT/addr_trsvcid" &&
		tln "$SUBSYS" "$NPORT/subsystems/$NQN"
}

# port_down: unlink (nvmet deletes the subsystem's controllers on the port
# and, the port's last link gone, destroys its listener), remove the port.
port_down() {
	trm "$NPORT/subsystems/$NQN"
	trmdir "$NPORT"
}

subsys_down() {
	[ -d "$SUBSYS/namespaces/1" ] && put 0 "$SUBSYS/namespaces/1/enable"
	trmdir "$SUBSYS/namespaces/1"
	trmdir "$SUBSYS"
}

# ---- the host --------------------------------------------------------------

# rconnect: connect with a reconnect delay of 1 s, the controller lost
# after 30 s.
rconnect() { nvme_connect --reconnect-delay=1 --ctrl-loss-tmo=30; }

# up: a live controller and its namespace: $c and $dev.  A controller
# that is not live or has lost its namespace is replaced (once).
up() {
	c=$(nvme_ctrl) || { rconnect && c=$(nvme_ctrl); } || return 1
	nvme_wait_live "$c" 30 && dev=$(nvme_ns_dev 10) && return 0
	log "$c: $(nvme_state "$c"), namespace ${dev:-missing}: connecting afresh"
	timeout "$ULP_TIMEOUT" nvme disconnect -n "$NQN" >/dev/null 2>&1
	wait_gone "/sys/class/nvme/$c" 30
	rconnect && c=$(nvme_ctrl) && nvme_wait_live "$c" 30 && dev=$(nvme_ns_dev 10)
}

# The writer: 4 MiB O_DIRECT passes until $T/stop; never creates a file
# where the device node went.
writer_start() {
	rm -f "$T/stop" "$T/writer.rc" "$T/writer.err"
	(
		ok=0 bad=0
		while [ ! -e "$T/stop" ]; do
			if [ -b "$1" ] && timeout "$ULP_TIMEOUT" dd if="$T/p4" of="$1" bs=1M \
				count=4 oflag=direct conv=notrunc,nocreat status=none 2>>"$T/writer.err"; then
				ok=$((ok + 1))
			else
				bad=$((bad + 1))
				sleep 0.2
			fi
		done
		echo "$ok $bad" >"$T/writer.rc"
	) &
	writer=$!
}

writer_stop() {
	touch "$T/stop"
	timeout 90 tail --pid=$writer -f /dev/null
	read -r w_ok w_bad <"$T/writer.rc" 2>/dev/null || w_ok=0 w_bad=-1
	[ ! -s "$T/writer.err" ] || sort "$T/writer.err" | uniq -c | head -n 5 | sed 's/^/# writer: /'
}

# ---- what the CM did -------------------------------------------------------

# cline FROM TO: every counter that moved, "tx_msgs{req=2 rej=1} ...".
cline() {
	local g m d line out=''
	for g in $CM_GROUPS; do
		line=''
		for m in $CM_MSGS; do
			d=$(snap_diff "$1" "$2" "$g" "$m")
			[ "$d" = 0 ] || line="$line $m=$d"
		done
		[ -z "$line" ] || out="$out ${g#cm_}{${line# }}"
	done
	echo "${out:- none}"
}

# rej_since NAME: REJs sent since snapshot NAME.
rej_since() { delta rxe0 cm_tx_msgs rej "$1"; }

# mark TEXT: a line in the test log and in the trace.  (The trace runs on
# the "global" clock, the kernel log's: a round's first mark goes to the
# kernel log too, and both show in the timeline, to see that they agree.)
mark() {
	echo "ibcm $*" >"$TRACE/trace_marker"
	log "$*"
}

# timeline FILE: the round's rdma_cm trace and the nvme lines of its
# kernel log, by time, relative to the round's first mark: "+SECS SIDE
# EVENT DETAILS", SIDE H for the host's ids, T for the target's, K for the
# kernel log, M for the marks.
timeline() {
	{
		awk '
			/^#/ { next }
			{
				for (i = 1; i <= NF; i++)
					if ($i ~ /^[0-9]+\.[0-9]+:$/)
						break
				if (i >= NF)
					next
				ts = substr($i, 1, length($i) - 1)
				ev = $(i + 1); sub(/:$/, "", ev)
				rest = ""
				for (j = i + 2; j <= NF; j++)
					rest = rest " " $j
				if (ev == "tracing_mark_write") {
					sub(/^ ibcm /, "", rest)
					print ts, "M", rest
					next
				}
				side = "?"
				if (rest ~ / src=[0-9.]+:'$PORT' /)
					side = "T"
				else if (rest ~ / dst=[0-9.]+:'$PORT' /)
					side = "H"
				sub(/^ cm\.id=/, " id=", rest)
				gsub(/ (src|dst)=[^ ]+/, "", rest)
				sub(/ tos=[0-9]+/, "", rest)
				sub(/^cm_/, "", ev)
				print ts, side, ev rest
			}' "$TRACE/trace"
		dmesg | tail -n +$((round_dmesg + 1)) | grep -E 'nvme|nvmet|ibcm:' |
			sed -n 's/^\[ *\([0-9]*\.[0-9]*\)\] \(.*\)$/\1 K \2/p'
	} | sort -s -n -k1,1 >"$1"
	awk 'NR == 1 { t0 = $1 } { $1 = sprintf("%+8.3f", $1 - t0); print "# tl " $0 }' "$1"
}

# first_t FILE REGEX: the time (relative, as timeline prints it) of the
# first line of FILE after the round's first mark matching REGEX, or "-".
first_t() {
	awk -v re="$2" 'NR == 1 { t0 = $1 } $0 ~ re { printf "%.3f\n", $1 - t0; f = 1; exit }
		END { if (!f) print "-" }' "$1"
}

# count FILE REGEX [FROM]: lines of FILE matching REGEX (from the first
# line matching FROM on).
count() {
	awk -v re="$2" -v from="${3:-}" 'from == "" || $0 ~ from { on = 1 }
		on && $0 ~ re { n++ } END { print n + 0 }' "$1"
}

# rejected_after FILE: host ids rejected whose REQ went out after the
# port listened.  (A REQ sent just before may be rejected just after.)
rejected_after() {
	awk -v from="$LISTENING" '$0 ~ from { on = 1 }
		on && $2 == "H" && $3 == "send_req" { sent[$4] = 1 }
		$2 == "H" && / REJECTED / && ($4 in sent) { n++ }
		END { print n + 0 }' "$1"
}

# window FILE: from the port's listening to the mark "re-created" (the
# host allowed, in every order): its length in seconds and the host's
# REQs sent in it, "SECS/REQS".  In order allowed the host was allowed
# before the port listened: the window is empty.
window() {
	awk -v from="$LISTENING" '$0 ~ from && !t0 { t0 = $1 }
		t0 && $2 == "H" && $3 == "send_req" { n++ }
		$2 == "M" && / re-created$/ { t1 = $1; exit }
		END { if (t0 && t1) printf "%.3f/%d\n", t1 - t0, n; else print "-" }' "$1"
}

# ---- one round -------------------------------------------------------------

summaries=()

# round ORDER N
round() {
	local order=$1 r=$2 tag="$1 $2" outcome='' t_out i n tl=$T/tl.$1.$2 allow=0
	local req rep rej d win
	if ! up; then
		result 0 "$tag: controller live, namespace there before the teardown"
		return 1
	fi
	result 1 "$tag: controller live, namespace there before the teardown"
	log "$tag: $c $(nvme_state "$c"), $dev"
	writer_start "$dev"
	sleep 1
	echo >"$TRACE/trace"
	round_dmesg=$(dmesg | wc -l)
	snap rxe0 r0
	echo "ibcm: round $tag: teardown" >/dev/kmsg
	mark "round $tag: teardown"
	port_down
	subsys_down
	mark "round $tag: port and subsystem removed"
	# A reconnect that finds no listener is rejected.
	for ((i = 0; i < WAIT_REJ * 5; i++)); do
		[ "$(rej_since r0)" -ge 1 ] && break
		sleep 0.2
	done
	check "$tag: a reconnect was rejected while no port existed (REJ sent: $(rej_since r0))" \
		test "$(rej_since r0)" -ge 1
	snap rxe0 r1
	[ "$order" = allowed ] && allow=1
	mark "round $tag: re-creating (host allowed: $allow)"
	subsys_up $allow
	port_up
	mark "round $tag: port linked"
	case $order in
	notyet)
		for ((i = 0; i < WAIT_REFUSED * 5; i++)); do
			dmesg | tail -n +$((round_dmesg + 1)) | grep -q 'nvmet: connect by host .* not allowed' && break
			sleep 0.2
		done
		check "$tag: a reconnect reached the port and nvmet refused the host" \
			sh -c "dmesg | tail -n +$((round_dmesg + 1)) | grep -q 'nvmet: connect by host .* not allowed'"
		mark "round $tag: host refused seen; allowing the host"
		put 1 "$SUBSYS/attr_allow_any_host"
		;;
	late)
		put 1 "$SUBSYS/attr_allow_any_host"
		;;
	esac
	mark "round $tag: re-created"
	t_out=${EPOCHREALTIME/./}
	for ((i = 0; i < WAIT_OUTCOME * 10; i++)); do
		case $(nvme_state "$c") in
		live) outcome=live ;;
		gone) outcome=gone ;;
		esac
		[ -n "$outcome" ] && break
		sleep 0.1
	done
	outcome=${outcome:-"still $(nvme_state "$c")"}
	t_out=$(((${EPOCHREALTIME/./} - t_out) / 100000))
	t_out=$((t_out / 10)).$((t_out % 10))
	mark "round $tag: outcome $outcome after ${t_out}s"
	writer_stop
	# Let the messages of the outcome (a refused controller's DREQs) end.
	quiesce 1 10 rxe0
	snap rxe0 r2
	timeline "$tl"
	log "$tag: teardown: $(cline r0 r1)"
	log "$tag: re-creation: $(cline r1 r2)"
	log "$tag: writer: $w_ok passes ok, $w_bad failed"

	# Every REQ answered: each REQ the host sent (less resends) was
	# received and answered by a REP or a REJ; none was resent.
	req=$(($(snap_diff r0 r2 cm_tx_msgs req) - $(snap_diff r0 r2 cm_tx_retries req)))
	rep=$(snap_diff r0 r2 cm_tx_msgs rep)
	rej=$(snap_diff r0 r2 cm_tx_msgs rej)
	check "$tag: no REQ resent ($(snap_diff r0 r2 cm_tx_retries req)) or received twice ($(snap_diff r0 r2 cm_rx_duplicates req))" \
		test "$(snap_diff r0 r2 cm_tx_retries req)" = 0 -a "$(snap_diff r0 r2 cm_rx_duplicates req)" = 0
	check "$tag: every REQ answered: $req REQs, $rep REPs + $rej REJs" test "$req" = $((rep + rej))
	n=$(count "$tl" ' H event_handler .*(UNREACHABLE|CONNECT_ERROR)')
	check "$tag: no host id saw UNREACHABLE or CONNECT_ERROR ($n)" test "$n" = 0
	n=$(rejected_after "$tl")
	check "$tag: no REQ sent once the port listened was rejected ($n)" test "$n" = 0
	case $order in
	allowed)
		check "$tag: controller live again (${t_out}s after the port was linked)" test "$outcome" = live
		check "$tag: writer through the teardown: $w_ok passes, $w_bad failed" \
			test "$w_bad" = 0 -a "$w_ok" -ge 1
		;;
	notyet)
		n=$(count "$tl" ' H event_handler .*ESTABLISHED' "$LISTENING")
		check "$tag: the refused reconnect was an established CM connection ($n)" test "$n" -ge 1
		check "$tag: the host gave up after the do-not-retry status (outcome: $outcome)" \
			test "$outcome" = gone
		;;
	esac
	win=-
	[ "$order" = allowed ] || win=$(window "$tl")
	d="dreq=$(snap_diff r0 r2 cm_tx_msgs dreq)/$(snap_diff r0 r2 cm_tx_retries dreq)"
	d="$d drep=$(snap_diff r0 r2 cm_tx_msgs drep)/$(snap_diff r0 r2 cm_tx_retries drep)"
	summaries+=("$(printf '%-7s %d %-5s t=%-5s win=%-9s h_disc=%-6s req1=%-6s h_req=%d/%d rej8=%d/%d h_est=%d rej=%s rep=%s %s retries{req=%s rep=%s} dups{req=%s} writer=%s/%s' \
		"$order" "$r" "${outcome// /_}" "$t_out" "$win" \
		"$(first_t "$tl" ' H event_handler .*DISCONNECTED')" \
		"$(first_t "$tl" ' H send_req')" \
		"$(count "$tl" ' H send_req')" "$(count "$tl" ' H send_req' "$LISTENING")" \
		"$(count "$tl" ' H event_handler .*REJECTED \(8/8\)')" \
		"$(count "$tl" ' H event_handler .*REJECTED \(8/8\)' "$LISTENING")" \
		"$(count "$tl" ' H event_handler .*ESTABLISHED' "$LISTENING")" \
		"$rej" "$rep" "$d" \
		"$(snap_diff r0 r2 cm_tx_retries req)" "$(snap_diff r0 r2 cm_tx_retries rep)" \
		"$(snap_diff r0 r2 cm_rx_duplicates req)" "$w_ok" "$w_bad")")
	log "summary ${summaries[-1]}"
}

# ---- the run ---------------------------------------------------------------

command -v nvme >/dev/null || skip_all "no nvme-cli"
if command -v fio >/dev/null; then
	log "fio is there but not used: the writer is dd, as in nvme_rdma.sh"
else
	log "no fio in the root: the writer is dd, as in nvme_rdma.sh"
fi
net_one
configfs_up
ram_disk 64
cm_refs_before
modprobe_all nvmet nvmet_rdma nvme_rdma
pattern p4 4
echo 8192 >"$TRACE/buffer_size_kb"
echo 0 >"$TRACE/tracing_on"
echo global >"$TRACE/trace_clock"
trace_events 1
echo 1 >"$TRACE/tracing_on"

check "nvmet subsystem $NQN with /dev/ram0" subsys_up 1
check "nvmet rdma port $IP0:$PORT linked" port_up
check "nvmet-rdma listens on $PORT" wait_listen $PORT
check "nvme connect (reconnect delay 1 s, controller loss 30 s)" rconnect

for r in $(seq "$ROUNDS"); do
	round allowed "$r"
	round notyet "$r"
done
for r in $(seq "$LATE"); do
	round late "$r"
done

log "per round: ORDER N OUTCOME t=secs from re-created to outcome," \
	"win=secs from the port listening to the host allowed/host REQs in them," \
	"h_disc=first host DISCONNECTED, req1=first host REQ (secs from the teardown)," \
	"h_req=host REQs (all/after the port listened), rej8=host REJECTED 8 (all/after)," \
	"h_est=host ESTABLISHED after the port listened, rej/rep sent, dreq/drep sent/resent"
for s in "${summaries[@]}"; do log "summary $s"; done

# ---- teardown: everything must go ----
check "controller live for the final disconnect" up
check "nvme disconnect" nvme_disconnect
check "no controller left" wait_gone "/sys/class/nvme/nvme*" 30
ulp_teardown nvme_rdma nvmet_rdma nvmet brd
finish
