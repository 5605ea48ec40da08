#!/usr/bin/env python3
"""offcpu_check: perfconv's off-CPU and wall time per thread against perf's own.

    offcpu_check.py switches SCRIPT OFFCPU.samples [WALL.samples]
        SCRIPT: `perf script --show-switch-events --show-task-events -F comm,tid,time,event` of the
        recording. Each thread's off-CPU time is the sum, over its PERF_RECORD_SWITCH
        OUT records, of the time to its next IN record: perfconv's (the samples output
        of --time offcpu) must be within 1% of it for every thread off the CPU 1 ms or
        more. With WALL.samples (--time wall): each thread's wall time must be within
        1% of its elapsed time, from its first switch-in to its exit (or its last
        switch-out).
    offcpu_check.py tracepoints SCRIPT OFFCPU.samples
        SCRIPT: `perf script -F tid,time,event,trace` of a system-wide recording of
        sched:sched_switch: a thread's off-CPU time runs from each switch naming it
        prev_pid to the next naming it next_pid, on any CPU.
    offcpu_check.py timehist TIMEHIST OFFCPU.samples
        TIMEHIST: `perf sched timehist` of a system-wide recording with sched_wakeup:
        each thread's wait time plus scheduling delay over its rows is its off-CPU
        time; perfconv's must be within 1% of it for every thread off 1 ms or more.
Prints one line per thread compared and a summary; exits 1 when one differs.
"""
import re
import sys

TOL = 0.01
MIN_NS = 1_000_000


def perfconv_totals(path):
    """tid -> (name, summed period in ns) of a samples file."""
    out = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.rstrip("\n").split("\t")
        if len(f) < 7:
            continue
        tid = int(f[1].split("/")[1])
        name, ns = out.get(tid, (f[0], 0))
        out[tid] = (f[0], ns + int(f[5]))
    return out


def switches(path):
    """tid -> (name, off-CPU ns, elapsed ns) from perf script's switch records."""
    rec = re.compile(r"^\s*(.*?)\s+(\d+)\s+(\d+)\.(\d+):\s+PERF_RECORD_SWITCH(?:_CPU_WIDE)?\s+(IN|OUT)")
    exit_rec = re.compile(r"^\s*(.*?)\s+(\d+)\s+(\d+)\.(\d+):\s+PERF_RECORD_EXIT")
    out_at, off, first_in, last_out, names = {}, {}, {}, {}, {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = exit_rec.match(line)
        if m:
            # a thread's last switch-out is its exit: perf has closed its events then
            last_out[int(m.group(2))] = int(m.group(3)) * 10**9 + int(m.group(4).ljust(9, "0")[:9])
            continue
        m = rec.match(line)
        if not m:
            continue
        name, tid = m.group(1), int(m.group(2))
        t = int(m.group(3)) * 10**9 + int(m.group(4).ljust(9, "0")[:9])
        names[tid] = name
        if m.group(5) == "OUT":
            out_at.setdefault(tid, t)
            last_out[tid] = t
        else:
            first_in.setdefault(tid, t)
            if tid in out_at:
                off[tid] = off.get(tid, 0) + t - out_at.pop(tid)
    return {tid: (names[tid], off.get(tid, 0), last_out.get(tid, 0) - first_in.get(tid, 0))
            for tid in names}


def tracepoints(path):
    """tid -> (name, off-CPU ns) from perf script's sched_switch lines."""
    rec = re.compile(r"^\s*(-?\d+)\s+(\d+)\.(\d+):\s+sched:sched_switch:\s+prev_comm=(.*?) prev_pid=(\d+) "
                     r".*next_comm=(.*?) next_pid=(\d+)")
    out_at, off, names = {}, {}, {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = rec.match(line)
        if not m:
            continue
        t = int(m.group(2)) * 10**9 + int(m.group(3).ljust(9, "0")[:9])
        prev, nxt = int(m.group(5)), int(m.group(7))
        names.setdefault(prev, m.group(4))
        names.setdefault(nxt, m.group(6))
        out_at[prev] = t
        if nxt in out_at:
            off[nxt] = off.get(nxt, 0) + t - out_at.pop(nxt)
    return {tid: (names[tid], off.get(tid, 0)) for tid in names}


def timehist(path):
    """tid -> (name, wait + sch delay in ns) from perf sched timehist's rows."""
    row = re.compile(r"^\s*\d+\.\d+\s+\[\d+\]\s+(.*?)\[(\d+)(?:/\d+)?\]\s+([\d.]+)\s+([\d.]+)\s+")
    out = {}
    for line in open(path, encoding="utf-8", errors="replace"):
        m = row.match(line)
        if not m:
            continue
        tid = int(m.group(2))
        ns = round((float(m.group(3)) + float(m.group(4))) * 1e6)
        name, total = out.get(tid, (m.group(1), 0))
        out[tid] = (m.group(1), total + ns)
    return out


def compare(what, truth, ours):
    bad = n = 0
    for tid in sorted(truth):
        name, want = truth[tid]
        if want < MIN_NS or tid == 0:
            continue
        got = ours.get(tid, (name, 0))[1]
        n += 1
        diff = (got - want) / want
        ok = abs(diff) <= TOL
        bad += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {what} {name}/{tid}: perf {want / 1e6:.3f} ms, "
              f"perfconv {got / 1e6:.3f} ms ({100 * diff:+.2f}%)")
    return n, bad


def main():
    mode, src, offcpu = sys.argv[1:4]
    ours = perfconv_totals(offcpu)
    if mode == "switches":
        sw = switches(src)
        n, bad = compare("off-CPU", {t: (v[0], v[1]) for t, v in sw.items()}, ours)
        if len(sys.argv) > 4:
            n2, bad2 = compare("wall vs elapsed", {t: (v[0], v[2]) for t, v in sw.items()},
                               perfconv_totals(sys.argv[4]))
            n, bad = n + n2, bad + bad2
    elif mode == "tracepoints":
        n, bad = compare("off-CPU", tracepoints(src), ours)
    else:
        n, bad = compare("off-CPU", timehist(src), ours)
    print(f"offcpu_check: {n - bad} of {n} threads within {100 * TOL:.0f}%")
    return 1 if bad or not n else 0


if __name__ == "__main__":
    sys.exit(main())
