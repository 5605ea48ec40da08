#!/usr/bin/env python3
"""kernel-header: a real recording that says another thing of its kernel.

    tests/kernel-header.py IN OUT [--release RELEASE] [--build-id HEX|none]

Writes OUT, IN with its header's kernel facts replaced: --release puts RELEASE in
HEADER_OSRELEASE (what `uname -r` said where it was recorded); --build-id none drops
the [kernel.kallsyms] entry of HEADER_BUILD_ID (as a pipe-mode or `perf record -z`
recording of perf 6.1 has none), --build-id HEX puts HEX there instead (the entry is
added when IN has none). The data section is not touched: the kernel samples are the
same, only what the recording says of their kernel changes. So the choice of kernel
symbols is tested against each kind of recording on any machine.

File format (tools/perf/util/header.c; perf.data-file-format.txt): the feature
sections' table follows the data section, one { u64 offset, size; } per bit set in
the header's 256-bit feature bitmap (at offset 72), in bit order; each offset is from
the start of the file. The sections are written again one after the other behind the
table (from where the first was), each offset and size computed anew. A string feature (OSRELEASE = 4) is
{ u32 len; char str[len]; } with len padded to 64 bytes, NUL included. BUILD_ID (2)
is a run of { struct perf_event_header header; s32 pid; u8 build_id[20]; u8 size;
u8 reserved[3]; char filename[]; }, header.size the entry's length (filename
NUL-padded to 8 bytes), misc bit 15 saying the size byte is valid.
"""
import argparse
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from perfdata_rewrite import PerfData  # noqa: E402

HEADER_BUILD_ID, HEADER_OSRELEASE = 2, 4
MISC_BUILD_ID_SIZE = 1 << 15
MISC_KERNEL = 1
KERNEL = b"[kernel.kallsyms]"


def features(pd):
    """[(bit, bytes)] of each feature section, in bit order."""
    bits = struct.unpack_from("<4Q", pd.buf, 72)
    table = pd.data_off + pd.data_size
    out = []
    for bit in range(256):
        if bits[bit // 64] >> (bit % 64) & 1:
            off, size = struct.unpack_from("<QQ", pd.buf, table + 16 * len(out))
            if off + size > len(pd.buf):
                raise SystemExit(f"{pd.path}: feature {bit}: section outside the file")
            out.append((bit, pd.buf[off:off + size]))
    return out


def perf_string(s):
    raw = s.encode() + b"\0"
    raw += b"\0" * (-len(raw) % 64)
    return struct.pack("<I", len(raw)) + raw


def build_id_entries(sec):
    """[(filename, entry bytes)] of a BUILD_ID section."""
    pos, out = 0, []
    while pos + 8 <= len(sec):
        size = struct.unpack_from("<H", sec, pos + 6)[0]
        if size < 36 or pos + size > len(sec):
            raise SystemExit(f"BUILD_ID entry at {pos}: size {size}")
        entry = sec[pos:pos + size]
        out.append((entry[36:].split(b"\0", 1)[0], entry))
        pos += size
    return out


def kernel_entry(hexid):
    bid = bytes.fromhex(hexid)
    if not 0 < len(bid) <= 20:
        raise SystemExit(f"build id {hexid}: 1 to 20 bytes")
    name = KERNEL + b"\0"
    name += b"\0" * (-len(name) % 8)
    size = 36 + len(name)
    return (struct.pack("<IHHi", 0, MISC_KERNEL | MISC_BUILD_ID_SIZE, size, -1) +
            bid.ljust(20, b"\0") + struct.pack("<B3x", len(bid)) + name)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--release")
    ap.add_argument("--build-id")
    a = ap.parse_args()
    pd = PerfData(a.input)
    feats = features(pd)
    bits = set(b for b, _ in feats)
    if a.release is not None and HEADER_OSRELEASE not in bits:
        raise SystemExit(f"{a.input}: no HEADER_OSRELEASE to replace")
    if a.build_id is not None and HEADER_BUILD_ID not in bits:
        raise SystemExit(f"{a.input}: no HEADER_BUILD_ID section")
    new = []
    for bit, sec in feats:
        if bit == HEADER_OSRELEASE and a.release is not None:
            sec = perf_string(a.release)
        elif bit == HEADER_BUILD_ID and a.build_id is not None:
            kept = [e for name, e in build_id_entries(sec) if name != KERNEL]
            if a.build_id != "none":
                kept.insert(0, kernel_entry(a.build_id))
            sec = b"".join(kept)
        new.append(sec)
    table = pd.data_off + pd.data_size
    # perf leaves room after the table (for features it did not write): kept, so that a
    # copy with nothing replaced is the same file
    first = struct.unpack_from("<Q", pd.buf, table)[0] if new else 0
    start = max(table + 16 * len(new), first)
    at = start
    with open(a.output, "wb") as out:
        out.write(pd.buf[:table])
        for sec in new:
            out.write(struct.pack("<QQ", at, len(sec)))
            at += len(sec)
        out.write(b"\0" * (start - table - 16 * len(new)))
        for sec in new:
            out.write(sec)


if __name__ == "__main__":
    main()
