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
Also runs speedscope's trace importer (1.25) on each thread, as its code does it, and
checks that it pairs every slice's end with its own begin (no "Tried to end"
warning, each frame left at its own end) and that it reads the file as one whose
frames it names by the event's name alone (with args.url and args.line as file and
line), not by the name followed by the args as JSON.
--nesting-only skips the self times (for a count event, whose period is no time).
Prints one summary line; exits 1 on any failure.
"""
import collections
import json
import sys


HERMES_KEYS = ["line", "column", "name", "category", "url", "params", "allocatedCategory", "allocatedName"]


def js(v):
    """A value as JavaScript's template string shows it."""
    return "undefined" if v is None else str(v)


def speedscope_pairing(thread, events, hermes):
    """The errors speedscope's importer (import/trace-event.ts, 1.25) would make or warn
    of on one thread's X events: it sorts begins by time (longer first) and ends by time,
    takes an end first unless a begin comes earlier, or at the same time with the same
    name and args; of the ends at one time it takes one whose key is that of the frame on
    top of its stack, else one with its name, and leaves the top frame at that end's time."""
    def args_json(e):
        return json.dumps(e.get("args"), ensure_ascii=False, separators=(",", ":")) if "args" in e else None

    def rl(e):
        a = args_json(e)
        return e["name"] + ("" if a is None else " " + a)

    def key(e):
        if hermes:
            a = e["args"]
            return "%s:%s:%s:%s" % (e["name"], js(a.get("url")), js(a.get("line")), js(a.get("column")))
        return rl(e)

    errors = []
    t0 = min(e["ts"] for e in events)
    xs = []
    for n, e in enumerate(events):
        ts = e["ts"] - t0
        if e["dur"] <= 0:
            errors.append("%s: %s at %s lasts no time" % (thread, e["name"], e["ts"]))
        xs.append((ts, e["dur"], n, e))
    xs.sort(key=lambda x: (x[0], -x[1]))
    begins = [(ts, n, e) for ts, dur, n, e in xs]
    ends = sorted([(ts + dur, n, e) for ts, dur, n, e in xs], key=lambda x: x[0])
    bi = 0
    stack = []  # (n, own end)
    own_end = {n: ts + dur for ts, dur, n, e in xs}
    while bi < len(begins) or ends:
        if not ends:
            take_begin = True
        elif bi == len(begins):
            take_begin = False
        else:
            b, en = begins[bi], ends[0]
            take_begin = b[0] < en[0] or (b[0] == en[0] and rl(b[2]) == rl(en[2]))
        if take_begin:
            stack.append(begins[bi][1])
            bi += 1
            continue
        if stack:
            top = events[stack[-1]]
            found = False
            for u in range(1, len(ends)):
                if ends[u][0] > ends[0][0]:
                    break
                if key(ends[u][2]) == key(top):
                    ends[0], ends[u] = ends[u], ends[0]
                    found = True
                    break
            if not found:
                for u in range(1, len(ends)):
                    if ends[u][0] > ends[0][0]:
                        break
                    if ends[u][2]["name"] == top["name"]:
                        ends[0], ends[u] = ends[u], ends[0]
                        break
        t, n, e = ends.pop(0)
        if not stack:
            errors.append("%s: at %.3f us speedscope ends %s with nothing open" % (thread, t, e["name"]))
            continue
        top = events[stack[-1]]
        if e["name"] != top["name"]:
            errors.append("%s: at %.3f us speedscope ends %s with %s on top: not ended" %
                          (thread, t, e["name"], top["name"]))
            continue
        if key(e) != key(top):
            errors.append("%s: at %.3f us speedscope ends %s with another key on top" % (thread, t, key(e)))
        if t != own_end[stack[-1]]:
            errors.append("%s: speedscope ends %s at %.3f us, its end is at %.3f us" %
                          (thread, top["name"], t, own_end[stack[-1]]))
        stack.pop()
        if len(errors) > 20:
            break
    return errors


def main():
    trace_path, samples_path = sys.argv[1], sys.argv[2]
    event = sys.argv[sys.argv.index("--event") + 1] if "--event" in sys.argv else None
    with open(trace_path, "rb") as f:
        doc = json.load(f)
    if not isinstance(doc, list):
        print("error: not the JSON Array Format: speedscope would show each frame's args in its name")
        return 1
    evs = doc
    hermes = bool(evs) and all(k in evs[0].get("args", {}) for k in HERMES_KEYS)
    names = {}
    slices = collections.defaultdict(list)
    keyed = collections.defaultdict(list)
    errors = [] if hermes else ["the first event does not have speedscope's keys for a frame's file and line: "
                                "it would show each frame's args in its name"]
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
        errors.extend(speedscope_pairing(key, evs_of, hermes))
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
    print("%d threads, %d slices nest, speedscope pairs each end with its begin, frames named cleanly; "
          "self time per function within %.2f periods of samples x period%s" %
          (len(slices), nslices, worst, ", %d errors" % len(errors) if errors else ""))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
