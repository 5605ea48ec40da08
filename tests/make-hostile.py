#!/usr/bin/env python3
"""make-hostile: damaged copies of a real recording and hostile JIT dumps, for
tests/e2e_hostile.sh (issue 12 B). Each is made from a committed file at test time,
so nothing large is committed.

    make-hostile.py OUTDIR

OUTDIR/mmap2-129.data     shapes.data with its MMAP2 of 128 bytes claiming 129
OUTDIR/thread-map.data    shapes.data with its THREAD_MAP claiming 65,528 bytes
OUTDIR/unknown-100.data   shapes.data with 100 samples' type made unknown (200)
OUTDIR/deep.data          mt-g.data with one sample's callchain 3,000 frames deep
OUTDIR/odd-info.data      mt-g.data with COMM names of ill-formed UTF-8 and one sample at
                          time 0x123456789abcdef0 (issue 21 B6: info --json kept neither)
OUTDIR/many-maps.data     mt-g.data with the program's code mapped 50,000 times more at
                          its address (issue 21 B8: a lookup must not walk them all)
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

# many-maps.data: the first MMAP2 of mt-g.data that maps the program's code, repeated
# 50,000 times right after itself (the same start, one later than the other in the
# file, as a process that maps one address again and again writes them).
chunks = []
done = False
for off, rtype, misc, rec in pd.records():
    chunks.append(bytes(rec))
    if rtype == 10 and not done and b'/mt\0' in rec:
        chunks.extend([bytes(rec)] * 50000)
        done = True
assert done
pd.write(os.path.join(out, 'many-maps.data'), chunks)

# odd-info.data: every COMM name starts with 0xff, the first sample's time is
# 1311768467463790320 (past 2^53: a double would round it).
chunks = []
comm_done = time_done = False
tpos = 8 + 8 * sum(1 for b in [SAMPLE_IDENTIFIER, SAMPLE_IP, SAMPLE_TID] if st & b)
for off, rtype, misc, rec in pd.records():
    rec = bytearray(rec)
    if rtype == 3:
        rec[16] = 0xff
        comm_done = True
    if rtype == 9 and not time_done and st & SAMPLE_TIME:
        struct.pack_into('<Q', rec, tpos, 0x123456789abcdef0)
        time_done = True
    chunks.append(bytes(rec))
assert comm_done and time_done
pd.write(os.path.join(out, 'odd-info.data'), chunks)
