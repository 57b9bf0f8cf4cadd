#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The long fuzz run of "make stress": fuzz.sh with a million MADs (seed 2)
# instead of 30000, the same assertions.  Its listener accepts one request
# in 16 rather than one in 2, so that connections waiting for their REP
# to time out do not pile up, and it sends 2500 MADs/s (about 7 minutes).
# Not part of the VM suite, which runs only the scripts one directory up.
#
# At full speed (make stress STRESS_ARGS=IBCM_FUZZ_RATE=0: 3900-4800
# MADs/s here) rxe0 falls behind on either module: after about 80 s its
# answers have used up rxe's 32767 address handles, every send that
# needs one fails (a legitimate rping's rdma_accept() got EINVAL), and
# the stock module's run also lost MADs in rxe0's QP1 receive queue.
#
# A sanitised kernel (kernel.sh: IBCM_TIMEOUT_SCALE above 1) sends 50-90
# MADs a second whatever the rate asked (fuzz.sh), so a million would take
# three to five hours per module: there the default is 50000, 10 to 17
# minutes.  Stop 38 on KCSAN: a million had not been sent after 53 minutes.
# ibcm-timeout: 3000
count=$((${IBCM_TIMEOUT_SCALE:-1} > 1 ? 50000 : 1000000))
export IBCM_FUZZ_COUNT=${IBCM_FUZZ_COUNT:-$count}
export IBCM_FUZZ_SEED=${IBCM_FUZZ_SEED:-2}
export IBCM_FUZZ_ACCEPT_EVERY=${IBCM_FUZZ_ACCEPT_EVERY:-16}
export IBCM_FUZZ_RATE=${IBCM_FUZZ_RATE:-2500}
exec "$(dirname "$0")/../fuzz.sh"
