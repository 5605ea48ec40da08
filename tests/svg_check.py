#!/usr/bin/env python3
"""svg_check: a perfconv SVG flame graph against the folded output of the same options.

usage: svg_check.py SVG FOLDED [--case CASE.json]

Parses the SVG (every frame of #frames: title, rect) and rebuilds the tree from the
geometry alone: a frame's parent is the frame one level nearer the root whose span
holds its middle. Then checks, for every frame, that its sample count (the title's
second line) equals the sum of the folded lines that start with its stack prefix,
that its place and width are that prefix's offset and share of the width, that
siblings come in name order, that every prefix at least --minwidth wide is drawn, and
that the file's count of frames left out is right. With --case, writes what
tests/browser/open_svg.mjs needs for the hottest function (most self samples): its
name, the share its widest frame shows, and the share of samples whose stack holds it.
Prints one summary line; exit 1 with the first problems otherwise.
"""
import collections
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    args = sys.argv[1:]
    case = None
    if "--case" in args:
        i = args.index("--case")
        case = args[i + 1]
        del args[i:i + 2]
    svg_path, folded_path = args
    root = ET.parse(svg_path).getroot()
    script = root.find(NS + "script").text
    consts = dict(re.findall(r"(\w+)=([-\d.e]+)", script.split("\n")[1]))
    W, PAD, FH, TOP, INV = (float(consts[k]) for k in ("W", "PAD", "FH", "TOP", "INV"))
    comment = open(svg_path, encoding="utf-8").read(2000)
    m = re.search(r"narrower than ([\d.e-]+) px not drawn \(left-out-frames=(\d+)\)", comment)
    minwidth, left_out = float(m.group(1)), int(m.group(2))

    lines = []
    for line in open(folded_path, encoding="utf-8"):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        lines.append((["all"] + stack.split(";"), int(n)))
    prefix = collections.Counter()
    for frames, n in lines:
        for d in range(1, len(frames) + 1):
            prefix[tuple(frames[:d])] += n
    total = prefix[("all",)]
    scale = (W - 2 * PAD) / total if total else 0

    # where each prefix starts: its parent's start plus its earlier siblings (name order)
    children = collections.defaultdict(list)
    for q in prefix:
        if len(q) > 1:
            children[q[:-1]].append(q)
    offsets = {("all",): 0}
    todo = [("all",)]
    while todo:
        q = todo.pop()
        at = offsets[q]
        for c in sorted(children[q], key=lambda k: k[-1].encode()):
            offsets[c] = at
            at += prefix[c]
            todo.append(c)

    drawn = []
    for g in root.find(NS + "g[@id='frames']"):
        title = g.find(NS + "title").text.split("\n")
        r = g.find(NS + "rect")
        y = float(r.get("y"))
        depth = round((y - TOP) / FH) if INV else round((TOP - y) / FH)
        drawn.append({"name": title[0], "n": int(title[1].split(" ")[0]), "info": title[1],
                      "x": float(r.get("x")), "w": float(r.get("width")), "depth": depth})
    problems = []
    by_depth = collections.defaultdict(list)
    for f in drawn:
        by_depth[f["depth"]].append(f)
    for f in drawn:
        if f["depth"] == 0:
            f["path"] = (f["name"],)
            f["off"] = 0
            continue
        mid = f["x"] + f["w"] / 2
        parents = [p for p in by_depth[f["depth"] - 1] if p["x"] <= mid <= p["x"] + p["w"]]
        if len(parents) != 1:
            problems.append(f"{f['name']} at depth {f['depth']}: {len(parents)} parents")
            f["path"] = None
            continue
        f["path"] = parents[0]["path"] + (f["name"],) if parents[0]["path"] else None
    paths = set()
    for f in drawn:
        p = f["path"]
        if p is None:
            continue
        paths.add(p)
        if prefix.get(p) != f["n"]:
            problems.append(f"{';'.join(p[1:])}: {f['n']} in the SVG, {prefix.get(p)} in folded")
        share = f"({100.0 * f['n'] / total:.2f}%)"
        if not f["info"].endswith(share):
            problems.append(f"{';'.join(p[1:])}: tooltip {f['info']!r}, share should be {share}")
        start = PAD + offsets[p] * scale
        if abs(f["x"] - start) > 0.011 or abs(f["w"] - f["n"] * scale) > 0.011:
            problems.append(f"{';'.join(p[1:])}: at {f['x']} width {f['w']}, want {start:.3f} {f['n'] * scale:.3f}")
    missing = [p for p, n in prefix.items() if n * scale >= minwidth and p not in paths
               and all(prefix[p[:d]] * scale >= minwidth for d in range(1, len(p)))]
    if missing:
        problems.append(f"{len(missing)} prefixes wide enough not drawn, e.g. {';'.join(missing[0])}")
    if left_out != len(prefix) - len(paths):
        problems.append(f"the file says {left_out} frames left out, it has {len(prefix) - len(paths)}")
    if problems:
        print("\n".join(problems[:10]))
        sys.exit(1)
    print(f"{len(drawn)} frames, each the sum of its folded prefix ({total} samples, "
          f"{len(lines)} folded lines, {left_out} narrow frames left out)")

    if case and self_n_any(lines):
        self_n = collections.Counter()
        for frames, n in lines:
            if len(frames) > 2:
                self_n[frames[-1]] += n
        name = max(self_n, key=lambda k: (self_n[k], k))
        widest = max(f["n"] for f in drawn if f["name"] == name)
        holding = sum(n for frames, n in lines if name in frames[2:])
        json.dump({"svg": svg_path, "name": name, "share": f"{100.0 * widest / total:.2f}%",
                   "matched": f"{100.0 * holding / total:.2f}%"}, open(case, "w"))


def self_n_any(lines):
    return any(len(frames) > 2 for frames, _ in lines)


if __name__ == "__main__":
    main()
