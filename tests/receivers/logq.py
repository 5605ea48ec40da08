#!/usr/bin/env python3
"""logq: questions about a receiver's log (tests/receivers/receiver.mjs), for the tests.

    logq.py LOG count [accepted|refused|fault]   how many requests had that outcome
    logq.py LOG last FIELD                       FIELD of the last accepted request
                                                  (dotted: labels.env, tags.service)
    logq.py LOG unique                            1 when no profile was accepted twice
    logq.py LOG refusals                          the refusals, one per line
"""
import json
import sys


def records(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []


def field(rec, dotted):
    v = rec
    for part in dotted.split("."):
        if isinstance(v, list):
            v = v[int(part)]
        elif isinstance(v, dict):
            v = v.get(part)
        else:
            return None
    return v


def main():
    log, what = sys.argv[1], sys.argv[2]
    recs = records(log)
    if what == "count":
        kind = sys.argv[3] if len(sys.argv) > 3 else "accepted"
        print(sum(1 for r in recs if r.get("outcome") == kind))
    elif what == "last":
        acc = [r for r in recs if r.get("outcome") == "accepted"]
        v = field(acc[-1], sys.argv[3]) if acc else None
        print(json.dumps(v) if isinstance(v, (dict, list)) else ("" if v is None else v))
    elif what == "unique":
        shas = [r.get("sha256") for r in recs if r.get("outcome") == "accepted"]
        print(1 if len(shas) == len(set(shas)) else 0)
    elif what == "refusals":
        for r in recs:
            for x in r.get("refusals") or []:
                print(x)
    else:
        sys.exit(f"logq: unknown question {what}")


if __name__ == "__main__":
    main()
