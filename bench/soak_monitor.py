#!/usr/bin/env python3
"""soak_monitor: a watcher's CPU time and peak RSS for each chunk it sends, for bench/soak.sh.

    soak_monitor.py --pid PID --dir DIR --dump-dir DIR --out FILE --idle S --ready FILE

First S seconds of the watcher idle (no chunk yet): its CPU time a second and its RSS,
then FILE --ready is made. From then on, every 50 ms: each chunk that appears in DIR
(perf renamed it: `perf.data.<timestamp>`) is noted, and each that arrives in DIR/sent/
gets a line with the watcher's CPU time since the previous arrival (or since the idle
seconds ended), its peak RSS since then (VmHWM of /proc/PID/status, reset by writing 5
to /proc/PID/clear_refs after each arrival) and the size of the jitdump (the one
jit-*.dump in --dump-dir) at that moment. Runs until SIGTERM.

CPU time is the kernel's taskstats for the thread group (cpu_run_virtual_total: every
thread's run time in ns, those that ended too); where taskstats cannot be asked, it is
user + system time of /proc/PID/stat (clock ticks, 10 ms here). Both are written.

Lines of FILE, tab-separated:
    cpu_source  taskstats|stat
    idle        SECONDS  CPU_NS  STAT_TICKS  RSS_KB
    chunk       NAME  APPEARED  SENT  CPU_NS  STAT_TICKS  HWM_KB  RSS_KB  DUMP_BYTES  ARRIVED_WITH
                RSS_ANON_KB  RSS_FILE_KB
    refused     NAME
    end         CPU_NS_TOTAL  STAT_TICKS_TOTAL  HWM_KB  RSS_KB  RSS_ANON_KB  RSS_FILE_KB
    gone        WHY (the watcher could no longer be read)
(APPEARED and SENT: seconds on the monotonic clock; ARRIVED_WITH: how many chunks
arrived in sent/ within the same 50 ms, >1 when the watcher had a backlog: each of
their lines has the group's figures. RSS: when the chunk was seen in sent/.)
"""
import argparse
import glob
import os
import re
import signal
import socket
import struct
import sys
import time

CHUNK = re.compile(r"\.\d{8,}$")


def nl_attr(kind, payload):
    n = 4 + len(payload)
    return struct.pack("<HH", n, kind) + payload + b"\0" * ((4 - n % 4) % 4)


def nl_attrs(b):
    out, i = {}, 0
    while i + 4 <= len(b):
        n, kind = struct.unpack_from("<HH", b, i)
        if n < 4:
            break
        out[kind & 0x3FFF] = b[i + 4:i + n]
        i += (n + 3) & ~3
    return out


class Taskstats:
    """The TASKSTATS generic netlink family: a thread group's run time in ns."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)  # NETLINK_GENERIC
        self.sock.bind((0, 0))
        self.seq = 0
        # GENL_ID_CTRL, CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_NAME -> CTRL_ATTR_FAMILY_ID
        self.family = struct.unpack("<H", self.ask(0x10, 3, nl_attr(2, b"TASKSTATS\0"))[1][:2])[0]

    def ask(self, kind, cmd, payload):
        self.seq += 1
        body = struct.pack("<BBH", cmd, 1, 0) + payload
        self.sock.send(struct.pack("<IHHII", 16 + len(body), kind, 1, self.seq, 0) + body)
        m = self.sock.recv(65536)
        n, t = struct.unpack_from("<IH", m, 0)
        if t == 2:  # NLMSG_ERROR
            raise OSError(-struct.unpack_from("<i", m, 16)[0], "taskstats")
        return nl_attrs(m[20:n])

    def cpu_ns(self, tgid):
        # TASKSTATS_CMD_GET, TASKSTATS_CMD_ATTR_TGID -> TASKSTATS_TYPE_AGGR_TGID ->
        # TASKSTATS_TYPE_STATS: struct taskstats, cpu_run_virtual_total at offset 72
        a = self.ask(self.family, 1, nl_attr(2, struct.pack("<I", tgid)))
        return struct.unpack_from("<Q", nl_attrs(a[5])[3], 72)[0]


def stat_ticks(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])  # utime, stime


def status_kb(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def dump_size(d):
    sizes = [os.stat(p).st_size for p in glob.glob(os.path.join(d, "jit-*.dump"))]
    return max(sizes) if sizes else 0


def chunks(d):
    try:
        return {n for n in os.listdir(d) if CHUNK.search(n)}
    except FileNotFoundError:
        return set()


def main():
    ap = argparse.ArgumentParser()
    for a in ("pid", "dir", "dump-dir", "out", "idle", "ready"):
        ap.add_argument("--" + a, required=True)
    o = ap.parse_args()
    pid = int(o.pid)
    try:
        ts = Taskstats()
        ts.cpu_ns(pid)
        cpu = lambda: ts.cpu_ns(pid)  # noqa: E731
        source = "taskstats"
    except OSError:
        hz = os.sysconf("SC_CLK_TCK")
        cpu = lambda: stat_ticks(pid) * 1000000000 // hz  # noqa: E731
        source = "stat"
    out = open(o.out, "w", buffering=1)
    out.write(f"cpu_source\t{source}\n")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    c0, s0 = cpu(), stat_ticks(pid)
    time.sleep(float(o.idle))
    c1, s1 = cpu(), stat_ticks(pid)
    out.write(f"idle\t{o.idle}\t{c1 - c0}\t{s1 - s0}\t{status_kb(pid, 'VmRSS')}\n")
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")
    open(o.ready, "w").close()

    appeared = {}
    sent_seen = set()
    refused_seen = set()
    prev_c, prev_s = c1, s1
    while not stop:
        try:
            prev_c, prev_s = poll(o, pid, cpu, out, appeared, sent_seen, refused_seen, prev_c, prev_s)
        except (FileNotFoundError, ProcessLookupError, OSError) as e:
            out.write(f"gone\t{e}\n")
            return 0
        time.sleep(0.05)
    out.write(f"end\t{cpu()}\t{stat_ticks(pid)}\t{status_kb(pid, 'VmHWM')}\t{status_kb(pid, 'VmRSS')}"
              f"\t{status_kb(pid, 'RssAnon')}\t{status_kb(pid, 'RssFile')}\n")


def poll(o, pid, cpu, out, appeared, sent_seen, refused_seen, prev_c, prev_s):
    """One look at the folders: a line for each chunk that arrived; the CPU figures then."""
    now = time.monotonic()
    for n in chunks(o.dir) - appeared.keys():
        appeared[n] = now
    new = sorted(chunks(os.path.join(o.dir, "sent")) - sent_seen)
    if new:
        c, s = cpu(), stat_ticks(pid)
        hwm, rss, dump = status_kb(pid, "VmHWM"), status_kb(pid, "VmRSS"), dump_size(o.dump_dir)
        anon, file = status_kb(pid, "RssAnon"), status_kb(pid, "RssFile")
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        for n in new:
            out.write(f"chunk\t{n}\t{appeared.get(n, now):.3f}\t{now:.3f}\t{c - prev_c}\t{s - prev_s}"
                      f"\t{hwm}\t{rss}\t{dump}\t{len(new)}\t{anon}\t{file}\n")
        sent_seen.update(new)
        prev_c, prev_s = c, s
    for n in sorted(chunks(os.path.join(o.dir, "refused")) - refused_seen):
        out.write(f"refused\t{n}\n")
        refused_seen.add(n)
    return prev_c, prev_s


if __name__ == "__main__":
    sys.exit(main())
