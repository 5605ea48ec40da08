#!/usr/bin/env python3
"""make-hostile: damaged copies of a real recording and hostile JIT dumps, for
tests/e2e_hostile.sh (issue 12 B). Each is made from a committed file at test time,
so nothing large is committed.

    make-hostile.py OUTDIR
    make-hostile.py --sp-zero IN OUT N   IN (a --call-graph dwarf recording, not -z) with
                                         its first N samples' stack pointer 0 (issue 21 B11)

OUTDIR/mmap2-129.data     shapes.data with its MMAP2 of 128 bytes claiming 129
OUTDIR/thread-map.data    shapes.data with its THREAD_MAP claiming 65,528 bytes
OUTDIR/unknown-100.data   shapes.data with 100 samples' type made unknown (200)
OUTDIR/deep.data          mt-g.data with one sample's callchain 3,000 frames deep
OUTDIR/odd-info.data      mt-g.data with COMM names of ill-formed UTF-8 and one sample at
                          time 0x123456789abcdef0 (issue 21 B6: info --json kept neither)
OUTDIR/unwind-bad/         testdata/dwarf's node recording beside its jitdump with one
                          UNWINDING_INFO in three cut (its table past the record) and one
                          in three made invalid CFI (issue 21 B7: dropped without a word)
OUTDIR/offcpu-lost.data   testdata/offcpu/offcpu.data with a PERF_RECORD_LOST of 5 events
                          100 ms into the sleeper's first 200 ms sleep (issue 19: an
                          interval across lost events is counted, not invented)
OUTDIR/many-maps.data     mt-g.data with the program's code mapped 50,000 times more at
                          its address (issue 21 B8: a lookup must not walk them all)

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


def sp_zero(src, dst, count):
    """The first `count` samples with user registers get SP (perf register 7) 0."""
    pd = PerfData(src)
    st = pd.sample_type()
    before = [SAMPLE_IDENTIFIER, 1, SAMPLE_TID, SAMPLE_TIME, 8, SAMPLE_ID, SAMPLE_STREAM_ID,
              SAMPLE_CPU, 256]
    out, n = [], 0
    for off, rtype, misc, rec in pd.records():
        if rtype == 9 and n < count:
            rec = bytearray(rec)
            at = 8 + 8 * sum(1 for b in before if st & b)
            assert not st & (1 << 4), 'PERF_SAMPLE_READ not handled'
            if st & 32:  # CALLCHAIN
                at += 8 + 8 * struct.unpack_from('<Q', rec, at)[0]
            if st & 1024:  # RAW
                at += 4 + struct.unpack_from('<I', rec, at)[0]
            assert not st & 2048, 'BRANCH_STACK not handled'
            assert st & 4096, 'no REGS_USER'
            if struct.unpack_from('<Q', rec, at)[0]:
                # perf's x86 mask 0xff0fff for --call-graph dwarf: SP is the 8th value
                struct.pack_into('<Q', rec, at + 8 + 7 * 8, 0)
                n += 1
        out.append(bytes(rec))
    pd.write(dst, out)
    print('sp-zero: %d samples' % n)


if sys.argv[1] == '--sp-zero':
    sp_zero(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    sys.exit(0)
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

# unwind-bad/: the --call-graph dwarf node recording and its dump, every third
# UNWINDING_INFO claiming a table longer than the record, every third (offset by one)
# with its first CIE's length made absurd.
import gzip  # noqa: E402
ub = os.path.join(out, 'unwind-bad')
os.makedirs(ub, exist_ok=True)
dw = os.path.join(top, 'testdata', 'dwarf')
with open(os.path.join(ub, 'node.data'), 'wb') as f:
    f.write(gzip.open(os.path.join(dw, 'node.data.gz')).read())
dump = bytearray(gzip.open(os.path.join(dw, 'jit-1412.dump.gz')).read())
p = struct.unpack_from('<I', dump, 8)[0]
n_unwind = 0
cut = bad_cfi = 0
while p + 16 <= len(dump):
    rid, size = struct.unpack_from('<II', dump, p)
    if size < 16 or p + size > len(dump):
        break
    if rid == 4:
        usize, hsize = struct.unpack_from('<QQ', dump, p + 16)
        if usize > hsize + 8:
            if n_unwind % 3 == 0:
                struct.pack_into('<Q', dump, p + 16, size)
                cut += 1
            elif n_unwind % 3 == 1:
                struct.pack_into('<I', dump, p + 40, 0x7ffffff0)
                bad_cfi += 1
            n_unwind += 1
    p += size
with open(os.path.join(ub, 'jit-1412.dump'), 'wb') as f:
    f.write(dump)
print('unwind-bad: %d UNWINDING_INFO cut, %d made invalid' % (cut, bad_cfi))


# offcpu-lost.data: a PERF_RECORD_LOST built on the sample_id trailer of a SWITCH
# record (a SWITCH record is its header and its trailer: TID, TIME, CPU, IDENTIFIER
# here), its time 100 ms after the sleeper's third switch-out, placed after the first
# record past that time.
op = PerfData(os.path.join(top, 'testdata', 'offcpu', 'offcpu.data'))
recs = list(op.records())
placed = False
outs = {}
for off, rtype, misc, rec in recs:
    if rtype == 14 and misc & (1 << 13):
        outs.setdefault(struct.unpack_from('<I', rec, 12)[0], []).append(struct.unpack_from('<Q', rec, 16)[0])
# the sleeper is the thread whose switch-outs are 200 ms apart three times
sleeper = next(t for t, v in outs.items() if sum(1 for a, b in zip(v, v[1:]) if 0.19e9 < b - a < 0.21e9) >= 2)
at = [t for a, t in zip(outs[sleeper], outs[sleeper][1:]) if 0.19e9 < t - a < 0.21e9][0] - 100000000
chunks = []
for off, rtype, misc, rec in recs:
    chunks.append(bytes(rec))
    if rtype == 14 and not placed and struct.unpack_from('<Q', rec, 16)[0] > at:
        trailer = bytearray(rec[8:])
        struct.pack_into('<Q', trailer, 8, at)
        body = struct.pack('<QQ', struct.unpack_from('<Q', trailer, 24)[0], 5) + bytes(trailer)
        chunks.append(struct.pack('<IHH', 2, 0, 8 + len(body)) + body)
        placed = True
assert placed
op.write(os.path.join(out, 'offcpu-lost.data'), chunks)
