#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Documentation checks, as TAP:
#  - kernel-doc -none -Wall is silent on include/rdma/ib_cm.h, cm.c and
#    cm_msgs.h;
#  - mkman.sh makes a page for each of the 16 exports and ib_cm_handler,
#    with SYNOPSIS, DESCRIPTION and a SEE ALSO naming the other 16, and
#    every page renders with man -l without a groff warning (man-db of
#    the sid root if present);
#  - Documentation/infiniband/ib_cm.rst is valid reStructuredText;
#  - the state transition tables of that document match those of cm.c
#    (check_transitions.py);
#  - Documentation/ABI/testing/sysfs-class-infiniband-cm passes the
#    kernel's ABI checker (get_abi.py validate) without a warning, and
#    names every counter file cm.c creates (check_abi_names.py).
# Run from anywhere; exits non-zero if any check fails.
set -uo pipefail
# shellcheck source=tools/testing/man/common.sh
. "$(dirname "$0")/common.sh"
cd "$IBCM_SRC" || exit 2

out=$IBCM_SRC/out/man
rst=Documentation/infiniband/ib_cm.rst
mkdir -p "$out"
n=0
failed=0

# ok|notok DESCRIPTION [DETAILS...]: one TAP line, details as comments.
result() {
	local verdict=$1 what=$2
	shift 2
	n=$((n + 1))
	if [ "$verdict" = ok ]; then
		echo "ok $n - $what"
	else
		failed=$((failed + 1))
		echo "not ok $n - $what"
	fi
	[ $# -eq 0 ] || printf '%s\n' "$@" | sed 's/^/#   /'
}

kdoc=$(ibcm_kernel_doc) || {
	echo "Bail out! kernel-doc not available"
	exit 1
}

for f in include/rdma/ib_cm.h cm.c cm_msgs.h; do
	msgs=$(python3 "$kdoc" -none -Wall "$f" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -z "$msgs" ]; then
		result ok "kernel-doc -none -Wall $f is silent"
	else
		result notok "kernel-doc -none -Wall $f is silent (exit $rc)" "$msgs"
	fi
done

if msgs=$("$IBCM_MAN_DIR/mkman.sh" "$out" 2>&1); then
	result ok "mkman.sh generates the pages"
else
	result notok "mkman.sh generates the pages" "$msgs"
fi

# Render every page in one go (entering the root costs a little), one
# "file<TAB>exit<TAB>lines<TAB>warnings" line each.
render=$out/render.txt
# shellcheck disable=SC2016 # expanded by the inner shell
ibcm_manenv bash -c '
	for f in "$1"/man9/*.9; do
		[ -e "$f" ] || continue
		w=$(MANWIDTH=80 man -l --warnings "$f" 2>&1 >"$f.txt")
		rc=$?
		printf "%s\t%s\t%s\t%s\n" "${f##*/}" "$rc" \
			"$(wc -l <"$f.txt")" "$(echo "$w" | tr "\n" " ")"
		rm -f "$f.txt"
	done' render "$out" >"$render" 2>&1

for name in $IBCM_API_PAGES; do
	page=$out/man9/$name.9
	if [ ! -f "$page" ]; then
		result notok "$name.9 exists"
		continue
	fi
	missing=
	for sec in SYNOPSIS DESCRIPTION '"SEE ALSO"'; do
		grep -Eq "^\.SH \"?${sec//\"/}\"?\$" "$page" || missing="$missing $sec"
	done
	# SEE ALSO must name every other API page.
	seealso=$(sed -n '/^\.SH "SEE ALSO"/,$p' "$page")
	for other in $IBCM_API_PAGES; do
		[ "$other" = "$name" ] && continue
		grep -q "^\.BR $other (9)" <<<"$seealso" ||
			missing="$missing see-also:$other"
	done
	if [ -n "$missing" ]; then
		result notok "$name.9 has SYNOPSIS, DESCRIPTION and SEE ALSO" \
			"missing:$missing"
	else
		result ok "$name.9 has SYNOPSIS, DESCRIPTION and SEE ALSO"
	fi
done

while IFS=$'\t' read -r file rc lines warn; do
	if [ "$rc" = 0 ] && [ "${lines:-0}" -gt 5 ] && [ -z "${warn// /}" ]; then
		result ok "man -l --warnings $file renders cleanly"
	else
		result notok "man -l --warnings $file renders cleanly" \
			"exit $rc, $lines lines, warnings: $warn"
	fi
done < <(grep -P '^\S+\.9\t' "$render")
if ! grep -qP '^ib_cm_handler\.9\t' "$render"; then
	result notok "man pages were rendered" "$(cat "$render")"
fi

# reStructuredText: docutils from python3 on the PATH or Debian's.
py=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import docutils' 2>/dev/null; then
		py=$p
		break
	fi
done
if [ -z "$py" ] && [ -z "${IBCM_NO_INSTALL:-}" ] && [ "$(id -u)" = 0 ] &&
   command -v apt-get >/dev/null; then
	echo "# installing python3-docutils" >&2
	{ apt-get install -y -qq python3-docutils ||
	  { apt-get update -qq && apt-get install -y -qq python3-docutils; }; } \
		>/dev/null 2>&1
	/usr/bin/python3 -c 'import docutils' 2>/dev/null && py=/usr/bin/python3
fi
if [ ! -f "$rst" ]; then
	result notok "$rst exists"
elif [ -z "$py" ]; then
	n=$((n + 1))
	echo "ok $n - $rst is valid reStructuredText # SKIP no docutils"
else
	msgs=$("$py" -m docutils --halt=warning --report=warning \
		"$rst" "$out/ib_cm.html" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -z "$msgs" ]; then
		result ok "$rst is valid reStructuredText"
	else
		result notok "$rst is valid reStructuredText" "$msgs"
	fi
fi

if [ -f "$rst" ]; then
	if msgs=$(python3 "$IBCM_MAN_DIR/check_transitions.py" "$rst" cm.c \
			cm_trace.h include/rdma/ib_cm.h 2>&1); then
		result ok "transition tables in $rst match cm.c" "$msgs"
	else
		result notok "transition tables in $rst match cm.c" "$msgs"
	fi
fi

abi=Documentation/ABI/testing/sysfs-class-infiniband-cm
if [ ! -f "$abi" ]; then
	result notok "$abi exists"
else
	# get_abi.py reads a directory: give it this file alone.
	rm -rf "$out/abi"
	mkdir -p "$out/abi"
	cp "$abi" "$out/abi/"
	msgs=$(python3 "${kdoc%/scripts/kernel-doc}/tools/docs/get_abi.py" \
		-D "$out/abi" validate 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && [ -z "$msgs" ]; then
		result ok "get_abi.py validate $abi is silent"
	else
		result notok "get_abi.py validate $abi is silent (exit $rc)" "$msgs"
	fi
	if msgs=$(python3 "$IBCM_MAN_DIR/check_abi_names.py" "$abi" cm.c 2>&1); then
		result ok "$abi names every counter of cm.c" "$msgs"
	else
		result notok "$abi names every counter of cm.c" "$msgs"
	fi
fi

echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
