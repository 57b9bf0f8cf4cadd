#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The connection storm, inside the VM: S ucmatose servers (one port each)
in the peer namespace, then S clients from this one, all let go at once.

usage: storm.py DIR NETNS SERVER_IP PORT0 S CONNS TIMEOUT GATE_SO

The VM's root file system is the host's, through 9p, and QEMU holds a
host file descriptor for every file a guest process has open there: a
ucmatose with its libraries and libibverbs' providers took about 25, and
the 20,000 that QEMU may have here ran out at about 780 processes.  So
the storm runs ucmatose from a copy in tmpfs, libraries and all, and
guest-bench.sh shows libibverbs only the rxe provider.

Starting a client takes a good part of a second under emulation, so the
clients are started one by one with GATE_SO (stormgate.c) preloaded: it
holds each at its first rdma_resolve_addr() until all are there, then
they go together.  ucmatose prints no timings of its own; its output is
read as it comes (line-buffered by the gate) and timestamped here.  A
client has connected when it prints "receiving data transfers", after all
of its CONNS connections are up: so the connect time is per client (CONNS
connections each), from the gate's opening to that line.  Slab: and
MemAvailable: of /proc/meminfo are sampled all the while.  Writes
DIR/clients.tsv (one row per client), DIR/storm.txt (key value lines),
DIR/slab.tsv and each process's output as DIR/client-I.txt and
DIR/server-I.txt.
"""
import os
import resource
import shutil
import subprocess
import sys
import threading
import time

CONNECTED = b"receiving data transfers"
GATED = b"storm-gate: waiting"
SAMPLE = 0.2


def meminfo(*keys):
    """The values of KEYS in /proc/meminfo, in kB."""
    want = dict.fromkeys(keys, 0)
    with open("/proc/meminfo") as f:
        for line in f:
            k = line.split(":", 1)[0]
            if k in want:
                want[k] = int(line.split()[1])
    return [want[k] for k in keys]


class Proc:
    """One ucmatose; a thread of its own reads its output and times the
    lines it waits for, so that the times do not depend on the others."""

    def __init__(self, name, argv, outdir, env=None):
        self.name = name
        self.path = os.path.join(outdir, name + ".txt")
        self.gated = threading.Event()
        self.connected = None
        self.exited = None
        self.rc = None
        # close_fds=False: hundreds of processes must start quickly, and
        # Python's pipes are close-on-exec anyway.
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, close_fds=False,
                                  env=env)
        self.start = time.monotonic()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        # Kept until the end: a file open per process would double the
        # descriptors of a run of a thousand processes.
        text = b""
        while True:
            data = os.read(self.p.stdout.fileno(), 65536)
            now = time.monotonic()
            if not data:
                break
            text += data
            tail = text[-256:]
            if GATED in tail:
                self.gated.set()
            if self.connected is None and CONNECTED in tail:
                self.connected = now
        self.p.stdout.close()
        with open(self.path, "wb") as out:
            out.write(text)
        self.rc = self.p.wait()
        self.exited = time.monotonic()
        self.gated.set()

    def done(self):
        return self.exited is not None


class Memory:
    """Slab: and MemAvailable: over time, their peak and low."""

    def __init__(self, path):
        self.f = open(path, "w")
        self.f.write("t\tslab_kb\tavailable_kb\n")
        self.t0 = time.monotonic()
        self.start, self.low = meminfo("Slab", "MemAvailable")
        self.peak = self.start

    def sample(self):
        kb, avail = meminfo("Slab", "MemAvailable")
        self.peak = max(self.peak, kb)
        self.low = min(self.low, avail)
        self.f.write("%.1f\t%d\t%d\n" % (time.monotonic() - self.t0, kb, avail))


def local_copy(prog, libs, where):
    """Copy PROG and the libraries it links, and LIBS, to WHERE (tmpfs);
    return the copy's path and its LD_LIBRARY_PATH."""
    path = shutil.which(prog)
    libdir = os.path.join(where, "lib")
    os.makedirs(libdir, exist_ok=True)
    shutil.copy2(path, where)
    ldd = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    for line in ldd.splitlines():
        # "libfoo.so.1 => /usr/lib/.../libfoo.so.1 (0x...)"
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>" and parts[2].startswith("/"):
            shutil.copy2(parts[2], libdir)
    for lib in libs:
        shutil.copy2(lib, libdir)
    return os.path.join(where, os.path.basename(path)), libdir


def wait_all(procs, deadline, mem, pred):
    """Sample memory until PRED holds for every process or DEADLINE."""
    while time.monotonic() < deadline:
        mem.sample()
        if all(pred(p) for p in procs):
            return True
        time.sleep(SAMPLE)
    return False


def listeners(netns):
    out = subprocess.run(["ip", "netns", "exec", netns, "rdma", "resource",
                          "show", "cm_id"], capture_output=True).stdout
    return out.count(b"state LISTEN")


def wait_listening(netns, want, deadline, mem):
    n = 0
    while time.monotonic() < deadline:
        mem.sample()
        n = listeners(netns)
        if n >= want:
            break
        time.sleep(1)
    return n


def kill_left(procs):
    for pr in procs:
        if not pr.done():
            pr.p.kill()
    for pr in procs:
        pr.thread.join(10)


def nofile(want):
    """Raise the descriptor limit: root may go past the hard one."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(want, hard), max(want, hard)))
    except (ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def pct(values, p):
    """The p-th percentile, nearest rank."""
    v = sorted(values)
    k = max(0, min(len(v) - 1, -(-len(v) * p // 100) - 1))
    return v[k]


def main():
    outdir, netns, ip, port0, s, conns, timeout, gate_so = sys.argv[1:9]
    port0, s, conns, timeout = int(port0), int(s), int(conns), int(timeout)
    nofile(4 * s + 256)
    threading.stack_size(256 * 1024)
    mem = Memory(os.path.join(outdir, "slab.tsv"))
    deadline = time.monotonic() + timeout
    # Not on the 9p share: a FIFO there would be the host's.
    gate = "/tmp/ibcm-storm-gate"
    if os.path.exists(gate):
        os.unlink(gate)
    os.mkfifo(gate)

    ucmatose, libdir = local_copy("ucmatose", [gate_so], "/run/ibcm/storm")
    env = dict(os.environ, LD_LIBRARY_PATH=libdir)
    genv = dict(env, LD_PRELOAD=os.path.join(libdir, os.path.basename(gate_so)),
                STORM_GATE=gate)
    servers, clients = [], []
    try:
        for i in range(s):
            servers.append(Proc("server-%d" % i, [
                "ip", "netns", "exec", netns, ucmatose, "-b", ip,
                "-c", str(conns), "-C", "1", "-p", str(port0 + i)], outdir, env))
        nlisten = wait_listening(netns, s, deadline, mem)

        t_spawn = time.monotonic()
        for i in range(s):
            clients.append(Proc("client-%d" % i, [
                ucmatose, "-s", ip, "-c", str(conns), "-C", "1",
                "-p", str(port0 + i)], outdir, genv))
            if i % 16 == 15:
                mem.sample()
        gated = wait_all(clients, deadline, mem, lambda c: c.gated.is_set())
        spawned = time.monotonic() - t_spawn
        # Open the gate and keep it open: a client late for it passes too.
        fd = os.open(gate, os.O_WRONLY)
        t0 = time.monotonic()
        done = wait_all(clients, deadline, mem, Proc.done)
        kill_left(clients)
        # The servers end once their clients have disconnected.
        sdone = wait_all(servers, time.monotonic() + 60, mem, Proc.done)
        os.close(fd)
    finally:
        # Nothing may stay behind: it would keep the modules loaded.
        kill_left(clients + servers)
        os.unlink(gate)

    with open(os.path.join(outdir, "clients.tsv"), "w") as f:
        f.write("client\tconnected\texited\trc\n")
        for i, c in enumerate(clients):
            f.write("%d\t%s\t%.3f\t%s\n" % (
                i, "%.3f" % (c.connected - t0) if c.connected else "-",
                (c.exited or time.monotonic()) - t0, c.rc))
    ok = [c for c in clients if c.rc == 0 and c.connected]
    lat = [c.connected - t0 for c in clients if c.connected]
    ends = [(c.connected or c.exited or time.monotonic()) - t0 for c in clients]
    res = {
        "clients": s,
        "conns_per_client": conns,
        "listeners": nlisten,
        "start_s": "%.3f" % spawned,
        "all_gated": int(gated),
        "all_connected_s": "%.3f" % max(ends),
        "all_exited_s": "%.3f" % max((c.exited or time.monotonic()) - t0 for c in clients),
        "client_connect_p50_s": "%.3f" % pct(lat, 50) if lat else "-",
        "client_connect_p99_s": "%.3f" % pct(lat, 99) if lat else "-",
        "clients_ok": len(ok),
        "servers_ok": sum(1 for c in servers if c.rc == 0),
        "timed_out": int(not (done and sdone)),
        "slab_start_kb": mem.start,
        "slab_peak_kb": mem.peak,
        "mem_available_low_kb": mem.low,
    }
    with open(os.path.join(outdir, "storm.txt"), "w") as f:
        for k, v in res.items():
            f.write("%s %s\n" % (k, v))
    print(" ".join("%s=%s" % kv for kv in res.items()))
    return 0 if len(ok) == s else 1


if __name__ == "__main__":
    sys.exit(main())
