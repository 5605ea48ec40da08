#!/usr/bin/env python3
"""watch_race: change files of a watched folder at the moment a process uses them, for
the tests of perfconv upload --watch (tests/e2e_watchattack.sh).

    watch_race.py DIR RULE... (until killed; one line per action on stdout)
    watch_race.py --count DIR (until SIGTERM; then "files F opens O most M" on stdout,
                  and " overflow" after it when the kernel dropped events:
                  how many files of DIR were opened, how often in all, and at most;
                  the watcher's own .perfconv-* files not counted)

RULE is NAME:EVENT:N:DELAY_MS:ACTION: when file NAME of DIR gets its Nth inotify EVENT
(open, access: a read, close: closed after reading, access2: a second read since it
was last opened: a reader that goes on past its header), wait DELAY_MS and do ACTION:
`truncate` (to 8,192 bytes: its header and attrs stay, its records and the feature
sections after them go, so a reader that mapped it meets pages past the end),
`fifo` (a FIFO renamed over it). inotify
says what happened to the file, not who did it: only the process under test touches
these files while it runs.
"""
import ctypes
import os
import signal
import struct
import sys
import threading
import time

IN_ACCESS, IN_CLOSE_NOWRITE, IN_OPEN, IN_Q_OVERFLOW, IN_ISDIR = 0x1, 0x10, 0x20, 0x4000, 0x40000000
ACCESS2 = 0x10000000  # not inotify's: made here from IN_OPEN and IN_ACCESS
EVENTS = {"open": IN_OPEN, "access": IN_ACCESS, "close": IN_CLOSE_NOWRITE, "access2": ACCESS2}

libc = ctypes.CDLL("libc.so.6", use_errno=True)


def act(d, name, action, delay_ms):
    time.sleep(delay_ms / 1000)
    path = os.path.join(d, name)
    if not os.path.lexists(path):
        print(f"gone {name}", flush=True)  # moved away (sent) before the moment came
        return
    if action == "truncate":
        os.truncate(path, 8192)
    elif action == "fifo":
        tmp = os.path.join(d, ".fifo-" + name)
        os.mkfifo(tmp)
        os.rename(tmp, path)
    print(f"{action} {name}", flush=True)


def main():
    count = sys.argv[1] == "--count"
    d = sys.argv[2] if count else sys.argv[1]
    opens = {}
    overflowed = []
    if count:
        def report(*_):
            print(f"files {len(opens)} opens {sum(opens.values())} most {max(opens.values(), default=0)}"
                  + (" overflow" if overflowed else ""), flush=True)
            sys.exit(0)
        signal.signal(signal.SIGTERM, report)
    rules = {}
    reads = {}  # name: reads since it was last opened
    for r in ([] if count else sys.argv[2:]):
        name, ev, n, delay, action = r.rsplit(":", 4)
        rules[(name, EVENTS[ev])] = [int(n), int(delay), action, 0]
    fd = libc.inotify_init1(0)
    # counting wants the opens only: with each read and close too, 3,000 files read by a
    # busy watcher on a loaded machine overflowed the kernel's queue (16,384 events) and
    # opens went uncounted; an overflow is said in the report, never taken for a count
    watched = IN_OPEN if count else IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE
    if fd < 0 or libc.inotify_add_watch(fd, d.encode(), watched) < 0:
        sys.exit(f"watch_race: inotify: {os.strerror(ctypes.get_errno())}")
    print("ready", flush=True)
    while True:
        buf = os.read(fd, 65536)
        off = 0
        while off < len(buf):
            _, mask, _, ln = struct.unpack_from("iIII", buf, off)
            if mask & IN_Q_OVERFLOW:
                overflowed.append(1)
            name = buf[off + 16:off + 16 + ln].split(b"\0", 1)[0].decode(errors="replace")
            off += 16 + ln
            if mask & IN_OPEN:
                reads[name] = 0
                # the folder itself, sent/: not files; the watcher's own state
                # (.perfconv-runtime-ids, written as each profile takes its
                # profile_seq): not the folder's files
                if name and not mask & IN_ISDIR and not name.startswith(".perfconv-"):
                    opens[name] = opens.get(name, 0) + 1
            if mask & IN_ACCESS:
                reads[name] = reads.get(name, 0) + 1
                if reads[name] == 2:
                    mask |= ACCESS2
            for bit in (IN_OPEN, IN_ACCESS, IN_CLOSE_NOWRITE, ACCESS2):
                r = rules.get((name, bit))
                if r and mask & bit:
                    r[3] += 1
                    if r[3] == r[0]:
                        threading.Thread(target=act, args=(d, name, r[2], r[1])).start()


main()
