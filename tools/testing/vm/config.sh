# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash disable=SC2034
# Shared settings for the ib_cm VM harness. Sourced, not executed.
# The one place that names the target kernel.

IBCM_KVER=${IBCM_KVER:-7.2.13+deb14-amd64}
IBCM_SUITE=${IBCM_SUITE:-sid}
IBCM_CACHE=${IBCM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ib_cm}
IBCM_ROOT=${IBCM_ROOT:-$IBCM_CACHE/sid-root}
IBCM_VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
IBCM_SRC=$(cd "$IBCM_VM_DIR/../../.." && pwd)
