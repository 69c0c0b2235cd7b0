#!/usr/bin/env python3
"""How far apart identical `whatif run --fixed-line L --fixed-speedup S` runs land.

For each workload line it repeats the same command N times and prints, in percentage points, the
spread (max - min) of the predicted program speedup two ways: from each run alone (its interleaved
baseline experiments; whatif's method since fixed-speedup runs carry their own baseline) and from
pairs of different runs (run i's baselines against run j's sped experiments: what separate runs at
0 and at S give, the method users and the old bench relied on). It also reads each run's 95%
interval from `whatif report --format json` and says whether the runs agree: every run's prediction
inside every other run's interval (the issue's "steady answers" test). Never part of `make test`.
Usage: spread.py --build BUILD [--bindir DIR] [--workloads a,b|all] [--runs 3] [--speedup 0.5]
                 [--prefix "chrt -f 10"]
"""
import argparse
import itertools
import json
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the workloads, their lines and the profile reader)


def report_interval(exe, path, fixed, s):
    """(prediction, ci_low, ci_high) for line `fixed` at speedup s from `whatif report`; Nones when absent."""
    try:
        p = subprocess.run([exe, "report", "--format", "json", path], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=120)
        rep = json.loads(p.stdout)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None, None, None
    for line in rep.get("lines", []):
        if not str(line.get("line", "")).endswith("/" + fixed) and line.get("line") != fixed:
            continue
        for pt in line.get("points", []):
            if pt.get("name") != bench.THROUGHPUT_POINT and pt.get("name") != bench.LATENCY_POINT:
                continue
            for c in pt.get("curve", []):
                if abs(float(c.get("speedup", -1)) - s) < 0.005:
                    return c.get("program_speedup"), c.get("ci_low"), c.get("ci_high")
    return None, None, None


def agree(intervals):
    """Whether every run's prediction lies inside every other run's interval."""
    for i, (p, _, _) in enumerate(intervals):
        for j, (_, lo, hi) in enumerate(intervals):
            if i != j and (p is None or lo is None or hi is None or not lo <= p <= hi):
                return False
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--bindir")
    ap.add_argument("--workloads", default="phases,lock,pipeline,amdahl3,cxxpipe,libcall")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--speedup", type=float, default=0.5)
    ap.add_argument("--prefix", default="", help="command that wraps each run, e.g. 'chrt -f 10'")
    args = ap.parse_args()
    if args.workloads == "all":
        args.workloads = ",".join(bench.WORKLOADS)
    prefix = shlex.split(args.prefix)
    tally = {"lines": 0, "agree": 0, "alone": [], "cross": []}
    bindir = args.bindir or os.path.join(args.build, "benchmarks", "causal")
    exe = os.path.join(args.build, "launcher", "whatif")
    s = args.speedup
    print("%-10s %-4s %6s  %-28s %-10s %-34s %s" % ("workload", "line", "runs", "alone: preds (spread pp)",
          "cross pp", "report: pred [95% interval] per run", "agree"))
    for wl in args.workloads.split(","):
        metric = bench.WORKLOADS[wl]["metric"]
        src, lines = bench.line_numbers(wl)
        for line in bench.WORKLOADS[wl]["lines"]:
            fixed = "%s:%d" % (os.path.basename(src), lines[line])
            runs, intervals = [], []
            with tempfile.TemporaryDirectory() as tmp:
                for i in range(args.runs):
                    out = os.path.join(tmp, "r%d.jsonl" % i)
                    cmd = prefix + [exe, "run", "-q", "-o", out, "--fixed-line", fixed, "--fixed-speedup", str(int(round(s * 100))),
                           "---", os.path.join(bindir, "wl_" + bench.exe_name(wl))] + bench.args_for(wl)
                    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=bench.RUN_TIMEOUT_S)
                    exps = bench.read_whatif(out)
                    intervals.append(report_interval(exe, out, fixed, s))
                    runs.append(([e for e in exps if e["speedup"] == 0], [e for e in exps if abs(e["speedup"] - s) < 0.005]))
            alone = [bench.predicted(base, sped, metric)[0] for base, sped in runs]
            cross = [bench.predicted(runs[i][0], runs[j][1], metric)[0]
                     for i, j in itertools.permutations(range(len(runs)), 2)]
            spread = lambda xs: 100 * (max(xs) - min(xs)) if xs and all(x == x for x in xs) else float("nan")
            ok = agree(intervals)
            tally["lines"] += 1
            tally["agree"] += ok
            tally["alone"].append(spread(alone))
            tally["cross"].append(spread(cross))
            shown = " ".join("%s[%s,%s]" % tuple("n/a" if v is None else "%+.0f" % (100 * v) for v in iv)
                             for iv in intervals)
            print("%-10s %-4s %6d  %-28s %8.1f   %-34s %s" % (wl, line, len(runs),
                  "%s (%.1f)" % (" ".join("%+.1f" % (100 * p) for p in alone), spread(alone)), spread(cross),
                  shown, "yes" if ok else "NO"), flush=True)
    finite = lambda xs: [x for x in xs if x == x]
    if tally["lines"]:
        a, c = finite(tally["alone"]), finite(tally["cross"])
        print("\n%d lines: runs agree within their intervals on %d; spread alone mean %.1f pp (worst %.1f), "
              "cross-run mean %.1f pp (worst %.1f); load %s" % (
                  tally["lines"], tally["agree"], sum(a) / max(len(a), 1), max(a, default=float("nan")),
                  sum(c) / max(len(c), 1), max(c, default=float("nan")), open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
