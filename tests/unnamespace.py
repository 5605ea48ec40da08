#!/usr/bin/env python3
"""unnamespace: a recording of a JIT process in a pid namespace, as if it had been in none.

    tests/unnamespace.py IN OUT NSPID HOSTPID

For perf's answer on a recording of a process in a pid namespace (a container): perf
6.1's inject --jit reads a mapped jit-N.dump only when N is the process's pid, and
translates the dump's pids only with the process's /proc entry, gone once it exited.
Writes OUT, IN with each PERF_RECORD_MMAP2 of HOSTPID naming ".../jit-NSPID.dump"
naming ".../jit-HOSTPID.dump" instead (the record resized, its sample_id_all trailer
kept), and that dump, a copy of the one mapped with its pids (header, code loads and
moves) HOSTPID instead of NSPID.

File formats: include/uapi/linux/perf_event.h, PERF_RECORD_MMAP2 = 10:
    struct perf_event_header header; u32 pid, tid; u64 addr, len, pgoff;
    u32 maj, min; u64 ino, ino_generation; u32 prot, flags; char filename[];
    struct sample_id sample_id;
the name NUL-padded to 8 bytes. tools/perf/util/jitdump.h: a header of u32 magic,
version, total_size, elf_mach, pad1, pid, ...; records of u32 id, total_size, u64
timestamp, then for CODE_LOAD (0) and CODE_MOVE (2) u32 pid, tid first.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from perfdata_rewrite import (SAMPLE_CPU, SAMPLE_ID, SAMPLE_IDENTIFIER,  # noqa: E402
                              SAMPLE_STREAM_ID, SAMPLE_TID, SAMPLE_TIME, PerfData)

PERF_RECORD_MMAP2 = 10
NAME_AT = 72
JIT_CODE_LOAD, JIT_CODE_MOVE = 0, 2


def repid_dump(src, dst, nspid, hostpid):
    buf = bytearray(open(src, "rb").read())
    (hsize,) = struct.unpack_from("<I", buf, 8)
    if struct.unpack_from("<I", buf, 20)[0] == nspid:
        struct.pack_into("<I", buf, 20, hostpid)
    pos = hsize
    while pos + 16 <= len(buf):
        rid, size = struct.unpack_from("<II", buf, pos)
        if size < 16:
            break
        if rid in (JIT_CODE_LOAD, JIT_CODE_MOVE) and pos + 24 <= len(buf):
            pid, tid = struct.unpack_from("<II", buf, pos + 16)
            struct.pack_into("<II", buf, pos + 16, hostpid if pid == nspid else pid,
                             hostpid if tid == nspid else tid)
        pos += size
    open(dst, "wb").write(buf)


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.split("\n\n")[1])
    src, dst = sys.argv[1:3]
    nspid, hostpid = int(sys.argv[3]), int(sys.argv[4])
    old, new = f"jit-{nspid}.dump".encode(), f"jit-{hostpid}.dump".encode()
    pd = PerfData(src)
    st = pd.sample_type()
    trailer = 8 * sum(1 for b in (SAMPLE_TID, SAMPLE_TIME, SAMPLE_ID, SAMPLE_STREAM_ID,
                                  SAMPLE_CPU, SAMPLE_IDENTIFIER) if st & b)
    out, dumps = [], set()
    for _, rtype, misc, rec in pd.records():
        if rtype == PERF_RECORD_MMAP2 and struct.unpack_from("<I", rec, 8)[0] == hostpid:
            name = rec[NAME_AT:len(rec) - trailer].split(b"\0", 1)[0]
            if name.endswith(b"/" + old):
                dumps.add(name.decode())
                name = name[:-len(old)] + new
                padded = name + b"\0" * (8 - len(name) % 8)
                body = rec[8:NAME_AT] + padded + rec[len(rec) - trailer:]
                rec = struct.pack("<IHH", rtype, misc, 8 + len(body)) + body
        out.append(rec)
    if not dumps:
        sys.exit(f"{src}: pid {hostpid} maps no jit-{nspid}.dump")
    pd.write(dst, out)
    for d in dumps:
        repid_dump(d, os.path.join(os.path.dirname(d), new.decode()), nspid, hostpid)
    print(f"unnamespace: {', '.join(sorted(dumps))} as jit-{hostpid}.dump")


if __name__ == "__main__":
    main()
