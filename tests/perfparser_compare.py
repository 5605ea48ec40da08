#!/usr/bin/python3
"""perfparser_compare: perfconv's whole user stacks against KDAB perfparser's expected output.

Usage:
  perfparser_compare.py [--lbr] [--min-equal PCT] [--show N]
                        EXPECTED.txt BINARY OURS.samples OURS-NOINLINE.samples

EXPECTED.txt is a perfparser test's expected output (tests/auto/perfdata/*/
*.expected.txt, written by its PerfParserTestClient::convertToText): per sample a
header "comm<TAB>pid<TAB>tid<TAB>sec.nsec", the event's line, then the frames,
innermost first. A frame is its location line ("ADDR RELADDR", ADDR == RELADDR, no
symbol) and the lines of its inlined chain; a line with a symbol ends with
"NAME BINARY PATH". OURS.samples is `perfconv -f samples` (inlined frames),
OURS-NOINLINE.samples the same with --no-inline. BINARY is the recorded program
(its symbol table and its .plt tell the corrections below).

Samples are matched by (tid, time, event). Whole user stacks are compared, names
as perfconv writes them: perfparser's are demangled with parameters and return
types, which are dropped here ("double std::f<int>(int&) const" is "std::f<int>";
a function-local scope keeps its parameters: "main(int, char**)::<lambda()>").
Kernel frames are left out (perfparser's test has no kallsyms; where the recording
holds no kernel map, perfconv's kernel frames are "[unknown]": its first "[unknown]"
frames, up to as many as perfparser's kernel lines, are left out). A frame neither
names is "[unknown]" on both sides (perfconv's "module+0xOFFSET" too); a user stack
of "[unknown]" frames alone (or none) equals perfparser's of "[unknown]" frames or none
(counted as unknown-only: perf between its fork and the exec, whose mappings the
recording does not hold; perfparser leaves out a user part it cannot name, and
perfconv writes kernel frames as "[unknown]" where the recording holds no kernel
map).

Where perfparser is wrong, its stack is corrected, each correction counted and
printed (--lbr for an LBR recording, whose corrections apply to it alone):
  lbr-target  perfparser writes the first LBR entry's target (`to`) as a frame
              after the sampled ip (perfunwind.cpp, resolveCallchain: reportIp(
              entry.to) for i == 0): the first byte of the function last called,
              which is the leaf's function again, a PLT stub (named `_init`) or a
              function that tail-called the leaf's (`cabsf64` jumping to
              `hypot`). No thread executes there: that frame is dropped. It is the
              second frame if its address is a symbol's start or in .plt, else the
              first if its address is (the ip may be a function's first byte).
  lbr-no-ip   when that target is perfparser's first frame, it wrote none for the
              interrupted address: a sample taken in the kernel (perfparser looks
              the kernel ip up in the process: nothing) or one whose ip is the
              callchain's first user address (it reports the ip only when they
              differ). Its stack is then the callers alone, compared with the end
              of ours (ours has the leaf in front, with its inlined frames).
  alias       two names of one address in BINARY's symbol table (__hypot_finite
              and __ieee754_hypot, malloc and __libc_malloc): perfparser takes
              one, perfconv the one perf takes; equal.
  inline-scope  perfparser names an inlined function without a linkage name in
              the scope of the function it was inlined into, not of its
              declaration (app/perfdwarfdiecache.cpp, prependScopeNames walks
              dwarf_getscopes_die of the inlined DIE: its concrete nesting): a
              lambda's operator() inlined into std::__invoke_impl<R, F> is
              "std::__invoke_impl<double, main(int, char**)::<lambda()> >::
              operator()", the operator() of the closure type F it invokes
              (llvm-symbolizer: operator() at parallel.cpp:32, the lambda's body
              in main): "main(int, char**)::<lambda()>::operator()"; the static
              __gthread_once (gthr-default.h) inlined into std::call_once is
              "std::call_once<...>(...)::__gthread_once": "__gthread_once".
  cut-name    a name perfparser cut to its scope ("std::", its cache of scope
              names lost the name: the frame of std::__invoke_impl<...> at
              invoke.h:60): equal to a name of ours in that scope.
  empty-ustack  a sample whose user stack copy is empty (perf script -D: "ustack:
              size 0"): perfparser writes no user frame; the sampled registers
              still hold the user ip, perfconv's leaf (one frame without inlining:
              checked in OURS-NOINLINE.samples) with its inlined frames.
Where the two spell one name differently and neither is wrong, they are equal
(counted as demangler-spelling): perfconv names a function from the symbol table by
its linkage name demangled (as perf does), which spells a closure type
"main::{lambda()#1}" (the mangled name of main has no parameter types) and a
function type "R ()", where GCC's DWARF, which perfparser reads, writes
"main(int, char**)::<lambda()>" and "R()".

Exit status: 0 when at least PCT% (default 100) of the matched samples are equal
after the corrections and every perfparser sample has its match, 1 otherwise, 2 on
bad input.
"""

import argparse
import re
import subprocess
import sys

KERNEL_MIN = 0xFFFF800000000000
UNKNOWN = "[unknown]"
OPERATORS = ("operator()", "operator<<=", "operator>>=", "operator<<", "operator>>",
             "operator<=", "operator>=", "operator<", "operator>", "operator->*",
             "operator->")
LAMBDA_SCOPE = re.compile(r"^std::__invoke_impl<[^,]+, (.+::<lambda\(.*\)>) >::operator\(\)$")


def live_chars(name):
    """(index, char) of the characters that nest, operator names skipped."""
    i = 0
    while i < len(name):
        if name.startswith("operator", i):
            op = next((o for o in OPERATORS if name.startswith(o, i)), None)
            if op:
                i += len(op)
                continue
        yield i, name[i]
        i += 1


def perf_style(name):
    """perfparser's fully demangled name as perf and perfconv show it."""
    base = name
    for cv in (" const volatile", " const", " volatile", " &&", " &"):
        if base.endswith(cv):
            base = base[:-len(cv)]
            break
    depth, opened, lists, spaces = 0, None, [], []
    for i, c in live_chars(base):
        if c in "(<":
            if depth == 0 and c == "(":
                opened = i
            depth += 1
        elif c in ")>":
            depth -= 1
            if depth == 0 and c == ")" and opened is not None:
                lists.append((opened, i))
        elif c == " " and depth == 0 and not base[:i].endswith("operator"):
            spaces.append(i)
    if lists and lists[-1][1] == len(base) - 1 and lists[-1][0] > 0:
        name = base[:lists[-1][0]]
        spaces = [s for s in spaces if s < len(name)]
    if spaces:
        name = name[spaces[-1] + 1:]
    return name


def parse_expected(path):
    """{(tid, time, event): [groups]}: a group is (address, [names]) per frame."""
    samples, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("\t"):
                h = line.split("\t")
                if len(h) != 4:
                    print("perfparser_compare: %s: not a sample header: %r" % (path, line),
                          file=sys.stderr)
                    sys.exit(2)
                cur = {"tid": h[2], "time": h[3], "event": None, "groups": [], "kernel": 0}
                continue
            if not line or cur is None or line.startswith("\t\t"):
                continue
            f_ = line[1:].split("\t")
            if cur["event"] is None:
                cur["event"] = f_[0].split(": ")[0]
                samples.setdefault((cur["tid"], cur["time"], cur["event"]), []).append(cur)
                continue
            addr, rel = (int(x, 16) for x in f_[0].split(" "))
            if addr >= KERNEL_MIN:
                cur["kernel"] += 1
            if addr >= KERNEL_MIN or f_[-1].endswith(" [kernel]"):
                continue
            named = not re.match(r"^[0-9a-f]+ [0-9a-f]+$", f_[-1])
            # a frame's own location: the address it is at, or an unresolved one
            if not named and addr and (rel == addr or (rel == 0 and len(f_) == 2)):
                cur["groups"].append((addr, []))
                continue
            if not named:
                continue
            text = f_[-1]
            for suffix in (" (inlined)", " "):
                if text.endswith(suffix):
                    text = text[:-len(suffix)]
                    break
            parts = text.rsplit(" ", 2)
            name = parts[0] if len(parts) == 3 and parts[2].startswith("/") else text
            if not cur["groups"]:
                cur["groups"].append((addr, []))
            cur["groups"][-1][1].append(perf_style(name))
    return samples


def parse_ours(path):
    """{(tid, time, event): [user frames, innermost first]}"""
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            c = line.rstrip("\n").split("\t")
            frames = [UNKNOWN if re.match(r"^\S+\+0x[0-9a-f]+$", x) else x
                      for x in c[6].split(";") if x and not x.startswith("[kernel.kallsyms]")]
            named_kernel = c[6].count("[kernel.kallsyms]")
            out[(c[1].split("/")[1], c[3], c[4])] = (frames[::-1], named_kernel)
    return out


def binary_facts(binary):
    """address of each symbol name, the symbols' starts, the .plt's range."""
    names, starts = {}, set()
    out = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        p = line.split()
        if len(p) == 3 and p[1] in "TtWwi":
            names.setdefault(p[2], int(p[0], 16))
            starts.add(int(p[0], 16))
    plt = (0, 0)
    out = subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True,
                         check=True).stdout
    for line in out.splitlines():
        m = re.search(r"\] \.plt\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            plt = (int(m.group(1), 16), int(m.group(1), 16) + int(m.group(2), 16))
    return names, starts, plt


def gcc_spelling(name):
    """A demangled name as GCC spells the same in DWARF: the closure type
    "F::{lambda(P)#N}" as "F::<lambda(P)>", a function type "R ()" as "R()"."""
    name = re.sub(r"\{lambda\((.*?)\)#\d+\}", r"<lambda(\1)>", name)
    return name.replace("> (", ">(").replace(")>>", ")> >")


def same(want, got, names, used):
    """perfparser's name `want` (corrected) and ours `got`."""
    if want == got:
        return True
    if want in names and got in names and names[want] == names[got]:
        used["alias"] += 1
        return True
    if want.endswith("::") and got.startswith(want):
        used["cut-name"] += 1
        return True
    if "{lambda(" in got:
        # the demangler cannot spell main's parameters (its mangled name has none)
        drop = lambda n: re.sub(r"\b(\w+)\([^()]*\)::<lambda", r"\1::<lambda", n)
        if drop(want) == drop(gcc_spelling(got)):
            used["demangler-spelling"] += 1
            return True
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lbr", action="store_true")
    ap.add_argument("--min-equal", type=float, default=100.0)
    ap.add_argument("--show", type=int, default=5)
    ap.add_argument("expected")
    ap.add_argument("binary")
    ap.add_argument("ours")
    ap.add_argument("ours_noinline")
    a = ap.parse_args()
    pp = parse_expected(a.expected)
    ours = parse_ours(a.ours)
    noinl = parse_ours(a.ours_noinline)
    names, starts, plt = binary_facts(a.binary)
    used = {k: 0 for k in ("lbr-target", "lbr-no-ip", "alias", "inline-scope", "cut-name",
                           "empty-ustack", "unknown-only", "demangler-spelling")}
    total = equal = missing = 0
    shown = 0
    for key, lst in sorted(pp.items()):
        for s in lst:
            total += 1
            if key not in ours:
                missing += 1
                print("perfparser_compare: no sample of ours at tid %s time %s %s" % key)
                continue
            groups = [g if g[1] else (g[0], [UNKNOWN]) for g in s["groups"]]
            fixed = set()
            suffix_only = False
            if a.lbr:
                # the ip may be a function's first byte too: the target comes after it
                for i in reversed(range(min(2, len(groups)))):
                    addr = groups[i][0]
                    if addr in starts or plt[0] <= addr < plt[1]:
                        fixed.add("lbr-target")
                        del groups[i]
                        if i == 0:
                            fixed.add("lbr-no-ip")
                            suffix_only = True
                        break
            want = []
            for g in groups:
                for n in g[1]:
                    m = LAMBDA_SCOPE.match(n)
                    if m:
                        fixed.add("inline-scope")
                        n = m.group(1) + "::operator()"
                    want.append(n)
            for i in range(len(want) - 1):
                # named in the scope of the function it was inlined into
                rest = want[i][len(want[i + 1]):] if want[i].startswith(want[i + 1]) else ""
                m = re.match(r"^(\(.*\))?( const)?::(\w+)$", rest)
                if want[i + 1] and m:
                    fixed.add("inline-scope")
                    want[i] = m.group(3)
            got, named_kernel = ours[key]
            if not named_kernel and s["kernel"]:
                # a recording without a kernel map: kernel frames are [unknown], as
                # many as perfparser's kernel lines or one fewer (perfparser looks a
                # kernel sample's ip up once more in the process, perfunwind.cpp:
                # the sample's ip reported when the first user address differs)
                lead = 0
                while lead < min(s["kernel"], len(got)) and got[lead] == UNKNOWN:
                    lead += 1
                got = got[lead:]
            if (want or got) and all(x == UNKNOWN for x in want + got):
                # no frame either names (a process between fork and exec)
                fixed.add("unknown-only")
                want = got
            elif not want and got and len(noinl.get(key, ([], 0))[0]) == 1:
                fixed.add("empty-ustack")
                want = got
            mine = {k: 0 for k in used}
            if suffix_only:
                base = len(got) - len(want)
                ok = base > 0
            else:
                base = 0
                ok = len(got) == len(want)
            bad_at = None
            for i, w in enumerate(want):
                if base + i >= len(got) or not same(w, got[base + i], names, mine):
                    bad_at = i
                    break
            if ok and bad_at is None:
                equal += 1
                for k in fixed:
                    used[k] += 1
                for k, v in mine.items():
                    if v:
                        used[k] += 1
            elif shown < a.show:
                shown += 1
                print("perfparser_compare: tid %s time %s %s differs%s:" % (key + (
                    " at frame %d" % bad_at if bad_at is not None else " in depth",)))
                print("  perfparser: %s" % "\n              <- ".join(want))
                print("  perfconv:   %s" % "\n              <- ".join(got))
    pct = 100.0 * equal / total if total else 0.0
    fixes = ", ".join("%s %d" % (k, v) for k, v in used.items() if v)
    print("perfparser_compare: %d of %d whole user stacks equal (%.1f%%); samples "
          "equal by a correction: %s" % (equal, total, pct, fixes or "none"))
    sys.exit(0 if total and not missing and pct >= a.min_equal else 1)


if __name__ == "__main__":
    main()
