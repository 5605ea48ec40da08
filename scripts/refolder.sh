#!/bin/bash
# refolder: formats/ and symbolize/ in folders by role (issue 46 step 4), as a script
# that can be run again.
#
#   scripts/refolder.sh [--resolve] [PATTERN=FOLDER...]
#
# Moves (git mv) every file still at a flat path of formats/ or symbolize/ to the folder
# its role says (RULES below, first match; PATTERN=FOLDER arguments are tried before
# them), then rewrites every reference to a moved file's old path in the tracked text
# files: #include lines, the Makefile's object names, the paths that docs, tests, fuzz
# targets and comments name (`formats/pprof.c` -> `formats/write/pprof.c`, globs such as
# `symbolize/jitcode*.c` too). A file already in its folder is left; a second run changes
# nothing. So after merging a branch written against the flat layout, run it again:
# its new files are moved, and its `#include "formats/perfdata.h"` lines point to the
# new places. A new file of formats/ that no rule names is a writer when it or its
# header includes the writers' contract (writer.h); otherwise the script names it and
# stops before moving anything: say its role, e.g.
#
#   scripts/refolder.sh 'formats/gecko*=formats/read'
#
# (or add a line to RULES and commit it). Then `make` and `make layers`
# (tests/check_layers.py refuses a file left directly in formats/).
#
# Merging: the folders commits changed nothing in the files the script moved or
# rewrote but paths, so merge them after the branches written against the flat layout
# and let the script resolve the conflicts (#include blocks) by taking the other side
# whole and writing the paths again:
#
#   git merge folders; scripts/refolder.sh --resolve; make -j2 && make layers; git commit
#
# --resolve takes "ours" (HEAD: the other work) for every file left in conflict, but
# the files edited by hand on the folders side (HAND below), which it names to be
# resolved by hand; it refuses when HEAD has the folders already. A branch merged
# after the folders: resolve its conflicts by hand, keeping both sides' lines (old
# paths are fine), then run the script.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 - "$@" <<'EOF'
import fnmatch
import os
import re
import subprocess
import sys

# (pattern on a flat path, the folder a file it matches goes to), first match wins.
RULES = [
    # the schemas protoc-c compiles into build/gen/ (pprof's, OTLP's, google.rpc.Status)
    ("formats/*.proto", "formats/proto"),
    # readers: bytes in, records out
    ("formats/perfdata*", "formats/read"),
    ("formats/simpleperf.[ch]", "formats/read"),
    ("formats/jitdump.[ch]", "formats/read"),
    ("formats/perfmap.[ch]", "formats/read"),
    ("formats/tracefmt.[ch]", "formats/read"),
    # the profile model every writer reads, and its views
    ("formats/profile.[ch]", "formats/model"),
    ("formats/timeline.[ch]", "formats/model"),
    ("formats/profview.[ch]", "formats/model"),
    # writers, their contract and what several of them share
    ("formats/writer.h", "formats/write"),
    ("formats/pprof*.[ch]", "formats/write"),
    ("formats/otlp*.[ch]", "formats/write"),
    ("formats/pdict.[ch]", "formats/write"),
    ("formats/json.[ch]", "formats/write"),
    ("formats/frametext.[ch]", "formats/write"),
    ("formats/folded.[ch]", "formats/write"),
    ("formats/samples.[ch]", "formats/write"),
    ("formats/svg.[ch]", "formats/write"),
    ("formats/difftop.[ch]", "formats/write"),
    ("formats/speedscope.[ch]", "formats/write"),
    ("formats/chrome.[ch]", "formats/write"),
    ("formats/firefox*.[ch]", "formats/write"),
    # JIT code: the runtimes' dumps and maps found, read, indexed and cached
    ("symbolize/jit*", "symbolize/jit"),
    ("symbolize/mapindex.[ch]", "symbolize/jit"),
]
# the layers that have folders by role; a flat file of symbolize/ no rule names stays
FOLDERED = {"formats": ["read", "model", "write", "proto"], "symbolize": ["jit"]}
# text files whose paths are rewritten: everything tracked but recordings, bad inputs,
# history, and this script (its RULES name the old paths)
# edited by hand on the folders side, besides this script's run: --resolve leaves them
HAND = {"Makefile", "tests/check_layers.py", "tests/otlp/otlp_decode.mjs", "tests/e2e_otlp.sh",
        "docs/ARCHITECTURE.md", "docs/DEVELOPING.md", "scripts/refolder.sh"}
SKIP = ("testdata/", "tests/corpus/", "tests/hostile/", "debian/changelog", "scripts/refolder.sh")
TEXT = re.compile(r"(\.(c|h|py|sh|mjs|js|md|scd|proto|in|txt)|Makefile|^debian/[^/]+)$")


def git(*args):
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def tracked():
    return sorted({f for f in git("ls-files", "-z").split("\0") if f and os.path.exists(f)})


def resolve():
    """Each file in conflict: ours whole (its paths are written again below), but HAND."""
    if subprocess.run(["git", "cat-file", "-e", "HEAD:formats/write"],
                      capture_output=True).returncode == 0:
        sys.exit("refolder: --resolve: HEAD has the folders already, so its side is not the "
                 "other work: resolve by hand (keep both sides' lines), then run without it")
    unmerged = sorted({e.split("\t", 1)[1] for e in git("ls-files", "-u", "-z").split("\0") if e})
    left = []
    for f in unmerged:
        if f in HAND or subprocess.run(["git", "checkout", "--ours", "--", f],
                                       capture_output=True).returncode != 0:
            left.append(f)
            continue
        git("add", "--", f)
        print(f"resolved {f}: ours, its paths written again")
    return left


def includes(path):
    try:
        return re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(path, errors="replace").read(), re.M)
    except OSError:
        return []


def folder_of(path, rules):
    for pat, folder in rules:
        if fnmatch.fnmatch(path, pat):
            return folder
    layer = path.split("/")[0]
    if layer == "formats":
        # a writer: it, or its header, includes the writers' contract
        stem = path.rsplit(".", 1)[0]
        for f in (stem + ".c", stem + ".h"):
            if any(i.endswith("/writer.h") for i in includes(f)):
                return "formats/write"
        return None
    return layer


rules, left = [], []
for arg in sys.argv[1:]:
    if arg == "--resolve":
        left = resolve()
        continue
    if "=" not in arg:
        sys.exit(f"refolder: '{arg}': expected PATTERN=FOLDER (e.g. 'formats/gecko*=formats/write')")
    pat, folder = arg.split("=", 1)
    if folder.split("/")[0] not in FOLDERED or folder.split("/", 1)[-1] not in FOLDERED[folder.split("/")[0]]:
        sys.exit(f"refolder: '{folder}': not a folder by role ({', '.join(l + '/' + f for l, fs in FOLDERED.items() for f in fs)})")
    rules.append((pat, folder))
rules += RULES

files = tracked()
# 1. the moves
moves, unplaced = [], []
for f in files:
    parts = f.split("/")
    if len(parts) != 2 or parts[0] not in FOLDERED:
        continue
    folder = folder_of(f, rules)
    if folder is None:
        unplaced.append(f)
    elif folder != parts[0]:
        moves.append((f, folder + "/" + parts[1]))
if unplaced:
    for f in unplaced:
        print(f"refolder: {f}: no rule says its role; run again with '{f}=formats/read' "
              f"(or model, write, proto), or add a rule to RULES", file=sys.stderr)
    sys.exit(1)
for old, new in moves:
    os.makedirs(os.path.dirname(new), exist_ok=True)
    git("mv", old, new)
    print(f"moved {old} -> {new}")

# 2. the references. Where each flat name is now: every file of a folder by role.
files = tracked()
placed, flat = {}, []
for f in files:
    if len(f.split("/")) == 2:
        flat.append(f)
    parts = f.split("/")
    if len(parts) == 3 and parts[0] in FOLDERED and parts[1] in FOLDERED[parts[0]]:
        placed.setdefault(parts[0], []).append(f)
# a path (or glob) named at a layer's top: "formats/pprof.c", "formats/otlp_*.proto",
# "symbolize/jitcode*.c", "$(BUILD)/formats/pprof.o"; not one already in a folder
REF = re.compile(r"(?<![\w.-])(formats|symbolize)/([\w*]+\.[\w*.-]*\w|[\w]*\*[\w*]*)(?![\w/])")


def where(layer, name):
    if os.path.exists(layer + "/" + name):
        return None
    pat = name[:-2] + ".c" if name.endswith(".o") else name
    pat = pat if "*" in pat or "." in pat else pat + ".*"
    # a glob that still matches a flat file means the layer, not one folder
    if any(fnmatch.fnmatch(f, layer + "/" + pat) for f in flat):
        return None
    folders = {os.path.dirname(f) for f in placed.get(layer, [])
               if fnmatch.fnmatch(os.path.basename(f), pat)}
    return folders.pop() if len(folders) == 1 else None


def rewrite(m):
    folder = where(m.group(1), m.group(2))
    return folder + "/" + m.group(2) if folder else m.group(0)


changed = 0
for f in files:
    if f.startswith(SKIP) or not TEXT.search(f) or os.path.islink(f):
        continue
    try:
        text = open(f, encoding="utf-8").read()
    except (UnicodeDecodeError, OSError):
        continue
    new = REF.sub(rewrite, text)
    if new != text:
        open(f, "w", encoding="utf-8").write(new)
        changed += 1
        print(f"rewrote paths in {f}")
print(f"refolder: {len(moves)} files moved, paths rewritten in {changed} files")
for f in left:
    print(f"refolder: {f}: still in conflict: resolve it by hand, then run the script again",
          file=sys.stderr)
sys.exit(1 if left else 0)
EOF
