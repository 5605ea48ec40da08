#!/usr/bin/python3
"""make-lbr: a `perf record --call-graph lbr` recording made from a --call-graph dwarf one.

Usage: make-lbr.py DWARF.data GOLDEN.script.gz OUT.data --symfs DIR
                   [--depth 32] [--cmdline TEXT] [--truth TRUTH.script.gz]

There is no Intel machine with LBR here, so the LBR recording is written from a real
dwarf recording whose true stacks perf knows: each sample's user stack, as perf script
unwound it at recording time (GOLDEN: perf script --no-inline --ns -F
comm,pid,tid,time,event,period,ip,sym,dso; the binaries under --symfs at their recorded
paths, the vdso as [vdso]), becomes the LBR call stack the hardware
would have recorded, and the file is laid out as perf 6.1 writes an LBR recording
(tools/perf/util/evsel.c evsel__config_callchain, record_opts lbr):

- the attr: sample_type without REGS_USER and STACK_USER, with BRANCH_STACK;
  branch_sample_type USER | CALL_STACK | NO_FLAGS | NO_CYCLES | HW_INDEX;
  exclude_callchain_user cleared (perf sets it for dwarf only), no user registers or
  stack; the event made cycles:P (LBR needs a hardware event), as perf names it on
  Intel; the same in the EVENT_DESC feature;
- each sample: the callchain as the kernel writes it without exclude_callchain_user:
  its kernel part, PERF_CONTEXT_USER, the interrupted user address, then the kernel's
  frame-pointer walk of the user stack (arch/x86/events/core.c perf_callchain_user:
  [bp] the next frame, [bp + 8] a return address), emulated on the sample's stack
  copy and stopped where that copy ends: the garbage it gives in code built without
  frame pointers is what real LBR recordings hold; then the branch stack: u64 nr,
  u64 hw_idx, nr entries {from, to, flags}, innermost call first, at most --depth
  (the hardware's: 32 on Skylake and later, 16 on Haswell and Broadwell; deeper calls
  are lost, as the hardware loses them). Entry k is the call from frame k+1 into frame
  k: `from` the call instruction (found with objdump: the instruction holding the
  return address - 1 that perf prints for a caller frame), `to` its target (a direct
  call's operand: a PLT stub when it calls one; for an indirect call the start of the
  called function); flags 0 (NO_FLAGS, NO_CYCLES); hw_idx the top of the LBR ring
  ((calls - 1) mod depth);
- the data uncompressed (COMPRESSED records of a -z source replaced by their events,
  feature COMPRESSED dropped), feature BRANCH_STACK (empty, as perf writes it) added,
  CMDLINE rewritten to --cmdline; every other record and feature as it was.

--truth writes the stacks the LBR recording holds the truth of: GOLDEN with the event
renamed and each user stack cut after --depth calls, as the hardware cuts it (the
kernel part, the leaf and the innermost --depth callers kept).

Needs objdump and nm (binutils), and libzstd for a -z source.
"""

import argparse
import bisect
import ctypes
import os
import re
import struct
import subprocess
import sys

PERF_CONTEXT_KERNEL = (1 << 64) - 128
PERF_CONTEXT_USER = (1 << 64) - 512
PERF_CONTEXT_MAX = (1 << 64) - 4095

SAMPLE_BITS = ["IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD",
               "STREAM_ID", "RAW", "BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT",
               "DATA_SRC", "IDENTIFIER", "TRANSACTION", "REGS_INTR"]
S = {n: 1 << i for i, n in enumerate(SAMPLE_BITS)}
HANDLED = (S["IP"] | S["TID"] | S["TIME"] | S["ADDR"] | S["CALLCHAIN"] | S["ID"] | S["CPU"] |
           S["PERIOD"] | S["STREAM_ID"] | S["REGS_USER"] | S["STACK_USER"] | S["DATA_SRC"] |
           S["IDENTIFIER"] | S["WEIGHT"] | S["TRANSACTION"])

BRANCH_USER, BRANCH_CALL_STACK = 1 << 0, 1 << 11
BRANCH_NO_FLAGS, BRANCH_NO_CYCLES, BRANCH_HW_INDEX = 1 << 14, 1 << 15, 1 << 17
EXCLUDE_CALLCHAIN_USER = 1 << 22

RECORD_SAMPLE, RECORD_MMAP, RECORD_MMAP2, RECORD_COMPRESSED = 9, 1, 10, 81
FEAT_CMDLINE, FEAT_EVENT_DESC, FEAT_BRANCH_STACK, FEAT_COMPRESSED = 11, 12, 15, 27
REG_BP, REG_SP, REG_IP = 6, 7, 8  # x86-64 perf_regs numbering


def die(msg):
    sys.exit("make-lbr: " + msg)


class Zstd:
    """libzstd's streaming decompressor (perf decodes its COMPRESSED records so)."""

    class Buf(ctypes.Structure):
        _fields_ = [("ptr", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]

    def __init__(self):
        self.lib = ctypes.CDLL("libzstd.so.1")
        self.lib.ZSTD_createDStream.restype = ctypes.c_void_p
        self.lib.ZSTD_decompressStream.restype = ctypes.c_size_t
        self.lib.ZSTD_decompressStream.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        self.lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
        self.ds = self.lib.ZSTD_createDStream()
        self.lib.ZSTD_initDStream(ctypes.c_void_p(self.ds))

    def feed(self, data):
        src = ctypes.create_string_buffer(data, len(data))
        inb = Zstd.Buf(ctypes.cast(src, ctypes.c_void_p), len(data), 0)
        out = bytearray()
        dst = ctypes.create_string_buffer(1 << 20)
        while True:
            outb = Zstd.Buf(ctypes.cast(dst, ctypes.c_void_p), len(dst), 0)
            r = self.lib.ZSTD_decompressStream(ctypes.c_void_p(self.ds), ctypes.byref(outb), ctypes.byref(inb))
            if self.lib.ZSTD_isError(r):
                die("zstd: bad compressed record")
            out += dst.raw[:outb.pos]
            if inb.pos == inb.size and outb.pos < outb.size:
                return bytes(out)


class Elf:
    """A binary's PT_LOAD segments and its instructions (objdump), by address."""

    def __init__(self, path):
        d = open(path, "rb").read()
        if d[:4] != b"\x7fELF" or d[4] != 2:
            die("%s: not a 64-bit ELF file" % path)
        phoff, = struct.unpack_from("<Q", d, 32)
        phentsize, phnum = struct.unpack_from("<HH", d, 54)
        self.loads = []
        for i in range(phnum):
            p_type, _, p_offset, p_vaddr, _, p_filesz = struct.unpack_from("<IIQQQQ", d, phoff + i * phentsize)
            if p_type == 1:
                self.loads.append((p_offset, p_vaddr, p_filesz))
        self.starts, self.insns = [], []
        out = subprocess.run(["objdump", "-d", "-w", "--insn-width=16", path],
                             capture_output=True, text=True, check=True).stdout
        self.funcs = []
        for extra in ([], ["-D"]):
            nm = subprocess.run(["nm", "-n", "--defined-only"] + extra + [path],
                                capture_output=True, text=True).stdout
            for line in nm.splitlines():
                f = line.split()
                if len(f) >= 3 and f[1] in "tTwWiI":
                    self.funcs.append(int(f[0], 16))
        self.funcs.sort()
        line_re = re.compile(r"^\s*([0-9a-f]+):\t((?:[0-9a-f]{2} )+)\s*\t?(.*)$")
        for line in out.splitlines():
            m = line_re.match(line)
            if not m:
                continue
            start = int(m.group(1), 16)
            size = len(m.group(2).split())
            self.starts.append(start)
            self.insns.append((start, size, m.group(3).strip()))

    def vaddr(self, off):
        for p_offset, p_vaddr, p_filesz in self.loads:
            if p_offset <= off < p_offset + p_filesz:
                return off - p_offset + p_vaddr
        die("file offset 0x%x in no segment" % off)

    def func_start(self, vaddr):
        i = bisect.bisect_right(self.funcs, vaddr) - 1
        if i < 0:
            die("0x%x in no function" % vaddr)
        return self.funcs[i]

    def insn_at(self, vaddr):
        i = bisect.bisect_right(self.starts, vaddr) - 1
        if i < 0:
            return None
        start, size, text = self.insns[i]
        return self.insns[i] if start <= vaddr < start + size else None


def sections(d, off, n):
    return [struct.unpack_from("<QQ", d, off + 16 * i) for i in range(n)]


def parse_sample(rec, st, regs_mask):
    """A sample's fields, in order, as (bit, value-or-bytes)."""
    q, f = 8, {}
    for name in ("IDENTIFIER", "IP", "TID", "TIME", "ADDR", "ID", "STREAM_ID", "CPU", "PERIOD"):
        if st & S[name]:
            f[name] = rec[q:q + 8]
            q += 8
    if st & S["CALLCHAIN"]:
        n, = struct.unpack_from("<Q", rec, q)
        f["CALLCHAIN"] = list(struct.unpack_from("<%dQ" % n, rec, q + 8))
        q += 8 + 8 * n
    if st & S["REGS_USER"]:
        abi, = struct.unpack_from("<Q", rec, q)
        q += 8
        regs = {}
        if abi:
            bits = [b for b in range(64) if regs_mask >> b & 1]
            vals = struct.unpack_from("<%dQ" % len(bits), rec, q)
            regs = dict(zip(bits, vals))
            q += 8 * len(bits)
        f["REGS_USER"] = regs
    if st & S["STACK_USER"]:
        size, = struct.unpack_from("<Q", rec, q)
        q += 8
        stack, dyn = b"", 0
        if size:
            stack = rec[q:q + size]
            dyn, = struct.unpack_from("<Q", rec, q + size)
            q += size + 8
        f["STACK_USER"] = stack[:dyn]
    for name in ("WEIGHT", "DATA_SRC", "TRANSACTION"):
        if st & S[name]:
            f[name] = rec[q:q + 8]
            q += 8
    if q != len(rec):
        die("sample of %d bytes, %d read" % (len(rec), q))
    return f


def fp_walk(regs, stack, room):
    """The kernel's frame-pointer walk of a user stack, on the sample's copy of it."""
    out = []
    sp, fp = regs.get(REG_SP, 0), regs.get(REG_BP, 0)
    while len(out) < room:
        if not (sp <= fp and fp + 16 <= sp + len(stack)):
            break  # outside the copy: what the kernel read there is not known
        nxt, ret = struct.unpack_from("<QQ", stack, fp - sp)
        out.append(ret)
        fp = nxt
    return out


def golden_stacks(path):
    """perf script's stacks of the dwarf recording (a golden of
    perf script --no-inline --ns -F comm,pid,tid,time,event,period,ip,sym,dso):
    (tid, time) -> [(rel, sym, dso)], leaf first."""
    import gzip
    head_re = re.compile(r"^\S.*?\s+-?\d+/(\d+)\s+(?:\[\d+\]\s+)?(\d+)\.(\d{9}):")
    frame_re = re.compile(r"^\s+([0-9a-f]+) (.*) \(([^()]*)\)$")
    stacks, key = {}, None
    for line in gzip.open(path, "rt"):
        line = line.rstrip("\n")
        m = head_re.match(line)
        if m:
            key = (int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3)))
            stacks[key] = []
            continue
        m = frame_re.match(line)
        if m and key:
            stacks[key].append((int(m.group(1), 16), m.group(2), m.group(3)))
    return stacks


def write_truth(golden, path, depth):
    import gzip
    frame_re = re.compile(r"^\s+[0-9a-f]+ .* \(([^()]*)\)$")
    out, user = [], 0
    for line in gzip.open(golden, "rt"):
        m = frame_re.match(line)
        if m and not m.group(1).startswith("[kernel"):
            user += 1
            if user > depth + 1:
                continue
        elif not m:
            user = 0
            line = line.replace(" cpu-clock:pppH: ", " cycles:P: ")
        out.append(line)
    with gzip.GzipFile(path, "wb", mtime=0) as f:
        f.write("".join(out).encode())


def pad_str(s, align=64):
    b = s.encode() + b"\0"
    n = (len(b) + align - 1) // align * align
    return struct.pack("<I", n) + b.ljust(n, b"\0")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("input")
    ap.add_argument("golden")
    ap.add_argument("output")
    ap.add_argument("--symfs", required=True)
    ap.add_argument("--depth", type=int, default=32)
    ap.add_argument("--cmdline", default="/usr/bin/perf record --call-graph lbr")
    ap.add_argument("--truth")
    a = ap.parse_args()

    d = open(a.input, "rb").read()
    magic, hsize, attr_size, attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<8sQQQQQQ", d, 0)
    if magic != b"PERFILE2" or hsize != 104:
        die("%s: not a little-endian perf.data file" % a.input)
    feats = int.from_bytes(d[72:104], "little")
    if attrs_size != attr_size:
        die("one event expected")
    attr = bytearray(d[attrs_off:attrs_off + attr_size - 16])
    st, = struct.unpack_from("<Q", attr, 24)
    regs_mask, = struct.unpack_from("<Q", attr, 80)
    if st & ~HANDLED or not st & S["CALLCHAIN"] or not st & S["STACK_USER"]:
        die("a --call-graph dwarf recording expected (sample_type 0x%x)" % st)
    new_st = (st & ~(S["REGS_USER"] | S["STACK_USER"])) | S["BRANCH_STACK"]
    struct.pack_into("<IIQ", attr, 0, 0, struct.unpack_from("<I", attr, 4)[0], 0)  # cycles
    struct.pack_into("<Q", attr, 24, new_st)
    flags, = struct.unpack_from("<Q", attr, 40)
    struct.pack_into("<Q", attr, 40, flags & ~EXCLUDE_CALLCHAIN_USER)
    struct.pack_into("<Q", attr, 72, BRANCH_USER | BRANCH_CALL_STACK | BRANCH_NO_FLAGS |
                     BRANCH_NO_CYCLES | BRANCH_HW_INDEX)
    struct.pack_into("<QI", attr, 80, 0, 0)  # sample_regs_user, sample_stack_user

    golden = golden_stacks(a.golden)
    elfs = {}

    def elf(dso):
        if dso not in elfs:
            elfs[dso] = Elf(os.path.join(a.symfs, dso.lstrip("/")))
        return elfs[dso]

    maps = {}  # pid -> [(start, len, pgoff, path)] executable mappings
    counts = {"samples": 0, "cut": 0, "indirect": 0, "fp_garbage": 0, "kernel": 0}

    def absolute(pid, rel, dso):
        for start, length, pgoff, path in maps.get(pid, []):
            if path == dso and pgoff <= rel < pgoff + length:
                return rel - pgoff + start
        die("pid %d: 0x%x of %s in no mapping" % (pid, rel, dso))

    def branch_stack(pid, frames):
        """LBR entries from perf's user frames (leaf first, callers at return - 1)."""
        entries = []
        for k in range(len(frames) - 1):
            rel, sym, dso = frames[k + 1]
            e = elf(dso)
            v = e.vaddr(rel)
            insn = e.insn_at(v)
            if not insn or not insn[2].startswith("call"):
                die("pid %d: no call instruction at %s+0x%x (%s): %r" % (pid, dso, v, sym, insn))
            base = absolute(pid, rel, dso) - v
            frm = base + insn[0]
            m = re.match(r"call\s+([0-9a-f]+)\b", insn[2])
            if m:
                to = base + int(m.group(1), 16)
            else:
                counts["indirect"] += 1
                crel, csym, cdso = frames[k]
                ce = elf(cdso)
                cv = ce.vaddr(crel)
                to = absolute(pid, crel, cdso) - cv + ce.func_start(cv)
            entries.append((frm, to, 0))
        return entries

    # the data section: records as they come, COMPRESSED ones replaced by their events
    zs, pending = None, b""
    out_data = bytearray()
    pos, end = data_off, data_off + (data_size or len(d) - data_off)

    def note_map(rec):
        """Executable mappings (all of them first: records are not in time order)."""
        typ, = struct.unpack_from("<I", rec, 0)
        if typ == RECORD_MMAP2:
            pid, tid, start, length, pgoff = struct.unpack_from("<IIQQQ", rec, 8)
            prot, = struct.unpack_from("<I", rec, 64)
            path = rec[72:].split(b"\0", 1)[0].decode()
            if prot & 4:
                maps.setdefault(pid, []).insert(0, (start, length, pgoff, path))
        elif typ == RECORD_MMAP:
            pid, tid, start, length, pgoff = struct.unpack_from("<IIQQQ", rec, 8)
            path = rec[40:].split(b"\0", 1)[0].decode()
            maps.setdefault(pid, []).insert(0, (start, length, pgoff, path))

    def rewrite(rec):
        f = parse_sample(rec, st, regs_mask)
        ip, = struct.unpack("<Q", f["IP"])
        pid, tid = struct.unpack("<II", f["TID"])
        time, = struct.unpack("<Q", f["TIME"])
        misc, = struct.unpack_from("<H", rec, 4)
        frames = golden.get((tid, time))
        if frames is None:
            die("no perf script stack for tid %d time %d" % (tid, time))
        user = [x for x in frames if not x[2].startswith("[kernel")]
        regs = f["REGS_USER"]
        uip = regs.get(REG_IP, ip)
        kernel = list(f["CALLCHAIN"])
        if PERF_CONTEXT_USER in kernel:
            die("the callchain holds user space already")
        chain = kernel + [PERF_CONTEXT_USER, uip]
        counts["kernel"] += (misc & 7) == 1
        if user and absolute(pid, user[0][0], user[0][2]) != uip:
            die("tid %d time %d: perf's user leaf is not the sampled user address" % (tid, time))
        walk = fp_walk(regs, f["STACK_USER"], 127 - len(chain))
        counts["fp_garbage"] += bool(walk)
        chain += walk
        entries = branch_stack(pid, user)
        calls = len(entries)
        if calls > a.depth:
            counts["cut"] += 1
            entries = entries[:a.depth]
        counts["samples"] += 1
        hw_idx = (calls - 1) % a.depth if calls else a.depth - 1
        body = bytearray()
        for name in ("IDENTIFIER", "IP", "TID", "TIME", "ADDR", "ID", "STREAM_ID", "CPU", "PERIOD"):
            if name in f:
                body += f[name]
        body += struct.pack("<Q%dQ" % len(chain), len(chain), *chain)
        body += struct.pack("<QQ", len(entries), hw_idx)
        for e in entries:
            body += struct.pack("<QQQ", *e)
        for name in ("WEIGHT", "DATA_SRC", "TRANSACTION"):
            if name in f:
                body += f[name]
        return struct.pack("<IHH", RECORD_SAMPLE, misc, 8 + len(body)) + bytes(body)

    records = []
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from("<IHH", d, pos)
        if size < 8:
            die("record size %d at 0x%x" % (size, pos))
        rec = d[pos:pos + size]
        pos += size
        if typ == RECORD_COMPRESSED:
            zs = zs or Zstd()
            pending += zs.feed(rec[8:])
            while len(pending) >= 8:
                _, _, sz = struct.unpack_from("<IHH", pending, 0)
                if sz > len(pending):
                    break
                records.append(pending[:sz])
                pending = pending[sz:]
        else:
            records.append(rec)
    if pending:
        die("%d bytes of a record left in the compressed data" % len(pending))
    for rec in records:
        note_map(rec)
    for rec in records:
        typ, = struct.unpack_from("<I", rec, 0)
        out_data.extend(rewrite(rec) if typ == RECORD_SAMPLE else rec)

    # the features: COMPRESSED dropped, BRANCH_STACK added, EVENT_DESC and CMDLINE rewritten
    bits = [i for i in range(256) if feats >> i & 1]
    secs = dict(zip(bits, sections(d, data_off + data_size, len(bits))))
    payload = {b: d[o:o + s] for b, (o, s) in secs.items()}
    payload.pop(FEAT_COMPRESSED, None)
    payload[FEAT_BRANCH_STACK] = b""
    if FEAT_CMDLINE in payload:
        words = a.cmdline.split(" ")
        payload[FEAT_CMDLINE] = struct.pack("<I", len(words)) + b"".join(pad_str(w) for w in words)
    if FEAT_EVENT_DESC in payload:
        p = payload[FEAT_EVENT_DESC]
        nr, asz = struct.unpack_from("<II", p, 0)
        if nr != 1 or asz < len(attr):
            die("EVENT_DESC: one event expected")
        # perf writes its own sizeof(struct perf_event_attr) here: the fields past the
        # file's attr are kept
        desc_attr = bytes(attr) + p[8 + len(attr):8 + asz]
        q = 8 + asz
        nids, = struct.unpack_from("<I", p, q)
        q += 4
        nlen, = struct.unpack_from("<I", p, q)
        q += 4 + nlen
        ids = p[q:q + 8 * nids]
        payload[FEAT_EVENT_DESC] = (struct.pack("<II", 1, asz) + desc_attr +
                                    struct.pack("<I", nids) + pad_str("cycles:P") + ids)

    out = bytearray(d[:data_off])
    out[attrs_off:attrs_off + attr_size - 16] = attr
    new_bits = sorted(payload)
    feat_mask = sum(1 << b for b in new_bits)
    struct.pack_into("<QQ", out, 40, data_off, len(out_data))
    out[72:104] = feat_mask.to_bytes(32, "little")
    out += out_data
    table_at = len(out)
    at = table_at + 16 * len(new_bits)
    table, blobs = bytearray(), bytearray()
    for b in new_bits:
        table += struct.pack("<QQ", at, len(payload[b]))
        blobs += payload[b]
        at += len(payload[b])
    out += table + blobs
    open(a.output, "wb").write(out)
    if a.truth:
        write_truth(a.golden, a.truth, a.depth)
    print("make-lbr: %s: %d samples (%d in the kernel), %d cut at %d calls, %d indirect calls, "
          "%d with a frame-pointer walk" % (a.output, counts["samples"], counts["kernel"], counts["cut"],
                                             a.depth, counts["indirect"], counts["fp_garbage"]))


if __name__ == "__main__":
    main()
