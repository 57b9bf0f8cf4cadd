#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Add up, per connection, the time a cmtime run spent in the ib_core
calls any CM has to make: what the function_graph tracer recorded (its
text output, in DIR/trace.txt) with only those functions in
set_ftrace_filter.

usage: floor.py DIR CONNS

A line of the trace is one call: "func();" with its duration, or, when
other traced calls came between its entry and its exit (an interrupt's,
or other tasks' while it slept), "func() {" and a closing
"} /* func */" with the duration.  Only each task's outermost calls are
added up, so nothing counts twice.  Under -icount shift=1 the trace clock
counts instructions (1 us = 500); each call's time includes some of the
tracer's own work on entry and exit, the same for both modules, and the
interrupts that came meanwhile, but not the time its task slept (the
tracer's sleep-time option is off: ib_init_ah_attr_from_wc() waits for
the neighbour's address in another task).

Writes DIR/floor.txt, "KIND metric<TAB>value" lines per connection: KIND
"all" (microseconds in all), "group" (microseconds per group), "call"
(calls and microseconds per function); prints one line.
"""
import collections
import os
import re
import sys

# Which calls belong to which part of the floor.
GROUPS = (
    ("MAD layer: send buffers, posts, cancels",
     ("ib_create_send_mad", "ib_post_send_mad", "ib_free_send_mad", "ib_modify_mad")),
    ("MAD layer: received buffers freed", ("ib_free_recv_mad",)),
    ("address handles and address resolution",
     ("rdma_create_ah", "rdma_destroy_ah_user", "ib_init_ah_attr_from_wc",
      "ib_init_ah_attr_from_path")),
)
FUNCS = [f for _, fs in GROUPS for f in fs]

DURATION = re.compile(r"([0-9]+\.[0-9]+) us")
# A module's function comes with its name: "rdma_create_ah [ib_core]();".
NAME = r"([A-Za-z_][A-Za-z0-9_.]*)(?: \[[^]]*\])?"
CALL = re.compile(r"\|\s*" + NAME + r"\(\);")
OPEN = re.compile(r"\|\s*" + NAME + r"\(\) \{")
CLOSE = re.compile(r"\|\s*\} /\* " + NAME + r" \*/")
SWITCH = re.compile(r"=>\s*(\S+)\s*$")


def parse(path):
    calls, us = collections.Counter(), collections.Counter()
    # A call that sleeps stays open while other tasks' calls are traced:
    # nesting is per task, and the tracer marks each switch ("a => b").
    depth = collections.Counter()
    task = ""

    def add(name, line):
        d = DURATION.search(line)
        if depth[task] == 0 and d:
            calls[name] += 1
            us[name] += float(d.group(1))

    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            m = SWITCH.search(line)
            if m:
                task = m.group(1)
            elif CALL.search(line):
                add(CALL.search(line).group(1), line)
            elif OPEN.search(line):
                depth[task] += 1
            elif CLOSE.search(line):
                depth[task] = max(depth[task] - 1, 0)
                add(CLOSE.search(line).group(1), line)
    return calls, us


def main():
    outdir, conns = sys.argv[1], max(int(sys.argv[2]), 1)
    calls, us = parse(os.path.join(outdir, "trace.txt"))
    total = 0.0
    with open(os.path.join(outdir, "floor.txt"), "w") as f:
        for group, funcs in GROUPS:
            g = sum(us[fn] for fn in funcs)
            total += g
            f.write("group %s us\t%.3f\n" % (group, g / conns))
            for fn in funcs:
                f.write("call %s calls\t%.3f\n" % (fn, calls[fn] / conns))
                f.write("call %s us\t%.3f\n" % (fn, us[fn] / conns))
        f.write("all floor us\t%.3f\n" % (total / conns))
    print("floor_us_per_conn=%.2f %s" % (total / conns, " ".join(
        "%s=%.2f/%.2fus" % (fn, calls[fn] / conns, us[fn] / conns)
        for fn in FUNCS if calls[fn])))
    return 0 if sum(calls.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
