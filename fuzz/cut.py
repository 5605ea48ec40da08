#!/usr/bin/env python3
"""cut: small fuzzing seeds from the real recordings (issue 21 B10).

    fuzz/cut.py [--samples N] PERF_DATA OUT

OUT is PERF_DATA (file mode, or pipe mode) with every record but the samples, and N
samples (default 200, fewer when they would take more than 40 KB) taken evenly over
the recording, so that the process records, the events and the features stay whole
and the seed is a few hundred records of tens of KB instead of hundreds of KB. A
recording whose samples are inside COMPRESSED records is copied as it is.
fuzz/pair.py uses cut_perfdata() and cut_jitdump() for the pipeline's seeds.
"""
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scripts'))
from perfdata_rewrite import PERF_RECORD_SAMPLE, PerfData  # noqa: E402

SAMPLE_IP, SAMPLE_IDENTIFIER = 1, 1 << 16
SAMPLE_BYTES = 40960
PERF_RECORD_HEADER_TRACING_DATA = 66


def pipe_records(buf):
    """(offset, type, bytes) of each record of a pipe-mode perf.data."""
    pos = 16
    while pos + 8 <= len(buf):
        rtype, _, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            break
        ext = size
        if rtype == PERF_RECORD_HEADER_TRACING_DATA:
            ext += (struct.unpack_from('<I', buf, pos + 8)[0] + 7) & ~7
        yield pos, rtype, buf[pos:pos + ext]
        pos += ext


def spread(n_total, n_keep):
    """The indexes of n_keep of n_total items, evenly spread."""
    if n_total <= n_keep:
        return set(range(n_total))
    return {i * n_total // n_keep for i in range(n_keep)}


def cut_perfdata(path, nsamples):
    """(bytes of the cut recording, the IPs of the samples kept)."""
    buf = open(path, 'rb').read()
    pipe = struct.unpack_from('<Q', buf, 8)[0] == 16
    if pipe:
        recs = [(t, r) for _, t, r in pipe_records(buf)]
    else:
        pd = PerfData(path)
        recs = [(t, r) for _, t, _, r in pd.records()]
    samples = [i for i, (t, _) in enumerate(recs) if t == PERF_RECORD_SAMPLE]
    if samples:  # no more than SAMPLE_BYTES of them (deep stacks take KBs each)
        avg = sum(len(recs[i][1]) for i in samples) / len(samples)
        nsamples = max(1, min(nsamples, int(SAMPLE_BYTES / avg)))
    keep = {samples[i] for i in spread(len(samples), nsamples)}
    chunks = [r for i, (t, r) in enumerate(recs) if t != PERF_RECORD_SAMPLE or i in keep]
    ips = set()
    if not pipe and pd.sample_type() & SAMPLE_IP:
        at = 16 if pd.sample_type() & SAMPLE_IDENTIFIER else 8
        ips = {struct.unpack_from('<Q', recs[i][1], at)[0] for i in keep}
    if pipe:
        return buf[:16] + b''.join(chunks), ips
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, 'cut.data')
        pd.write(out, chunks)
        return open(out, 'rb').read(), ips


def cut_jitdump(buf, ips, max_bytes):
    """The dump's header and, up to max_bytes, the code loads that hold a kept sample's
    IP with the DEBUG_INFO and UNWINDING_INFO records before each, then the first
    records. File format (tools/perf/Documentation/jitdump-specification.txt): a header
    of header.total_size bytes, then records { u32 id; u32 total_size; u64 timestamp; }."""
    if len(buf) < 12:
        return buf
    hsize = struct.unpack_from('<I', buf, 8)[0]
    recs, pos = [], hsize
    while pos + 16 <= len(buf):
        rid, size = struct.unpack_from('<II', buf, pos)
        if size < 16 or pos + size > len(buf):
            break
        recs.append((rid, buf[pos:pos + size]))
        pos += size
    keep, pending = set(), []
    for i, (rid, r) in enumerate(recs):
        if rid == 0 and len(r) >= 56:  # CODE_LOAD: pid, tid, vma, code_addr, code_size
            addr, size = struct.unpack_from('<QQ', r, 32)
            if any(addr <= ip < addr + size for ip in ips):
                keep.update(pending + [i])
            pending = []
        elif rid in (2, 4):  # DEBUG_INFO, UNWINDING_INFO: for the load after them
            pending.append(i)
    out, total = [], hsize
    for i in sorted(keep) + [i for i in range(len(recs)) if i not in keep]:
        if total + len(recs[i][1]) > max_bytes:
            continue
        out.append(i)
        total += len(recs[i][1])
    return buf[:hsize] + b''.join(recs[i][1] for i in sorted(out))


def main():
    args = sys.argv[1:]
    n = 200
    if args[:1] == ['--samples']:
        n, args = int(args[1]), args[2:]
    data, _ = cut_perfdata(args[0], n)
    with open(args[1], 'wb') as f:
        f.write(data)


if __name__ == '__main__':
    main()
