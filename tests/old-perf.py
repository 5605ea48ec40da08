#!/usr/bin/env python3
"""old-perf: a real recording of today's perf, rewritten as older perf and kernels wrote it.

    tests/old-perf.py v1 IN OUT            the version 1 magic ("PERFFILE", perf before
                                           2.6.37), nothing else changed
    tests/old-perf.py mmap2-early IN OUT   every MMAP2 without prot and flags, as
                                           kernels 3.12 to 3.15 (and RHEL 7's 3.10)
                                           wrote it: the name 8 bytes earlier
    tests/old-perf.py kmap-zero IN OUT [--stray-user]
                                           the kernel's map from address 0 with its
                                           _text as pgoff, as perf 3.x wrote it;
                                           --stray-user also puts a stray kernel-half
                                           address (0xffffff0100000001) in place of
                                           the second user frame of the first sample
                                           that has two, and prints that sample's
                                           "pid/tid time" (as perf script prints it)
    tests/old-perf.py pipe-unnamed IN OUT  a pipe-mode recording without the event
                                           names (EVENT_UPDATE, the EVENT_DESC
                                           feature), as perf 4.x's pipes were: names
                                           come from the attrs and the tracing data
    tests/old-perf.py idle IN OUT          not an old layout: every sample of the
                                           thread with the most samples made the
                                           idle task's (pid and tid 0), as a
                                           system-wide recording on a machine with an
                                           idle CPU has them (for a test on a machine
                                           that had none); prints that "pid/tid" and
                                           the count

File mode (the data section's records) through scripts/perfdata_rewrite.py. Records:
u32 type, u16 misc, u16 size. MMAP2 (10): u32 pid, tid; u64 start, len, pgoff;
u32 maj, min; u64 ino, ino_generation; u32 prot, flags; char filename[] padded to 8;
MMAP (1) has the filename after pgoff. A sample's fields are in the order of the
sample_type bits (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, READ,
CALLCHAIN: u64 nr, ips[nr]); in a callchain PERF_CONTEXT_USER (-512) starts the user
frames. A pipe (header of 16 bytes) is records one after the other;
HEADER_TRACING_DATA (66) is followed by its u32 size of bytes, padded to 8.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from perfdata_rewrite import PerfData  # noqa: E402

MMAP, MMAP2, SAMPLE = 1, 10, 9
MISC_MMAP_BUILD_ID = 1 << 14
TRACING_DATA, EVENT_UPDATE, FEATURE = 66, 78, 80
EVENT_DESC = 12
CONTEXT_USER = (1 << 64) - 512
STRAY = 0xFFFFFF0100000001
KERNEL = b"[kernel.kallsyms]"
# sample_type bits before CALLCHAIN that put one u64 in a sample (READ refused)
BEFORE_CALLCHAIN = [1 << 16, 1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 6, 1 << 9, 1 << 7, 1 << 8]
READ, CALLCHAIN = 1 << 4, 1 << 5


def mmap2_early(pd, out):
    def chunks():
        for _, rtype, misc, rec in pd.records():
            if rtype == MMAP2 and not misc & MISC_MMAP_BUILD_ID:
                rec = bytearray(rec[:64] + rec[72:])
                struct.pack_into("<H", rec, 6, len(rec))
                rec = bytes(rec)
            yield rec
    pd.write(out, chunks())


def kernel_map(rtype, rec):
    """(offset of start) when rec is the kernel's own map."""
    name_at = 40 if rtype == MMAP else 72
    pid = struct.unpack_from("<i", rec, 8)[0]
    return pid == -1 and rec[name_at:name_at + len(KERNEL)] == KERNEL


def stray_user(pd, rec):
    """rec with its second user frame made STRAY, and "pid/tid time", or None."""
    st = pd.sample_type()
    if st & READ or not st & CALLCHAIN:
        raise SystemExit(f"{pd.path}: samples with read values or without callchains")
    pos, fields = 8, {}
    for bit in BEFORE_CALLCHAIN:
        if st & bit:
            fields[bit] = pos
            pos += 8
    (nr,) = struct.unpack_from("<Q", rec, pos)
    ips = list(struct.unpack_from("<%dQ" % nr, rec, pos + 8))
    if CONTEXT_USER not in ips:
        return None
    u = ips.index(CONTEXT_USER)
    if nr - u < 3:
        return None
    rec = bytearray(rec)
    struct.pack_into("<Q", rec, pos + 8 + 8 * (u + 2), STRAY)
    pid, tid = struct.unpack_from("<II", rec, fields[1 << 1])
    (t,) = struct.unpack_from("<Q", rec, fields[1 << 2])
    return bytes(rec), "%d/%d %d.%09d" % (pid, tid, t // 10**9, t % 10**9)


def kmap_zero(pd, out, stray):
    said = []

    def chunks():
        for _, rtype, misc, rec in pd.records():
            if rtype in (MMAP, MMAP2) and kernel_map(rtype, rec):
                start, length = struct.unpack_from("<QQ", rec, 16)
                rec = bytearray(rec)
                struct.pack_into("<QQ", rec, 16, 0, start + length)
                rec = bytes(rec)
            elif stray and rtype == SAMPLE and not said:
                r = stray_user(pd, rec)
                if r:
                    rec = r[0]
                    said.append(r[1])
            yield rec
    pd.write(out, chunks())
    if stray:
        if not said:
            raise SystemExit(f"{pd.path}: no sample has two user frames")
        print(said[0])


def idle(pd, out):
    st = pd.sample_type()
    if not st & (1 << 1):
        raise SystemExit(f"{pd.path}: samples without a tid")
    at = 8 + sum(8 for bit in (1 << 16, 1 << 0) if st & bit)
    count = {}
    for _, rtype, _, rec in pd.records():
        if rtype == SAMPLE:
            k = struct.unpack_from("<II", rec, at)
            count[k] = count.get(k, 0) + 1
    busiest = max((n, k) for k, n in count.items() if k != (0, 0))[1] if len(count) > (1 if (0, 0) in count else 0) else None
    if busiest is None:
        raise SystemExit(f"{pd.path}: no sample of a thread other than the idle task")

    def chunks():
        for _, rtype, _, rec in pd.records():
            if rtype == SAMPLE and struct.unpack_from("<II", rec, at) == busiest:
                rec = bytearray(rec)
                struct.pack_into("<II", rec, at, 0, 0)
                rec = bytes(rec)
            yield rec
    pd.write(out, chunks())
    print("%d/%d %d" % (busiest[0], busiest[1], count[busiest]))


def pipe_unnamed(src, out):
    buf = open(src, "rb").read()
    if buf[:8] != b"PERFILE2" or struct.unpack_from("<Q", buf, 8)[0] != 16:
        raise SystemExit(f"{src}: not a pipe-mode perf.data of this byte order")
    parts, pos = [buf[:16]], 16
    while pos + 8 <= len(buf):
        rtype, _, size = struct.unpack_from("<IHH", buf, pos)
        if size < 8:
            raise SystemExit(f"{src}: offset {pos:#x}: record size {size}")
        end = pos + size
        if rtype == TRACING_DATA:
            (tsize,) = struct.unpack_from("<I", buf, pos + 8)
            end += (tsize + 7) & ~7
        drop = rtype == EVENT_UPDATE or (
            rtype == FEATURE and struct.unpack_from("<Q", buf, pos + 8)[0] == EVENT_DESC)
        if not drop:
            parts.append(buf[pos:end])
        pos = end
    with open(out, "wb") as f:
        f.write(b"".join(parts))


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    what, src, out = sys.argv[1:4]
    if what == "pipe-unnamed":
        return pipe_unnamed(src, out)
    pd = PerfData(src)
    if what == "v1":
        with open(out, "wb") as f:
            f.write(b"PERFFILE" + pd.buf[8:])
    elif what == "mmap2-early":
        mmap2_early(pd, out)
    elif what == "idle":
        idle(pd, out)
    elif what == "kmap-zero":
        kmap_zero(pd, out, "--stray-user" in sys.argv[4:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
