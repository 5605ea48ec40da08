#!/usr/bin/env python3
"""inject-ksymbol: a real recording with a BPF program registered over kernel code for a while.

    tests/inject-ksymbol.py IN OUT NAME ADDR LEN T_REGISTER T_UNREGISTER FROM

Writes OUT, IN with two PERF_RECORD_KSYMBOL records added (type BPF): NAME
registered at [ADDR, ADDR + LEN) at time T_REGISTER, unregistered at T_UNREGISTER
(ns, the recording's clock). Each goes just before the first sample at or after its
time, with the sample_id_all trailer of IN's first non-sample record (its time
replaced), so perf and perfconv both read them as if the kernel had written them.
The samples taken from its registration on whose IP lies in [FROM, FROM + LEN) (some
kernel function) are moved into the program: their IP and the first kernel address
of their callchain become ADDR + (IP - FROM). This machine cannot load BPF programs,
so this is how the KSYMBOL path is tested.

File format (include/uapi/linux/perf_event.h, PERF_RECORD_KSYMBOL = 17):
    struct perf_event_header header; u64 addr; u32 len; u16 ksym_type; u16 flags;
    char name[]; struct sample_id sample_id;
ksym_type 1 is BPF; flags bit 0 is UNREGISTER; the name is NUL-padded to 8 bytes.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from perfdata_rewrite import (PERF_RECORD_SAMPLE, SAMPLE_CPU, SAMPLE_ID,  # noqa: E402
                              SAMPLE_IDENTIFIER, SAMPLE_STREAM_ID, SAMPLE_TID, SAMPLE_TIME,
                              PerfData)

PERF_RECORD_KSYMBOL = 17
PERF_RECORD_MISC_KERNEL = 1


SAMPLE_IP, SAMPLE_ADDR, SAMPLE_PERIOD, SAMPLE_READ, SAMPLE_CALLCHAIN = 1, 8, 256, 16, 32
PERF_CONTEXT_KERNEL = 0xFFFFFFFFFFFFFF80


def field_offset(st, bit):
    """Where field `bit` of a sample lies: the fields before it in sample_type order."""
    order = [SAMPLE_IDENTIFIER, SAMPLE_IP, SAMPLE_TID, SAMPLE_TIME, SAMPLE_ADDR, SAMPLE_ID,
             SAMPLE_STREAM_ID, SAMPLE_CPU, SAMPLE_PERIOD, SAMPLE_CALLCHAIN]
    return 8 + 8 * sum(1 for b in order[:order.index(bit)] if st & b)


def sample_time(rec, st):
    return struct.unpack_from("<Q", rec, field_offset(st, SAMPLE_TIME))[0]


def main():
    src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3].encode()
    addr, length = int(sys.argv[4], 0), int(sys.argv[5], 0)
    times = [int(sys.argv[6]), int(sys.argv[7])]
    moved_from = int(sys.argv[8], 0)
    pd = PerfData(src)
    st = pd.sample_type()
    if not st & SAMPLE_TIME or not st & SAMPLE_IP or st & SAMPLE_READ:
        sys.exit(f"{src}: samples need a time and an IP, and no READ field")
    tbits = [SAMPLE_TID, SAMPLE_TIME, SAMPLE_ID, SAMPLE_STREAM_ID, SAMPLE_CPU, SAMPLE_IDENTIFIER]
    tsz = 8 * sum(1 for b in tbits if st & b)
    time_at = 8 if st & SAMPLE_TID else 0
    trailer = next(r[-tsz:] for _, t, _, r in pd.records() if t != PERF_RECORD_SAMPLE and t < 64)

    def ksymbol(flags, t):
        padded = name + b"\0" * (8 - len(name) % 8)
        tr = bytearray(trailer)
        struct.pack_into("<Q", tr, time_at, t)
        body = struct.pack("<QIHH", addr, length, 1, flags) + padded + bytes(tr)
        return struct.pack("<IHH", PERF_RECORD_KSYMBOL, PERF_RECORD_MISC_KERNEL, 8 + len(body)) + body

    pending = [ksymbol(0, times[0]), ksymbol(1, times[1])]

    def moved(r):
        ip_at = field_offset(st, SAMPLE_IP)
        (ip,) = struct.unpack_from("<Q", r, ip_at)
        if sample_time(r, st) < times[0] or not 0 <= ip - moved_from < length:
            return r
        r = bytearray(r)
        struct.pack_into("<Q", r, ip_at, addr + ip - moved_from)
        if st & SAMPLE_CALLCHAIN:
            at = field_offset(st, SAMPLE_CALLCHAIN)
            (n,) = struct.unpack_from("<Q", r, at)
            chain = struct.unpack_from(f"<{n}Q", r, at + 8)
            if PERF_CONTEXT_KERNEL in chain:
                leaf = chain.index(PERF_CONTEXT_KERNEL) + 1
                struct.pack_into("<Q", r, at + 8 + 8 * leaf, addr + chain[leaf] - moved_from)
        return bytes(r)

    def chunks():
        for _, t, _, r in pd.records():
            while pending and t == PERF_RECORD_SAMPLE and sample_time(r, st) >= times[2 - len(pending)]:
                yield pending.pop(0)
            yield moved(r) if t == PERF_RECORD_SAMPLE else r
        yield from pending

    pd.write(dst, chunks())


if __name__ == "__main__":
    main()
