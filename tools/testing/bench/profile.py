#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Digest `perf script -F comm,tid,period,ip,sym,dso` output (on stdin) of
a `perf record -e cpu-clock -a -g` run: how much of the CPU the CM took
per connection, and from where it was entered.

usage: perf script ... | profile.py DIR CONNS KALLSYMS

Each frame's module comes from KALLSYMS (a copy of /proc/kallsyms taken
while the module was loaded): the symbol at or below the frame's address,
with its "[module]" tag.  perf itself finds no file for an insmod-ed
ib_cm.ko and names every module's functions [kernel.kallsyms], and the
module's range in /proc/modules spans its data too.

A sample is the CM's ("attributed") when, among its frames in ib_cm,
rdma_cm and rdma_ucm, the one nearest the leaf is in ib_cm: the work
ib_core, rxe and the allocator do for the CM counts, the work of the
consumer's callbacks does not.  A function that ends in a call (often
spin_unlock_irqrestore(), whose sample lands there when interrupts come
back on) may jump to it instead, and its frame is then missing from the
chain: the sample seems to run in its caller.  Stock's cm_recv_handler()
does so, and the interrupts-off stretch in which it queues its work
then counted as ib_core's.  So a sample also counts as the CM's when,
going out from its leaf, it meets a return address through which the CM
was seen entered (in another sample: the caller of an outermost ib_cm
frame, in ib_core, rdma_cm or rdma_ucm) before any frame of ib_cm,
rdma_cm or rdma_ucm.  The MAD layer's call of an agent's handler is such
an address, and in the benchmark's guest the CM's are the only agents on
its ports.  Not recovered: a work item's or a timer's function that
jumps out of ib_cm (the workqueue's and timers' call sites serve
everybody).  It is the CM's "own" when its leaf is in ib_cm.  An
attributed sample's entry point is what called the outermost ib_cm
frame: the MAD layer's receive path (receive handler) or send
completion, a consumer (rdma_cm: the API, the send paths), a work item,
a timer.  Under -icount shift=1 cpu-clock counts 2 ns per instruction,
so 1 us per connection is 500 instructions.

Writes
  DIR/profile.txt      key value lines: samples, the CM's samples and
                       microseconds per connection (CONNS connections
                       made), by entry point
  DIR/ibcm-chains.txt  within the attributed samples: the leaf functions
                       (self), the ib_cm functions on the chain
                       (inclusive), the callers of the outermost ib_cm
                       frame, and the heaviest whole chains
  DIR/folded.txt       every chain folded, outermost first, one
                       "comm;frame;...;frame count" line each (the input
                       of flame graph tools)
"""
import bisect
import collections
import os
import sys

CM = "ib_cm"
CM_STACK = ("ib_cm", "rdma_cm", "rdma_ucm")
# Leaf functions of an idle CPU.
IDLE = ("pv_native_safe_halt", "native_safe_halt", "default_idle",
        "cpu_idle_poll", "poll_idle", "acpi_idle_do_entry", "mwait_idle")
TIMER_CALLERS = ("call_timer_fn", "expire_timers", "__run_timers",
                 "run_timer_softirq", "__hrtimer_run_queues", "hrtimer_interrupt")
ENTRIES = ("receive", "send completion", "API", "work item", "timer", "other")
TOP = 40


class Symbols:
    """Which function and module an address is in, from kallsyms."""

    def __init__(self, path):
        rows = []
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) < 3 or p[1] not in "tTwW":
                    continue
                mod = p[3].strip("[]") if len(p) > 3 else "vmlinux"
                rows.append((int(p[0], 16), p[2], mod))
        rows.sort()
        self.addrs = [r[0] for r in rows]
        self.rows = rows

    def lookup(self, ip):
        i = bisect.bisect_right(self.addrs, ip) - 1
        if i < 0:
            return None, ""
        return self.rows[i][1], self.rows[i][2]


def frame(line, syms):
    """'ffffffffc0001000 sym+0x10 ([kernel.kallsyms])' -> (name, module)."""
    parts = line.split(None, 1)
    rest = parts[1] if len(parts) > 1 else "[unknown]"
    if rest.endswith(")") and " (" in rest:
        rest = rest.rsplit(" (", 1)[0]
    name = rest.split("+0x", 1)[0].strip() or "[unknown]"
    mod = ""
    try:
        ip = int(parts[0], 16)
    except ValueError:
        ip = None
    # Only kernel addresses are looked up: user space's are not in kallsyms.
    if ip is not None and ip >= 1 << 63:
        kname, mod = syms.lookup(ip)
        name = kname or name
    return name, mod, ip


def samples(stream, syms):
    """Yield (comm, period, [(name, module) leaf first]) per sample."""
    head, frames = None, []
    for line in stream:
        if line.startswith("\t"):
            frames.append(frame(line.strip(), syms))
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


# Modules whose return addresses can be the CM's entry (see above).
SITE_MODULES = ("ib_core", "rdma_cm", "rdma_ucm")


def outermost_cm(frames):
    """Index of the outermost ib_cm frame, or -1."""
    return max((i for i, f in enumerate(frames) if f[1] == CM), default=-1)


def entry_sites(all_samples):
    """Return addresses through which some sample entered ib_cm."""
    sites = set()
    for _, _, frames in all_samples:
        at = outermost_cm(frames) + 1
        if 0 < at < len(frames):
            _, mod, ip = frames[at]
            if mod in SITE_MODULES and ip is not None:
                sites.add(ip)
    return sites


def caller_index(frames, sites):
    """Index of the frame that entered the CM (len(frames) if the chain
    ends in ib_cm), or None if the sample is not the CM's; and whether
    the CM's frame was missing (it jumped to its last call)."""
    for i, (_, mod, ip) in enumerate(frames):
        if mod == CM:
            return outermost_cm(frames) + 1, False
        # frames[0] is where the CPU was, not a return address.
        if i and ip in sites:
            return i, True
        if mod in CM_STACK:
            return None, False
    return None, False


def entry(frames, at):
    """(entry point, caller) of a sample entered through frames[at]."""
    if at >= len(frames):
        return "other", "(chain ends in ib_cm)"
    name, mod, _ = frames[at]
    if name == "process_one_work":
        kind = "work item"
    elif name in TIMER_CALLERS or "timer" in name:
        kind = "timer"
    elif mod == "ib_core" and "recv" in name:
        kind = "receive"
    elif mod == "ib_core" and "send" in name:
        kind = "send completion"
    elif mod not in ("vmlinux", "ib_core", ""):
        kind = "API"
    else:
        kind = "other"
    return kind, "%s [%s]" % (name, mod or "?")


def label(name, mod, _ip=None):
    """A frame's name, with its module's unless it is vmlinux."""
    return "%s [%s]" % (name, mod) if mod and mod != "vmlinux" else name


def table(title, counter, total, out):
    out.write("\n%s\n" % title)
    out.write("%8s %7s  %s\n" % ("samples", "share", "symbol"))
    for name, n in counter.most_common(TOP):
        out.write("%8d %6.2f%%  %s\n" % (n, 100.0 * n / max(total, 1), name))


def main():
    outdir, conns = sys.argv[1], max(int(sys.argv[2]), 1)
    syms = Symbols(sys.argv[3])
    n = busy = attr = own = tail = 0
    period = busy_period = attr_period = own_period = 0
    by_entry = collections.Counter()
    leaf = collections.Counter()
    incl = collections.Counter()
    callers = collections.Counter()
    chains = collections.Counter()
    folded = collections.Counter()
    all_samples = list(samples(sys.stdin, syms))
    sites = entry_sites(all_samples)
    for comm, per, frames in all_samples:
        n += 1
        period += per
        if not (frames and frames[0][0] in IDLE):
            busy += 1
            busy_period += per
        stack = [label(*f) for f in frames]
        folded[";".join([comm] + stack[::-1])] += 1
        at, jumped = caller_index(frames, sites)
        if at is None:
            continue
        attr += 1
        attr_period += per
        tail += jumped
        if frames[0][1] == CM:
            own += 1
            own_period += per
        kind, caller = entry(frames, at)
        if jumped:
            caller += " (ib_cm frame missing)"
        by_entry[kind] += per
        callers["%s: %s" % (kind, caller)] += 1
        leaf[stack[0]] += 1
        for name in set(label(*f) for f in frames if f[1] == CM):
            incl[name] += 1
        chains[" <- ".join(stack[:12])] += 1

    def us(p):
        # cpu-clock periods are nanoseconds (of guest time).
        return p / 1000.0 / conns

    with open(os.path.join(outdir, "profile.txt"), "w") as f:
        f.write("samples %d\n" % n)
        f.write("busy_samples %d\n" % busy)
        f.write("cm_samples %d\n" % attr)
        f.write("cm_own_samples %d\n" % own)
        f.write("cm_missing_frame_samples %d\n" % tail)
        f.write("connections %d\n" % conns)
        f.write("cm_us_per_conn %.3f\n" % us(attr_period))
        f.write("cm_own_us_per_conn %.3f\n" % us(own_period))
        f.write("cm_share_pct %.3f\n" % (100.0 * attr / max(busy, 1)))
        f.write("busy_us_per_conn %.3f\n" % us(busy_period))
        for kind in ENTRIES:
            f.write("entry_%s_us_per_conn %.3f\n" % (kind.replace(" ", "_"),
                                                      us(by_entry[kind])))
    with open(os.path.join(outdir, "ibcm-chains.txt"), "w") as f:
        f.write("%d of %d samples (%d busy) are the CM's (the frame nearest the leaf "
                "among ib_cm, rdma_cm, rdma_ucm is in ib_cm, or ib_cm's frame is "
                "missing: %d), %d of them with the leaf in ib_cm; %d connections "
                "made\n" % (attr, n, busy, tail, own, conns))
        table("Leaf functions of the CM's samples (self time)", leaf, attr, f)
        table("ib_cm functions on those chains (inclusive: once per sample)",
              incl, attr, f)
        table("Entry points: the callers of the outermost ib_cm frame", callers, attr, f)
        table("Heaviest chains (leaf first, 12 frames at most)", chains, attr, f)
    with open(os.path.join(outdir, "folded.txt"), "w") as f:
        for stack, c in folded.most_common():
            f.write("%s %d\n" % (stack, c))
    print("samples=%d cm=%d own=%d cm_us_per_conn=%.2f own_us_per_conn=%.2f%s" % (
        n, attr, own, us(attr_period), us(own_period),
        "".join(" %s=%.2f" % (k.replace(" ", "_"), us(by_entry[k]))
                for k in ENTRIES if by_entry[k])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
