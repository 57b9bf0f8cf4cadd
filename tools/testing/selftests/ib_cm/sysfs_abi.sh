#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The CM's counter files in sysfs are the ones its ABI document names
# (Documentation/ABI/testing/sysfs-class-infiniband-cm), no more and no
# fewer, each read-only and reading as one decimal number.  The stock
# module has all of them but cm_rx_drops/, which is ours.
# shellcheck source=tools/testing/selftests/ib_cm/lib.sh
. "$(dirname "$0")/lib.sh"

top=$(cd "$(dirname "$0")/../../../.." && pwd)
abi=$top/Documentation/ABI/testing/sysfs-class-infiniband-cm
names=$top/tools/testing/man/check_abi_names.py

net_one
port=/sys/class/infiniband/rxe0/ports/1
(cd "$port" && ls -d cm_*/*) >"$T/files"
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
	test -z "$(cd "$port" && find cm_* -type f -perm /222)"
finish
