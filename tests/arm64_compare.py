#!/usr/bin/python3
"""arm64_compare: perfconv's stacks of a synthesized aarch64 recording against its truth.

Usage: arm64_compare.py TRUTH OURS.samples [--addrs OURS-NOSYM.samples] [--min-equal PCT]

TRUTH is testdata/arm64/NAME.truth (make-arm64.py): per sample TIME, its real frames'
addresses (MODULE+0xOFFSET, root first) and every frame's name as gdb's backtrace gave
them, inlined frames too. OURS.samples is `perfconv -f samples` (frames root first);
--addrs the same with --no-symbols, whose frames are MODULE+0xOFFSET: compared with the
truth's addresses, frame for frame. Samples are paired by time.

Names: gdb and perfconv each name a frame from the binary's DWARF, but spell C++ apart
(gdb's physical names carry their parameters and spell `long int`, `{lambda(...)#1}`;
perfconv demangles linkage names, and a function-local class's member is qualified by
its function: gdb gives `operator()` alone): both are compared without template
arguments and parameter lists, lambdas as `<lambda>`, and a name equal to the other's
last `::` components matches. gdb's `??` (no symbol) matches perfconv's `MODULE+0x...`.

Every truth stack must begin at _start (gdb unwound it whole: the truth is whole).
Exit 0 when at least PCT% (default 100) of the samples are equal on each comparison.
"""
import argparse
import re
import sys


def strip_groups(s, op, cl):
    out, depth = [], 0
    for ch in s:
        if ch == op:
            depth += 1
        elif ch == cl and depth:
            depth -= 1
        elif not depth:
            out.append(ch)
    return "".join(out)


def norm(name):
    name = re.sub(r"\{lambda\([^{}]*\)#\d+\}", "<lambda>", name)
    name = re.sub(r"<lambda\([^<>]*\)>", "<lambda>", name)
    name = name.replace("<lambda>", "LAMBDA")
    for op in ("operator()", "operator<<", "operator<", "operator>>", "operator>"):
        name = name.replace(op, "OPERATOR%d" % len(op))
    name = strip_groups(strip_groups(name, "<", ">"), "(", ")")
    # a member function's qualifiers, after its parameters in gdb's names
    name = re.sub(r"(\s*(const|volatile|&&|&))+$", "", name)
    return name.replace(" ", "")


def same_name(truth, ours):
    if truth == "??":
        return ours == "[unknown]" or re.match(r"^[^;]+\+0x[0-9a-f]+$", ours) is not None
    t, o = norm(truth), norm(ours)
    return t == o or o.endswith("::" + t) or t.endswith("::" + o)


def load_ours(path):
    res = {}
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 7:
            res[f[3]] = f[6].split(";") if f[6] else []
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("truth")
    ap.add_argument("ours")
    ap.add_argument("--addrs")
    ap.add_argument("--min-equal", type=float, default=100.0)
    a = ap.parse_args()
    truth = []
    for line in open(a.truth):
        t, addrs, names = line.rstrip("\n").split("\t")
        truth.append((t, addrs.split(";"), names.split(";")))
    if not truth:
        sys.exit("arm64_compare: %s: no samples" % a.truth)
    broken = [t for t, _, names in truth if names[0] != "_start"]
    if broken:
        sys.exit("arm64_compare: %s: %d truth stacks do not begin at _start (the first at %s)"
                 % (a.truth, len(broken), broken[0]))
    ours = load_ours(a.ours)
    nosym = load_ours(a.addrs) if a.addrs else None
    ok_names = ok_addrs = 0
    shown = 0
    for t, addrs, names in truth:
        o = ours.get(t)
        good = o is not None and len(o) == len(names) and all(same_name(x, y) for x, y in zip(names, o))
        ok_names += good
        if not good and shown < 3:
            shown += 1
            print("arm64_compare: at %s names differ:\n  truth %s\n  ours  %s" %
                  (t, ";".join(names), ";".join(o) if o is not None else "(no sample)"))
        if nosym is not None:
            o = nosym.get(t)
            good = o == addrs
            ok_addrs += good
            if not good and shown < 6:
                shown += 1
                print("arm64_compare: at %s addresses differ:\n  truth %s\n  ours  %s" %
                      (t, ";".join(addrs), ";".join(o) if o is not None else "(no sample)"))
    n = len(truth)
    res = ["%d of %d whole stacks equal by name (%.1f%%)" % (ok_names, n, 100.0 * ok_names / n)]
    fail = 100.0 * ok_names / n < a.min_equal
    if nosym is not None:
        res.append("%d by address (%.1f%%)" % (ok_addrs, 100.0 * ok_addrs / n))
        fail |= 100.0 * ok_addrs / n < a.min_equal
    print("arm64_compare: " + ", ".join(res))
    sys.exit(1 if fail else 0)


main()
