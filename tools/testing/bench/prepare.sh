#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of "make bench", before the VM boots (run.sh --bench calls it):
# record the settings for the guest and build its helpers, cmhold,
# stormgate.so and cmsettle.so, in the sid root.
#
# usage: prepare.sh OUT
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools/testing/bench/config.sh
. "$here/config.sh"
out=$1

bench_settings >"$out/settings.sh"
"$here/../vm/inroot.sh" gcc-16 -O2 -Wall -Wextra -o "$out/cmhold" \
	"$here/cmhold.c" -lrdmacm
"$here/../vm/inroot.sh" gcc-16 -O2 -Wall -Wextra -shared -fPIC \
	-o "$out/stormgate.so" "$here/stormgate.c"
"$here/../vm/inroot.sh" gcc-16 -O2 -Wall -Wextra -shared -fPIC \
	-o "$out/cmsettle.so" "$here/cmsettle.c"
