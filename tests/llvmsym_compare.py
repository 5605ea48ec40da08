#!/usr/bin/python3
"""llvmsym_compare: every frame perfconv names in one binary, inlined ones too, against
llvm-symbolizer's names for the same addresses (issue 34, item 1).

Usage:
  llvmsym_compare.py BINARY ADDRS.samples NAMES.samples

ADDRS.samples and NAMES.samples are perfconv's -f samples output of one recording,
with --no-symbols (frames as "module+0xOFFSET", OFFSET in the file) and without (the
names, inlined callees as frames of their own), so that sample i's addresses and
names are line i of each. For every sample, the frames of BINARY are taken from the
leaf end, and from the root end, up to the first frame of another object; each
address expands into the frames llvm-symbolizer gives it
(llvm-symbolizer --obj=BINARY --inlines --no-demangle, at the address for the leaf and
at the return address - 1 for a caller, as perfconv looks them up), innermost first,
and those are compared with perfconv's names one by one.

llvm-symbolizer (LLVM 14, as every LLVM since) names a frame by its DIE's
DW_AT_linkage_name, else by its DW_AT_name alone (DWARFDie::getName), and the
outermost frame of an address by the symbol table's name. The spelling differences
allowed, and nothing else:

  1. Linkage names are demangled as perfconv and perf show them: by libiberty
     without parameters (c++filt -p: `main::{lambda()#1}::operator()`), where
     llvm-symbolizer's own demangler writes `main::'lambda'()::operator()() const`
     and every parameter list. GCC's clone suffixes ([clone .constprop.0]) go too.
  2. A function without a linkage name: llvm-symbolizer writes its DW_AT_name alone
     (`operator()`, `generate_n<...>`); perfconv writes the same DW_AT_name after
     its declaration's scope (`fill_and_sort(std::vector<int>&, unsigned int&, long
     unsigned int)::<lambda()>::operator()`,
     `std::generate_n<...>`). The frame matches when perfconv's name is SCOPE::NAME
     with NAME llvm-symbolizer's and SCOPE not empty.

Also fails on any perfconv frame of BINARY named `operator()` bare, or a template
with no scope (`name<...>` with no `::` before its `<`): every function of the test
program is in a namespace, a class or a function but main and fill_and_sort.

Prints one line per distinct difference (at most 20) and a summary line; exit 0
when every compared frame matches, 1 otherwise, 2 on bad input.
"""

import os
import re
import subprocess
import sys

SKIP_NAMES = {"[unknown]"}


def load_segments(binary):
    """PT_LOAD (offset, vaddr, filesz) of BINARY, from readelf."""
    out = subprocess.run(["readelf", "-lW", binary], capture_output=True, text=True,
                         check=True).stdout
    segs = []
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    return segs


def to_vaddr(segs, off):
    for o, v, n in segs:
        if o <= off < o + n:
            return v + off - o
    return None


def frames(line):
    f = line.rstrip("\n").split("\t")
    if len(f) < 7:
        raise ValueError("a sample line with %d fields" % len(f))
    return f[6].split(";") if f[6] else []


def symbolize(binary, queries):
    """{vaddr: [name, ...] innermost first} from one llvm-symbolizer run."""
    addrs = sorted(queries)
    proc = subprocess.run(
        ["llvm-symbolizer", "--obj=" + binary, "--inlines", "--no-demangle",
         "--functions=linkage"],
        input="".join("0x%x\n" % a for a in addrs), capture_output=True, text=True,
        check=True)
    blocks = proc.stdout.split("\n\n")
    res = {}
    for a, b in zip(addrs, blocks):
        lines = [x for x in b.split("\n") if x != ""]
        res[a] = lines[0::2]
    if len(res) != len(addrs):
        raise ValueError("llvm-symbolizer answered %d of %d addresses" % (len(res), len(addrs)))
    return res


def demangle(names):
    """{mangled: c++filt -p's name} for the _Z names among `names`."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    if not mangled:
        return {}
    out = subprocess.run(["c++filt", "-p"], input="\n".join(mangled) + "\n",
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return dict(zip(mangled, out))


CLONE = re.compile(r" \[clone [^]]*\]")


def expected_names(raw, dem):
    return [CLONE.sub("", dem.get(n, n)) for n in raw]


def matches(ours, theirs, mangled):
    """'same', 'scope' (rule 2) or None."""
    if ours == theirs:
        return "same"
    if not mangled and ours.endswith("::" + theirs) and len(ours) > len(theirs) + 2:
        return "scope"
    return None


BARE_TEMPLATE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*<")


def main(argv):
    if len(argv) != 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    binary, addrs_path, names_path = argv[1:]
    module = os.path.basename(binary)
    segs = load_segments(binary)
    with open(addrs_path) as fa, open(names_path) as fn:
        alines, nlines = fa.readlines(), fn.readlines()
    if len(alines) != len(nlines):
        print("llvmsym_compare: %d samples with addresses, %d with names" %
              (len(alines), len(nlines)), file=sys.stderr)
        return 2
    # per sample: the runs of BINARY's frames at each end, as (vaddr to ask, names)
    work = []
    queries = set()
    uncompared = 0
    for al, nl in zip(alines, nlines):
        addrs, names = frames(al), frames(nl)
        leaf_first = list(reversed(addrs))
        parsed = []
        for i, a in enumerate(leaf_first):
            m = re.fullmatch(r"(.*)\+0x([0-9a-f]+)", a)
            if not m or m.group(1) != module:
                parsed.append(None)
                continue
            v = to_vaddr(segs, int(m.group(2), 16))
            if v is None:
                parsed.append(None)
                continue
            q = v - 1 if i > 0 else v
            parsed.append(q)
            queries.add(q)
        work.append((parsed, list(reversed(names))))
    ans = symbolize(binary, queries)
    dem = demangle({n for v in ans.values() for n in v})
    compared = same = scoped = 0
    diffs = {}
    bare = {}
    for parsed, names in work:
        # from the leaf: names[j] is the j-th frame from the leaf
        j = 0
        k = 0
        spans = []
        while k < len(parsed) and parsed[k] is not None:
            spans.append((parsed[k], j))
            j += len(ans[parsed[k]])
            k += 1
        leaf_end = j
        if k < len(parsed):
            # from the root: names counted from the root end
            r = len(names)
            kk = len(parsed) - 1
            while kk > k and parsed[kk] is not None:
                r -= len(ans[parsed[kk]])
                spans.append((parsed[kk], r))
                kk -= 1
            uncompared += sum(1 for x in parsed[k:kk + 1] if x is not None)
            if r < leaf_end:
                diffs.setdefault("frame counts: %d names for the frames llvm-symbolizer expands to more" % len(names), 0)
                continue
        for q, at in spans:
            raw = ans[q]
            want = expected_names(raw, dem)
            for i, w in enumerate(want):
                compared += 1
                got = names[at + i] if 0 <= at + i < len(names) else "<none>"
                how = matches(got, w, raw[i].startswith("_Z"))
                if how == "same":
                    same += 1
                elif how == "scope":
                    scoped += 1
                else:
                    key = "0x%x frame %d: perfconv %r, llvm-symbolizer %r" % (q, i, got, raw[i])
                    diffs[key] = diffs.get(key, 0) + 1
                if got == "operator()" or got.startswith("operator()<") or BARE_TEMPLATE.match(got):
                    bare[got] = bare.get(got, 0) + 1
    for k, n in list(diffs.items())[:20]:
        print("llvmsym_compare: DIFF (%d) %s" % (n, k))
    for k, n in list(bare.items())[:20]:
        print("llvmsym_compare: NO SCOPE (%d) %s" % (n, k))
    ok = not diffs and not bare and compared > 0
    print("llvmsym_compare: %d frames of %s in %d samples (%d addresses) compared: %d the same, "
          "%d with a scope llvm-symbolizer lacks, %d different, %d without a scope; "
          "%d frames between other objects' not compared" %
          (compared, module, len(work), len(queries), same, scoped,
           sum(diffs.values()), sum(bare.values()), uncompared))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
