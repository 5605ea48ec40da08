#!/usr/bin/env python3
"""size-sweep: how many one-field size changes a conversion survives (issue 21 B1).

    tests/size-sweep.py PERFCONV [DELTA] [RECORDING...]

For each recording (file or pipe mode; default: four committed ones), copies it once
per chosen record with that record's 16-bit size field changed by DELTA (default +8),
converts each copy (`-f samples --no-symbols`) and counts the conversions that end
with exit 0 and most of the intact recording's samples (90% or more). The records
chosen are the first 40 of the data (where the process records are) and 30 spread
evenly over the rest. Prints one line per recording and a total; exits 0.
"""
import os
import struct
import subprocess
import sys
import tempfile

top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRST, SPREAD, MOST = 40, 30, 0.9


def records(b):
    """(offset, size) of each record of the data section, file or pipe mode."""
    if struct.unpack_from('<Q', b, 8)[0] == 16:
        pos, end = 16, len(b)
    else:
        off, size = struct.unpack_from('<QQ', b, 40)
        pos, end = off, off + size
    while pos + 8 <= end:
        t, s = struct.unpack_from('<IxxH', b, pos)
        if s < 8:
            break
        if t == 66 and s >= 12:  # HEADER_TRACING_DATA: its data follows the record
            s += (struct.unpack_from('<I', b, pos + 8)[0] + 7) & ~7
        yield pos, struct.unpack_from('<H', b, pos + 6)[0]
        pos += s


def samples(perfconv, path):
    p = subprocess.run([perfconv, '-q', '-i', path, '-f', 'samples', '--no-symbols', '-o', '-'],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    return p.returncode, p.stdout.count(b'\n')


def main():
    perfconv = os.path.realpath(sys.argv[1])
    delta = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    recs = sys.argv[3:] or [os.path.join(top, 'testdata', n) for n in
                            ('shapes.data', 'mt-g.data', 'mt-pipe.data', 'two-event.data')]
    total = ok = failed = lost = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in recs:
            src = open(path, 'rb').read()
            _, intact = samples(perfconv, path)
            all_recs = list(records(src))
            rest = all_recs[FIRST:]
            step = max(1, len(rest) // SPREAD)
            chosen = all_recs[:FIRST] + rest[::step][:SPREAD]
            n = o = f = l = 0
            for pos, size in chosen:
                b = bytearray(src)
                struct.pack_into('<H', b, pos + 6, (size + delta) & 0xffff)
                cut = os.path.join(tmp, 'cut.data')
                open(cut, 'wb').write(b)
                rc, got = samples(perfconv, cut)
                n += 1
                if rc != 0:
                    f += 1
                elif got >= MOST * intact:
                    o += 1
                else:
                    l += 1
            print('%s: %d size changes of %+d: %d exit 0 with most samples, %d exit %s, '
                  '%d exit 0 with fewer than %d%% of %d samples'
                  % (os.path.basename(path), n, delta, o, f, 'non-zero', l, MOST * 100, intact))
            total += n
            ok += o
            failed += f
            lost += l
    print('size-sweep: %d of %d conversions end with exit 0 and most samples '
          '(%d fail, %d lose samples)' % (ok, total, failed, lost))


if __name__ == '__main__':
    main()
