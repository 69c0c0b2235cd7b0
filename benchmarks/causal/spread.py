#!/usr/bin/env python3
"""How far apart identical `whatif run --fixed-line L --fixed-speedup S` runs land.

For each workload line it repeats the same command N times and prints, in percentage points, the
spread (max - min) of the predicted program speedup two ways: from each run alone (its interleaved
baseline experiments; whatif's method since fixed-speedup runs carry their own baseline) and from
pairs of different runs (run i's baselines against run j's sped experiments: what separate runs at
0 and at S give, the method users and the old bench relied on). Never part of `make test`.
Usage: spread.py --build BUILD [--bindir DIR] [--workloads a,b] [--runs 3] [--speedup 0.5]
"""
import argparse
import itertools
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the workloads, their lines and the profile reader)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", required=True)
    ap.add_argument("--bindir")
    ap.add_argument("--workloads", default="phases,lock,pipeline,amdahl3,cxxpipe,libcall")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--speedup", type=float, default=0.5)
    args = ap.parse_args()
    bindir = args.bindir or os.path.join(args.build, "benchmarks", "causal")
    exe = os.path.join(args.build, "launcher", "whatif")
    s = args.speedup
    print("%-10s %-4s %6s  %-28s %-28s" % ("workload", "line", "runs", "alone: preds (spread pp)", "cross-run: spread pp"))
    for wl in args.workloads.split(","):
        metric = bench.WORKLOADS[wl]["metric"]
        src, lines = bench.line_numbers(wl)
        for line in bench.WORKLOADS[wl]["lines"]:
            fixed = "%s:%d" % (os.path.basename(src), lines[line])
            runs = []
            with tempfile.TemporaryDirectory() as tmp:
                for i in range(args.runs):
                    out = os.path.join(tmp, "r%d.jsonl" % i)
                    cmd = [exe, "run", "-q", "-o", out, "--fixed-line", fixed, "--fixed-speedup", str(int(round(s * 100))),
                           "---", os.path.join(bindir, "wl_" + bench.exe_name(wl))] + bench.args_for(wl)
                    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=bench.RUN_TIMEOUT_S)
                    exps = bench.read_whatif(out)
                    runs.append(([e for e in exps if e["speedup"] == 0], [e for e in exps if abs(e["speedup"] - s) < 0.005]))
            alone = [bench.predicted(base, sped, metric)[0] for base, sped in runs]
            cross = [bench.predicted(runs[i][0], runs[j][1], metric)[0]
                     for i, j in itertools.permutations(range(len(runs)), 2)]
            spread = lambda xs: 100 * (max(xs) - min(xs)) if xs and all(x == x for x in xs) else float("nan")
            print("%-10s %-4s %6d  %-28s %6.1f" % (wl, line, len(runs),
                  "%s (%.1f)" % (" ".join("%+.1f" % (100 * p) for p in alone), spread(alone)), spread(cross)), flush=True)


if __name__ == "__main__":
    main()
