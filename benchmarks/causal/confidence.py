#!/usr/bin/env python3
"""Time to a confident answer: how long a `whatif run` takes until the top of its ranking is settled.

Runs the same program N times with each allocation policy (`--allocation samples`, Coz's: lines in
proportion to their samples; `--allocation adaptive`, the default), interleaved, and for each run
finds the first moment its profile, cut after experiment k, ranks three lines that each have at
least three distinct speedups and 95% impact intervals that overlap neither each other nor the
fourth line's. Prints per run that time (or "never" within the run) and the medians per policy.
Never part of `make test`. Usage:
  confidence.py --build BUILD [--runs 3] [--step 4] [--seconds S] [-- PROGRAM ARGS...]
Default program: the bundled example, build/examples/demo 60000.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def settled(report, top=3, speedups=3):
    """Whether the report's head is settled: the first `top` lines with >= `speedups` speedups each and
    pairwise disjoint impact intervals, also disjoint from the next line's."""
    lines = report.get("lines", [])
    if len(lines) < top:
        return False
    intervals = []
    for line in lines[:top + 1]:
        point = max(line["points"], key=lambda p: p["experiments"]) if line["points"] else None
        if point is None or point["impact"] is None or point["impact"]["ci_low"] is None:
            return False
        intervals.append((point["impact"]["ci_low"], point["impact"]["ci_high"]))
    if any(line["speedups"] < speedups for line in lines[:top]):
        return False
    for i in range(len(intervals)):
        for j in range(i + 1, len(intervals)):
            if j == top and i < top - 1:
                continue  # the outsider only has to clear the last of the top lines
            a, b = intervals[i], intervals[j]
            if a[0] <= b[1] and b[0] <= a[1]:
                return False
    return True


def time_to_settle(exe, profile, step, tmp):
    """(seconds, experiments) at the first cut that is settled, or (None, total experiments)."""
    with open(profile) as f:
        records = f.readlines()
    experiment_at = [i for i, r in enumerate(records) if '"type":"experiment"' in r.replace(" ", "")]
    cut_path = os.path.join(tmp, "cut.jsonl")
    for k in range(max(step, 6), len(experiment_at) + 1, step):
        end = experiment_at[k - 1] + 1
        with open(cut_path, "w") as f:
            f.writelines(records[:end])
        out = subprocess.run([exe, "report", "--format", "json", "--bootstrap", "200", cut_path],
                             capture_output=True, text=True)
        if out.returncode != 0:
            continue
        if settled(json.loads(out.stdout)):
            elapsed = json.loads(records[experiment_at[k - 1]])["elapsed_ns"] / 1e9
            return elapsed, k
    return None, len(experiment_at)


def main():
    argv = sys.argv[1:]
    program = None
    if "--" in argv:
        program = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--step", type=int, default=4, help="experiments between cuts")
    ap.add_argument("--seed", type=int, default=0, help="first seed (run i uses seed+i)")
    args = ap.parse_args(argv)
    exe = os.path.join(args.build, "launcher", "whatif")
    if not program:
        program = [os.path.join(args.build, "examples", "demo"), "60000"]
    results = {"samples": [], "adaptive": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            for policy in ("samples", "adaptive") if i % 2 == 0 else ("adaptive", "samples"):
                out = os.path.join(tmp, "%s-%d.jsonl" % (policy, i))
                subprocess.run([exe, "run", "-q", "--allocation", policy, "--seed", str(args.seed + i), "-o", out, "---"] + program,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                seconds, k = time_to_settle(exe, out, args.step, tmp)
                results[policy].append(seconds)
                print("%-9s run %d: %s" % (policy, i, "settled after %.1f s (%d experiments)" % (seconds, k)
                                            if seconds is not None else "never settled (%d experiments)" % k), flush=True)
    print("\nload average: %s" % open("/proc/loadavg").read().split()[0:3])
    for policy, times in results.items():
        done = [t for t in times if t is not None]
        print("%-9s settled in %d of %d runs; median %s" % (policy, len(done), len(times),
              "%.1f s" % statistics.median(done) if done else "-"))


if __name__ == "__main__":
    main()
