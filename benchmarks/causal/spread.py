#!/usr/bin/env python3
"""How far apart identical `whatif run --fixed-line L --fixed-speedup S` runs land.

For each workload line it repeats the same command N times and prints, in percentage points, the
spread (max - min) of the predicted program speedup two ways: from each run alone (its interleaved
baseline experiments; whatif's method since fixed-speedup runs carry their own baseline) and from
pairs of different runs (run i's baselines against run j's sped experiments: what separate runs at
0 and at S give, the method users and the old bench relied on). It also reads each run's 95%
interval from `whatif report --format json` and says whether the runs agree: every run's prediction
inside every other run's interval (the issue's "steady answers" test). Calibrated 95% intervals of equal
width pass that test on only about 65% of lines with 3 runs (83% for 2), so it also prints a calibration
check that does not depend on the number of runs: for every two runs, the difference of their
predictions over its standard error from the two intervals, |z| <= 1.96 expected 95% of the time; and
the mean interval width, since an interval that says nothing passes every test. Per run it prints the
line's CPU share in the baseline experiments (its samples times the sampling period over their wall
time), and the summary correlates predictions with it within each line: outside load changes that share
from run to run, and a prediction that follows it moves with the machine's load, not by chance.
Never part of `make test`.
Usage: spread.py --build BUILD [--bindir DIR] [--workloads a,b|all] [--runs 3] [--speedup 0.5]
                 [--prefix "chrt -f 10"] [--keep DIR]
"""
import argparse
import itertools
import json
import math
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


def cpu_share(path):
    """The selected line's share of the baseline experiments' wall time: samples x sampling period."""
    period, samples, wall = 1e6, 0.0, 0.0
    try:
        with open(path, errors="replace") as f:
            for text in f:
                try:
                    rec = json.loads(text)
                except ValueError:
                    continue
                if rec.get("type") == "header":
                    period = float(rec.get("sampling_period_ns", period))
                elif rec.get("type") == "experiment" and float(rec.get("speedup", 1)) == 0 and rec.get("set_aside") is not True:
                    samples += float(rec.get("selected_samples", 0))
                    wall += float(rec.get("duration_ns", 0))
    except OSError:
        pass
    return samples * period / wall if wall > 0 else float("nan")


def z_scores(intervals):
    """|p_i - p_j| / sqrt(se_i^2 + se_j^2) for every two runs, se = interval width / 3.92."""
    out = []
    for (p, lo, hi), (q, lo2, hi2) in itertools.combinations(intervals, 2):
        if None in (p, lo, hi, q, lo2, hi2):
            continue
        se = math.hypot((hi - lo) / 3.92, (hi2 - lo2) / 3.92)
        out.append(abs(p - q) / se if se > 0 else float("inf"))
    return out


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
    ap.add_argument("--keep", help="directory to keep the profiles in (WORKLOAD_LINE_RUN.jsonl), e.g. to re-read them "
                    "with another build's `whatif report`")
    args = ap.parse_args()
    if args.workloads == "all":
        args.workloads = ",".join(bench.WORKLOADS)
    prefix = shlex.split(args.prefix)
    tally = {"lines": 0, "agree": 0, "alone": [], "cross": [], "z": [], "widths": [], "centred": []}
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
            runs, intervals, shares = [], [], []
            with tempfile.TemporaryDirectory() as tmp:
                if args.keep:
                    os.makedirs(args.keep, exist_ok=True)
                for i in range(args.runs):
                    out = os.path.join(args.keep or tmp, "%s_%s_%d.jsonl" % (wl, line, i))
                    cmd = prefix + [exe, "run", "-q", "-o", out, "--fixed-line", fixed, "--fixed-speedup", str(int(round(s * 100))),
                           "---", os.path.join(bindir, "wl_" + bench.exe_name(wl))] + bench.args_for(wl)
                    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=bench.RUN_TIMEOUT_S)
                    exps = bench.read_whatif(out)
                    intervals.append(report_interval(exe, out, fixed, s))
                    shares.append(cpu_share(out))
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
            tally["z"] += z_scores(intervals)
            tally["widths"] += [100 * (hi - lo) for _, lo, hi in intervals if lo is not None and hi is not None]
            pairs = [(100 * p, sh) for p, sh in zip(alone, shares) if p == p and sh == sh]
            if len(pairs) > 1:
                mp = sum(p for p, _ in pairs) / len(pairs)
                ms = sum(sh for _, sh in pairs) / len(pairs)
                tally["centred"] += [(p - mp, sh - ms) for p, sh in pairs]
            shown = " ".join("%s[%s,%s]" % tuple("n/a" if v is None else "%+.0f" % (100 * v) for v in iv)
                             for iv in intervals)
            print("%-10s %-4s %6d  %-28s %8.1f   %-34s %s" % (wl, line, len(runs),
                  "%s (%.1f)" % (" ".join("%+.1f" % (100 * p) for p in alone), spread(alone)), spread(cross),
                  shown, "yes" if ok else "NO"), "  cpu share %s" % " ".join("%.2f" % x for x in shares), flush=True)
    finite = lambda xs: [x for x in xs if x == x]
    if tally["lines"]:
        a, c = finite(tally["alone"]), finite(tally["cross"])
        print("\n%d lines: runs agree within their intervals on %d; spread alone mean %.1f pp (worst %.1f), "
              "cross-run mean %.1f pp (worst %.1f); load %s" % (
                  tally["lines"], tally["agree"], sum(a) / max(len(a), 1), max(a, default=float("nan")),
                  sum(c) / max(len(c), 1), max(c, default=float("nan")), open("/proc/loadavg").read().split()[:3]))
        z, w = [x for x in tally["z"] if x == x], tally["widths"]
        print("calibration: %d of %d pairs of runs within 1.96 standard errors of each other (95%% expected); "
              "mean interval width %.1f pp (median %.1f)" % (
                  sum(x <= 1.96 for x in z), len(z), sum(w) / max(len(w), 1),
                  sorted(w)[len(w) // 2] if w else float("nan")))
        c = tally["centred"]
        sxx = sum(d * d for _, d in c)
        syy = sum(p * p for p, _ in c)
        if sxx > 0 and syy > 0:
            sxy = sum(p * d for p, d in c)
            print("within each line, predictions against the line's CPU share: correlation %.2f, %.1f pp per 0.1 of "
                  "share (the share moves with outside load)" % (sxy / math.sqrt(sxx * syy), sxy / sxx / 10))


if __name__ == "__main__":
    main()
