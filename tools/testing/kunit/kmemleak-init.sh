#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# /init of the debug KUnit kernel (run.sh --debug): the kernel comes here
# after the KUnit suites (kunit_shutdown=none).  One kmemleak scan, its
# report on the console, then off: with QEMU's -no-reboot a reboot ends it.
bb=/bin/busybox
$bb mount -t sysfs sysfs /sys
$bb mount -t debugfs debugfs /sys/kernel/debug
# kmemleak reports only objects older than five seconds, and only those
# whose contents did not change since the scan before: every object's
# checksum changes at its first scan, so it takes two.
$bb sleep 6
echo scan >/sys/kernel/debug/kmemleak
echo scan >/sys/kernel/debug/kmemleak
echo "ib_cm kunit: kmemleak report follows"
$bb cat /sys/kernel/debug/kmemleak
echo "ib_cm kunit: kmemleak scan done"
$bb reboot -f
