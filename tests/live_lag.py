#!/usr/bin/env python3
"""live_lag: whether two pprof profiles of one chunk differ only as a live runtime's
buffered jitdump makes them differ. The watcher converts a chunk once perf has closed
it; a runtime that writes its dump through a buffer (V8's --perf-prof writes with stdio)
may not yet have written the code loads of the chunk's last milliseconds, so a sample
there is [anon] in what the watcher sent and named in a conversion made later.

  live_lag.py SENT.pb.gz LATER.pb.gz

Exit 0 when every stack with more weight in SENT than in LATER ends in [anon], every
stack with more in LATER ends in a JIT-named frame (JS:, LazyCompile:), the two excesses
are equal and at most 1% of the chunk's weight; else 1. Prints what it found."""
import re, subprocess, sys


def stacks(path):
    out = subprocess.run(["go", "tool", "pprof", "-traces", path], capture_output=True,
                         text=True, check=True).stdout
    got = {}
    for block in out.split("-----------+-------------------------------------------------------")[1:]:
        # label lines ("thread_id:  1207") first, then the stack, leaf first
        labels = [l.strip() for l in block.splitlines() if re.match(r"\s*[a-z_]+:\s", l)]
        lines = [l for l in block.splitlines() if l.strip() and not re.match(r"\s*[a-z_]+:\s", l)]
        if not lines:
            continue
        m = re.match(r"\s*(\d+(?:\.\d+)?)(ns|us|ms|s)\s+(.*)$", lines[0])
        if not m:
            continue
        scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
        frames = tuple([m.group(3).strip()] + [l.strip() for l in lines[1:]] + labels)
        got[frames] = got.get(frames, 0.0) + float(m.group(1)) * scale
    return got


sent, later = stacks(sys.argv[1]), stacks(sys.argv[2])
total = sum(later.values()) or 1.0
anon = named = 0.0
bad = []
for s in set(sent) | set(later):
    d = sent.get(s, 0.0) - later.get(s, 0.0)
    if abs(d) < 1e-9:
        continue
    if d > 0 and s[0] == "[anon]":
        anon += d
    elif d < 0 and re.match(r"(JS|LazyCompile):", s[0]):
        named -= d
    else:
        bad.append((d, s[0]))
if bad or abs(anon - named) > 1e-6 or anon > total / 100:
    print("differ: %s; [anon] %.2f ms more sent, JIT-named %.2f ms more later, of %.2f ms"
          % (", ".join("%+.2f ms %s" % b for b in bad[:5]) or "no other stack", anon, named, total))
    sys.exit(1)
print("%.2f ms of %.2f ms [anon] when sent, named later (the runtime's dump written after)"
      % (anon, total))
