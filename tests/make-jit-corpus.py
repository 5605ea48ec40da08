#!/usr/bin/env python3
"""make-jit-corpus: write the seed corpora of the jitdump and perf map fuzzers.

tests/corpus/jitdump/: small synthetic dumps (both byte orders, every record type,
Node.js 20 damaged file names, a cut-off last record, TSC times) and the real LLVM dump.
tests/corpus/perfmap/: the forms of map lines runtimes write, and damaged ones.
"""
import os
import shutil
import struct
import sys

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
jd = os.path.join(top, 'tests', 'corpus', 'jitdump')
pm = os.path.join(top, 'tests', 'corpus', 'perfmap')
os.makedirs(jd, exist_ok=True)
os.makedirs(pm, exist_ok=True)


class Dump:
    def __init__(self, big=False, flags=0, pid=100):
        self.e = '>' if big else '<'
        self.b = bytearray(struct.pack(self.e + 'IIIIIIQQ', 0x4A695444, 1, 40, 62, 0, pid, 1, flags))

    def rec(self, rid, ts, body):
        self.b += struct.pack(self.e + 'IIQ', rid, 16 + len(body), ts) + body

    def load(self, ts, addr, size, idx, name, pid=100):
        self.rec(0, ts, struct.pack(self.e + 'IIQQQQ', pid, pid, addr, addr, size, idx)
                 + name.encode() + b'\0' + b'\x90' * size)

    def move(self, ts, old, new, size, idx, pid=100):
        self.rec(1, ts, struct.pack(self.e + 'IIQQQQQ', pid, pid, new, old, new, size, idx))

    def debug(self, ts, addr, entries):
        body = struct.pack(self.e + 'QQ', addr, len(entries))
        for a, line, disc, f in entries:
            body += struct.pack(self.e + 'QII', a, line, disc) + f
        self.rec(2, ts, body)

    def unwind(self, ts, n):
        self.rec(4, ts, struct.pack(self.e + 'QQQ', n, 20, 64) + b'\0' * n)

    def close(self, ts):
        self.rec(3, ts, b'')


def all_types(big):
    d = Dump(big)
    d.debug(10, 0x1000, [(0x1040, 3, 0, b'/src/app.js\0'), (0x1048, 4, 1, b'\xff\0'),
                         (0x1050, 0, 0, b'/src/app.js\0')])
    d.unwind(11, 24)
    d.load(12, 0x1000, 0x40, 1, 'JS:*hot /src/app.js:3:1')
    d.rec(99, 13, b'\0' * 8)
    d.load(14, 0x1000, 0x40, 2, '_ZN2ns5Klass6methodEi')
    d.move(15, 0x1000, 0x2000, 0x40, 2)
    d.close(16)
    return bytes(d.b)


def node20():
    d = Dump()
    junk = bytes([0x1b, 0xd6, 0x01, 0, 0, 0, 0, 0, 0x10, 0xa4, 0x83, 0x6b, 0x6b, 0x13, 0x81, 0xa8])
    path = b'/home/user/project/src/fibonacci.js'
    name = junk + path[16:] + b'\0'
    d.debug(1, 0x7f0000001000, [(0x7f0000001040 + 8 * i, 3 + i, 7, name) for i in range(4)])
    d.load(2, 0x7f0000001000, 0x100, 1, 'JS:*fib /home/user/project/src/fibonacci.js:3:19')
    return bytes(d.b)


def beam():
    d = Dump()
    d.load(1, 0x10000 - 0x30, 0x30, 1, 'm:f/1-CodeInfoPrologue')
    d.debug(1, 0x10000, [(0x10000 - 50, 5, 0, b'm.erl\0'), (0x10035, 7, 0, b'm.erl\0'),
                         (0x100f0, 0, 0, b'\0')])
    d.load(1, 0x10000, 0xf0, 2, 'm:f/1')
    return bytes(d.b)


def write(name, data):
    with open(os.path.join(jd, name), 'wb') as f:
        f.write(data)


write('all-types-le.dump', all_types(False))
write('all-types-be.dump', all_types(True))
write('node20-names.dump', node20())
write('beam.dump', beam())
cut = all_types(False)
write('cut-last-record.dump', cut[:len(cut) - 30])
tsc = Dump(flags=1)
tsc.load(3000000000, 0x1000, 16, 1, 'f')
tsc.load(3000000100, 0x1000, 16, 2, 'g')
write('arch-timestamp.dump', bytes(tsc.b))
shutil.copy(os.path.join(top, 'testdata', 'jit', 'jit-30749.dump'), os.path.join(jd, 'lli-real.dump'))

maps = {
    'node.map': b'7f0000001000 40 JS:*fib /tmp/a b/fib.js:2:19\n7f0000001000 40 JS:~fib /x.js:1:1\n',
    'jdk.map': b'0x00007f0000002000 0x0000000000000020 Interpreter\r\n0x7f0000003000 0x10 void Foo.bar(int)\n',
    'beam.map': b'0x7fa2e3d98c60 f0 $hotfib:fib/1\n0x7fa2e3d98d50 30 $hotfib:loop/2-CodeInfoPrologue',
    'bad-lines.map': b'zz 10 x\n1000 10\n12345678901234567 1 y\nffffffffffffffff 10 wrap\n\n1000 10 ok\n',
}
for name, data in maps.items():
    with open(os.path.join(pm, name), 'wb') as f:
        f.write(data)
print('wrote', len(os.listdir(jd)), 'jitdump seeds and', len(os.listdir(pm)), 'perf map seeds')
