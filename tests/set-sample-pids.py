#!/usr/bin/env python3
"""set-sample-pids: a real recording whose samples carry the pids and tids perf can write.

    tests/set-sample-pids.py [-n N] IN OUT PID/TID...

Writes OUT, IN with its samples' pid and tid (PERF_SAMPLE_TID) replaced in turn: of
every N samples (default: one more than the pairs) the k-th takes the k-th pair, the
others keep theirs (so that the recording's own threads stay many). A pid and tid of -1 are what the kernel writes for a task
whose pid is already released (perf_event_pid_type(): a sample late in exit(), seen
in whole-machine recordings of many short processes, but not on demand); 0 the idle
task; 4294967294 a large value; a recording made here has them at will.

Sample layout (include/uapi/linux/perf_event.h): u64 identifier, u64 ip, u32 pid,
u32 tid, ... each present when its sample_type bit is set, in that order.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from perfdata_rewrite import PERF_RECORD_SAMPLE, SAMPLE_IDENTIFIER, SAMPLE_TID, PerfData  # noqa: E402

SAMPLE_IP = 1


def main():
    args = sys.argv[1:]
    every = 0
    if args[0] == "-n":
        every, args = int(args[1]), args[2:]
    src, dst = args[0], args[1]
    pairs = [tuple(int(x) & 0xFFFFFFFF for x in a.split("/")) for a in args[2:]]
    every = max(every, len(pairs) + 1)
    pd = PerfData(src)
    st = pd.sample_type()
    if not st & SAMPLE_TID:
        raise SystemExit(f"{src}: samples carry no pid/tid")
    at = 8 + 8 * bool(st & SAMPLE_IDENTIFIER) + 8 * bool(st & SAMPLE_IP)
    k = 0

    def chunks():
        nonlocal k
        for _, rtype, _, rec in pd.records():
            if rtype == PERF_RECORD_SAMPLE:
                i = k % every
                k += 1
                if i < len(pairs):
                    rec = bytearray(rec)
                    struct.pack_into("<II", rec, at, *pairs[i])
                    rec = bytes(rec)
            yield rec
    pd.write(dst, chunks())


if __name__ == "__main__":
    main()
