#!/usr/bin/env python3
"""make-hostile: damaged copies of a real recording and hostile JIT dumps, for
tests/e2e_hostile.sh (issue 12 B). Each is made from a committed file at test time,
so nothing large is committed.

    make-hostile.py OUTDIR

OUTDIR/mmap2-129.data     shapes.data with its MMAP2 of 128 bytes claiming 129
OUTDIR/thread-map.data    shapes.data with its THREAD_MAP claiming 65,528 bytes
OUTDIR/unknown-100.data   shapes.data with 100 samples' type made unknown (200)
OUTDIR/deep.data          mt-g.data with one sample's callchain 3,000 frames deep

and, each with NAME.expect (line 1: the samples a conversion keeps, line 2: the warning
it gives), issue 21 B1 and B2:
OUTDIR/sample-plus8.data  shapes.data with its 1000th sample's size 8 bytes too large
OUTDIR/sample-zero.data   shapes.data with its 1000th sample's size 0
OUTDIR/pipe-plus8.data    mt-pipe.data (pipe mode) with its 1000th sample's size + 8
OUTDIR/id-index-claims.data, kernel-mmap-claims.data, thread-map-claims.data
                          shapes.data with its ID_INDEX, kernel MMAP or THREAD_MAP
                          claiming the most bytes up to 65,528 that end on a record
                          (its own count or its filename's NUL says otherwise)
"""
import os
import struct
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(top, 'scripts'))
from perfdata_rewrite import (SAMPLE_CPU, SAMPLE_ID, SAMPLE_IDENTIFIER,  # noqa: E402
                              SAMPLE_STREAM_ID, SAMPLE_TID, SAMPLE_TIME, PerfData)
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


def expect(name, samples, warning):
    with open(os.path.join(out, name + '.expect'), 'w') as f:
        f.write('%d\n%s\n' % (samples, warning))


def pipe_records(b):
    """(offset, type, size) of each record of a pipe-mode perf.data."""
    p = 16
    while p + 8 <= len(b):
        t, _, s = struct.unpack_from('<IHH', b, p)
        yield p, t, s
        p += s + ((struct.unpack_from('<I', b, p + 8)[0] + 7) & ~7 if t == 66 else 0)


NAMES = {1: 'PERF_RECORD_MMAP', 9: 'PERF_RECORD_SAMPLE', 69: 'PERF_RECORD_ID_INDEX',
         73: 'PERF_RECORD_THREAD_MAP'}


def damaged(at, rtype, size, skipped):
    return ('offset 0x%x: warning: %s: damaged record (size %d): %d bytes skipped to the '
            'next plausible record at offset 0x%x' % (at, NAMES[rtype], size, skipped, at + skipped))


def resize(name, b, recs, nsamples, at, rtype, size, new_size, kept):
    b = bytearray(b)
    struct.pack_into('<H', b, at + 6, new_size)
    write(name + '.data', b)
    expect(name, kept, damaged(at, rtype, new_size, size))


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

# B1: one size field wrong lands inside the next record: that record is skipped to the
# next plausible one, and only it is lost
recs = list(records(shapes))
samples = [(p, s) for p, t, s in recs if t == 9]
p, s = samples[1000]
resize('sample-plus8', shapes, recs, len(samples), p, 9, s, s + 8, len(samples) - 1)
resize('sample-zero', shapes, recs, len(samples), p, 9, s, 0, len(samples) - 1)
pipe = open(os.path.join(top, 'testdata', 'mt-pipe.data'), 'rb').read()
psamples = [(p, s) for p, t, s in pipe_records(pipe) if t == 9]
p, s = psamples[1000]
resize('pipe-plus8', pipe, None, len(psamples), p, 9, s, s + 8, len(psamples) - 1)

# B2: a record claiming up to 65,528 bytes whose extent ends on a record: its own count
# (nr) or its filename's NUL contradict the size, so it is damage, and no sample is lost
for rtype, name in ((69, 'id-index-claims'), (1, 'kernel-mmap-claims'), (73, 'thread-map-claims')):
    at, size = next((p, s) for p, t, s in recs if t == rtype)
    claim = max(p for p, t, s in recs if at < p <= at + 65528) - at
    resize(name, shapes, recs, len(samples), at, rtype, size, claim, len(samples))

# deep.data: the first sample of mt-g.data with 4 or more user frames gets its middle
# frames repeated until its callchain holds 3,000 frames (perf records up to
# kernel.perf_event_max_stack of them; a record holds up to 8,000).
SAMPLE_IP, SAMPLE_ADDR, SAMPLE_PERIOD, SAMPLE_CALLCHAIN = 1, 8, 256, 32
PERF_CONTEXT_MAX = 0xfffffffffffff001
pd = PerfData(os.path.join(top, 'testdata', 'mt-g.data'))
st = pd.sample_type()
order = [SAMPLE_IDENTIFIER, SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_ADDR, SAMPLE_ID,
         SAMPLE_STREAM_ID, SAMPLE_CPU, SAMPLE_PERIOD]
cc = 8 + 8 * sum(1 for b in order if st & b)
done = False
chunks = []
for off, rtype, misc, rec in pd.records():
    if rtype == 9 and not done:
        nr = struct.unpack_from('<Q', rec, cc)[0]
        ips = list(struct.unpack_from('<%dQ' % nr, rec, cc + 8))
        user = [a for a in ips if a < PERF_CONTEXT_MAX]
        if len(ips) == len(user) + 1 and len(user) >= 4:
            mid = user[1:-1]
            deep = [ips[0], user[0]] + mid * (3000 // len(mid)) + [user[-1]]
            rec = (rec[:cc] + struct.pack('<Q', len(deep)) + struct.pack('<%dQ' % len(deep), *deep)
                   + rec[cc + 8 + 8 * nr:])
            rec = rec[:6] + struct.pack('<H', len(rec)) + rec[8:]
            done = True
            print('deep: %d frames at record 0x%x' % (len(deep) - 1, off))
    chunks.append(bytes(rec))
pd.write(os.path.join(out, 'deep.data'), chunks)

# other-kernel.data: kheavy.data recorded, as far as its build ids say, on another kernel
# (issue 12 C10: the test's build-id cache holds this machine's /proc/kallsyms under it).
kbid = bytes.fromhex(open(os.path.join(top, 'testdata', 'kernel.buildid')).read().strip())
kheavy = open(os.path.join(top, 'testdata', 'kheavy.data'), 'rb').read()
assert kbid in kheavy
write('other-kernel.data', kheavy.replace(kbid, bytes([0x11]) * len(kbid)))
