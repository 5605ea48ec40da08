#!/usr/bin/env python3
"""check_layers: the source tree keeps its order of layers, one include style, perf's
numbers in one header, no mutable static state, each header the contract of its own
file, and no long file doing several jobs.

    tests/check_layers.py             check the tree (run by make check)
    tests/check_layers.py --self-test show that each rule fails on a tree that breaks it

One layer per folder, lowest first; a file includes only files of its own folder or
of lower ones:
  1 common/     containers, diagnostics, file mapping, byte loaders, perf's ABI
  2 formats/    codecs that know nothing of symbols, in folders by role:
      read/       readers: bytes in, records out (perf.data, simpleperf's features,
                  jitdump, perf maps, tracepoint formats); they see only their bytes
      model/      the profile model every writer reads, and its views
      proto/      the protobuf schemas (their generated headers count as this folder)
      write/      writers: the model in, a file out, and what several writers share
  3 symbolize/  addresses to frames: native, kernel, unwinding, finding files; and
      jit/        JIT code: the runtimes' dumps and maps found, read, indexed, cached
  4 convert/    the session and its passes, the output table, a command's conversion
  5 upload/     the backends (one file each, none including another's), the transport,
                retries and the watcher
  6 cli/        every command line (convert, info, diff, upload, watch) and the one
                main(): nothing below it knows argv
Within a layer a folder includes only itself and the folders FOLDERS lists for it:
write/ includes model/ and proto/, never read/; read/ and model/ include nothing of
their layer's other folders; symbolize/jit/ includes symbolize/, never the reverse.
Nothing sits at the top of formats/: scripts/refolder.sh moves a file left there to
the folder its role says.

A backend's file (BACKEND_FILES) includes no other backend's: each is reached through
upload/backend.h. No function is over FUNCTION_LINES lines (from its signature to its
closing brace) but the ones LONG_FUNCTIONS still lists.
"""
import fnmatch
import os
import re
import shutil
import sys
import tempfile

LAYERS = [(1, "common"), (2, "formats"), (3, "symbolize"), (4, "convert"), (5, "upload"),
          (6, "cli")]
# each backend's request, one file apiece, behind one interface
BACKEND_FILES = ["upload/datadog", "upload/pyroscope", "upload/parca", "upload/otlp"]
SOURCE_DIRS = [name for _, name in LAYERS]
# The folders by role of a layer ("" its top folder, which holds files only where the
# layer says so), each with the folders of its layer it may include besides its own.
FOLDERS = {
    "formats": {"read": set(), "model": set(), "proto": set(), "write": {"model", "proto"}},
    "symbolize": {"": set(), "jit": {""}},
}
# made by the build (protoc-c from formats/proto/), on the include path: the pprof and
# OTLP writers', and upload's
GENERATED = {name: "formats/proto/" + name for name in (
    "profile.pb-c.h", "otlp_profiles.pb-c.h", "otlp_profiles_data.pb-c.h", "otlp_common.pb-c.h",
    "otlp_resource.pb-c.h", "rpc_status.pb-c.h")}
ABI_HEADER = "common/perf_abi.h"
# A file this long is one job or it is split; these are one job each.
LONG_LINES = 1000
ONE_JOB = {}
# A function this long is split into named steps.
FUNCTION_LINES = 150
# The functions over it when the limit came (issue 46), to be split: a list that only
# shrinks. One split below the limit must leave it (the check says so); none is added.
LONG_FUNCTIONS = set()
# Files whose mutable static state is what a signal handler reaches: it has no other way
# to its thread's context. Each says why.
SIGNAL_STATE = {
    "common/cpulimit.c": "the CPU-time timer's handler jumps to its thread's sigsetjmp",
}
# a definition of a number: a #define or an enumerator
DEF = re.compile(r"(?:^\s*#\s*define\s+([A-Z][A-Z0-9_]*)\b|(?:^|[{,])\s*([A-Z][A-Z0-9_]*)\s*=[^=])")
# a variable that keeps state between calls: file-scope or function-scope static, not const
MUTABLE_STATIC = re.compile(r"^\s*static\s+(?!const\b)(?!inline\b)[^(]*[;=]")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# a function declared at the top level of a header: "type name(" ... ");"
DECL = re.compile(r"^(?!static|typedef|#|\s|/|\*|})[A-Za-z_][\w \*]*?\b(\w+)\s*\([^;{]*?\)\s*;",
                  re.M | re.S)


def layer_of(path):
    folder = path.split("/", 1)[0]
    for num, name in LAYERS:
        if folder == name and "/" in path:
            return num, name
    return None, None


def folder_of(path):
    """The folder by role of a file of a layer that has them ("" for its top), or None."""
    parts = path.split("/")
    return parts[1] if len(parts) == 3 else ""


def sources(top):
    out = []
    for d in SOURCE_DIRS:
        full = os.path.join(top, d)
        if not os.path.isdir(full):
            continue
        for f in sorted(os.listdir(full)):
            if f.endswith((".c", ".h")):
                out.append(d + "/" + f)
            elif os.path.isdir(os.path.join(full, f)):
                for g in sorted(os.listdir(os.path.join(full, f))):
                    if g.endswith((".c", ".h")):
                        out.append(d + "/" + f + "/" + g)
    return out


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def functions(text):
    """(name, first line, lines) of each function defined in a C file: its body opens
    with a "{" alone at the line's start and closes with a "}" alone (the house style;
    an initializer's brace follows its "=")."""
    lines = text.split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            j = i - 1
            while j >= 0 and "(" not in lines[j]:
                j -= 1
            m = re.search(r"(\w+)\s*\(", lines[j]) if j >= 0 else None
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            if m:
                out.append((m.group(1), j + 1, k - j + 1))
            i = k
        i += 1
    return out


def check(top):
    problems = []
    long_seen = set()
    files = sources(top)
    abi_names = set()
    if os.path.isfile(os.path.join(top, ABI_HEADER)):
        for line in strip_comments(open(os.path.join(top, ABI_HEADER)).read()).split("\n"):
            for m in DEF.finditer(line):
                abi_names.add(m.group(1) or m.group(2))
    for f in files:
        text = open(os.path.join(top, f), encoding="utf-8", errors="replace").read()
        lf, lname = layer_of(f)
        if lf is None:
            problems.append(f"{f}: in no layer (add it to tests/check_layers.py)")
            continue
        sf = folder_of(f)
        if lname in FOLDERS and sf not in FOLDERS[lname]:
            roles = ", ".join(x + "/" for x in FOLDERS[lname] if x)
            problems.append(f"{f}: in no folder of {lname}/ ({roles}): scripts/refolder.sh "
                            f"moves it where its role says")
            continue
        if lname not in FOLDERS and sf:
            problems.append(f"{f}: {lname}/ has no folders (add its folders to FOLDERS in "
                            f"tests/check_layers.py)")
            continue
        for n, line in enumerate(text.split("\n"), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            where = inc
            if inc in GENERATED:
                where = GENERATED[inc]
                li, iname = layer_of(where)
            elif not os.path.isfile(os.path.join(top, inc)) or inc.startswith("."):
                problems.append(f"{f}:{n}: include \"{inc}\" is not a path from the top of the tree")
                continue
            else:
                li, iname = layer_of(inc)
                if li is None:
                    problems.append(f"{f}:{n}: include \"{inc}\" is in no layer")
                    continue
            if li > lf:
                problems.append(f"{f}:{n}: {lname}/ (layer {lf}) includes \"{inc}\" of a higher "
                                f"layer, {iname}/ ({li})")
            elif li == lf and lname in FOLDERS:
                si = folder_of(where)
                if si != sf and si not in FOLDERS[lname].get(sf, set()):
                    may = sorted(FOLDERS[lname].get(sf, set()))
                    problems.append(f"{f}:{n}: {'/'.join(filter(None, (lname, sf)))}/ may not "
                                    f"include \"{inc}\" of {'/'.join(filter(None, (lname, si)))}/ "
                                    f"(within {lname}/ it includes its own folder"
                                    + "".join(f", {lname}/{x}/" if x else f", {lname}/"
                                              for x in may) + ")")
            own = f.rsplit(".", 1)[0]
            other = inc.rsplit(".", 1)[0]
            if own in BACKEND_FILES and other in BACKEND_FILES and other != own:
                problems.append(f"{f}:{n}: a backend includes another backend's \"{inc}\" "
                                f"(each is reached through upload/backend.h)")
        nlines = text.count("\n")
        if nlines > LONG_LINES and f not in ONE_JOB:
            problems.append(f"{f}: {nlines} lines: over {LONG_LINES}, split it by job (or name "
                            f"its one job in ONE_JOB of tests/check_layers.py)")
        if f != ABI_HEADER:
            for n, line in enumerate(strip_comments(text).split("\n"), 1):
                for m in DEF.finditer(line):
                    name = m.group(1) or m.group(2)
                    if name.startswith("PERF_") or name in abi_names:
                        problems.append(f"{f}:{n}: {name} defined outside {ABI_HEADER}")
        for n, line in enumerate(strip_comments(text).split("\n"), 1):
            if MUTABLE_STATIC.match(line) and f not in SIGNAL_STATE:
                problems.append(f"{f}:{n}: mutable static state: {line.strip()}")
        if f.endswith(".c"):
            for name, line, n in functions(text):
                key = f"{f}:{name}"
                if n <= FUNCTION_LINES:
                    continue
                long_seen.add(key)
                if key not in LONG_FUNCTIONS:
                    problems.append(f"{f}:{line}: {name}() is {n} lines: over {FUNCTION_LINES}, "
                                    f"split it into named steps")
        if f.endswith(".h"):
            impl = f[:-2] + ".c"
            body = strip_comments(text)
            names = [m.group(1) for m in DECL.finditer(body)]
            if not names:
                continue
            impls = [impl]
            if f.endswith("_internal.h"):
                # a module's private header is the contract of all its parts, X*.c
                prefix = f[:-len("_internal.h")]
                impl = prefix + "*.c"
                impls = [s for s in files if fnmatch.fnmatch(s, impl)]
            elif f[:-2] + "_internal.h" in files:
                # and so is the public header of a module split by job
                impl = f[:-2] + "*.c"
                impls = [s for s in files if fnmatch.fnmatch(s, impl)]
            impl_text = ""
            for i in impls:
                if os.path.isfile(os.path.join(top, i)):
                    impl_text += strip_comments(open(os.path.join(top, i), encoding="utf-8",
                                                     errors="replace").read())
            for name in names:
                defined = re.search(r"^[A-Za-z_][\w \*]*?\b" + re.escape(name) +
                                    r"\s*\([^;{]*\)\s*\{", impl_text, re.M | re.S)
                if not defined:
                    problems.append(f"{f}: declares {name}(), which {impl} does not define")
    for key in sorted(LONG_FUNCTIONS - long_seen):
        f = key.split(":")[0]
        if os.path.isfile(os.path.join(top, f)):
            problems.append(f"{f}: {key.split(':')[1]}() is no longer over {FUNCTION_LINES} "
                            f"lines (or gone): take it off LONG_FUNCTIONS in tests/check_layers.py")
    return problems


def self_test():
    """Each rule, broken once in a copy of the tree, must be reported."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cases = [
        ("common/util.h", '#include "convert/pipeline.h"\n', "of a higher layer"),
        ("common/diag.c", '#include "formats/model/profile.h"\n', "of a higher layer"),
        ("formats/model/profile.h", '#include "symbolize/symbolizer.h"\n', "of a higher layer"),
        ("formats/write/folded.c", '#include "convert/replay.h"\n', "of a higher layer"),
        ("formats/write/svg.c", '#include "symbolize/jit/jitprocs.h"\n', "of a higher layer"),
        ("symbolize/elfsyms.c", '#include "convert/session.h"\n', "of a higher layer"),
        ("formats/write/json.c", '#include "../common/util.h"\n', "not a path from the top"),
        ("convert/stacks.c", "#define PERF_CONTEXT_FOO 7\n", "defined outside"),
        ("formats/read/perfmap.c", "enum { HEADER_BUILD_ID = 2 };\n", "defined outside"),
        ("symbolize/dwarfinfo.c", "static char *cache_dir;\n", "mutable static state"),
        ("formats/model/profview.c", "void f(void)\n{\n\tstatic __thread char buf[32];\n}\n",
         "mutable static state"),
        ("formats/write/folded.h", "int folded_frobnicate(const char *s);\n", "does not define"),
        ("convert/summary.c", "/* padding */\n" * 1200, "split it by job"),
        ("convert/stacks.c", '#include "upload/upload.h"\n', "of a higher layer"),
        ("convert/session.c", '#include "upload/watch.h"\n', "of a higher layer"),
        ("upload/watch.c", '#include "cli/upload.h"\n', "of a higher layer"),
        ("convert/pipeline.c", '#include "cli/upload.h"\n', "of a higher layer"),
        ("upload/pyroscope.c", '#include "upload/datadog.c"\n', "another backend's"),
        ("upload/parca.c", '#include "upload/pyroscope.c"\n', "another backend's"),
        ("formats/read/perfdata_internal.h", "int pd_frobnicate(void);\n", "does not define"),
        ("cli/options.c", "int cli_frobnicate(void)\n{\n" + "\tcli_step();\n" * 150 + "}\n",
         "split it into named steps"),
        ("symbolize/symbolizer.h", "int symbolizer_frobnicate(void);\n", "does not define"),
        # the folders by role, sideways and upward within their layer
        ("formats/read/perfmap.c", '#include "formats/write/json.h"\n', "may not include"),
        ("formats/write/svg.c", '#include "formats/read/perfdata.h"\n', "may not include"),
        ("formats/model/profile.h", '#include "formats/write/writer.h"\n', "may not include"),
        ("formats/model/timeline.c", '#include "formats/read/tracefmt.h"\n', "may not include"),
        ("formats/read/jitdump.c", '#include "formats/model/profile.h"\n', "may not include"),
        ("formats/model/profview.c", '#include "profile.pb-c.h"\n', "may not include"),
        ("symbolize/elfsyms.c", '#include "symbolize/jit/jitcode.h"\n', "may not include"),
        ("symbolize/locate.h", '#include "symbolize/jit/jitstore.h"\n', "may not include"),
        # a file left at the top of formats/ (a branch from before the folders), a folder
        # no layer has
        ("formats/flat_writer.c", '/* flat_writer: a writer */\n#include "formats/write/writer.h"\n',
         "in no folder"),
        ("convert/passes/reorder.c", "/* reorder: a queue */\n", "has no folders"),
        # the length checks reach into the folders
        ("formats/write/pprof_sample.c", "int ps_frobnicate(void)\n{\n" + "\tps_step();\n" * 150 +
         "}\n", "split it into named steps"),
        ("symbolize/jit/jitstore.c", "/* padding */\n" * 1200, "split it by job"),
    ]
    failed = 0
    for path, line, expect in cases:
        tmp = tempfile.mkdtemp()
        try:
            for d in SOURCE_DIRS:
                shutil.copytree(os.path.join(top, d), os.path.join(tmp, d))
            target = os.path.join(tmp, path)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            text = open(target).read() if os.path.exists(target) else ""
            open(target, "w").write(text + line)
            got = check(tmp)
            if any(expect in p and p.startswith(path) for p in got):
                print(f"ok   self-test: {path} + {line.strip()[:60]!r} is reported ({expect})")
            else:
                print(f"FAIL self-test: {path} + {line.strip()[:60]!r} not reported: {got}")
                failed += 1
        finally:
            shutil.rmtree(tmp)
    return failed, len(cases)


def main():
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 1 and sys.argv[1] == "--self-test":
        failed, n = self_test()
        print(f"check-layers-self-test: {n - failed} passed, {failed} failed")
        return 1 if failed else 0
    problems = check(top)
    for p in problems:
        print("FAIL", p)
    n = len(sources(top))
    print(f"check-layers: {n - len(set(p.split(':')[0] for p in problems))} passed, "
          f"{len(set(p.split(':')[0] for p in problems))} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
