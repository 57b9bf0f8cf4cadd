#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The CM's counter files in sysfs are the ones its ABI document names
# (Documentation/ABI/testing/sysfs-class-infiniband-cm), no more and no
# fewer, each read-only and reading as one decimal number.  The stock
# module has all of them but cm_rx_drops/, which is ours.  So is
# cm_policy/: its files are the documented ones, read as the defaults,
# take a good value, and refuse a bad one with EINVAL.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/../../../.." && pwd)
abi=$top/Documentation/ABI/testing/sysfs-class-infiniband-cm
names=$top/tools/testing/man/check_abi_names.py

net_one
port=/sys/class/infiniband/rxe0/ports/1
(cd "$port" && find cm_* -mindepth 1 -maxdepth 1 -not -path 'cm_policy/*' | sort) >"$T/files"
log "$(wc -l <"$T/files") counter files under $port"
python3 "$names" "$abi" --files "$T/files" >"$T/diff" 2>&1
if [ "$IBCM_MODE" = stock ]; then
	check "stock: the files are the documented ones but cm_rx_drops/" \
		test "$(cat "$T/diff")" = "cm_rx_drops/: documented, not in sysfs"
else
	check "the files are exactly the documented ones" \
		grep -q "^52 files in 5 groups" "$T/diff"
fi
sed 's/^/# /' "$T/diff"

bad=''
while IFS= read -r f; do
	grep -qxE '[0-9]+' "$port/$f" || bad="$bad $f"
done <"$T/files"
check "every file reads as one decimal number${bad:+ (not:$bad)}" test -z "$bad"
check "the files are read-only" \
	test -z "$(cd "$port" && find cm_* -path cm_policy -prune -o -type f -perm /222 -print)"

pol=$port/cm_policy
if [ "$IBCM_MODE" = stock ]; then
	check "stock: no cm_policy/" test ! -e "$pol"
	finish
fi
want=$(grep -oE '^What:.*/cm_policy/[a-z_]+$' "$abi" | sed 's|.*/||' | sort | tr '\n' ' ')
have=$(find "$pol" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')
log "cm_policy/: $have(documented: $want)"
check "cm_policy/ has the documented files" test "$have" = "$want"
check "cm_policy/ reads as the defaults" \
	test "$(cd "$pol" && cat max_retries max_response_timeout schedule \
		backoff_max_ms backoff_jitter | tr '\n' ' ')" = "15 31 fixed 65536 25 "
# A bad value: EINVAL, the value unchanged, a message that says why.
err=$( (echo 16 >"$pol/max_retries") 2>&1)
log "echo 16 > max_retries: $err"
check "a retry count beyond 15 is refused (EINVAL)" \
	grep -q 'Invalid argument' <<<"$err"
check "and the value stays" test "$(cat "$pol/max_retries")" = 15
check "the kernel says which file and what it takes" \
	grep -q 'rxe0 port 1: cm_policy/max_retries: "16" is not a number from 0 to 15' \
	<(dmesg)
err=$( (echo sometimes >"$pol/schedule") 2>&1)
check "an unknown schedule is refused (EINVAL)" \
	grep -q 'Invalid argument' <<<"$err"
echo backoff >"$pol/schedule"
echo 3 >"$pol/max_retries"
check "good values read back" \
	test "$(cat "$pol/schedule" "$pol/max_retries" | tr '\n' ' ')" = "backoff 3 "
echo fixed >"$pol/schedule"
echo 15 >"$pol/max_retries"
finish
