#!/usr/bin/env python3
"""info_compare: `perfconv info --json` against what perf itself says of a recording.

usage: info_compare.py INFO.json INFO.txt HEADER.txt REPORT.txt
  HEADER.txt: `perf report --header-only`; REPORT.txt: `perf report -n --stdio -g none
  --sort pid` (one section per event: samples per thread). Compares every fact both
  state: host, os release, perf version, arch, CPUs, command, event names with their
  frequency or period, first and last sample times, samples per event, samples per
  thread, lost samples; and that the text output (INFO.txt) states the same counts.
Prints what it compared; exit 1 with the differences.
"""
import json
import re
import sys

info = json.load(open(sys.argv[1]))
text = open(sys.argv[2], encoding="utf-8").read()
header = open(sys.argv[3], encoding="utf-8", errors="replace").read()
report = open(sys.argv[4], encoding="utf-8", errors="replace").read()
problems, compared = [], []


def same(what, ours, perfs):
    compared.append(what)
    if ours != perfs:
        problems.append(f"{what}: perfconv {ours!r}, perf {perfs!r}")


hdr = dict(re.findall(r"^# ([a-z ]+?) : (.*)$", header, re.M))
for key, field in (("hostname", "host"), ("os release", "os_release"), ("perf version", "perf_version"),
                   ("arch", "arch"), ("cpudesc", "cpu")):
    if key in hdr:
        same(key, info[field], hdr[key].strip())
if "nrcpus online" in hdr:
    same("nrcpus online", info["cpus_online"], int(hdr["nrcpus online"]))
if "cmdline" in hdr:
    same("cmdline", info["command"], hdr["cmdline"].strip())
events = re.findall(r"^# event : name = ([^,]*), .*?\{ sample_period, sample_freq \} = (\d+)", header, re.M)
if events:
    same("event names", [e["name"] for e in info["events"]], [n for n, _ in events])
    same("event rates", [e.get("frequency", e.get("period")) for e in info["events"]], [int(v) for _, v in events])
for key, field in (("time of first sample", "first_ns"), ("time of last sample", "last_ns")):
    # perf leaves them 0 where it did not compute them (a compressed recording)
    if key in hdr and info["time"] and hdr[key].strip() != "0.000000":
        ns = info["time"][field]
        same(key, f"{ns // 1000000000}.{ns // 1000 % 1000000:06d}", hdr[key].strip())

# perf report: per event, samples per thread
per_event = {}
for sec in re.split(r"^# Samples: ", report, flags=re.M)[1:]:
    name = re.match(r"\S+ of event '([^']*)'", sec).group(1)
    threads = {}
    for tid, _comm, n in [(m.group(2), m.group(3), m.group(1)) for m in
                          re.finditer(r"^\s+[\d.]+%\s+(?:[\d.]+%\s+)?(\d+)\s+(-?\d+):(.*?)\s*$", sec, re.M)]:
        threads[int(tid)] = threads.get(int(tid), 0) + int(n)
    per_event[name] = threads
by_name = {e["name"]: e["samples"] for e in info["events"]}
for name, threads in per_event.items():
    same(f"samples of {name}", by_name.get(name), sum(threads.values()))
if len(per_event) == 1:
    ours = {t["tid"]: t["samples"] for t in info["threads"]}
    same("samples per thread", ours, next(iter(per_event.values())))
m = re.search(r"^# Total Lost Samples: (\d+)", report, re.M)
if m:
    same("lost samples", info["lost"]["samples"], int(m.group(1)))

# the text says the same
for e in info["events"]:
    if not re.search(rf"^  {re.escape(e['name'])} .* {e['samples']} samples ", text, re.M):
        problems.append(f"text: no line for event {e['name']} with {e['samples']} samples")
for t in info["threads"]:
    if f"{t['name']} ({t['pid']}/{t['tid']})" not in text or f" {t['samples']} " not in text:
        problems.append(f"text: no line for thread {t['pid']}/{t['tid']}")
for o in info["objects"]:
    if f"{o['path']} [{o['kind']}]" not in text:
        problems.append(f"text: object {o['path']} missing")
compared.append("text")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"{info['samples']} samples; same as perf: {', '.join(compared)}")
