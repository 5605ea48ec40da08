"""perfdata_rewrite: copy a file-mode perf.data, changing the records of its data section.

Used by bench/grow.py (a large recording from a real one) and tests/inject-ksymbol.py
(records added to a real recording). Little-endian files of this machine's byte order
only; that is what `perf record` writes here.

perf.data file mode (tools/perf/util/header.h): a header of magic, size, attr_size,
then (offset, size) of the attrs, the data and the event types, then a 256-bit
feature bitmap; the feature sections' (offset, size) table follows the data, and
their contents follow the table.
"""
import struct

PERF_RECORD_SAMPLE = 9

# perf_event_attr.sample_type bits that the sample_id_all trailer of a non-sample
# record carries, in their order there
SAMPLE_TID, SAMPLE_TIME, SAMPLE_ID, SAMPLE_CPU = 1 << 1, 1 << 2, 1 << 6, 1 << 7
SAMPLE_STREAM_ID, SAMPLE_IDENTIFIER = 1 << 9, 1 << 16


class PerfData:
    """A file-mode perf.data held in memory."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.buf = f.read()
        if self.buf[:8] != b"PERFILE2":
            raise SystemExit(f"{path}: not a file-mode perf.data in this machine's byte order")
        self.path = path
        self.attr_off, self.attr_size = struct.unpack_from("<QQ", self.buf, 24)
        (self.attr_entry,) = struct.unpack_from("<Q", self.buf, 16)
        self.data_off, self.data_size = struct.unpack_from("<QQ", self.buf, 40)
        features = struct.unpack_from("<4Q", self.buf, 72)
        self.nfeat = sum(bin(w).count("1") for w in features)

    def sample_type(self):
        """The first event's sample_type (perf_event_attr: type, size, config,
        sample_period, sample_type)."""
        return struct.unpack_from("<Q", self.buf, self.attr_off + 24)[0]

    def records(self):
        """(offset, type, misc, bytes) of each record of the data section."""
        pos, end = self.data_off, self.data_off + self.data_size
        while pos + 8 <= end:
            rtype, misc, size = struct.unpack_from("<IHH", self.buf, pos)
            if size < 8:
                raise SystemExit(f"{self.path}: offset {pos:#x}: record size {size}")
            yield pos, rtype, misc, self.buf[pos:pos + size]
            pos += size

    def write(self, path, chunks):
        """Write a copy whose data section is the byte strings of `chunks`."""
        with open(path, "wb") as out:
            out.write(self.buf[:self.data_off])
            written = 0
            for c in chunks:
                out.write(c)
                written += len(c)
            shift = written - self.data_size
            table = self.data_off + self.data_size
            for i in range(self.nfeat):
                off, size = struct.unpack_from("<QQ", self.buf, table + 16 * i)
                out.write(struct.pack("<QQ", off + shift, size))
            out.write(self.buf[table + 16 * self.nfeat:])
            out.seek(48)
            out.write(struct.pack("<Q", written))
        return len(self.buf) + shift
