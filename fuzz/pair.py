#!/usr/bin/env python3
"""pair: one input of the fuzz_pipeline target from a perf.data and a jitdump.

    fuzz/pair.py [--samples N] [--dump-max BYTES] PERF_DATA [JITDUMP] OUT

OUT is a little-endian u32 of the perf.data's length, the perf.data, then the jitdump.
With --samples, the perf.data is cut to its other records and N samples spread over it,
and the dump to the code loads those samples are in (and the records before each),
at most BYTES of it (default 65536): a seed of tens of KB, which the target runs
hundreds of times a second, where the whole recording and dump (megabytes) ran 7 times
(fuzz/cut.py; issue 21 B10).
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cut import cut_jitdump, cut_perfdata  # noqa: E402

args = sys.argv[1:]
nsamples = dump_max = None
while args and args[0].startswith('--'):
    if args[0] == '--samples':
        nsamples = int(args[1])
    elif args[0] == '--dump-max':
        dump_max = int(args[1])
    else:
        sys.exit('pair: unknown option ' + args[0])
    args = args[2:]
if nsamples is None:
    data, ips = open(args[0], 'rb').read(), None
else:
    data, ips = cut_perfdata(args[0], nsamples)
dump = open(args[1], 'rb').read() if len(args) == 3 else b''
if ips is not None and dump:
    dump = cut_jitdump(dump, ips, dump_max or 65536)
with open(args[-1], 'wb') as f:
    f.write(struct.pack('<I', len(data)) + data + dump)
