#!/usr/bin/env python3
"""Overhead of --lbr over the same `whatif run` without it, at several burst intervals (the paper's
Table 1 varies the sampling interval; here --lbr-every N bursts every N samples of 1 ms CPU time).

Runs are interleaved (A, B1, B2, ... repeated) and each configuration's median time is reported (the
program's own run time from the profile's `runtime` record: the launcher's wall time moves in its
100 ms polling steps) with its overhead over `whatif run --end-to-end` without --lbr, plus the branch_stats that
break the cost down (breakpoints set, decoded blocks, bursts). Quote /proc/loadavg beside it.

Usage: overhead.py WHATIF BINARY ARGS... [--repeat N]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(whatif, command, extra, profile, env=None):
    start = time.monotonic()
    subprocess.run([whatif, "run", "-q", "-o", profile, "--end-to-end"] + extra + ["---"] + command, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, **(env or {})))
    elapsed = time.monotonic() - start
    stats = None
    with open(profile) as f:
        for line in f:
            if '"branch_stats"' in line:
                stats = json.loads(line)
            elif '"runtime"' in line:
                record = json.loads(line)
                if record.get("type") == "runtime" and record.get("elapsed_ns"):
                    elapsed = record["elapsed_ns"] / 1e9
    return elapsed, stats


def main():
    args = sys.argv[1:]
    repeat = 5
    if "--repeat" in args:
        i = args.index("--repeat")
        repeat = int(args[i + 1])
        del args[i:i + 2]
    whatif, command = args[0], args[1:]
    configs = [("no --lbr", [], None)]
    for every in (1, 10, 100):
        configs.append((f"--lbr-every {every}", ["--lbr", "--lbr-every", str(every)], None))
    configs.append(("every 1 naive", ["--lbr", "--lbr-every", "1"], {"WHATIF_LBR_NAIVE": "1"}))
    times = {name: [] for name, _, _ in configs}
    stats = {}
    with tempfile.TemporaryDirectory() as workdir:
        profile = os.path.join(workdir, "p.jsonl")
        for _ in range(repeat):
            for name, extra, env in configs:
                elapsed, s = run(whatif, command, extra, profile, env)
                times[name].append(elapsed)
                stats[name] = s
    base = statistics.median(times["no --lbr"])
    print(f"{'config':16} {'median s':>9} {'overhead':>9} {'bursts':>7} {'taken':>7} {'bps':>7} {'bp/taken':>9} {'blocks':>7}")
    for name, _, _ in configs:
        median = statistics.median(times[name])
        s = stats.get(name) or {}
        print(f"{name:16} {median:9.3f} {100 * (median / base - 1):8.1f}% {s.get('bursts', 0):7} {s.get('taken', 0):7} "
              f"{s.get('breakpoints', 0):7} {s.get('breakpoints_per_taken', 0):9.3f} {s.get('decoded_blocks', 0):7}")
    with open("/proc/loadavg") as f:
        print("loadavg:", f.read().strip())


if __name__ == "__main__":
    main()
