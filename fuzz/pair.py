#!/usr/bin/env python3
"""pair: one input of the fuzz_pipeline target from a perf.data and a jitdump.

    fuzz/pair.py PERF_DATA [JITDUMP] OUT

OUT is a little-endian u32 of the perf.data's length, the perf.data, then the jitdump.
"""
import struct
import sys

args = sys.argv[1:]
data = open(args[0], 'rb').read()
dump = open(args[1], 'rb').read() if len(args) == 3 else b''
with open(args[-1], 'wb') as f:
    f.write(struct.pack('<I', len(data)) + data + dump)
