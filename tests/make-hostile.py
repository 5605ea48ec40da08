#!/usr/bin/env python3
"""make-hostile: damaged copies of a real recording and hostile JIT dumps, for
tests/e2e_hostile.sh (issue 12 B). Each is made from a committed file at test time,
so nothing large is committed.

    make-hostile.py OUTDIR

OUTDIR/mmap2-129.data     shapes.data with its MMAP2 of 128 bytes claiming 129
OUTDIR/thread-map.data    shapes.data with its THREAD_MAP claiming 65,528 bytes
OUTDIR/unknown-100.data   shapes.data with 100 samples' type made unknown (200)
OUTDIR/deep.data          mt-g.data with one sample's callchain 3,000 frames deep
"""
import os
import struct
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = sys.argv[1]
os.makedirs(out, exist_ok=True)


def records(b):
    """(offset, type, size) of each record of a file-mode perf.data's data section."""
    off, size = struct.unpack_from('<QQ', b, 40)
    p = off
    while p < off + size:
        t, _, s = struct.unpack_from('<IHH', b, p)
        yield p, t, s
        p += s


def write(name, b):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(b)


shapes = open(os.path.join(top, 'testdata', 'shapes.data'), 'rb').read()

b = bytearray(shapes)
at = next(p for p, t, s in records(shapes) if t == 10 and s == 128)
struct.pack_into('<H', b, at + 6, 129)
write('mmap2-129.data', b)

b = bytearray(shapes)
at = next(p for p, t, s in records(shapes) if t == 73)
struct.pack_into('<H', b, at + 6, 65528)
write('thread-map.data', b)

b = bytearray(shapes)
samples = [p for p, t, s in records(shapes) if t == 9]
for p in samples[100:200]:
    struct.pack_into('<I', b, p, 200)
write('unknown-100.data', b)
