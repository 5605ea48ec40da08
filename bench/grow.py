#!/usr/bin/env python3
"""grow: a large perf.data made from a real one, for the memory benchmark.

    bench/grow.py IN OUT SIZE_MB

Writes OUT, a file-mode perf.data whose data section holds every record of IN
once and each PERF_RECORD_SAMPLE repeated in place as often as it takes to reach
about SIZE_MB. Everything else (attributes, process records, feature sections
such as build ids) is IN's. The copies keep their times, so the process state
around each sample is the one it was recorded in: perf report and perfconv read
OUT like IN, with every sample count multiplied. It is a test of reading much
data, not of many distinct stacks (the longer real recording in bench/run.sh is
that).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from perfdata_rewrite import PERF_RECORD_SAMPLE, PerfData  # noqa: E402


def main():
    src, dst, size_mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
    pd = PerfData(src)
    samples = sum(len(r) for _, t, _, r in pd.records() if t == PERF_RECORD_SAMPLE)
    copies = max(1, ((size_mb << 20) - len(pd.buf) + samples) // max(samples, 1))
    size = pd.write(dst, (r * (copies if t == PERF_RECORD_SAMPLE else 1)
                          for _, t, _, r in pd.records()))
    print(f"grow: {dst}: {copies} copies of each of {src}'s samples, {size / (1 << 20):.0f} MB")


if __name__ == "__main__":
    main()
