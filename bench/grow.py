#!/usr/bin/env python3
"""grow: a large perf.data made from a real one, for the memory benchmark.

    bench/grow.py IN OUT SIZE_MB

Writes OUT, a file-mode perf.data whose data section holds every record of IN
once and each PERF_RECORD_SAMPLE repeated in place as often as it takes to reach
about SIZE_MB. Everything else (attributes, process records, feature sections
such as build ids) is IN's, with the feature sections' offsets moved by the growth.
The copies keep their times, so the process state around each sample is the
one it was recorded in: perf report and perfconv read OUT like IN, with every
sample count multiplied. It is a test of reading much data, not of many
distinct stacks (the longer real recording in bench/run.sh is that).

perf.data file mode (tools/perf/util/header.h): a header of magic, size,
attr_size, then (offset, size) of attrs, data and event_types, then a 256-bit
feature bitmap; the feature sections' (offset, size) table follows the data.
"""
import struct
import sys

PERF_RECORD_SAMPLE = 9


def main():
    src, dst, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(src, "rb") as f:
        buf = f.read()
    if buf[:8] != b"PERFILE2":
        sys.exit(f"grow: {src}: not a file-mode perf.data in this machine's byte order")
    data_off, data_size = struct.unpack_from("<QQ", buf, 40)
    features = struct.unpack_from("<4Q", buf, 72)
    nfeat = sum(bin(w).count("1") for w in features)
    data_end = data_off + data_size

    samples = other = 0
    pos = data_off
    while pos + 8 <= data_end:
        rtype, _misc, rsize = struct.unpack_from("<IHH", buf, pos)
        if rsize < 8:
            sys.exit(f"grow: {src}: offset {pos:#x}: record size {rsize}")
        if rtype == PERF_RECORD_SAMPLE:
            samples += rsize
        else:
            other += rsize
        pos += rsize
    want = size_mb << 20
    copies = max(1, (want - len(buf) + samples) // max(samples, 1))

    with open(dst, "wb") as out:
        out.write(buf[:data_off])
        pos = data_off
        written = 0
        while pos + 8 <= data_end:
            rtype, _misc, rsize = struct.unpack_from("<IHH", buf, pos)
            rec = buf[pos:pos + rsize]
            n = copies if rtype == PERF_RECORD_SAMPLE else 1
            out.write(rec * n)
            written += rsize * n
            pos += rsize
        shift = written - data_size
        table = data_end
        for i in range(nfeat):
            off, size = struct.unpack_from("<QQ", buf, table + 16 * i)
            out.write(struct.pack("<QQ", off + shift, size))
        out.write(buf[table + 16 * nfeat:])
        out.seek(48)
        out.write(struct.pack("<Q", written))
    print(f"grow: {dst}: {copies} copies of each of {src}'s samples, "
          f"{(len(buf) + shift) / (1 << 20):.0f} MB")


if __name__ == "__main__":
    main()
