#!/usr/bin/python3
"""perfscript_compare: checks perfconv's per-sample output against perf script goldens.

Usage:
  perfscript_compare.py GOLDEN.script.gz OURS.samples
                        [--report GOLDEN.report OURS.folded [--event NAME]]
  perfscript_compare.py --selftest GOLDEN.script.gz [GOLDEN.report]

--min-equal PCT passes when at least PCT% of the samples are equal (for unwound
stacks, where perf and we may part on a few); --v8-builtins names V8's builtins as
we do (see V8_BUILTINS); --java accepts perf's Java names (see java_quirk);
--jit-stops perf's dwarf stacks that end at JIT code (see JIT_STOPS); --end-marker
perf's dwarf stacks that end with an address of -1 (see END_MARKER);
--noreturn-callers DIR perf's frame-pointer names of callers after a noreturn call
(see NORETURN_DIRS); --restorer DIR perf's dwarf names of a signal handler's restorer
(see RESTORER); --lbr-leaf DIR perf's LBR user leaf, the first entry's target (see
LBR_LEAF). DIR may be given several times.

GOLDEN.script(.gz) is the output of
  perf script --ns -F comm,pid,tid,cpu,time,event,period,ip,sym,dso
(cpu may be missing: then the CPU column is not compared). Each sample is a
header line, then callchain lines "\\t ADDR SYM (DSO)" leaf first, then a
blank line; without a callchain "ADDR SYM (DSO)" ends the header line.

OURS.samples has one line per sample, tab-separated:
  COMM  PID/TID  CPU  SEC.NSEC  EVENT  PERIOD  FRAMES
FRAMES are root first, joined by ';' (a ';' inside a name written as ':');
an unresolved frame is "module+0xOFFSET" (module = basename of the mapped
file) or "[unknown]".

Samples are matched in order after sorting both sides by (time, tid, event,
period). For every sample comm, pid/tid, cpu, event (the part before the first
':'), period and the whole frame list must be equal, with these
normalizations of perf's names: symbol version suffixes (@@GLIBC_2.34,
@GLIBC_2.2.5) are dropped, ';' becomes ':', and perf's "[unknown]" matches
"[unknown]" or "module+0x..." (when perf knows the DSO, module must be its
basename).

--report compares perf report's per-symbol self sample counts (from
  perf report --stdio --no-children -n -g none --sort comm,dso,sym)
with counts computed from OURS.folded ("comm;root;...;leaf COUNT"), per
(comm, leaf symbol). Unresolved rows (perf "0x..." / ours "module+0x...") are
counted per (comm, module). With several events in the report, --event picks
the section (default: the only one).

Exit status: 0 when equal, 1 on any difference, 2 on bad input or usage.
"""

import argparse
import gzip
import os
import re
import subprocess
import sys
import tempfile

UNKNOWN = "[unknown]"
MAX_SHOWN = 10

HEADER_RE = re.compile(
    r"^(?P<comm>.*?)\s+(?P<pid>-?\d+)/(?P<tid>-?\d+)\s+"
    r"(?:\[(?P<cpu>\d+)\]\s+)?"
    r"(?P<sec>\d+)\.(?P<nsec>\d{9}):\s+"
    r"(?P<period>\d+)\s+(?P<event>\S+):(?:\s+(?P<rest>.*))?$")
# the DSO is the last parenthesized part: C++ names hold " (" themselves
# a deleted file's dso is "PATH (deleted)", as the kernel names the mapping
FRAME_RE = re.compile(r"^\s*(?P<ip>[0-9a-f]+)\s+(?P<sym>.*?)\s+\((?P<dso>[^()]*(?: \(deleted\))?)\)\s*$")
# a version suffix, but not perf's "@plt" for PLT entries
VERSION_RE = re.compile(r"@@?(?!plt$)[A-Za-z_][A-Za-z0-9_.]*$")
OFFSET_RE = re.compile(r"^(?P<module>.+)\+0x[0-9a-fA-F]+$")
REPORT_SECTION_RE = re.compile(r"^# Samples: \S+ of event '(?P<event>[^']*)'")
REPORT_ROW_RE = re.compile(
    r"^\s*(?P<pct>[\d.]+)%\s+(?P<count>\d+)\s+(?P<comm>.*?)\s{2,}(?P<dso>.*?)\s{2,}"
    r"\[(?P<kind>.)\]\s+(?P<sym>.*?)\s*$")
FOLDED_SUFFIX_RE = re.compile(r"_\[[kji]\]$")


class InputError(Exception):
    pass


class Frame:
    """One golden frame: a name (None when perf printed [unknown]) and its DSO."""

    __slots__ = ("name", "dso", "ip")

    def __init__(self, name, dso, ip):
        self.name = name
        self.dso = dso
        self.ip = ip

    def __str__(self):
        if self.name is not None:
            return self.name
        if self.dso and self.dso != UNKNOWN:
            return "%s+0x%x?" % (os.path.basename(self.dso), self.ip)
        return UNKNOWN


class Sample:
    __slots__ = ("comm", "pid", "tid", "cpu", "time", "event", "period", "frames", "where")

    def key(self):
        return (self.time, self.tid, self.event, self.period)

    def time_str(self):
        return "%d.%09d" % divmod(self.time, 1000000000)

    def head(self):
        cpu = "-" if self.cpu is None else str(self.cpu)
        return "%s %d/%d [%s] %s %s %d" % (self.comm, self.pid, self.tid, cpu,
                                          self.time_str(), self.event, self.period)


def open_text(path):
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="surrogateescape")
    return open(path, "r", encoding="utf-8", errors="surrogateescape")


# --v8-builtins: perf inject --jit names V8's embedded builtins by their jitdump
# records ("Builtin:JSEntry"); they lie in node's own text, where we name them by the
# binary's symbol ("Builtins_JSEntry").
V8_BUILTINS = False


def norm_sym(sym):
    """perf's symbol name as our converter writes it."""
    if V8_BUILTINS and sym.startswith("Builtin:"):
        sym = "Builtins_" + sym[len("Builtin:"):]
    return VERSION_RE.sub("", sym).replace(";", ":")


def norm_event(event):
    return event.split(":", 1)[0]


def parse_frame(line, where):
    m = FRAME_RE.match(line)
    if not m:
        raise InputError("%s: cannot parse callchain line %r" % (where, line))
    sym = m.group("sym")
    name = None if sym == UNKNOWN else norm_sym(sym)
    return Frame(name, m.group("dso"), int(m.group("ip"), 16))


def parse_golden(path):
    """Returns (samples, has_cpu) from perf script output."""
    samples = []
    has_cpu = None
    cur = None
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            where = "%s:%d" % (path, lineno)
            if not line.strip():
                cur = None
                continue
            if line[0] in " \t":
                if cur is None:
                    raise InputError("%s: callchain line outside a sample" % where)
                cur.frames.append(parse_frame(line, where))
                continue
            m = HEADER_RE.match(line)
            if not m:
                raise InputError("%s: cannot parse sample header %r" % (where, line))
            s = Sample()
            s.comm = m.group("comm")
            s.pid = int(m.group("pid"))
            s.tid = int(m.group("tid"))
            s.cpu = None if m.group("cpu") is None else int(m.group("cpu"))
            if has_cpu is None:
                has_cpu = s.cpu is not None
            elif has_cpu != (s.cpu is not None):
                raise InputError("%s: some samples have a cpu field and some not" % where)
            s.time = int(m.group("sec")) * 1000000000 + int(m.group("nsec"))
            s.period = int(m.group("period"))
            s.event = norm_event(m.group("event"))
            s.frames = []
            s.where = where
            rest = (m.group("rest") or "").strip()
            if rest:
                s.frames.append(parse_frame(rest, where))
            samples.append(s)
            cur = s
    if not samples:
        raise InputError("%s: no samples" % path)
    for s in samples:
        s.frames.reverse()  # root first, as ours
    return samples, bool(has_cpu)


def parse_ours(path):
    samples = []
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            where = "%s:%d" % (path, lineno)
            if not line:
                continue
            cols = line.split("\t")
            if len(cols) != 7:
                raise InputError("%s: %d tab-separated columns, expected 7" % (where, len(cols)))
            comm, pidtid, cpu, tm, event, period, frames = cols
            s = Sample()
            s.comm = comm
            m = re.match(r"^(-?\d+)/(-?\d+)$", pidtid)
            if not m:
                raise InputError("%s: bad PID/TID %r" % (where, pidtid))
            s.pid, s.tid = int(m.group(1)), int(m.group(2))
            s.cpu = None if cpu in ("-", "-1", "") else int(cpu)
            m = re.match(r"^(\d+)\.(\d{9})$", tm)
            if not m:
                raise InputError("%s: bad time %r (want SEC.NSEC, 9 digits)" % (where, tm))
            s.time = int(m.group(1)) * 1000000000 + int(m.group(2))
            s.event = norm_event(event)
            if not re.match(r"^\d+$", period):
                raise InputError("%s: bad period %r" % (where, period))
            s.period = int(period)
            s.frames = frames.split(";") if frames else []
            s.where = where
            samples.append(s)
    return samples


# --java: perf 6.1's Java demangler (util/demangle-java.c) writes no "[]" after a class
# type (and carries it to the next primitive one: "(java.lang.String, int[])" for
# "([Ljava/lang/String;I)"), and no dot before "<init>" or "<clinit>"
# ("java.util.regex.Pattern<init>"). For frames of perf inject's jitted-*.so, names
# equal but for brackets and that dot match, counted as perf's.
JAVA = False


def java_quirk(g, ours):
    if not JAVA or not os.path.basename(g.dso or "").startswith("jitted-"):
        return False

    def norm(name):
        return name.replace("[]", "").replace(".<", "<")
    return norm(g.name) == norm(ours)


# perf 6.1 stretches _init over the .plt that follows it, and its symbol tree then
# finds _init for some PLT entries (which depends on the tree's shape); perfconv
# names the entry. Accepted, and counted in the summary.
JAVA_QUIRK = "frames where perf shows its Java names (no [] after a class, no dot before <init>)"
JIT_STOP_QUIRK = "samples where perf's stack ends at JIT code without CFI, ours goes on"
quirks = {"frames where perf shows _init for a PLT entry": 0, JAVA_QUIRK: 0, JIT_STOP_QUIRK: 0,
          "samples where perf's stack ends with an address of -1": 0}


def perf_plt_quirk(perf_name, ours):
    return perf_name == "_init" and ours.endswith("@plt")


# --noreturn-callers DIR: perf's frame-pointer mode names a caller by the function that
# holds its return address. Where the call is its function's last instruction (a call
# to a noreturn function: exit, abort, __stack_chk_fail), the return address is the
# first byte of the next function, and perf names that one; perfconv names the function
# holding the call, at the return address - 1, as perf's dwarf mode does. A caller frame
# matches when perf's address is the first byte of perf's function and the byte before
# it lies in ours, by the symbol table of the DSO (its basename in a DIR, else its path).
NORETURN = False
NORETURN_DIRS = []
NORETURN_QUIRK = "caller frames where perf names the function after a noreturn call"
quirks[NORETURN_QUIRK] = 0
# --restorer DIR: a signal handler returns to its restorer (glibc's __restore_rt), which
# no call precedes; perf's dwarf mode looks it up at its address - 1 all the same, and
# names the byte before it ([unknown] in glibc's padding). perfconv names the restorer.
# Such a frame matches when ours is the function whose first byte is perf's address + 1.
RESTORER = False
RESTORER_QUIRK = "signal restorer frames perf looks up at the byte before them"
quirks[RESTORER_QUIRK] = 0
# --lbr-leaf DIR: for a --call-graph lbr recording perf (resolve_lbr_callchain_sample)
# takes the first LBR entry's `to` as the user leaf: the first byte of the function last
# called, which is a PLT stub (`memcpy@plt`) or the function that tail-called the
# sampled one (in a recursion that ends in a tail call, the caller named twice:
# rec_walk;rec_walk where the thread runs rec_leaf); perfconv takes the sampled address.
# A sample whose frames differ in its user leaf only matches when perf's leaf is a PLT
# entry or lies at a function's first byte by the symbol table of its DSO in a DIR
# ([vdso] as vdso.so).
LBR_LEAF = False
LBR_LEAF_QUIRK = "samples whose user leaf perf takes from the LBR's first call target"
quirks[LBR_LEAF_QUIRK] = 0
_symtabs = {}


def dso_symbols(dso):
    """[(start, size, name)] of the DSO's symbol table (its .dynsym when stripped)."""
    if dso not in _symtabs:
        path = dso
        base = "vdso.so" if dso == "[vdso]" else os.path.basename(dso)
        for d in NORETURN_DIRS:
            if os.path.exists(os.path.join(d, base)):
                path = os.path.join(d, base)
                break
        syms = []
        for dyn in ([], ["-D"]):
            try:
                out = subprocess.run(["nm", "-S", "--defined-only"] + dyn + [path],
                                     capture_output=True, text=True, check=False).stdout
            except OSError:
                out = ""
            for line in out.splitlines():
                f = line.split()
                if len(f) == 4 and f[2] in "TtWi":
                    syms.append((int(f[0], 16), int(f[1], 16), norm_sym(f[3])))
                elif len(f) == 3 and f[1] in "TtWi":
                    # no size (an assembler label): up to the next symbol
                    syms.append((int(f[0], 16), 0, norm_sym(f[2])))
            if syms:
                break
        syms.sort()
        starts = sorted({s for s, _, _ in syms})
        for i, (s, z, n) in enumerate(syms):
            if not z:
                nxt = [x for x in starts[starts.index(s) + 1:starts.index(s) + 2]]
                syms[i] = (s, (nxt[0] - s) if nxt else 1, n)
        _symtabs[dso] = syms
    return _symtabs[dso]


def noreturn_quirk(g, ours):
    if not NORETURN or not g.dso or g.dso == UNKNOWN or not g.ip:
        return False
    syms = dso_symbols(g.dso)
    return (any(s == g.ip and n == g.name for s, _, n in syms) and
            any(s <= g.ip - 1 < s + z and n == ours for s, z, n in syms))


def restorer_quirk(g, ours):
    if not RESTORER or not g.dso or g.dso == UNKNOWN or g.name is not None:
        return False
    return any(s == g.ip + 1 and n == ours for s, _, n in dso_symbols(g.dso))


def frame_matches(g, ours, caller=False):
    if g.name is not None:
        if perf_plt_quirk(g.name, ours):
            quirks["frames where perf shows _init for a PLT entry"] += 1
            return True
        if g.name != ours and java_quirk(g, ours):
            quirks[JAVA_QUIRK] += 1
            return True
        if g.name != ours and caller and noreturn_quirk(g, ours):
            quirks[NORETURN_QUIRK] += 1
            return True
        return g.name == ours
    if ours == UNKNOWN:
        return True
    if caller and restorer_quirk(g, ours):
        quirks[RESTORER_QUIRK] += 1
        return True
    m = OFFSET_RE.match(ours)
    if not m:
        return False
    if g.dso and g.dso != UNKNOWN:
        return m.group("module") == os.path.basename(g.dso)
    return True


def sample_diff(g, o, has_cpu):
    """Returns a list of the fields that differ."""
    bad = []
    if g.comm != o.comm:
        bad.append("comm")
    if (g.pid, g.tid) != (o.pid, o.tid):
        bad.append("pid/tid")
    if has_cpu and g.cpu != o.cpu:
        bad.append("cpu")
    if g.time != o.time:
        bad.append("time")
    if g.event != o.event:
        bad.append("event")
    if g.period != o.period:
        bad.append("period")
    if not frames_equal(g.frames, o.frames):
        if jit_stop(g.frames, o.frames):
            quirks[JIT_STOP_QUIRK] += 1
        elif end_marker(g.frames, o.frames):
            quirks[END_MARKER_QUIRK] += 1
        elif lbr_leaf(g.frames, o.frames):
            quirks[LBR_LEAF_QUIRK] += 1
        else:
            bad.append("frames")
    return bad


def frames_equal(gf, of):
    """Root first: every frame but the last (the leaf) is a caller."""
    return len(gf) == len(of) and all(frame_matches(a, b, i + 1 < len(gf))
                                      for i, (a, b) in enumerate(zip(gf, of)))


# --jit-stops: perf's dwarf unwinder has no CFI for JIT code whose runtime wrote none
# (HotSpot), so its stack ends at the first such frame (its outermost frame is then in
# a jitted-*.so of perf inject); we go on through the frame pointer. Such a sample
# matches when our stack ends, at the leaf, with perf's frames.
JIT_STOPS = False


# --end-marker: where perf 6.1's dwarf unwinder runs out of stack copy it may end the
# stack with an address of -1, printed "ffffffffffffffff [unknown]"; ours ends before.
END_MARKER = False
END_MARKER_QUIRK = "samples where perf's stack ends with an address of -1"


def end_marker(gf, of):
    return (END_MARKER and gf and gf[0].name is None and gf[0].ip == 0xffffffffffffffff and
            frames_equal(gf[1:], of))


def lbr_leaf(gf, of):
    if not LBR_LEAF or len(gf) != len(of):
        return False
    user = [i for i, f in enumerate(gf) if not (f.dso or "").startswith("[kernel")]
    if not user:
        return False
    u = user[-1]
    g = gf[u]
    if not all(frame_matches(a, b, i + 1 < len(gf))
               for i, (a, b) in enumerate(zip(gf, of)) if i != u):
        return False
    if g.name is not None and g.name.endswith("@plt"):
        return True
    return bool(g.dso) and any(st == g.ip for st, _, _ in dso_symbols(g.dso))


def jit_stop(gf, of):
    return (JIT_STOPS and gf and os.path.basename(gf[0].dso or "").startswith("jitted-") and
            len(of) > len(gf) and frames_equal(gf, of[len(of) - len(gf):]))


def show_side_by_side(g, o, bad):
    if bad[0].endswith("in ours"):
        print("--- sample %s" % bad[0])
    else:
        print("--- sample differs in %s" % ", ".join(bad))
    print("  perf: %s   (%s)" % (g.head() if g else "(none)", g.where if g else ""))
    print("  ours: %s   (%s)" % (o.head() if o else "(none)", o.where if o else ""))
    gf = g.frames if g else []
    of = o.frames if o else []
    width = max([len(str(x)) for x in gf] + [4])
    for i in range(max(len(gf), len(of))):
        a = str(gf[i]) if i < len(gf) else ""
        b = of[i] if i < len(of) else ""
        mark = " " if (i < len(gf) and i < len(of) and
                       frame_matches(gf[i], of[i], i + 1 < len(gf))) else "!"
        print("  %s %-*s | %s" % (mark, width, a, b))


def compare_samples(golden_path, ours_path, min_equal=None):
    golden, has_cpu = parse_golden(golden_path)
    ours = parse_ours(ours_path)
    golden.sort(key=Sample.key)
    ours.sort(key=Sample.key)
    shown = 0
    ndiff = 0
    npairs = 0
    i = j = 0
    # Merge by key, so that one missing sample shows as one difference.
    while i < len(golden) or j < len(ours):
        g = golden[i] if i < len(golden) else None
        o = ours[j] if j < len(ours) else None
        if o is None or (g is not None and g.key() < o.key()):
            if o is not None and g.key()[:2] == o.key()[:2]:
                # Same time and tid: a field differs, compare the pair.
                bad = sample_diff(g, o, has_cpu)
                i += 1
                j += 1
            else:
                bad = ["missing in ours"]
                o = None
                i += 1
        elif g is None or o.key() < g.key():
            if g is not None and g.key()[:2] == o.key()[:2]:
                bad = sample_diff(g, o, has_cpu)
                i += 1
                j += 1
            else:
                bad = ["extra in ours"]
                g = None
                j += 1
        else:
            bad = sample_diff(g, o, has_cpu)
            i += 1
            j += 1
        npairs += 1
        if bad:
            ndiff += 1
            if shown < MAX_SHOWN:
                show_side_by_side(g, o, bad)
                shown += 1
    accepted = "".join(", %d %s" % (n, what)
                       for what, n in quirks.items() if n)
    if ndiff and min_equal is not None:
        pct = 100.0 * (npairs - ndiff) / npairs if npairs else 0.0
        print("perfscript_compare: %d of %d samples have perf's stack (%.1f%%, at least %g%% wanted)%s"
              % (npairs - ndiff, npairs, pct, min_equal, accepted))
        return 0 if pct >= min_equal else 1
    if ndiff:
        print("perfscript_compare: %d of %d samples differ (perf has %d samples, ours %d)"
              % (ndiff, npairs, len(golden), len(ours)))
        return 1
    print("perfscript_compare: %d samples, all stacks equal%s%s"
          % (len(golden), "" if has_cpu else " (no cpu in golden: CPU not compared)",
             accepted))
    return 0


def report_sym_key(sym, dso):
    """(kind, name) for a perf report row's symbol."""
    if re.match(r"^0x[0-9a-f]+$", sym) or sym == UNKNOWN:
        return ("unresolved", os.path.basename(dso) if dso else UNKNOWN)
    return ("sym", plt_key(norm_sym(sym)))


def plt_key(name):
    """_init and PLT entries count together in self counts (see perf_plt_quirk)."""
    return "(_init or a PLT entry)" if name == "_init" or name.endswith("@plt") else name


def our_sym_key(frames):
    """(kind, name) for the leaf of a folded stack; inlined frames go to their caller."""
    frames = list(frames)
    while len(frames) > 1 and frames[-1].endswith("_[i]"):
        frames.pop()
    leaf = FOLDED_SUFFIX_RE.sub("", frames[-1]) if frames else UNKNOWN
    if leaf == UNKNOWN:
        return ("unresolved", UNKNOWN)
    m = OFFSET_RE.match(leaf)
    if m:
        return ("unresolved", m.group("module"))
    return ("sym", plt_key(leaf))


def parse_report(path, event):
    sections = {}
    cur = None
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = REPORT_SECTION_RE.match(line)
            if m:
                cur = sections.setdefault(norm_event(m.group("event")), {})
                continue
            if not line.strip() or line.startswith("#"):
                continue
            m = REPORT_ROW_RE.match(line)
            if not m or cur is None:
                raise InputError("%s:%d: cannot parse report row %r" % (path, lineno, line))
            k = (m.group("comm"),) + report_sym_key(m.group("sym"), m.group("dso"))
            cur[k] = cur.get(k, 0) + int(m.group("count"))
    if not sections:
        raise InputError("%s: no '# Samples: ... of event' section" % path)
    if event is None:
        if len(sections) != 1:
            raise InputError("%s: events %s: choose one with --event"
                             % (path, ", ".join(sorted(sections))))
        return next(iter(sections.values()))
    if norm_event(event) not in sections:
        raise InputError("%s: no section for event %r (have %s)"
                         % (path, event, ", ".join(sorted(sections))))
    return sections[norm_event(event)]


def parse_folded(path):
    counts = {}
    with open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            m = re.match(r"^(.*) (\d+)$", line)
            if not m:
                raise InputError("%s:%d: bad folded line %r" % (path, lineno, line))
            parts = m.group(1).split(";")
            k = (parts[0],) + our_sym_key(parts[1:])
            counts[k] = counts.get(k, 0) + int(m.group(2))
    return counts


def compare_report(report_path, folded_path, event):
    want = parse_report(report_path, event)
    got = parse_folded(folded_path)
    bad = [k for k in sorted(set(want) | set(got)) if want.get(k, 0) != got.get(k, 0)]
    if bad:
        print("--- self sample counts differ (comm, symbol: perf / ours):")
        for k in bad[:MAX_SHOWN]:
            name = k[2] if k[1] == "sym" else k[2] + "+0x?"
            print("  %-12s %-40s %6d / %d" % (k[0], name, want.get(k, 0), got.get(k, 0)))
        print("perfscript_compare: report: %d of %d (comm, symbol) counts differ"
              % (len(bad), len(set(want) | set(got))))
        return 1
    print("perfscript_compare: report: %d symbols, %d samples, all self counts equal"
          % (len(want), sum(want.values())))
    return 0


# --- self test: a tiny converter of perf script output into our formats ---

def golden_frame_as_ours(fr):
    if fr.name is not None:
        return fr.name
    if fr.dso and fr.dso != UNKNOWN:
        return "%s+0x%x" % (os.path.basename(fr.dso), fr.ip)
    return UNKNOWN


def write_ours(samples, path, cpu_default="-"):
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        for s in samples:
            f.write("\t".join([
                s.comm, "%d/%d" % (s.pid, s.tid),
                cpu_default if s.cpu is None else str(s.cpu),
                s.time_str(), s.event, str(s.period),
                ";".join(golden_frame_as_ours(x) for x in s.frames)]) + "\n")


def write_folded(samples, path, event):
    counts = {}
    for s in samples:
        if s.event != event:
            continue
        k = ";".join([s.comm] + [golden_frame_as_ours(x) for x in s.frames])
        counts[k] = counts.get(k, 0) + 1
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        for k in sorted(counts):
            f.write("%s %d\n" % (k, counts[k]))


def selftest(golden_path, report_path):
    me = os.path.abspath(__file__)
    samples, _ = parse_golden(golden_path)
    failures = 0

    def run(args, want_rc, what):
        nonlocal failures
        p = subprocess.run([sys.executable, me] + args, capture_output=True, text=True)
        ok = p.returncode == want_rc
        last = (p.stdout.strip().splitlines() or [""])[-1]
        print("selftest: %-44s exit %d (want %d) %s  [%s]"
              % (what, p.returncode, want_rc, "ok" if ok else "FAILED", last))
        if not ok:
            failures += 1
            sys.stdout.write(p.stdout + p.stderr)

    with tempfile.TemporaryDirectory(prefix="perfscript_compare.") as tmp:
        ours = os.path.join(tmp, "ours.samples")
        write_ours(samples, ours)
        run([golden_path, ours], 0, "round trip")

        # The same samples in another order must still match.
        write_ours(list(reversed(samples)), ours)
        run([golden_path, ours], 0, "round trip, reversed order")

        deep = max(range(len(samples)), key=lambda i: len(samples[i].frames))
        mutations = []

        def mutate(what, fn):
            copy = [s for s in samples]
            victim = Sample()
            for a in Sample.__slots__:
                setattr(victim, a, getattr(copy[deep], a))
            victim.frames = list(victim.frames)
            fn(victim, copy)
            copy[deep] = victim
            mutations.append((what, copy))

        mutate("changed frame name", lambda v, c: v.frames.__setitem__(
            len(v.frames) // 2, Frame("not_a_function", "x", 0)))
        mutate("dropped root frame", lambda v, c: v.frames.pop(0))
        mutate("swapped two frames", lambda v, c: v.frames.reverse())
        mutate("changed period", lambda v, c: setattr(v, "period", v.period + 1))
        mutate("changed comm", lambda v, c: setattr(v, "comm", v.comm + "x"))
        mutate("changed tid", lambda v, c: setattr(v, "tid", v.tid + 1))
        mutate("changed time by 1 ns", lambda v, c: setattr(v, "time", v.time + 1))
        mutate("changed event", lambda v, c: setattr(v, "event", v.event + "x"))
        if samples[deep].cpu is not None:
            mutate("changed cpu", lambda v, c: setattr(v, "cpu", v.cpu + 1))
        # the rules for perf's Java names and dwarf stack ends accept no other change
        here = os.path.dirname(golden_path) or "."
        lenient = ["--java", "--jit-stops", "--end-marker", "--noreturn-callers", here,
                   "--restorer", here, "--lbr-leaf", here]
        for what, copy in mutations:
            write_ours(copy, ours)
            run([golden_path, ours], 1, what)
            run([golden_path, ours] + lenient, 1, what + " (" + " ".join(lenient) + ")")
        write_ours(samples[:-1], ours)
        run([golden_path, ours], 1, "missing last sample")
        write_ours(samples + samples[:1], ours)
        run([golden_path, ours], 1, "one extra sample")

        if report_path:
            events = sorted({s.event for s in samples})
            folded = os.path.join(tmp, "ours.folded")
            for ev in events:
                write_folded(samples, folded, ev)
                extra = ["--event", ev] if len(events) > 1 else []
                run([golden_path, ours_ok(tmp, samples), "--report", report_path, folded] + extra,
                    0, "report round trip (%s)" % ev)
                # One sample moved to another leaf must be caught.
                with open(folded, "a") as f:
                    f.write("%s;main;not_a_function 1\n" % samples[0].comm)
                run([golden_path, ours_ok(tmp, samples), "--report", report_path, folded] + extra,
                    1, "report with an extra sample (%s)" % ev)
    print("selftest: %s" % ("all passed" if not failures else "%d FAILED" % failures))
    return 0 if not failures else 1


def ours_ok(tmp, samples):
    path = os.path.join(tmp, "ok.samples")
    if not os.path.exists(path):
        write_ours(samples, path)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("golden", help="perf script output (.gz or plain)")
    ap.add_argument("ours", nargs="?", help="our samples file")
    ap.add_argument("--report", nargs=2, metavar=("GOLDEN.report", "OURS.folded"))
    ap.add_argument("--event", help="report section to compare (event name)")
    ap.add_argument("--min-equal", type=float, metavar="PCT",
                    help="pass when at least PCT%% of the samples are equal")
    ap.add_argument("--v8-builtins", action="store_true",
                    help="perf's Builtin:NAME is our Builtins_NAME")
    ap.add_argument("--jit-stops", action="store_true",
                    help="accept perf's stacks that end at JIT code (see JIT_STOPS)")
    ap.add_argument("--end-marker", action="store_true",
                    help="accept perf's dwarf stacks that end with an address of -1")
    ap.add_argument("--java", action="store_true",
                    help="accept perf's Java names for JIT frames (see java_quirk)")
    ap.add_argument("--noreturn-callers", metavar="DIR", action="append", default=[],
                    help="accept perf's frame-pointer names of callers after a noreturn "
                         "call, checked on the DSOs in DIR (see NORETURN_DIRS)")
    ap.add_argument("--restorer", metavar="DIR", action="append", default=[],
                    help="accept perf's dwarf names of a signal restorer, checked on the "
                         "DSOs in DIR (see RESTORER)")
    ap.add_argument("--lbr-leaf", metavar="DIR", action="append", default=[],
                    help="accept perf's LBR user leaf (the first entry's target) where ours "
                         "is the sampled address, checked on the DSOs in DIR (see LBR_LEAF)")
    ap.add_argument("--selftest", action="store_true",
                    help="round-trip GOLDEN through a built-in converter; "
                         "OURS is then an optional GOLDEN.report")
    a = ap.parse_args()
    global V8_BUILTINS, JAVA, JIT_STOPS, END_MARKER, NORETURN, NORETURN_DIRS, RESTORER, LBR_LEAF
    NORETURN = bool(a.noreturn_callers)
    V8_BUILTINS = a.v8_builtins
    NORETURN_DIRS = a.noreturn_callers + a.restorer + a.lbr_leaf
    LBR_LEAF = bool(a.lbr_leaf)
    RESTORER = bool(a.restorer)
    JAVA = a.java
    JIT_STOPS = a.jit_stops
    END_MARKER = a.end_marker
    try:
        if a.selftest:
            return selftest(a.golden, a.ours)
        if a.ours is None:
            ap.error("OURS.samples is required")
        rc = compare_samples(a.golden, a.ours, a.min_equal)
        if a.report:
            rc = max(rc, compare_report(a.report[0], a.report[1], a.event))
        return rc
    except (InputError, OSError, UnicodeError) as e:
        print("perfscript_compare: error: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
