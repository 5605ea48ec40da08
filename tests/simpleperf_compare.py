#!/usr/bin/env python3
"""simpleperf_compare: the names of simpleperf's golden folded stacks (its stackcollapse.py
output) against perfconv's folded output of the same recording: for each function the
golden names, the weight of the stacks it is in (once a stack), which must be equal.
simpleperf keeps C++ parameter lists, which are dropped before names are compared.

usage: simpleperf_compare.py GOLDEN OURS [--min N] [--except NAME]... [--no-leaf]: exit
0 when every name of the golden that is not "unknown" (nor excepted) has the same weight
in both (at least N names). --no-leaf: our stacks' leaf frames are left out, as
stackcollapse.py leaves them out (it joins report_lib's callchain, which holds the
callers of the sample's own frame, not the frame itself).

simpleperf_compare.py --script GOLDEN.perf-script(.xz) OURS.samples --min-percent P:
simpleperf's `report_sample.py` output (a header line per sample: comm, pid/tid, cpu,
time in microseconds, period, event; then its frames leaf first, "ADDR NAME (DSO)")
against perfconv's -f samples output: every sample of the golden must be ours (by
tid and time), and at least P% of the golden's named frames (not "unknown", not
"lib.so[+offset]", not a name simpleperf left mangled) must be among ours in the same
order, leaf first (simpleperf hides ART's interpreter frames; ours shows them)."""
import re
import sys


def names(line, no_leaf=False):
    stack, _, w = line.rstrip('\n').rpartition(' ')
    out = set()
    frames = stack.split(';')[1:]  # the first is the thread's name
    for f in frames[:-1] if no_leaf else frames:
        f = re.sub(r'_\[[jki]\]$', '', f)
        keep = strip_params(f)
        if keep and keep != 'unknown':
            out.add(keep.strip())
    return out, int(w)


def weights(path, no_leaf=False):
    w = {}
    for line in open(path):
        if not line.strip():
            continue
        ns, n = names(line, no_leaf)
        for x in ns:
            w[x] = w.get(x, 0) + n
    return w


def strip_params(f):
    """C++'s parameter list (and a const after it) cut off the end of a name."""
    f = f.strip()
    if f.endswith(' const'):
        f = f[:-6]
    if not f.endswith(')'):
        return f
    depth = 0
    for i in range(len(f) - 1, -1, -1):
        if f[i] == ')':
            depth += 1
        elif f[i] == '(':
            depth -= 1
            if not depth:
                return f[:i] if i else f
    return f


def open_text(path):
    if path.endswith('.xz'):
        import lzma
        return lzma.open(path, 'rt')
    return open(path)


def script(golden, ours, pct):
    want = {}
    cur = None
    for line in open_text(golden):
        if not line.strip():
            cur = None
            continue
        if not line.startswith('\t'):
            m = re.match(r'^.*\t\d+/(\d+) \[\d+\] (\d+)\.(\d+):', line)
            if not m:
                print('simpleperf_compare: bad golden line: ' + line.rstrip())
                return 1
            cur = []
            want[(int(m.group(1)), int(m.group(2)) * 1000000 + int(m.group(3)))] = cur
            continue
        m = re.match(r'^\t\s*[0-9a-f]+ (.*) \((.*)\)$', line.rstrip('\n'))
        cur.append(m.group(1) if m else '')
    got = {}
    for line in open(ours):
        f = line.rstrip('\n').split('\t')
        sec, ns = f[3].split('.')
        key = (int(f[1].split('/')[1]), int(sec) * 1000000 + int(ns) // 1000)
        got[key] = f[6].split(';')[::-1] if f[6] else []
    named = same = missing = 0
    shown = 0
    for k, frames in want.items():
        o = got.get(k)
        if o is None:
            missing += 1
            continue
        # leaf first, the golden's named frames in turn along ours: simpleperf hides
        # ART's interpreter frames, so ours may have more between them
        j = 0
        for i, g in enumerate(frames):
            if g == 'unknown' or re.search(r'\[\+[0-9a-f]+\]$', g) or not g:
                continue
            g = re.sub(r' \(\.llvm\.\d+\)$', '', g)
            if g.startswith('_Z'):
                continue  # a name simpleperf could not demangle (a "$hash" suffix)
            named += 1
            # libiberty writes "> >" where simpleperf's demangler writes ">>"
            want_name = strip_params(g).replace(';', ':').replace(' ', '')
            at = j
            # a template function's return type, which perfconv leaves out, before it
            while at < len(o) and not (o[at] and want_name.endswith(o[at].replace(' ', ''))):
                at += 1
            if at < len(o):
                same += 1
                j = at + 1
            elif shown < 5:
                shown += 1
                print('simpleperf_compare: %s frame %d: golden %s not among ours after %d'
                      % (k, i, g, j))
    print('simpleperf_compare: %d samples (%d not ours), %d of %d named frames named alike '
          'in the same order' % (len(want), missing, same, named))
    return 0 if not missing and named and same * 100 >= named * pct else 1


def main():
    args = sys.argv[1:]
    if args and args[0] == '--script':
        i = args.index('--min-percent')
        return script(args[1], args[2], float(args[i + 1]))
    excepted = set()
    while '--except' in args:
        i = args.index('--except')
        excepted.add(args[i + 1])
        del args[i:i + 2]
    no_leaf = '--no-leaf' in args
    if no_leaf:
        args.remove('--no-leaf')
    need = 1
    if '--min' in args:
        i = args.index('--min')
        need = int(args[i + 1])
        del args[i:i + 2]
    golden, ours = weights(args[0]), weights(args[1], no_leaf)
    for k in excepted:
        golden.pop(k, None)
    bad = [(k, v, ours.get(k, 0)) for k, v in sorted(golden.items()) if ours.get(k, 0) != v]
    for k, v, o in bad[:20]:
        print('simpleperf_compare: %s: golden %d, ours %d' % (k, v, o))
    good = len(golden) - len(bad)
    print('simpleperf_compare: %d of %d names with the golden weight' % (good, len(golden)))
    return 0 if not bad and good >= need else 1


sys.exit(main())
