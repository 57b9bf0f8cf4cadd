#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# "make patch": this module as a git format-patch series against the Linux
# source of the target kernel (linux-source-7.2 in the sid root), the way
# it would be sent to the RDMA maintainers:
#
#   0001 replaces the CM: cm.c, cm_msgs.h, cm_trace.h, include/rdma/ib_cm.h
#        (cm_trace.c goes: cm.c defines its own tracepoints), the core's
#        Makefile and a MAINTAINERS entry;
#   0002 adds the KUnit suites with their Kconfig symbol,
#        CONFIG_INFINIBAND_CM_KUNIT_TEST;
#   0003 documents the CM's sysfs counters in Documentation/ABI.
#
# usage: mkpatch.sh [OUTDIR]     (default out/patch; the series is replaced)
#
# Apply it to a kernel tree with "git am OUTDIR/*.patch" (or "patch -p1 <"
# each file in order).  The KUnit harness (tools/testing/kunit/run.sh)
# builds its kernel from exactly this series.  The series is made in a
# small git repository of the files it touches, under the cache; the
# patches apply to the whole tree all the same.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/testing/vm/config.sh
. "$here/../vm/config.sh"

out=$(realpath -m "${1:-$IBCM_SRC/out/patch}")
series=$(echo "$IBCM_KVER" | cut -d. -f1-2)
tarball=/usr/src/linux-source-$series.tar.xz
work=$IBCM_CACHE/patch
base=$work/base-$series
repo=$work/repo

# Kernel files the series changes, and where our files go.
BASE_FILES="drivers/infiniband/core/cm.c drivers/infiniband/core/cm_msgs.h
drivers/infiniband/core/cm_trace.h drivers/infiniband/core/cm_trace.c
drivers/infiniband/core/Makefile drivers/infiniband/Kconfig
include/rdma/ib_cm.h MAINTAINERS"
CORE=drivers/infiniband/core

log() { echo "mkpatch: $*" >&2; }

"$here/../vm/mkroot.sh" >&2
if [ ! -f "$IBCM_ROOT$tarball" ]; then
	log "$tarball is missing from the sid root (expected for $IBCM_KVER)"
	exit 1
fi

# The pristine files, once per source package.
stamp="$tarball $(stat -c '%s %Y' "$IBCM_ROOT$tarball")"
if [ ! -f "$base/.stamp" ] || [ "$(cat "$base/.stamp")" != "$stamp" ]; then
	log "extracting the files the series touches from $tarball"
	rm -rf "$base" && mkdir -p "$base"
	pats=()
	for f in $BASE_FILES; do pats+=("linux-source-$series/$f"); done
	tar -xJf "$IBCM_ROOT$tarball" -C "$base" --strip-components=1 "${pats[@]}"
	echo "$stamp" >"$base/.stamp"
fi

# git, with a fixed identity and dates from our own history, so that the
# same sources give the same series.
author=$(git -C "$IBCM_SRC" log -1 --format='%an <%ae>' 2>/dev/null ||
	 echo 'ib_cm <ib_cm@localhost>')
date=$(git -C "$IBCM_SRC" log -1 --format=%cD 2>/dev/null || date -R)
g() {
	GIT_AUTHOR_NAME=${author% <*} GIT_AUTHOR_EMAIL=${author##*<} \
	GIT_COMMITTER_NAME=${author% <*} GIT_COMMITTER_EMAIL=${author##*<} \
	GIT_AUTHOR_DATE=$date GIT_COMMITTER_DATE=$date \
		git -C "$repo" -c core.autocrlf=false -c commit.gpgsign=false "$@"
}
g_commit() {
	g add -A
	g commit -q -s -F -
}

rm -rf "$repo"
mkdir -p "$repo"
cp -a "$base/." "$repo/"
rm -f "$repo/.stamp"
g init -q
g_commit <<<"Linux $series (linux-source-$series)"
g tag base

# edit_tree: run the Python on stdin in $repo, where edit(PATH, OLD, NEW)
# replaces the one OLD in PATH with NEW (and fails if OLD is not there
# exactly once).
edit_tree() {
	python3 -c "import sys
repo = sys.argv[1]
def edit(path, old, new):
    p = repo + '/' + path
    s = open(p).read()
    if s.count(old) != 1:
        sys.exit('mkpatch: %s: cannot find %r' % (path, old))
    open(p, 'w').write(s.replace(old, new))
$(cat)" "$repo"
}

# 0001: the CM itself.
cp "$IBCM_SRC/cm.c" "$IBCM_SRC/cm_msgs.h" "$IBCM_SRC/cm_trace.h" "$repo/$CORE/"
cp "$IBCM_SRC/include/rdma/ib_cm.h" "$repo/include/rdma/ib_cm.h"
rm "$repo/$CORE/cm_trace.c"
edit_tree <<'EOF'
edit('drivers/infiniband/core/Makefile',
     'ib_cm-y :=\t\t\tcm.o cm_trace.o\n',
     'ib_cm-y :=\t\t\tcm.o\nCFLAGS_cm.o +=\t\t\t-I$(src)\n')
edit('MAINTAINERS', '\nINFINIBAND SUBSYSTEM\n',
     '\nINFINIBAND COMMUNICATION MANAGER\n'
     'L:\tlinux-rdma@vger.kernel.org\n'
     'S:\tSupported\n'
     'F:\tdrivers/infiniband/core/cm.c\n'
     'F:\tdrivers/infiniband/core/cm_msgs.h\n'
     'F:\tdrivers/infiniband/core/cm_trace.h\n'
     'F:\tinclude/rdma/ib_cm.h\n'
     '\nINFINIBAND SUBSYSTEM\n')
EOF
g_commit <<'EOF'
RDMA/cm: Replace the Communication Manager

A Communication Manager of its own design, with the same API and ABI as
the one it replaces (the 16 exports and every type they reach keep their
layout), the same messages on the wire, and the same counters and
tracepoints, plus a counter group that says why received MADs were
dropped.  Messages are read and written through the typed definitions of
<rdma/ibta_vol1_c12.h>.  The MAD layer and ib_core are reached through a
transport that each device carries (direct calls for real devices), so
that KUnit drives the same code through a fake device.

How it works, its locking and lifetime rules and how it differs from the
previous CM are described at the top of cm.c.  cm.c defines its own
tracepoints, so cm_trace.c goes.
EOF

# 0002: the KUnit suites and their Kconfig symbol.
cp "$IBCM_SRC"/tools/testing/kunit/cm_kunit_*.c "$repo/$CORE/"
edit_tree <<'EOF'
edit('drivers/infiniband/Kconfig', '\nconfig INFINIBAND_USER_MAD\n',
     '\nconfig INFINIBAND_CM_KUNIT_TEST\n'
     '\ttristate "KUnit tests for the InfiniBand Communication Manager" if !KUNIT_ALL_TESTS\n'
     '\tdepends on KUNIT\n'
     '\tdefault KUNIT_ALL_TESTS\n'
     '\thelp\n'
     '\t  KUnit suites for the Communication Manager (ib_cm): its wire\n'
     '\t  format, timers and listen table, API misuse, and the protocol\n'
     '\t  state machine driven through a fake MAD transport.  They are\n'
     '\t  built into ib_cm itself.\n'
     '\n'
     '\t  If unsure, say N.\n'
     '\nconfig INFINIBAND_USER_MAD\n')
edit('MAINTAINERS', 'F:\tdrivers/infiniband/core/cm.c\n',
     'F:\tdrivers/infiniband/core/cm.c\n'
     'F:\tdrivers/infiniband/core/cm_kunit_*.c\n')
EOF
g_commit <<'EOF'
RDMA/cm: Add KUnit suites

The suites pin down the wire format (every field of every message at its
limits, whole messages against byte patterns worked out from the IBTA
tables), the timeout arithmetic, the listen table, API misuse, QP
attributes and hostile input, and drive the protocol state machine
through a fake MAD transport: the active and passive sides, SIDR, LAP and
APR, duplicates and stale connections, the handler contract, and every
state destroyed and every waiting state timed out.

They are compiled into cm.c when CONFIG_INFINIBAND_CM_KUNIT_TEST is set,
so that they reach its static functions; cm.c's own code is the same with
or without them.
EOF

# 0003: the sysfs ABI, once there is a document for it.
abi=Documentation/ABI/testing/sysfs-class-infiniband-cm
if [ -f "$IBCM_SRC/$abi" ]; then
	mkdir -p "$(dirname "$repo/$abi")"
	cp "$IBCM_SRC/$abi" "$repo/$abi"
	python3 - "$repo" "$abi" <<'EOF'
import sys
repo, abi = sys.argv[1], sys.argv[2]
p = repo + '/MAINTAINERS'
s = open(p).read()
old = 'INFINIBAND COMMUNICATION MANAGER\nL:\tlinux-rdma@vger.kernel.org\nS:\tSupported\n'
if s.count(old) != 1:
    sys.exit('mkpatch: MAINTAINERS: no CM entry')
open(p, 'w').write(s.replace(old, old + 'F:\t' + abi + '\n'))
EOF
	g_commit <<'EOF'
Documentation/ABI: Document the CM's sysfs counters

The per-port counter groups of the Communication Manager under
/sys/class/infiniband/<device>/ports/<port>/: the four the CM has always
had (cm_tx_msgs, cm_tx_retries, cm_rx_msgs, cm_rx_duplicates) and
cm_rx_drops, which says why received MADs were dropped.
EOF
fi

rm -rf "$out"
mkdir -p "$out"
g format-patch -q --no-signature -o "$out" base..HEAD
ls "$out"/*.patch
