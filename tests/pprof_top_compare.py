#!/usr/bin/env python3
"""pprof_top_compare: per-symbol self counts of `go tool pprof -top` against perf report.

  pprof_top_compare.py GOLDEN.report PPROF_TOP.txt [--event NAME]

GOLDEN.report is `perf report --stdio --no-children -n -g none --sort comm,dso,sym`;
PPROF_TOP.txt is `go tool pprof -top -nodecount=100000 -sample_index=<count type>`
of perfconv's pprof output (converted with --no-inline, as perf shows no inlined
frames). Every symbol perf names must have the same flat count in pprof, summed over
threads; pprof may name no symbol perf lacks. Addresses without a symbol are left
out: perf shows them per address, pprof per mapping.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfscript_compare import parse_report, plt_key  # noqa: E402

TOP_ROW_RE = re.compile(r"^\s*(?P<flat>\d+)\s+\S+%\s+\S+%\s+\d+\s+\S+%\s+(?P<name>.+)$")


def parse_top(path):
    counts = {}
    started = False
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if re.match(r"^\s*flat\s+flat%", line):
                started = True
                continue
            if not started:
                continue
            m = TOP_ROW_RE.match(line)
            if not m:
                raise SystemExit("pprof_top_compare: %s: cannot parse %r" % (path, line))
            name = m.group("name")
            if name.startswith("[") and name.endswith("]"):
                continue  # a mapping's addresses without a symbol
            counts[plt_key(name)] = counts.get(plt_key(name), 0) + int(m.group("flat"))
    if not started:
        raise SystemExit("pprof_top_compare: %s: no -top table" % path)
    return counts


def main(argv):
    if len(argv) not in (3, 5) or (len(argv) == 5 and argv[3] != "--event"):
        raise SystemExit(__doc__)
    event = argv[4] if len(argv) == 5 else None
    want = {}
    for (comm, kind, name), n in parse_report(argv[1], event).items():
        if kind == "sym":
            want[name] = want.get(name, 0) + n
    got = parse_top(argv[2])
    bad = []
    for name in sorted(set(want) | set(got)):
        w, g = want.get(name, 0), got.get(name, 0)
        if w != g:
            bad.append("  %-40s perf report %6d   pprof %6d" % (name, w, g))
    if bad:
        print("pprof_top_compare: %d of %d symbols differ:" % (len(bad), len(want)))
        print("\n".join(bad[:30]))
        return 1
    print("pprof_top_compare: %d symbols, %d samples, all self counts equal"
          % (len(want), sum(want.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
