#!/usr/bin/env python3
"""chrome_check: structural test of a Chrome Trace Event file that perfconv wrote.

usage: chrome_check.py TRACE.json SAMPLES [--event NAME] [--nesting-only]

SAMPLES is `perfconv -f samples` output for the same recording. Checks that every
thread's "X" slices nest (a child within its parent, siblings apart), that events come
parents first, that each thread has a name, and that the self time of each function
(time in a slice not covered by a child) is its number of leaf samples times the
period, within one period (perfconv places a clock event's samples one period apart
within a run, so the timer interrupt's latency does not move time between
functions).
Also checks what speedscope's trace importer needs to pair each slice's end with
its own begin (it keys a slice by its name and its args as JSON, and pairs ends that
fall at one time greedily by key, then by name): no slice lasts no time; slices that
end at one time and share a name share their key; and the outermost slice beginning
at a time (the first written) has a key no slice ending then has.
--nesting-only skips the self times (for a count event, whose period is no time).
Prints one summary line; exits 1 on any failure.
"""
import collections
import json
import sys


def speedscope_pairing(thread, events):
    """The errors that would make speedscope pair an end with another slice's begin."""
    errors = []
    ends = collections.defaultdict(lambda: collections.defaultdict(set))
    first_begin = {}
    for e in events:
        begin, end = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
        key = e["name"] + " " + json.dumps(e.get("args", {}), ensure_ascii=False, separators=(",", ":"))
        if end <= begin:
            errors.append("%s: %s at %s lasts no time" % (thread, e["name"], e["ts"]))
        ends[end][e["name"]].add(key)
        first_begin.setdefault(begin, (e["name"], key))
    for t, names in sorted(ends.items()):
        for name, keys in names.items():
            if len(keys) > 1:
                errors.append("%s: at %.3f us slices of %s end with %d keys: %s" %
                              (thread, t / 1000, name, len(keys), " / ".join(sorted(keys))))
        name, key = first_begin.get(t, (None, None))
        if key in names.get(name, ()):
            errors.append("%s: at %.3f us %s begins with the key of a slice that ends" % (thread, t / 1000, key))
    return errors


def main():
    trace_path, samples_path = sys.argv[1], sys.argv[2]
    event = sys.argv[sys.argv.index("--event") + 1] if "--event" in sys.argv else None
    with open(trace_path, "rb") as f:
        doc = json.load(f)
    evs = doc["traceEvents"]
    names = {}
    slices = collections.defaultdict(list)
    keyed = collections.defaultdict(list)
    errors = []
    for i, e in enumerate(evs):
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["ph"] == "X":
            slices[(e["pid"], e["tid"])].append((e["ts"], e["dur"], e["name"], e["cat"], i))
            keyed[(e["pid"], e["tid"])].append(e)
        elif e["ph"] != "M":
            errors.append("unexpected event %r" % e)
    self_time = collections.Counter()
    nslices = 0
    for key, sl in slices.items():
        if key not in names:
            errors.append("thread %s has no thread_name" % (key,))
        # file order is begin order: ts ascending, a parent before its children
        for a, b in zip(sl, sl[1:]):
            if b[0] < a[0]:
                errors.append("%s: slice %s at %s written after one at %s" % (key, b[2], b[0], a[0]))
                break
        stack = []  # [end, name, child time]
        eps = 0.0005  # half a nanosecond, in microseconds
        def close(top):
            self_time[(key, top[1])] += (top[3] - top[2])
        for ts, dur, name, cat, _ in sl:
            nslices += 1
            end = ts + dur
            while stack and stack[-1][0] <= ts + eps:
                top = stack.pop()
                close(top)
                if stack:
                    stack[-1][2] += top[3]
            if stack and end > stack[-1][0] + eps:
                errors.append("%s: %s [%s, %s] overlaps the end of its parent %s at %s" %
                              (key, name, ts, end, stack[-1][1], stack[-1][0]))
            stack.append([end, name, 0.0, dur])
        while stack:
            top = stack.pop()
            close(top)
            if stack:
                stack[-1][2] += top[3]
    for key, evs_of in keyed.items():
        errors.extend(speedscope_pairing(key, evs_of))
    # expected: leaf samples times period, per thread and function
    want = collections.Counter()
    period = {}
    with open(samples_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            comm, pidtid, cpu, t, ev, per, stack = line.rstrip("\n").split("\t")
            if event and not (ev == event or ev.startswith(event + ":")):
                continue
            pid, tid = map(int, pidtid.split("/"))
            leaf = stack.split(";")[-1]
            want[((pid, tid), leaf)] += int(per) / 1000.0
            period[(pid, tid)] = int(per) / 1000.0
    worst = 0.0
    for k in ([] if "--nesting-only" in sys.argv else set(want) | set(self_time)):
        diff = abs(self_time[k] - want[k])
        per = period.get(k[0], 0)
        tol = per
        worst = max(worst, diff / per if per else 0)
        if diff > tol:
            errors.append("%s (tid %s): self time %.3f us, samples say %.3f us" %
                          (k[1], k[0][1], self_time[k], want[k]))
    for e in errors[:20]:
        print("error:", e)
    print("%d threads, %d slices nest, keyed as speedscope pairs them; "
          "self time per function within %.2f periods of samples x period%s" %
          (len(slices), nslices, worst, ", %d errors" % len(errors) if errors else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
