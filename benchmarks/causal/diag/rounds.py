#!/usr/bin/env python3
"""Lays a whatif profile's experiments over the per-round times of amdahl.c built with -DWL_TRACE
(offline, stdlib; benchmarks/README.md, "Under-predicted dominant lines").

Usage: rounds.py NATIVE_TRACE [PROFILE.jsonl PROFILED_TRACE]
Prints, per kind of round (native; inside baseline and inside sped experiments), the mean of each
segment (wall and thread CPU, us); for a profile also each speedup's period counted as whatif counts
it (duration / visits) beside the period from the rounds themselves (fractional progress), and the
effective period both ways. The profile's clock starts when the runtime does, the trace's when main
does: the offset is the one that makes every experiment's visit count match the trace.
"""
import bisect
import json
import statistics
import sys

# Trace columns (amdahl.c, WL_TRACE): round, t0: A start, A end, A cpu, barrier-1 exit, C end (= progress), barrier-2
# exit; t1: B start, B end, B cpu, barrier-1 exit, barrier-2 exit.


def read_trace(path):
    with open(path) as f:
        return [list(map(int, line.split())) for line in f]


def segments(rows):
    out = []
    for i in range(1, len(rows) - 1):
        r, p, n = rows[i], rows[i - 1], rows[i + 1]
        out.append({"period": n[1] - r[1], "A": r[2] - r[1], "A_cpu": r[3], "B": r[8] - r[7], "B_cpu": r[9],
                    "C": r[5] - r[4], "t0_barrier1": r[4] - r[2], "t1_barrier1": r[10] - r[8],
                    "t1_late": r[7] - p[6], "row": i})
    return out


def show(label, segs):
    if not segs:
        return
    keys = [k for k in segs[0] if k != "row"]
    print("%-10s %4d rounds  " % (label, len(segs)) +
          "  ".join("%s=%.0f" % (k, statistics.mean(s[k] for s in segs) / 1e3) for k in keys))


def main():
    native = read_trace(sys.argv[1])
    show("native", segments(native))
    if len(sys.argv) < 4:
        return
    with open(sys.argv[2]) as f:
        exps = [e for e in (json.loads(line) for line in f) if e.get("type") == "experiment"]
    rows = read_trace(sys.argv[3])
    visits = [r[5] for r in rows]

    def count(a, b):
        return bisect.bisect_left(visits, b) - bisect.bisect_left(visits, a)

    def delta(e):
        return sum(p.get("delta", 0) for p in e["points"] if p["name"] == "item")

    err, offset = min((sum(abs(count(e["start_ns"] + off, e["start_ns"] + e["duration_ns"] + off) - delta(e))
                           for e in exps), off) for off in range(-300000000, 0, 100000))
    print("offset %.1f ms, visit mismatches %d" % (offset / 1e6, err))

    def phase(t):  # fractional progress at time t
        i = bisect.bisect_right(visits, t) - 1
        return None if i < 0 or i + 1 >= len(visits) else i + (t - visits[i]) / (visits[i + 1] - visits[i])

    segs = segments(rows)
    for speedup in sorted({e["speedup"] for e in exps}):
        inside, dur, delay, counted, frac = [], 0, 0, 0, 0.0
        for e in exps:
            if e["speedup"] != speedup:
                continue
            a = e["start_ns"] + offset
            b = a + e["duration_ns"]
            inside += [s for s in segs if rows[s["row"]][1] >= a and rows[s["row"] + 1][1] < b]
            pa, pb = phase(a), phase(b)
            if pa is None or pb is None:
                continue
            dur += e["duration_ns"]
            delay += e["delay_ns"]
            counted += delta(e)
            frac += pb - pa
        show("s=%g" % speedup, inside)
        if counted and frac:
            print("           period counted %.0f, from rounds %.0f; effective counted %.0f, from rounds %.0f "
                  "(visits %d counted, %.1f fractional)" % (dur / counted / 1e3, dur / frac / 1e3,
                                                           (dur - delay) / counted / 1e3, (dur - delay) / frac / 1e3,
                                                           counted, frac))


if __name__ == "__main__":
    main()
