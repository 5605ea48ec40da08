#!/usr/bin/env python3
"""firefox_check: perfconv's -f firefox output loaded by the Firefox Profiler's own code.

  firefox_check.py CLI_JS SESSION_DIR LABEL WORKDIR [MARKS] -- PERFCONV ARGS...

Converts with `PERFCONV ARGS -f firefox` and `PERFCONV ARGS -f folded --with-tid`
(with --event EVENT for each event the profile's information panel names, when it
names several: their tracks are named "NAME (EVENT)"). CLI_JS is
@firefox-devtools/profiler-cli's dist/profiler-cli.js (tests/browser's npm packages,
pinned with its digest in package-lock.json): its daemon loads the profile through
the profiler's unserializing and upgrading code and computes each thread's call tree
as the profiler's call tree does.

For every thread the call tree's leaves (each call node's self weight at its path of
function names, idle samples included) must be the folded file's lines for that
pid/tid, name for name and count for count: the same threads, the same stacks, the
same weights (ms of tracing-ms weights as nanoseconds, within a rounding step).
Every track's markers are asked for too (the profiler reads them by their schemas).
With MARKS, a file of lines "PID/TID NAME COUNT": the most markers named NAME on a
track of that thread must be COUNT ("*" for PID/TID: on some track, at least COUNT).

Prints ok/FAIL lines; exits 1 after any FAIL.
"""
import collections
import json
import os
import re
import socket
import subprocess
import sys
import time

CLI, SESSIONS, LABEL, WORK = sys.argv[1:5]
MARKS = sys.argv[5] if sys.argv[5] != "--" else None
if sys.argv[6 if MARKS else 5] != "--":
    sys.exit("usage: firefox_check.py CLI_JS SESSION_DIR LABEL WORKDIR [MARKS] -- PERFCONV ARGS...")
CONVERT = sys.argv[7 if MARKS else 6:]
PROFILE = os.path.join(WORK, "p.firefox.json")
fails = 0


def ok(msg):
    print("ok   " + msg)


def bad(msg):
    global fails
    fails += 1
    print("FAIL " + msg)


def env():
    e = dict(os.environ)
    e["PROFILER_CLI_SESSION_DIR"] = SESSIONS
    return e


class Daemon:
    """The daemon's own protocol, as profiler-cli speaks it: one JSON message a line on
    its socket, one answer a line. A connection for all the questions: a profiler-cli
    process a question took most of a 220-thread recording's minutes."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(300)
        self.sock.connect(path)
        self.buf = b""

    def ask(self, **command):
        self.sock.sendall(json.dumps({"type": "command", "command": command}).encode() + b"\n")
        while b"\n" not in self.buf:
            got = self.sock.recv(1 << 20)
            if not got:
                raise RuntimeError("the profiler-cli daemon closed its socket")
            self.buf += got
        line, self.buf = self.buf.split(b"\n", 1)
        answer = json.loads(line)
        if answer.get("type") == "error":
            raise RuntimeError("profiler-cli %s %s: %s" % (command.get("command"),
                                                          command.get("subcommand"),
                                                          answer.get("error")))
        return answer.get("result")

    def close(self):
        self.sock.close()


def sanitize(name):
    # folded's field rules (formats/write/frametext.c)
    return re.sub(r"[\n\r\t]", " ", name.replace(";", ":"))


def read_folded(path):
    """(pid, tid) -> Counter of stacks (tuples of names, root first)."""
    threads = collections.defaultdict(collections.Counter)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, count = line.rsplit(" ", 1)
            frames = stack.split(";")
            m = re.search(r"-(-?\d+)/(-?\d+)$", frames[0])
            if not m:
                raise RuntimeError("%s: no -PID/TID in %r" % (path, frames[0]))
            key = (int(m.group(1)) & 0xffffffff, int(m.group(2)) & 0xffffffff)
            threads[key][tuple(frames[1:])] += int(count)
    return threads


def tree_leaves(node, names, path, out):
    """Each call node's self weight at its path of names."""
    for c in node.get("children", []):
        full = names[c["functionIndex"]]
        shown = c["name"]
        # the profiler's name must be the function's, or that name cut short
        if shown != full and not (shown.endswith("…") and full.startswith(shown[:-1])):
            raise RuntimeError("call node named %r, its function %r" % (shown, full))
        p = path + (sanitize(full),)
        if c.get("selfSamples"):
            # an off-CPU interval's stack ends in its state, as in speedscope and chrome
            # (its category Idle); folded has no such frame
            leaf = p[:-1] if re.match(r"^\[off-CPU: [a-z]+\]$", p[-1]) else p
            out[leaf] += c["selfSamples"]
        tree_leaves(c, names, p, out)


def same(a, b, scale):
    if set(a) != set(b):
        return False
    for k in a:
        x, y = a[k] * scale, b[k]
        if abs(x - y) > max(1e-6 * abs(y), 0.5 if scale == 1 else 2):
            return False
    return True


def show_diff(a, b, scale):
    lines = []
    for k in sorted(set(a) | set(b)):
        x, y = a.get(k, 0) * scale, b.get(k, 0)
        if abs(x - y) > 0.5:
            lines.append("    %s: profiler %s, folded %s" % (";".join(k)[-160:], x, y))
    return "\n".join(lines[:6])


def convert(fmt, out, *extra):
    r = subprocess.run(CONVERT + ["-q", "-f", fmt, *extra, "-o", out], capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError("perfconv -f %s: exit %d: %s" % (fmt, r.returncode, r.stderr[-300:]))


try:
    convert("firefox", PROFILE)
except Exception as e:
    bad("%s: %s" % (LABEL, e))
    sys.exit(1)

# The daemon started as profiler-cli load starts it, but waited for on its log: load's
# own wait gives it 500 ms to listen, which a busy machine does not always give.
SID = "pc%d" % os.getpid()
os.makedirs(SESSIONS, exist_ok=True)
log = os.path.join(SESSIONS, SID + ".log")
daemon = subprocess.Popen(["node", CLI, "--daemon", os.path.abspath(PROFILE), "--session", SID],
                          env=env(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, start_new_session=True)
state = None
deadline = time.time() + 240
while time.time() < deadline and state is None:
    text = open(log, errors="replace").read() if os.path.exists(log) else ""
    if "Profile loaded successfully" in text:
        state = "loaded"
    elif re.search(r"(?i)fail|error", text) or daemon.poll() is not None:
        state = "failed: " + text[-600:]
    else:
        time.sleep(0.05)
try:
    if state != "loaded":
        bad("%s: the profiler did not load it: %s" % (LABEL, state or "no word in 240 s"))
        sys.exit(1)
    with open(PROFILE, encoding="utf-8") as f:
        prof = json.load(f)
    strings = prof["shared"]["stringArray"]
    names = [strings[i] for i in prof["shared"]["funcTable"]["name"]]
    events = [e["value"] for x in prof["meta"].get("extra", []) for e in x["entries"]
              if e["label"] == "Event"]
    by_event = {}
    if len(events) > 1:
        for i, ev in enumerate(events):
            convert("folded", os.path.join(WORK, "e%d.folded" % i), "--with-tid", "--event", ev)
            by_event[ev] = read_folded(os.path.join(WORK, "e%d.folded" % i))
        want = None
    else:
        convert("folded", os.path.join(WORK, "p.folded"), "--with-tid")
        want = read_folded(os.path.join(WORK, "p.folded"))
    daemon_sock = Daemon(os.path.join(SESSIONS, SID + ".sock"))
    listed = daemon_sock.ask(command="thread", subcommand="list", threadListOptions={})
    listed = listed["threads"]
    seen = set()
    nthreads = 0
    marks_seen, marks_any = {}, {}
    for t in listed:
        key = (int(t["pid"]) & 0xffffffff, int(t["tid"]) & 0xffffffff)
        ref = want
        ev = [e for e in by_event if t["name"].endswith(" (%s)" % e)]
        if by_event and ev:
            ref = by_event[max(ev, key=len)]
        elif by_event:
            bad("%s: track %r names none of the events %s" % (LABEL, t["name"], sorted(by_event)))
            continue
        tree = daemon_sock.ask(command="thread", subcommand="samples-top-down",
                               thread=t["threadHandle"], includeIdle=True,
                               callTreeOptions={"maxNodes": 100000000})
        leaves = collections.Counter()
        tree_leaves(tree["regularCallTree"], names, (), leaves)
        scale = 1e6 if tree["weightType"] == "tracing-ms" else 1
        exp = ref.get(key, collections.Counter())
        seen.add((id(ref), key))
        if not same(leaves, exp, scale):
            bad("%s: thread %s %d/%d: the profiler's call tree (%s) is not the folded stacks:\n%s"
                % (LABEL, t["name"], key[0], key[1], tree["weightType"],
                   show_diff(leaves, exp, scale)))
        nthreads += 1
        listed_marks = daemon_sock.ask(command="thread", subcommand="markers",
                                       thread=t["threadHandle"],
                                       markerFilters={"list": True, "limit": 100000000})
        mnames = collections.Counter(m["name"] for m in listed_marks.get("flatMarkers", []))
        if len(listed_marks.get("flatMarkers", [])) != listed_marks.get("totalMarkerCount"):
            bad("%s: thread %s: %s markers listed of %s" % (
                LABEL, t["name"], len(listed_marks.get("flatMarkers", [])),
                listed_marks.get("totalMarkerCount")))
        for n, c in mnames.items():
            marks_seen[(key, n)] = max(marks_seen.get((key, n), 0), c)
            marks_any[n] = max(marks_any.get(n, 0), c)
    for ref in [want] if not by_event else list(by_event.values()):
        for key in ref:
            if (id(ref), key) not in seen:
                bad("%s: folded thread %d/%d has no track in the profiler" % (LABEL, *key))
    info = daemon_sock.ask(command="profile", subcommand="info")
    info = info if isinstance(info, str) else json.dumps(info)
    daemon_sock.close()
    nmarks = 0
    for line in open(MARKS).read().splitlines() if MARKS else []:
        if line.count(" ") < 2:
            continue
        tid, rest = line.split(" ", 1)
        name, count = rest.rsplit(" ", 1)
        nmarks += 1
        if tid == "*":
            got = marks_any.get(name, 0)
            if got < int(count):
                bad("%s: no track has %s markers %r (the most: %d)" % (LABEL, count, name, got))
            continue
        pid, t_id = (int(x) & 0xffffffff for x in tid.split("/"))
        got = marks_seen.get(((pid, t_id), name), 0)
        if got != int(count):
            bad("%s: thread %s: %d markers %r, not %s" % (LABEL, tid, got, name, count))
    if fails == 0 and nmarks:
        ok("%s: the profiler's markers are the %d counts expected" % (LABEL, nmarks))
    if fails == 0:
        ok("%s: the Firefox Profiler loaded it: %d tracks, each one's call tree the folded "
           "stacks and counts" % (LABEL, nthreads))
except Exception as e:  # the profiler's answer could not be read: say it, as a FAIL
    bad("%s: %s" % (LABEL, e))
finally:
    try:
        subprocess.run(["node", CLI, "stop", "--session", SID], env=env(), capture_output=True,
                       timeout=60)
    except Exception:
        pass
    if daemon.poll() is None:
        daemon.kill()
    daemon.wait()
sys.exit(1 if fails else 0)
