#!/usr/bin/env python3
"""simpleperf_craft: variants of a simpleperf recording (testdata/simpleperf/) for what
its test recordings do not hold, made by rewriting its data section and features.

usage: simpleperf_craft.py kallsyms IN OUT: FILE's kernel entry taken out, and its
symbols written as a KERNEL_SYMBOL record (type 32769: u32 size, /proc/kallsyms text,
padding to 8) first in the data section, as `simpleperf record` writes the kernel's
symbols when it cannot dump them (kernel names then come from that record only); the
record is filled to 131076 bytes with symbols at address 0 (not taken), its size's high
half in the header's misc and the low half (4) below a header's size.

simpleperf_craft.py module IN OUT: the first kernel sample's ip moved into the first
kernel module's mapping (0x100 into it), and a FILE entry of type 1 (DSO_KERNEL_MODULE)
for that module naming that place "crafted_module_fn" (vaddr 0xf0, 0x40 long, min_vaddr
0, memory offset 0): the module's frame is named from the recording's table. Prints the
module's path."""
import struct
import sys

FILE = 128


def parse(b):
    """header fields, the data section's bytes, [(feature bit, bytes)] in file order"""
    _, _, _, _, _, do, dsz = struct.unpack_from('<8sQQQQQQ', b, 0)
    bits = b[72:104]
    feats, at = [], do + dsz
    for i in range(256):
        if bits[i // 8] >> (i % 8) & 1:
            o, n = struct.unpack_from('<QQ', b, at)
            at += 16
            feats.append((i, b[o:o + n]))
    return do, bytes(b[do:do + dsz]), feats


def build(b, do, data, feats):
    out = bytearray(b[:do]) + data
    struct.pack_into('<Q', out, 48, len(data))
    table = bytearray()
    at = do + len(data) + 16 * len(feats)
    for _, body in feats:
        table += struct.pack('<QQ', at, len(body))
        at += len(body)
    out += table
    for _, body in feats:
        out += body
    return bytes(out)


def file_entries(body):
    """FILE v1's entries: (their bytes with the size, path, type, symbols)"""
    out, o = [], 0
    while o + 4 <= len(body):
        n, = struct.unpack_from('<I', body, o)
        e = body[o + 4:o + 4 + n]
        p = e.index(b'\0')
        path = e[:p].decode('latin1')
        typ, _, ns = struct.unpack_from('<IQI', e, p + 1)
        q, syms = p + 1 + 16, []
        for _ in range(ns):
            va, ln = struct.unpack_from('<QI', e, q)
            q += 12
            z = e.index(b'\0', q)
            syms.append((va, ln, e[q:z].decode('latin1')))
            q = z + 1
        out.append((body[o:o + 4 + n], path, typ, syms))
        o += 4 + n
    return out


def kallsyms(b):
    do, data, feats = parse(b)
    fi = [i for i, (bit, _) in enumerate(feats) if bit == FILE][0]
    keep, text = bytearray(), ''
    for raw, path, typ, syms in file_entries(feats[fi][1]):
        if typ == 0:
            text += ''.join('%016x t %s\n' % (va, name) for va, _, name in syms)
        else:
            keep += raw
    feats[fi] = (FILE, bytes(keep))
    # over 64 KB, its size's high half in the header's misc (131076: a low half of 4,
    # under a header's 8 bytes): symbols at address 0, which are not taken, fill it
    want = 0x20004 - 12
    pad = 0
    while len(text) < want - 64:
        text += '0000000000000000 t pad_%d\n' % pad
        pad += 1
    text += '0000000000000000 t ' + 'x' * (want - len(text) - 20) + '\n'
    t = text.encode()
    assert len(t) == want
    size = 8 + 4 + len(t)
    rec = struct.pack('<IHHI', 32769, size >> 16, size & 0xffff, len(t)) + t
    return build(b, do, rec + data, feats)


def module(b):
    do, data, feats = parse(b)
    data = bytearray(data)
    o, mod, done = 0, None, False
    while o < len(data):
        typ, misc, size = struct.unpack_from('<IHH', data, o)
        if typ >= 32768:
            size |= misc << 16
        if typ == 1 and mod is None:
            pid, _, start, ln, _ = struct.unpack_from('<IIQQQ', data, o + 8)
            name = data[o + 40:o + size].split(b'\0')[0].decode('latin1')
            if pid == 0xffffffff and name.endswith('.ko'):
                mod = (name, start)
        if typ == 9 and mod and not done and misc & 7 == 1:
            struct.pack_into('<Q', data, o + 8, mod[1] + 0x100)
            done = True
        o += size
    assert mod and done
    e = mod[0].encode() + b'\0' + struct.pack('<IQI', 1, 0, 1)
    e += struct.pack('<QI', 0xf0, 0x40) + b'crafted_module_fn\0' + struct.pack('<Q', 0)
    fi = [i for i, (bit, _) in enumerate(feats) if bit == FILE][0]
    feats[fi] = (FILE, feats[fi][1] + struct.pack('<I', len(e)) + e)
    print(mod[0])
    return build(b, do, bytes(data), feats)


def main():
    mode, src, dst = sys.argv[1:4]
    b = open(src, 'rb').read()
    out = kallsyms(b) if mode == 'kallsyms' else module(b)
    open(dst, 'wb').write(out)


main()
