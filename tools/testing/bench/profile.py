#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Digest `perf script -F comm,tid,period,ip,sym,dso` output (on stdin) of
a `perf record -e cpu-clock -a -g` run: how much of the CPU went through
the CM, and where.

usage: perf script ... | profile.py DIR CONNS KALLSYMS

A sample counts for the CM when any frame of its call chain is in the
ib_cm module.  Which frames those are is decided by address, from
KALLSYMS (a copy of /proc/kallsyms taken while the module was loaded):
perf finds no module file for an insmod-ed ib_cm.ko and names every
module's symbols as [kernel.kallsyms], and some of ib_cm's function names
(cm_work_handler...) exist in other modules too.  Frames of ib_cm are
shown as "function [ib_cm]".  Writes
  DIR/profile.txt      key value lines: samples, the CM's share, and its
                       CPU time per connection (CONNS connections made)
  DIR/ibcm-chains.txt  within the samples through ib_cm: the leaf
                       functions (self), the ib_cm functions on the chain
                       (inclusive), and the heaviest whole chains
  DIR/folded.txt       every chain folded, outermost first, one
                       "comm;frame;...;frame count" line each (the input
                       of flame graph tools)
"""
import collections
import os
import sys

MODULE = "[ib_cm]"
# Leaf functions of an idle CPU.
IDLE = ("pv_native_safe_halt", "native_safe_halt", "default_idle",
        "cpu_idle_poll", "poll_idle", "acpi_idle_do_entry", "mwait_idle")
TOP = 40


class Module:
    """The address range of the module's text, from kallsyms."""

    def __init__(self, path):
        mine, every = [], []
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 3:
                    continue
                addr = int(p[0], 16)
                every.append(addr)
                if len(p) > 3 and p[3] == MODULE and p[1] in "tT":
                    mine.append(addr)
        self.lo = min(mine) if mine else 1
        top = max(mine) if mine else 0
        # The last function ends before the next symbol, whatever it is.
        self.hi = min([a for a in every if a > top] + [top + 4096])

    def __contains__(self, ip):
        return self.lo <= ip < self.hi


def frame_name(line, module):
    """'ffffffffc0001000 sym+0x10 ([kernel.kallsyms])' -> ('sym', dso),
    the dso being [ib_cm] where the address is the module's."""
    parts = line.split(None, 1)
    rest = parts[1] if len(parts) > 1 else "[unknown]"
    dso = ""
    if rest.endswith(")") and " (" in rest:
        rest, dso = rest.rsplit(" (", 1)
        dso = dso[:-1]
    sym = rest.split("+0x", 1)[0].strip() or "[unknown]"
    try:
        if int(parts[0], 16) in module:
            dso = MODULE
    except ValueError:
        pass
    return sym, dso


def samples(stream, module):
    """Yield (comm, period, [(sym, dso) leaf first]) per sample."""
    head, frames = None, []
    for line in stream:
        if line.startswith("\t"):
            frames.append(frame_name(line.strip(), module))
        elif line.strip():
            if head:
                yield head[0], head[1], frames
            # "comm tid period": comm may contain blanks.
            f = line.split()
            try:
                head = (" ".join(f[:-2]), int(f[-1]))
            except (ValueError, IndexError):
                head = (line.strip(), 0)
            frames = []
    if head:
        yield head[0], head[1], frames


def label(sym, dso):
    return "%s %s" % (sym, dso) if dso == MODULE else sym


def table(title, counter, total, out):
    out.write("\n%s\n" % title)
    out.write("%8s %7s  %s\n" % ("samples", "share", "symbol"))
    for name, n in counter.most_common(TOP):
        out.write("%8d %6.2f%%  %s\n" % (n, 100.0 * n / max(total, 1), name))


def main():
    outdir, conns = sys.argv[1], int(sys.argv[2])
    module = Module(sys.argv[3])
    n = busy = cm = 0
    period = cm_period = 0
    leaf_cm = collections.Counter()
    incl_cm = collections.Counter()
    chains_cm = collections.Counter()
    folded = collections.Counter()
    for comm, per, frames in samples(sys.stdin, module):
        n += 1
        period += per
        if frames and frames[0][0] in IDLE:
            pass
        else:
            busy += 1
        stack = [label(s, d) for s, d in frames]
        folded[";".join([comm] + stack[::-1])] += 1
        if not any(d == MODULE for _, d in frames):
            continue
        cm += 1
        cm_period += per
        leaf_cm[stack[0]] += 1
        for name in set(s for s in stack if s.endswith(MODULE)):
            incl_cm[name] += 1
        chains_cm[" <- ".join(stack[:12])] += 1

    with open(os.path.join(outdir, "profile.txt"), "w") as f:
        f.write("samples %d\n" % n)
        f.write("busy_samples %d\n" % busy)
        f.write("ibcm_samples %d\n" % cm)
        f.write("ibcm_share_pct %.3f\n" % (100.0 * cm / max(n, 1)))
        f.write("ibcm_busy_share_pct %.3f\n" % (100.0 * cm / max(busy, 1)))
        f.write("connections %d\n" % conns)
        # cpu-clock periods are nanoseconds.
        f.write("ibcm_cpu_us_per_conn %.3f\n" % (cm_period / 1000.0 / max(conns, 1)))
        f.write("cpu_us_per_conn %.3f\n" % (period / 1000.0 / max(conns, 1)))
    with open(os.path.join(outdir, "ibcm-chains.txt"), "w") as f:
        f.write("%d of %d samples (%.2f%%; %.2f%% of the %d busy ones) have a frame "
                "of ib_cm in their call chain; %d connections made\n" % (
                    cm, n, 100.0 * cm / max(n, 1), 100.0 * cm / max(busy, 1), busy, conns))
        table("Leaf functions of the samples through ib_cm (self time)",
              leaf_cm, cm, f)
        table("ib_cm functions on those chains (inclusive: once per sample)",
              incl_cm, cm, f)
        table("Heaviest chains through ib_cm (leaf first, 12 frames at most)",
              chains_cm, cm, f)
    with open(os.path.join(outdir, "folded.txt"), "w") as f:
        for stack, c in folded.most_common():
            f.write("%s %d\n" % (stack, c))
    print("samples=%d ibcm=%d share=%.2f%% ibcm_us_per_conn=%.2f" % (
        n, cm, 100.0 * cm / max(n, 1), cm_period / 1000.0 / max(conns, 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
