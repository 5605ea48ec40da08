#!/usr/bin/env python3
"""format_samples: how many samples one perfconv output holds, read from the format itself.

    tests/format_samples.py FORMAT FILE [PERIOD]

Prints one number: folded, the sum of the lines' counts; samples, its lines; pprof and
otlp, the sum of the values of the sample type whose unit is "count" (otlp: a sample
without values counts its timestamps); svg, the root frame's count ("all", its title's
second line); speedscope and chrome, which weigh samples in time, the total time (every
profile's weights; every thread's outermost slices) divided by PERIOD, the clock event's
period in nanoseconds, rounded (a clock recorded with -F has one period; chrome's slices
are microseconds in floating point, hence the rounding); firefox, the rows of every
thread's samples table.

Protocol buffers are read with a small decoder of their wire format: pprof's
profile.proto (Profile: sample_type 1, sample 2 {value 2}, string_table 6; ValueType:
type 1, unit 2) and OTLP's (formats/proto/otlp_profiles*.proto: request.resource_profiles 1
.scope_profiles 2 .profiles 2 {sample_type 1, samples 2 {values 4, timestamps 5}};
request.dictionary 2 .string_table 5), so it needs no protobuf package.
"""
import collections
import gzip
import json
import re
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    """(number, value) of a message: ints for varint/fixed fields, bytes for the others."""
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(b[i:i + 4], "little"), i + 4
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            raise SystemExit(f"wire type {wt} at {i}")
        yield num, v


def packed(vals):
    """A repeated varint field's values, packed (bytes) or not (ints)."""
    out = []
    for v in vals:
        if isinstance(v, int):
            out.append(v)
        else:
            i = 0
            while i < len(v):
                x, i = varint(v, i)
                out.append(x)
    return out


def group(b):
    g = collections.defaultdict(list)
    for n, v in fields(b):
        g[n].append(v)
    return g


def read(path):
    with open(path, "rb") as f:
        b = f.read()
    return gzip.decompress(b) if b[:2] == b"\x1f\x8b" else b


def pprof(path):
    p = group(read(path))
    strings = [s.decode() for s in p[6]]
    units = [strings[group(t).get(2, [0])[0]] for t in p[1]]
    k = units.index("count")
    return sum(packed(group(s)[2])[k] for s in p[2])


def otlp(path):
    req = group(read(path))
    strings = [s.decode() for s in group(req[2][0])[5]] if req.get(2) else [""]
    total = 0
    for rp in req[1]:
        for sp in group(rp)[2]:
            for prof in group(sp)[2]:
                pr = group(prof)
                st = group(pr[1][0]) if pr.get(1) else {}
                if strings[st.get(2, [0])[0]] != "count":
                    continue
                for s in pr[2]:
                    g = group(s)
                    vals = packed(g.get(4, []))
                    ts = sum(len(v) // 8 if isinstance(v, bytes) else 1 for v in g.get(5, []))
                    total += vals[0] if vals else ts
    return total


def chrome_ns(path):
    with open(path) as f:
        d = json.load(f)
    ev = d["traceEvents"] if isinstance(d, dict) else d
    by = collections.defaultdict(list)
    for e in ev:
        if e.get("ph") == "X":
            by[(e["pid"], e["tid"])].append(e)
    tot = 0.0
    for v in by.values():
        v.sort(key=lambda e: (e["ts"], -e["dur"]))
        end = float("-inf")
        for e in v:
            if e["ts"] >= end - 1e-6:
                tot += e["dur"]
                end = e["ts"] + e["dur"]
    return tot * 1000


def main():
    fmt, path = sys.argv[1], sys.argv[2]
    period = float(sys.argv[3]) if len(sys.argv) > 3 else 0
    if fmt == "folded":
        n = sum(int(line.rsplit(" ", 1)[1]) for line in open(path) if line.strip())
    elif fmt == "samples":
        n = sum(1 for _ in open(path))
    elif fmt == "pprof":
        n = pprof(path)
    elif fmt == "otlp":
        n = otlp(path)
    elif fmt == "svg":
        m = re.search(r"<title>all\n(\d+) samples", open(path).read())
        n = int(m.group(1)) if m else -1
    elif fmt == "speedscope":
        with open(path) as f:
            d = json.load(f)
        n = round(sum(sum(p["weights"]) for p in d["profiles"]) / period)
    elif fmt == "chrome":
        n = round(chrome_ns(path) / period)
    elif fmt == "firefox":
        # one row of a thread's samples table per sample, its weight in time
        with open(path) as f:
            d = json.load(f)
        n = sum(t["samples"]["length"] for t in d["threads"])
    else:
        raise SystemExit(f"format_samples: unknown format {fmt!r}")
    print(n)


if __name__ == "__main__":
    main()
