#!/usr/bin/env python3
"""hottest: the function a viewer should show first, from `perfconv -f samples` output.

usage: hottest.py SAMPLES busiest|first
  busiest: the hottest leaf function of the thread with the most samples (the profile
           speedscope opens a speedscope file on: activeProfileIndex)
  first:   the same for the thread with the lowest pid, then tid (the one speedscope
           opens a Chrome trace on)
"""
import collections
import sys

threads = collections.defaultdict(collections.Counter)
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    f = line.rstrip("\n").split("\t")
    pid, tid = map(int, f[1].split("/"))
    threads[(pid, tid)][f[6].split(";")[-1]] += int(f[5])
if sys.argv[2] == "busiest":
    key = max(threads, key=lambda k: (sum(threads[k].values()), -k[0], -k[1]))
else:
    key = min(threads)
print(threads[key].most_common(1)[0][0])
