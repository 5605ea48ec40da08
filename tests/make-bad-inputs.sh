#!/bin/sh
# make-bad-inputs: regenerate tests/bad/ (damaged perf.data files, each with the
# diagnostic it must produce) and the damaged copies in tests/corpus/perfdata/ from
# the small committed seed recordings.
#
#   tests/make-bad-inputs.sh            rebuild from the committed seeds
#   tests/make-bad-inputs.sh --record   record the seeds again with perf first
#
# NAME.expect holds a substring of the one line perfconv prints. Every case is an
# error (exit 1, no output) except the warnings (cut-data, a data section cut short:
# every record before the cut converted; size-zero and pipe-size-zero, a record of
# size 0: skipped to the next one).
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
corpus=$top/tests/corpus/perfdata
bad=$top/tests/bad
seed=$corpus/file-two-events.data
pipeseed=$corpus/pipe-g.data
lbrseed=$corpus/file-lbr.data   # fuzz/cut.py --samples 24 testdata/lbr/dw-lbr.data

if [ "${1:-}" = "--record" ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	perf record -q -g -e cpu-clock,page-faults -o "$seed" -- sleep 0.05
	perf record -q -g -o - -- sleep 0.05 > "$pipeseed"
	perf record -q --threads -o "$tmp/thr" -- sleep 0.05
	cp "$tmp/thr/data" "$corpus/threads-data"
	for f in "$tmp"/thr/data.*; do
		cp "$f" "$corpus/threads-${f##*/}"
	done
fi

mkdir -p "$bad"
python3 - "$seed" "$pipeseed" "$bad" "$corpus" "$lbrseed" <<'EOF'
import struct, sys

seed, pipeseed, bad, corpus, lbrseed = sys.argv[1:6]
src = open(seed, 'rb').read()
pipe = open(pipeseed, 'rb').read()
lbr = open(lbrseed, 'rb').read()

NAMES = dict(enumerate(['', 'MMAP', 'LOST', 'COMM', 'EXIT', 'THROTTLE', 'UNTHROTTLE', 'FORK',
    'READ', 'SAMPLE', 'MMAP2', 'AUX', 'ITRACE_START', 'LOST_SAMPLES', 'SWITCH',
    'SWITCH_CPU_WIDE', 'NAMESPACES', 'KSYMBOL', 'BPF_EVENT', 'CGROUP', 'TEXT_POKE',
    'AUX_OUTPUT_HW_ID']))
NAMES.update(zip(range(64, 84), ['HEADER_ATTR', 'HEADER_EVENT_TYPE', 'HEADER_TRACING_DATA',
    'HEADER_BUILD_ID', 'FINISHED_ROUND', 'ID_INDEX', 'AUXTRACE_INFO', 'AUXTRACE',
    'AUXTRACE_ERROR', 'THREAD_MAP', 'CPU_MAP', 'STAT_CONFIG', 'STAT', 'STAT_ROUND',
    'EVENT_UPDATE', 'TIME_CONV', 'HEADER_FEATURE', 'COMPRESSED', 'FINISHED_INIT',
    'COMPRESSED2']))
NAMES = {k: 'PERF_RECORD_' + v for k, v in NAMES.items() if v}

def u64(b, o):
    return struct.unpack_from('<Q', b, o)[0]

def put64(b, o, v):
    struct.pack_into('<Q', b, o, v)

def write(name, data, expect):
    open('%s/%s.data' % (bad, name), 'wb').write(data)
    open('%s/%s.expect' % (bad, name), 'w').write(expect + '\n')
    open('%s/bad-%s.data' % (corpus, name), 'wb').write(data)

attr_size = u64(src, 16)
attrs_off, attrs_size = u64(src, 24), u64(src, 32)
data_off, data_size = u64(src, 40), u64(src, 48)
attr_sz = struct.unpack_from('<I', src, attrs_off + 4)[0]

def records(b, start, end):
    pos = start
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', b, pos)
        yield pos, typ, size
        pos += size

write('cut-header', src[:60],
      'offset 0x0: header cut short: file has 60 bytes, the header needs 104')

cut = attrs_off + attr_size // 2
write('cut-attrs', src[:cut],
      'offset 0x18: attrs section 0x%x+%d lies outside the file (%d bytes)'
      % (attrs_off, attrs_size, cut))

b = bytearray(src)
b[0:8] = b'PERFILE3'
write('bad-magic', bytes(b),
      'offset 0x0: bad magic 0x%016x: not a perf.data file' % u64(b, 0))

# version 1 has version 2's layout (tests/e2e_oldperf.sh reads one); its byte order
# is told by attr_size alone, which here fits no perf_event_attr
b = bytearray(src)
b[0:8] = b'PERFFILE'
struct.pack_into('<Q', b, 16, 99)
write('version1', bytes(b), 'offset 0x10: perf.data version 1 (PERFFILE): attr_size 99 is no '
      'perf_event_attr size + 16 in either byte order')

# a size below 8 is damage like any other: skipped to the next record, warned about
b = bytearray(src)
typ, size = struct.unpack_from('<I2xH', b, data_off)
struct.pack_into('<H', b, data_off + 6, 0)
write('size-zero', bytes(b), 'offset 0x%x: warning: %s: damaged record (size 0): %d bytes '
      'skipped to the next plausible record at offset 0x%x'
      % (data_off, NAMES.get(typ, 'record type %d' % typ), size, data_off + size))

b = bytearray(src)
struct.pack_into('<I', b, attrs_off + 4, attr_sz + 8)
write('attr-size', bytes(b), 'offset 0x%x: attr 0: attr.size %d + 16 is more than '
      'attr_size %d' % (attrs_off, attr_sz + 8, attr_size))

b = bytearray(src)
put64(b, 16, attr_size + 8)
write('attr-size-header', bytes(b), 'offset 0x10: attr_size %d does not fit the attrs '
      'section (%d bytes)' % (attr_size + 8, attrs_size))

b = bytearray(src)
put64(b, attrs_off + attr_sz, 0xffffff00)
write('ids-range', bytes(b), 'offset 0x%x: attr 0: ids section 0xffffff00+%d lies '
      'outside the file' % (attrs_off + attr_sz, u64(src, attrs_off + attr_sz + 8)))

b = bytearray(src)
put64(b, 24, 0x10000000)
write('attrs-outside', bytes(b), 'offset 0x18: attrs section 0x10000000+%d lies '
      'outside the file' % attrs_size)

# a sample whose id names no event: the seed's samples carry IP, TID, TIME, ID, ...
b = bytearray(src)
for pos, typ, size in records(src, data_off, data_off + data_size):
    if typ == 9:
        put64(b, pos + 8 + 3 * 8, 999999)
        write('sample-id', bytes(b), 'offset 0x%x: PERF_RECORD_SAMPLE: sample id 999999 '
              'matches no event' % pos)
        break

# the data section cut inside a record half way through it
recs = list(records(src, data_off, data_off + data_size))
pos, typ, size = recs[len(recs) // 2]
cut = pos + 10
write('cut-data', src[:cut], 'offset 0x%x: warning: data section cut short: %d bytes of a '
      '%d-byte record missing, reading stops here' % (pos, size - 10, size))

# pipe mode: a record of size 0 in the middle of the stream
b = bytearray(pipe)
prec = list(records(pipe, 16, len(pipe)))
pos, typ, size = prec[len(prec) // 2]
struct.pack_into('<H', b, pos + 6, 0)
write('pipe-size-zero', bytes(b), 'offset 0x%x: warning: %s: damaged record (size 0): %d bytes '
      'skipped to the next plausible record at offset 0x%x'
      % (pos, NAMES.get(typ, 'record type %d' % typ), size, pos + size))

write('pipe-cut-header', pipe[:12],
      'offset 0x0: header cut short: file has 12 bytes, the header needs at least 16')

# --call-graph lbr: a sample whose branch stack claims more entries than the record
# holds is skipped with a warning, the others converted. The seed's samples carry IP,
# TID, TIME, ADDR, PERIOD, CALLCHAIN, BRANCH_STACK (nr, hw_idx, entries), DATA_SRC.
b = bytearray(lbr)
ldata = u64(lbr, 40)
for pos, typ, size in records(lbr, ldata, ldata + u64(lbr, 48)):
    if typ == 9:
        at = pos + 8 + 5 * 8
        at += 8 + 8 * u64(lbr, at)
        put64(b, at, 0x10000)
        write('branch-overrun', bytes(b), 'offset 0x%x: warning: PERF_RECORD_SAMPLE: '
              'BRANCH_STACK field overruns the record (size %d), skipped' % (pos, size))
        break

# edge inputs for the corpus (not errors): perf killed before it wrote data.size,
# and a file whose feature sections point past its end
b = bytearray(src[:data_off + data_size])
put64(b, 48, 0)
open('%s/killed-synth.data' % corpus, 'wb').write(bytes(b))
EOF
echo "make-bad-inputs: wrote $(ls "$bad"/*.data | wc -l) bad inputs to tests/bad"
