#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Counts per connection that need no sampling, from what guest-bench.sh's
counts case left in DIR over one cmtime run of CONNS connections made:

  DIR/stat.csv          perf stat -a -x, of software tracepoints over the
                        whole guest: switches, wake-ups, work items,
                        allocations, timers, MADs, address handles
  DIR/ibcm-events.txt   perf script -F event,trace of the allocations
                        and work items whose call site or function lies in
                        ib_cm's text (filtered when recorded)
  DIR/cm-counters.txt   "DEV GROUP MSG DELTA" of the CM's sysfs counters
  DIR/kallsyms          /proc/kallsyms of the run, for addresses that perf
                        printed unresolved

usage: counts.py DIR CONNS

Writes DIR/counts.txt, "metric<TAB>value per connection" lines (report.py
reads them), and prints a one-line summary.
"""
import bisect
import collections
import os
import re
import sys

# perf stat's events, summed into the rows of the table.
STAT_ROWS = (
    ("context switches", ("sched:sched_switch",)),
    ("wake-ups", ("sched:sched_wakeup", "sched:sched_wakeup_new")),
    ("work items queued", ("workqueue:workqueue_queue_work",)),
    ("work items run", ("workqueue:workqueue_execute_start",)),
    ("allocations (kmalloc, kmem_cache_alloc)", ("kmem:kmalloc", "kmem:kmem_cache_alloc")),
    ("timers armed (timer, hrtimer)", ("timer:timer_start", "timer:hrtimer_start")),
    ("MADs posted (ib_mad_ib_send_mad)", ("ib_mad:ib_mad_ib_send_mad",)),
    ("MADs received (ib_mad_recv_done_handler)", ("ib_mad:ib_mad_recv_done_handler",)),
    ("address handles made (rdma_create_ah)", ("ibcm_bench:rdma_create_ah",)),
)
EVENT = re.compile(r"(\w+:\w+):")
SITE = re.compile(r"call_site=(\S+)")
FUNC = re.compile(r"function[= ](\S+)")
BYTES = re.compile(r"bytes_alloc=(\d+)")


class Kallsyms:
    def __init__(self, path):
        rows = []
        try:
            with open(path) as f:
                for line in f:
                    p = line.split()
                    if len(p) >= 3 and p[1] in "tTwW":
                        rows.append((int(p[0], 16), p[2]))
        except OSError:
            pass
        rows.sort()
        self.addrs = [a for a, _ in rows]
        self.names = [n for _, n in rows]

    def name(self, text):
        """A function's name from perf's 'name+0x1f' or a bare address."""
        text = text.split("+0x", 1)[0]
        try:
            ip = int(text, 16)
        except ValueError:
            return text
        i = bisect.bisect_right(self.addrs, ip) - 1
        return self.names[i] if i >= 0 else text


def read_stat(path):
    counts = {}
    with open(path) as f:
        for line in f:
            p = line.strip().split(",")
            if len(p) < 3 or line.startswith("#"):
                continue
            try:
                counts[p[2]] = counts.get(p[2], 0) + int(float(p[0]))
            except ValueError:
                pass  # <not counted>, <not supported>
    return counts


def main():
    d, conns = sys.argv[1], max(int(sys.argv[2]), 1)
    syms = Kallsyms(os.path.join(d, "kallsyms"))
    rows = []
    stat = read_stat(os.path.join(d, "stat.csv"))
    for label, events in STAT_ROWS:
        if any(e in stat for e in events):
            rows.append((label, sum(stat.get(e, 0) for e in events) / conns))

    sent = retries = 0
    try:
        with open(os.path.join(d, "cm-counters.txt")) as f:
            for line in f:
                p = line.split()
                if len(p) == 4 and p[3].lstrip("-").isdigit():
                    if p[1] == "cm_tx_msgs":
                        sent += int(p[3])
                    elif p[1] == "cm_tx_retries":
                        retries += int(p[3])
        rows.append(("CM messages sent (cm_tx_msgs)", sent / conns))
        rows.append(("CM retries (cm_tx_retries)", retries / conns))
    except OSError:
        pass

    allocs, nbytes = collections.Counter(), 0
    queued, run = collections.Counter(), collections.Counter()
    with open(os.path.join(d, "ibcm-events.txt")) as f:
        for line in f:
            ev = EVENT.search(line)
            if not ev:
                continue
            ev = ev.group(1)
            if ev.startswith("kmem:"):
                m = SITE.search(line)
                allocs[syms.name(m.group(1)) if m else "?"] += 1
                b = BYTES.search(line)
                nbytes += int(b.group(1)) if b else 0
            elif ev.startswith("workqueue:"):
                m = FUNC.search(line)
                fn = syms.name(m.group(1)) if m else "?"
                (queued if ev.endswith("queue_work") else run)[fn] += 1
    rows.append(("ib_cm: allocations", sum(allocs.values()) / conns))
    rows.append(("ib_cm: bytes allocated", nbytes / conns))
    rows.append(("ib_cm: work items queued", sum(queued.values()) / conns))
    rows.append(("ib_cm: work items run", sum(run.values()) / conns))
    for site, c in sorted(allocs.items(), key=lambda x: -x[1]):
        rows.append(("ib_cm: allocations at %s" % site, c / conns))
    for fn in sorted(set(queued) | set(run)):
        rows.append(("ib_cm: work %s queued" % fn, queued[fn] / conns))

    with open(os.path.join(d, "counts.txt"), "w") as f:
        for label, v in rows:
            f.write("%s\t%.4f\n" % (label, v))
    short = dict(rows)
    lost = ""
    try:
        with open(os.path.join(d, "script.err")) as f:
            if "lost" in f.read().lower():
                lost = " (perf lost events: see script.err)"
    except OSError:
        pass
    print("per conn: %.1f switches, %.1f wake-ups, %.2f ib_cm allocations, "
          "%.2f ib_cm work items, %.2f MADs posted, %.2f AHs made%s" % (
              short.get("context switches", 0), short.get("wake-ups", 0),
              short["ib_cm: allocations"], short["ib_cm: work items queued"],
              short.get("MADs posted (ib_mad_ib_send_mad)", 0),
              short.get("address handles made (rdma_create_ah)", 0), lost))
    return 0


if __name__ == "__main__":
    sys.exit(main())
