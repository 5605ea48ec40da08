#!/usr/bin/env python3
"""pprof_strip: a gzipped pprof's Profile message without the fields named, for comparing
what two profiles say apart from those (by default time_nanos and duration_nanos, which a
watcher sets to its chunk's window).

    tests/pprof_strip.py IN.pb.gz OUT [FIELD_NUMBER ...]

Writes the message's other top-level fields, in their order, as they were."""
import gzip
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def main():
    src, dst = sys.argv[1], sys.argv[2]
    drop = {int(x) for x in sys.argv[3:]} or {9, 10}
    b = gzip.open(src).read()
    out = bytearray()
    i = 0
    while i < len(b):
        start = i
        key, i = varint(b, i)
        kind = key & 7
        if kind == 0:
            _, i = varint(b, i)
        elif kind == 1:
            i += 8
        elif kind == 2:
            n, i = varint(b, i)
            i += n
        elif kind == 5:
            i += 4
        else:
            sys.exit(f"{src}: offset {start}: wire type {kind}: not a pprof")
        if key >> 3 not in drop:
            out += b[start:i]
    open(dst, 'wb').write(out)


main()
