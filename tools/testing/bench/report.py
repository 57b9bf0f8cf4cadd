#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The tables of "make bench", from the raw outputs that guest-bench.sh
left in OUT (run.sh calls this after the VM; it can be run again by hand:
tools/testing/vm/inroot.sh python3 tools/testing/bench/report.py out/bench).

usage: report.py OUT

Prints the details (cmtime steps, slab caches, the CM's share by entry
point, the counts, kernel log), then the summary table last: per case and
metric the median over the rounds for ours and for stock, each with its
spread ((max - min) / median over the rounds, "!" above 2 %), and
stock/ours.  Every metric is lower-is-better, so a ratio above 1 means
ours is better.  On the wall clock (BENCH_CLOCK=wall) a ratio whose
rounds overlap (the ranges of ours and stock share a value) is no result:
the column then says "overlap".  Writes OUT/results.tsv (every value of
every round), OUT/memory.txt (all slab caches) and OUT/summary.txt (what
is printed).
"""
import os
import re
import shlex
import statistics
import sys

MODULES = ("ours", "stock")
# A spread above this (in %) is flagged with "!": the instrument does not
# resolve the 2 % that the icount mode is for.
SPREAD_FLAG = 2.0
ROW = re.compile(r"^(\S.*?)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$")
# Bad kernel log lines, as guest-bench.sh looks for them.
BAD = re.compile(r"WARNING:|BUG:|UBSAN|KFENCE|soft lockup|hard LOCKUP|hung_task|"
                 r"blocked for more than|refcount_t|Oops|general protection|"
                 r"list_(add|del) corruption|rcu.*stall")


def read_settings(out):
    settings = {}
    with open(os.path.join(out, "settings.sh")) as f:
        for tok in shlex.split(f.read()):
            k, _, v = tok.partition("=")
            settings[k] = v
    return settings


def keyvals(path):
    res = {}
    try:
        with open(path) as f:
            for line in f:
                parts = line.split(None, 1)
                if len(parts) == 2:
                    res[parts[0]] = parts[1].strip()
    except OSError:
        pass
    return res


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def cmtime_tables(path):
    """{'qps'|'noqps': {step: (avg/conn, total, us/conn, sum, max, min)}}."""
    tables, cur = {}, None
    try:
        f = open(path)
    except OSError:
        return tables
    with f:
        for line in f:
            if line.startswith("Connect (") and "no QPs" in line:
                cur = tables.setdefault("noqps", {})
            elif line.startswith("Connect (") and "simulated" in line:
                # -m: QPs replaced by a sleep, not a pass to report.
                cur = tables.setdefault("simulated", {})
            elif line.startswith("Connect ("):
                cur = tables.setdefault("qps", {})
            elif cur is not None:
                m = ROW.match(line)
                if m:
                    cur[m.group(1)] = tuple(int(x) for x in m.groups()[1:])
    # A pass counts only with its whole table (cmtime prints it at the end).
    return {k: v for k, v in tables.items() if "full connect" in v}


class Slabinfo:
    """Bytes in use per cache: active objects times object size."""

    def __init__(self, path):
        self.caches = {}
        try:
            with open(path) as f:
                for line in f:
                    if line.startswith(("slabinfo", "#")):
                        continue
                    p = line.split()
                    self.caches[p[0]] = int(p[1]) * int(p[3])
        except OSError:
            pass


class Results:
    """values[(section, case, metric)][module] = [one value per round]"""

    def __init__(self):
        self.values = {}
        self.order = []
        self.rows = []
        # (section, case, metric) -> why it was not measured
        self.skipped = {}

    def add(self, section, case, metric, module, rnd, value):
        if value is None:
            return
        key = (section, case, metric)
        if key not in self.values:
            self.values[key] = {m: [] for m in MODULES}
            self.order.append(key)
        self.values[key][module].append(value)
        self.rows.append((section, case, metric, rnd, module, value))

    def skip(self, section, case, metric, why):
        key = (section, case, metric)
        if key not in self.values:
            self.values[key] = {m: [] for m in MODULES}
            self.order.append(key)
        self.skipped[key] = why

    def median(self, key, module):
        v = self.values.get(key, {}).get(module, [])
        return (statistics.median(v), len(v)) if v else (None, 0)

    def spread(self, key, module):
        """(max - min) / median of one module's rounds, in %, or None."""
        v = self.values.get(key, {}).get(module, [])
        med = statistics.median(v) if len(v) > 1 else 0
        if med <= 0:
            return None
        return 100.0 * (max(v) - min(v)) / med

    def overlap(self, key):
        """Whether the rounds of ours and stock share a range."""
        o = self.values.get(key, {}).get("ours", [])
        s = self.values.get(key, {}).get("stock", [])
        return bool(o and s) and max(min(o), min(s)) <= min(max(o), max(s))


def visits(out):
    found = []
    for name in os.listdir(out):
        m = re.fullmatch(r"r(\d+)-(ours|stock)", name)
        if m:
            found.append((int(m.group(1)), m.group(2), os.path.join(out, name)))
    return sorted(found)


# /proc/stat's unit, USER_HZ, is 100 on x86.
TICK_US = 10000


def collect_run(res, rnd, mod, n, case, extra):
    """A cmtime run's CM retries, its idle share outside cmsettle's pauses
    and the work each pause saw (what the pass before it left behind)."""
    res.add("steps", case, "CM retries", mod, rnd, num(extra.get("cm_tx_retries")))
    busy, idle = num(extra.get("busy_ticks")), num(extra.get("idle_ticks"))
    # /proc/stat's "cpu" line sums all CPUs: a pause lasts that long on each.
    pause = (num(extra.get("settle_ms")) or 0) * 1000 / TICK_US * (num(extra.get("cpus")) or 1)
    ticks = [num(x) for x in extra.get("settle_ticks", "").split("/") if x]
    pause_busy = sum(x for x in ticks if x is not None and x > 0)
    if busy is not None and idle is not None and busy + idle - pause > 0:
        res.add("steps", case, "idle % outside the pauses", mod, rnd,
                max(0.0, 100.0 * (idle - (pause - pause_busy)) / (busy + idle - pause)))
    for i, label in ((1, "after the QPs pass"), (2, "after the no-QPs pass")):
        if len(ticks) > i and ticks[i] is not None and ticks[i] >= 0:
            res.add("steps", case, "work left %s us/conn" % label, mod, rnd,
                    ticks[i] * TICK_US / n)


def collect_cmtime(res, st, rnd, mod, d):
    for n in st["BENCH_SIZES"].split():
        for t in st["BENCH_THREADS"].split():
            base = os.path.join(d, "cmtime-%s-n%s" % (n, t))
            tables = cmtime_tables(base + ".client")
            # One client process runs both passes: the run's retries and
            # idle share are the cell's neighbours, not one pass's.
            collect_run(res, rnd, mod, int(n), "%s conns, -n %s, whole run" % (n, t),
                        keyvals(base + ".extra"))
            for pas, label in (("qps", "QPs"), ("noqps", "no QPs")):
                case = "%s conns, -n %s, %s" % (n, t, label)
                if pas == "qps" and os.path.exists(base + ".skipped"):
                    with open(base + ".skipped") as f:
                        res.skip("cmtime", case, "full connect us/conn", f.read().strip())
                tab = tables.get(pas)
                if not tab:
                    continue
                res.add("cmtime", case, "full connect us/conn", mod, rnd,
                        tab["full connect"][0])
                if "cm connect" in tab:
                    res.add("steps", case, "cm connect avg/conn", mod, rnd, tab["cm connect"][0])
                    res.add("steps", case, "cm connect us/conn", mod, rnd, tab["cm connect"][2])
                if "disconnect" in tab:
                    res.add("steps", case, "disconnect avg/conn", mod, rnd, tab["disconnect"][0])


PERF_ROWS = (("cm_us_per_conn", "CM, attributed us/conn"),
             ("cm_own_us_per_conn", "CM, own (leaf in ib_cm) us/conn"),
             ("busy_us_per_conn", "whole guest, busy us/conn"),
             ("cm_share_pct", "CM share of busy samples %"))
ENTRY_ROWS = ("receive", "send completion", "API", "work item", "timer", "other")


def collect_perf(res, st, rnd, mod, d):
    p = keyvals(os.path.join(d, "perf", "profile.txt"))
    case = "cmtime %s conns" % st.get("BENCH_PERF_CONNS", "?")
    for key, metric in PERF_ROWS:
        res.add("perf", case, metric, mod, rnd, num(p.get(key)))
    for e in ENTRY_ROWS:
        res.add("entry", case, "CM us/conn entered from %s" % e, mod, rnd,
                num(p.get("entry_%s_us_per_conn" % e.replace(" ", "_"))))


def collect_counts(res, st, rnd, mod, d):
    case = "cmtime %s conns" % st.get("BENCH_COUNT_CONNS", "?")
    try:
        with open(os.path.join(d, "counts", "counts.txt")) as f:
            for line in f:
                metric, _, v = line.rstrip("\n").rpartition("\t")
                sec = "sites" if metric.startswith("ib_cm: allocations at ") or \
                    metric.startswith("ib_cm: work ") else "counts"
                res.add(sec, case, metric + " /conn", mod, rnd, num(v))
    except OSError:
        pass


def collect_floor(res, st, rnd, mod, d):
    """The floor case, and what the CM's attributed share has above it."""
    case = "cmtime %s conns" % st.get("BENCH_COUNT_CONNS", "?")
    total = None
    try:
        with open(os.path.join(d, "floor", "floor.txt")) as f:
            for line in f:
                metric, _, v = line.rstrip("\n").rpartition("\t")
                kind, _, metric = metric.partition(" ")
                if kind == "all":
                    total = num(v)
                    res.add("floor", case, "ib_core's floor, all us/conn", mod, rnd, total)
                elif kind == "group":
                    res.add("floor", case, metric + "/conn", mod, rnd, num(v))
                else:
                    res.add("floorx", case, metric + " /conn", mod, rnd, num(v))
    except OSError:
        return
    p = keyvals(os.path.join(d, "perf", "profile.txt"))
    attr = num(p.get("cm_us_per_conn"))
    if attr is not None and total is not None:
        res.add("perf", "cmtime %s conns" % st.get("BENCH_PERF_CONNS", "?"),
                "CM, attributed minus ib_core's floor us/conn", mod, rnd, attr - total)


MEM_PHASES = (("held", "established"), ("timewait", "in timewait"),
              ("after", "after timewait"))
# Slab: counts slab pages, which SLUB frees lazily; the objects in use
# (active objects times object size, from /proc/slabinfo) follow the
# connections more closely.


def meminfo_kb(path, key):
    return num(keyvals(path).get(key + ":", "").split(" ")[0] or None)


def collect_mem(res, st, rnd, mod, d, caches):
    n = int(st["BENCH_MEM_CONNS"])
    mdir = os.path.join(d, "mem")
    base = os.path.join(mdir, "base")
    case = "%d conns" % n
    if not os.path.exists(base + ".meminfo") or not os.path.exists(
            os.path.join(mdir, "held.meminfo")):
        return
    slab0 = Slabinfo(base + ".slabinfo").caches
    for phase, label in MEM_PHASES:
        path = os.path.join(mdir, phase)
        for key in ("Slab", "SUnreclaim"):
            a, b = meminfo_kb(base + ".meminfo", key), meminfo_kb(path + ".meminfo", key)
            if a is not None and b is not None:
                sec = "mem" if key == "Slab" else "memx"
                res.add(sec, case, "%s B/conn %s" % (key, label), mod, rnd,
                        (b - a) * 1024 / n)
        now = Slabinfo(path + ".slabinfo").caches
        if not now:
            continue
        total = 0
        for name in set(now) | set(slab0):
            delta = (now.get(name, 0) - slab0.get(name, 0)) / n
            total += delta
            caches.setdefault((phase, name), {m: [] for m in MODULES})[mod].append(delta)
        res.add("mem", case, "slab objects B/conn %s" % label, mod, rnd, total)


def collect_storm(res, st, rnd, mod, d):
    s = keyvals(os.path.join(d, "storm", "storm.txt"))
    if "clients" not in s:
        return
    case = "%s x %s conns" % (st["BENCH_STORM"], st["BENCH_STORM_CONNS"])
    for key, metric in (("all_connected_s", "all connected s"),
                        ("client_connect_p50_s", "client connect p50 s"),
                        ("client_connect_p99_s", "client connect p99 s"),
                        ("cm_tx_retries", "CM retries"),
                        ("clients_failed", "clients failed")):
        v = s.get(key)
        if key == "clients_failed":
            v = int(s["clients"]) - int(s["clients_ok"])
        res.add("storm", case, metric, mod, rnd, num(v))
    peak, start = num(s.get("slab_peak_kb")), num(s.get("slab_start_kb"))
    if peak is not None:
        res.add("storm", case, "peak Slab MiB", mod, rnd, peak / 1024)
        res.add("storm", case, "Slab rise MiB", mod, rnd, (peak - start) / 1024)
    low = num(s.get("mem_available_low_kb"))
    if low is not None:
        res.add("storm", case, "MemAvailable low MiB", mod, rnd, low / 1024)


def collect_fabric(res, st, rnd, mod, d):
    """The fabric case's fabric.txt: the mesh, then one storm per policy."""
    s = keyvals(os.path.join(d, "fabric", "fabric.txt"))
    if "mesh_ms" in s:
        case = "mesh %s nodes x %s" % (st["BENCH_FABRIC_NODES"], st["BENCH_FABRIC_K"])
        for key, metric in (("mesh_ms", "all up ms"), ("mesh_retries", "CM retries"),
                            ("mesh_fails", "made again"), ("mesh_slab_kb", "Slab rise KiB")):
            res.add("fabric", case, metric, mod, rnd, num(s.get(key)))
    for key in sorted(s):
        m = re.fullmatch(r"storm_(.+?)_(back_ms|peak|retries|req_retries|fails|drops|send_errs)", key)
        if not m:
            continue
        case = "storm %s, %s" % (st["BENCH_FABRIC_STORM"], m.group(1))
        metric = {"back_ms": "all back ms", "peak": "peak QP1 msg/s",
                  "retries": "CM retries", "req_retries": "REQ retries",
                  "fails": "made again", "drops": "backlog drops at node 0",
                  "send_errs": "rxe send errors at node 0"}[m.group(2)]
        v = num(s[key])
        # The stock module counts no drops: -1 (so a leg that broke off).
        if v is not None and v >= 0:
            res.add("fabric", case, metric, mod, rnd, v)


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 100 or v == int(v):
        return "%d" % round(v)
    return "%.2f" % v if abs(v) < 10 else "%.1f" % v


# Counts: no ratio.
NO_RATIO = ("CM retries", "idle % outside the pauses", "clients failed", "MemAvailable low MiB",
            "REQ retries", "made again", "backlog drops at node 0", "rxe send errors at node 0")


def fmt_spread(sp):
    if sp is None:
        return "-"
    return "%.1f%%%s" % (sp, "!" if sp > SPREAD_FLAG else "")


def table(res, sections, rounds, title, wall=False, legend=False):
    keys = [k for k in res.order if k[0] in sections]
    if not keys:
        return []
    lines = [title]
    w1 = max([len(k[1]) for k in keys] + [10])
    w2 = max([len(k[2]) for k in keys] + [10])
    lines.append("%-7s %-*s  %-*s %9s %7s %9s %7s %10s" % (
        "case", w1, "", w2, "metric (median)", "ours", "spread", "stock", "spread",
        "stock/ours"))
    last = None
    short = flagged = overlaps = False
    rows = 0
    for key in keys:
        sec, case, metric = key
        # A blank line after a case of several rows, and between sections.
        if last is not None and (sec, case) != last:
            if rows > 1 or sec != last[0]:
                lines.append("")
            rows = 0
        rows += 1
        head = (sec if last is None or sec != last[0] else "", w1,
                case if (sec, case) != last else "", w2, metric)
        last = (sec, case)
        if key in res.skipped:
            lines.append("%-7s %-*s  %-*s skipped: %s" % (head + (res.skipped[key],)))
            continue
        o, no = res.median(key, "ours")
        s, ns = res.median(key, "stock")
        ratio = "-"
        # After timewait only noise is left: no ratio of that either.
        if o and s and metric not in NO_RATIO and o > 0 and s > 0 \
                and "after timewait" not in metric:
            ratio = "%.2f" % (s / o)
            if wall and res.overlap(key):
                ratio, overlaps = "overlap", True
        so, ss = res.spread(key, "ours"), res.spread(key, "stock")
        flagged = flagged or any(x is not None and x > SPREAD_FLAG for x in (so, ss))
        # A module with no value at all (a call site or policy only one
        # module has) shows "-", not a shortfall.
        mark = lambda n: "*" if 0 < n < rounds else " "
        short = short or 0 < no < rounds or 0 < ns < rounds
        lines.append("%-7s %-*s  %-*s %8s%s %7s %8s%s %7s %10s" % (
            head + (fmt(o), mark(no), fmt_spread(so), fmt(s), mark(ns), fmt_spread(ss),
                    ratio)))
    if short:
        lines.append("* from fewer rounds than were run: the case failed in some")
    if rounds > 1 and legend:
        lines.append("spread: (max - min) / median over the rounds of one module;"
                     " ! above %g %%: a difference that small is not resolved" % SPREAD_FLAG)
    if overlaps:
        lines.append("overlap: the rounds of ours and stock overlap; no ratio is a result")
    if flagged and legend:
        lines.append("! a spread above %g %%: read that row's ratio as no better than "
                     "its spread" % SPREAD_FLAG)
    return lines


def block(lines, more):
    """lines, and more after a blank line if there is any."""
    return lines + [""] + more if more else lines


def cache_table(caches, n, phase, label, limit):
    rows = []
    for (ph, name), vals in caches.items():
        if ph != phase:
            continue
        med = {m: statistics.median(v) if v else None for m, v in vals.items()}
        big = max(abs(v) for v in med.values() if v is not None) if any(
            v is not None for v in med.values()) else 0
        own = name.startswith(("ib_cm", "cm_"))
        if big >= 8 or own:
            rows.append((own, big, name, med))
    rows.sort(key=lambda r: (not r[0], -r[1]))
    lines = ["slab caches, %s (bytes per connection, median; %d conns):" % (label, n),
             "  %-28s %9s %9s" % ("cache", "ours", "stock")]
    for own, big, name, med in rows[:limit]:
        lines.append("  %-28s %9s %9s" % (name, fmt(med["ours"]), fmt(med["stock"])))
    if len(rows) > limit:
        lines.append("  (%d more in memory.txt)" % (len(rows) - limit))
    if not any(r[0] for r in rows):
        lines.append("  (no cache named ib_cm* or cm_*: the CM allocates from kmalloc-*)")
    return lines


def dmesg_lines(out, found):
    lines = []
    for rnd, mod, d in found:
        for name in sorted(os.listdir(d)):
            if name.endswith(".dmesg"):
                with open(os.path.join(d, name)) as f:
                    for line in f:
                        lines.append("  r%d %s %s: %s" % (rnd, mod, name[:-6], line.rstrip()))
    whole = []
    try:
        with open(os.path.join(out, "dmesg.txt"), errors="replace") as f:
            whole = [line.rstrip() for line in f if BAD.search(line)]
    except OSError:
        pass
    res = ["kernel log (hung task, soft lockup, RCU stall, WARN, BUG...):"]
    if not lines and not whole:
        res.append("  clean, in every case and over the whole boot")
    res += lines
    if whole:
        res.append("  in the whole boot's log (dmesg.txt):")
        res += ["    " + line for line in whole[:40]]
    return res


def failures(found):
    res = []
    for rnd, mod, d in found:
        for name in sorted(os.listdir(d)):
            if name.endswith(".failed"):
                with open(os.path.join(d, name)) as f:
                    what = " ".join(f.read().split())
                res.append("  r%d %s: %s failed (%s); see %s" % (rnd, mod, name[:-7], what, d))
    return ["failures:"] + res if res else []


def main():
    out = sys.argv[1]
    st = read_settings(out)
    found = visits(out)
    res = Results()
    caches = {}
    for rnd, mod, d in found:
        collect_cmtime(res, st, rnd, mod, d)
        collect_perf(res, st, rnd, mod, d)
        collect_counts(res, st, rnd, mod, d)
        collect_floor(res, st, rnd, mod, d)
        collect_mem(res, st, rnd, mod, d, caches)
        collect_storm(res, st, rnd, mod, d)
        collect_fabric(res, st, rnd, mod, d)
    rounds = max([r for r, _, _ in found] + [0])
    n = int(st["BENCH_MEM_CONNS"])

    with open(os.path.join(out, "results.tsv"), "w") as f:
        f.write("section\tcase\tmetric\tround\tmodule\tvalue\n")
        for row in res.rows:
            f.write("%s\t%s\t%s\t%d\t%s\t%g\n" % row)
    with open(os.path.join(out, "memory.txt"), "w") as f:
        for phase, label in MEM_PHASES:
            f.write("\n".join(cache_table(caches, n, phase, label, 10 ** 6)) + "\n\n")

    clock = st.get("BENCH_CLOCK") or "wall"
    wall = clock != "icount"
    unit = ("guest time under -icount: 1 us = 500 instructions" if not wall
            else "wall-clock time")
    lines = table(res, ("steps",), rounds, "cmtime steps (us of %s; avg/conn = step's "
                  "time / conns, us/conn = mean per connection):" % unit, wall)
    lines = block(lines, table(res, ("entry",), rounds, "The CM's attributed share by entry "
                               "point (the caller of the outermost ib_cm frame):", wall))
    lines = block(lines, table(res, ("sites",), rounds, "ib_cm's own allocations by call site "
                               "and its work items by function:", wall))
    lines = block(lines, table(res, ("floorx",), rounds, "ib_core's floor by function "
                               "(function_graph; calls and us per connection):", wall))
    if caches:
        for phase, label in MEM_PHASES[:2]:
            lines += [""] + cache_table(caches, n, phase, label, 12)
        lines = block(lines, table(res, ("memx",), rounds, "unreclaimable slab (SUnreclaim:):",
                                   wall))
    lines.append("")
    lines += dmesg_lines(out, found)
    lines += failures(found)
    if any(os.path.isdir(os.path.join(d, "perf")) for _, _, d in found):
        lines.append("")
        lines.append("profiles: %s/rR-MODULE/perf/ (report.txt, report-ibcm.txt, "
                     "ibcm-chains.txt, folded.txt, perf.data)" % out)
    while lines and not lines[0]:
        lines.pop(0)
    took = [line for line in open(os.path.join(out, "bench.log"))
            if "benchmark done" in line] if os.path.exists(
                os.path.join(out, "bench.log")) else []
    lines.append("")
    lines += table(res, ("cmtime", "perf", "floor", "counts", "mem", "storm", "fabric"),
                   rounds,
                   "SUMMARY: ours vs stock ib_cm, %d round(s), medians; %s mode, %s; "
                   "lower is better, stock/ours > 1: ours is better%s" % (
                       rounds, st.get("BENCH_MODE", "wall"), unit,
                       "; " + took[-1].split("] ", 1)[-1].strip() if took else ""), wall,
                   legend=True)
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main())
