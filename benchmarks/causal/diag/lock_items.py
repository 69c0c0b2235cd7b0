#!/usr/bin/env python3
"""Lays a whatif profile's experiments over lock_items.c's per-item trace (offline, stdlib;
benchmarks/README.md, session 39).

Usage: lock_items.py TRACE [PROFILE.jsonl]
Prints, per kind of item (all items of a native trace; with a profile, those inside baseline and
inside sped-up experiments), the mean wall and thread CPU time of A and B and the time in lock and
unlock (us), and for a profile each kind's period, delay and pause per visit. The profile's clock
starts when the runtime does, the trace's when main does: the offset is the one that makes every
experiment's visit count match the trace.
"""
import bisect
import json
import statistics
import sys


def read_trace(path):
    with open(path) as f:
        lines = f.read().split("\n")
    start = int(lines[0].split()[1])
    items = [list(map(int, line.split())) for line in lines[1:] if line.strip()]
    return start, items


def read_experiments(path):
    experiments = []
    with open(path) as f:
        for line in f:
            record = json.loads(line)
            if record.get("type") != "experiment" or record.get("set_aside"):
                continue
            visits = sum(p.get("delta", 0) for p in record["points"] if p.get("kind") == "throughput")
            experiments.append({"start": record["start_ns"], "duration": record["duration_ns"], "visits": visits,
                                "sped": record["speedup"] > 0, "delay": record["delay_ns"],
                                "paused": record.get("paused_ns", 0)})
    return experiments


def summary(items):
    def mean_us(values):
        return statistics.mean(values) / 1e3 if values else float("nan")
    return ("A wall %.1f cpu %.1f | lock %.1f | B wall %.1f cpu %.1f | unlock %.1f" %
            (mean_us([i[3] - i[1] for i in items]), mean_us([i[2] for i in items]),
             mean_us([i[4] - i[3] for i in items]), mean_us([i[6] - i[4] for i in items]),
             mean_us([i[5] for i in items]), mean_us([i[7] - i[6] for i in items])))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    start, items = read_trace(sys.argv[1])
    if len(sys.argv) == 2:
        print("native items %d: %s" % (len(items), summary(items)))
        return
    experiments = read_experiments(sys.argv[2])
    ends = sorted(i[7] for i in items)

    def visits_between(a, b):
        return bisect.bisect_left(ends, b) - bisect.bisect_left(ends, a)

    def mismatch(offset):
        return sum((visits_between(start + offset + e["start"], start + offset + e["start"] + e["duration"]) -
                    e["visits"]) ** 2 for e in experiments)
    offset = min(range(-400_000_000, 400_000_000, 200_000), key=mismatch)
    print("offset %.1f ms, squared visit mismatch %d over %d experiments" % (offset / 1e6, mismatch(offset), len(experiments)))
    for sped in (False, True):
        kind = [e for e in experiments if e["sped"] == sped]
        visits = sum(e["visits"] for e in kind)
        if visits == 0:
            continue
        inside = [i for e in kind for i in items
                  if start + offset + e["start"] <= i[1] and i[7] <= start + offset + e["start"] + e["duration"]]
        duration = sum(e["duration"] for e in kind)
        delay = sum(e["delay"] for e in kind)
        print("%s items %d, per visit: period %.1f effective %.1f delay %.1f paused %.1f | %s" %
              ("sped" if sped else "base", len(inside), duration / visits / 1e3, (duration - delay) / visits / 1e3,
               delay / visits / 1e3, sum(e["paused"] for e in kind) / visits / 1e3, summary(inside)))


if __name__ == "__main__":
    main()
