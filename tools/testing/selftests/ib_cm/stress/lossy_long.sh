#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The long loss run of "make stress": lossy_wire.sh with IBCM_NETEM_ROUNDS
# rounds (default 5) instead of one, to catch a failure that comes once in
# a few rounds (a peer left waiting for a disconnect was seen once in five
# before destroy retried its DREQ).  A round takes about 200 s in the VM.
# ibcm-timeout: 3000
export IBCM_NETEM_ROUNDS=${IBCM_NETEM_ROUNDS:-5}
exec "$(dirname "$0")/../lossy_wire.sh"
