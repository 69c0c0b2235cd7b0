#!/usr/bin/env python3
"""Known-answer benchmark for causal profilers: accuracy, overhead and speed to an answer.

For each workload (benchmarks/causal/*.c) and each marked line (`/* @line:X */`) it measures the real
effect of optimising that line by s (native runs with the line's work scaled by 1 - s), and compares
the program speedup that whatif and Coz predict from virtual speedups of s. Stdlib only. Runs one
program at a time: timings on a 2-core VM are noisy, so configurations are interleaved and medians
taken. Usage: bench.py --build BUILD_DIR [--quick] [--reps N] [--speedups 0.25,0.5] [--workloads a,b]
"""

import argparse
import json
import math
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# The profile format's idle rule (format/profile-format.json, shared with the readers and the runtime).
with open(os.path.join(REPO, "format", "profile-format.json")) as _format:
    IDLE_CPU_SHARE = json.load(_format)["idle_cpu_share"]

# Each workload: its default work parameters, the lines the accuracy table covers, and the metric
# the known answer is about. A line `X` is marked `/* @line:X */` in the source; its work parameter
# is the lower-case letter. The reasons for the answers are in benchmarks/README.md.
WORKLOADS = {
    "phases":   {"params": {"a": 1000, "b": 1000}, "lines": ["A", "B"], "metric": "throughput"},
    "forkjoin": {"params": {"a": 4500, "b": 5500}, "lines": ["A", "B"], "metric": "throughput"},
    "amdahl":   {"params": {"a": 3000, "b": 5000, "c": 2000}, "lines": ["B", "C"], "metric": "throughput"},
    "lock":     {"params": {"a": 30, "b": 70}, "lines": ["A", "B"], "metric": "throughput"},
    "pipeline": {"params": {"a": 40, "b": 60}, "lines": ["A", "B"], "metric": "throughput"},
    "blockio":  {"params": {"a": 600, "b": 400}, "lines": ["A", "B"], "metric": "throughput"},
    "latency":  {"params": {"a": 300, "b": 500}, "lines": ["A", "B"], "metric": "latency"},
    # Shapes the first seven do not cover, with other kinds of work (FLOPS, WALK, library calls and
    # system calls, not only WORK's LCG), built without frame pointers, C and C++. "exe" names the
    # binary (wl_EXE) and source (EXE.c or EXE.cpp) when two entries share one program.
    "mix_fine":   {"exe": "mix", "params": {"a": 5, "b": 3, "c": 2, "items": 70000},
                   "lines": ["A", "B", "C"], "metric": "throughput"},
    "mix_coarse": {"exe": "mix", "params": {"a": 1000, "b": 600, "c": 300, "items": 400},
                   "lines": ["A", "B", "C"], "metric": "throughput"},
    "callee":   {"params": {"a": 30, "b": 20, "items": 15000}, "lines": ["A", "B"], "metric": "throughput"},
    "libcall":  {"params": {"a": 136, "b": 20, "c": 225, "rounds": 1000}, "lines": ["A", "B", "C"],
                 "metric": "throughput"},
    "sleepy":   {"params": {"a": 500, "b": 100, "sleep_us": 400, "items": 800}, "lines": ["A", "B"],
                 "metric": "throughput"},
    "pingpong": {"params": {"a": 300, "b": 350, "c": 24, "items": 900}, "lines": ["A", "B", "C"],
                 "metric": "throughput"},
    "amdahl3":  {"params": {"a": 1200, "b": 1500, "rounds": 300}, "lines": ["A", "B"], "metric": "throughput"},
    "cxxpipe":  {"params": {"a": 1050, "b": 1600, "items": 450}, "lines": ["A", "B"], "metric": "throughput"},
    "cxxlock":  {"params": {"a": 800, "b": 1200, "items": 700}, "lines": ["A", "B"], "metric": "throughput"},
    # Twice as many busy threads (crowd) or processes (procpool) as CPUs: a pause must cost the
    # program the paused thread's CPU share, and a process tree is one program.
    "crowd":    {"params": {"a": 600, "b": 330, "items": 3000}, "lines": ["A", "B"], "metric": "throughput"},
    "procpool": {"params": {"a": 100, "b": 3000, "rounds": 200, "children": 120}, "lines": ["A", "B"],
                 "metric": "throughput"},
    # Hand-overs the others do not use: POSIX semaphores between three stages on two CPUs, C++20
    # std::barrier (a raw futex) with a serial completion, std::async's thread per task, the same
    # fan-out to a fixed pool of workers, and a user-space spin lock whose waiter burns its CPU.
    "sempipe":  {"params": {"a": 20, "b": 60, "c": 30, "items": 8000}, "lines": ["A", "B", "C"],
                 "metric": "throughput"},
    "cxxbarrier": {"params": {"a": 1000, "b": 700, "c": 200, "rounds": 600}, "lines": ["A", "B", "C"],
                   "metric": "throughput"},
    "asyncfan": {"params": {"a": 1000, "b": 800, "rounds": 400}, "lines": ["A", "B"], "metric": "throughput"},
    "poolfan":  {"params": {"a": 1000, "b": 800, "rounds": 400}, "lines": ["A", "B"], "metric": "throughput"},
    "spinlock": {"params": {"a": 300, "b": 500, "items": 2000}, "lines": ["A", "B"], "metric": "throughput"},
    # A request/reply whose both sides wait in sched_yield loops (session 16).
    "yieldrpc": {"params": {"a": 400, "b": 700, "items": 900}, "lines": ["A", "B"], "metric": "throughput"},
}
THROUGHPUT_POINT = "item"
LATENCY_POINT = "request"
RUN_TIMEOUT_S = 90


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def exe_name(workload):
    """The program a workload runs: wl_EXE, built from EXE.c or EXE.cpp (EXE = the key by default)."""
    return WORKLOADS[workload].get("exe", workload)


def source_path(workload):
    base = os.path.join(HERE, exe_name(workload))
    return base + ".cpp" if os.path.exists(base + ".cpp") else base + ".c"


def line_numbers(workload):
    """Maps each `@line:X` marker in the workload's source to its line number."""
    path = source_path(workload)
    found = {}
    with open(path) as f:
        for no, text in enumerate(f, 1):
            m = re.search(r"@line:([A-Z])\b", text)
            if m:
                found[m.group(1)] = no
    return path, found


# The parameter that counts a workload's items (rounds, requests, children) and its default in the
# program: --length multiplies it, so every run is longer with the same work per item (phases has
# none: its two phases are its whole run).
COUNTS = {
    "forkjoin": ("rounds", 400), "amdahl": ("rounds", 300), "lock": ("items", 22000),
    "pipeline": ("items", 33000), "blockio": ("items", 1500), "latency": ("requests", 1400),
    "mix_fine": ("items", 70000), "mix_coarse": ("items", 70000), "callee": ("items", 15000),
    "libcall": ("rounds", 1000), "sleepy": ("items", 800), "pingpong": ("items", 900),
    "amdahl3": ("rounds", 300), "cxxpipe": ("items", 450), "cxxlock": ("items", 700),
    "crowd": ("items", 3000), "procpool": ("children", 120), "sempipe": ("items", 16000),
    "cxxbarrier": ("rounds", 600), "asyncfan": ("rounds", 400), "poolfan": ("rounds", 400),
    "spinlock": ("items", 2000), "yieldrpc": ("items", 900),
}
LENGTH = 1.0  # --length


def args_for(workload, line=None, s=0.0):
    params = dict(WORKLOADS[workload]["params"])
    if LENGTH != 1.0 and workload in COUNTS:
        key, default = COUNTS[workload]
        params[key] = round(params.get(key, default) * LENGTH)
    if line is not None:
        key = line.lower()
        params[key] = params[key] * (1.0 - s)
    return ["%s=%g" % (k, v) for k, v in sorted(params.items())]


def parse_result(stdout):
    for text in stdout.splitlines():
        if text.startswith("RESULT "):
            return {k: float(v) for k, v in (kv.split("=", 1) for kv in text.split()[1:])}
    return None


def run(cmd, cwd=None, env=None):
    """Runs one command; returns (wall seconds, RESULT dict or None, returncode, stderr tail)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, errors="replace", timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return time.perf_counter() - t0, None, "timeout", ""
    wall = time.perf_counter() - t0
    return wall, parse_result(p.stdout), p.returncode, p.stderr[-2000:]


def median(xs):
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return statistics.median(xs) if xs else float("nan")


def fmt_pct(x, signed=False):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return ("%+.1f" if signed else "%.1f") % (100.0 * x)


def fmt_ratio(x):
    return "n/a" if x is None or math.isnan(x) else "%.2f" % x


# ---------------------------------------------------------------------------------------------
# Profile readers

def read_coz(path):
    """Coz's text format -> list of experiments {selected, speedup, duration, points{name: {...}}}."""
    exps = []
    if not os.path.exists(path):
        return exps
    with open(path, errors="replace") as f:
        for text in f:
            parts = text.rstrip("\n").split("\t")
            kv = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
            if parts[0] == "experiment":
                # Coz prints duration (elapsed - inserted delay) as an unsigned size_t: when the
                # delay exceeds the elapsed time it wraps to ~1.8e19. Read it back as signed.
                dur = int(kv["duration"])
                if dur >= 1 << 63:
                    dur -= 1 << 64
                exps.append({"selected": kv.get("selected"), "speedup": float(kv["speedup"]),
                             "duration": float(dur), "points": {}})
            elif parts[0] == "throughput-point" and exps:
                exps[-1]["points"][kv["name"]] = {"kind": "throughput", "delta": float(kv["delta"])}
            elif parts[0] == "latency-point" and exps:
                # Debian's Coz 0.2 prints `difference` as a garbage ~1.8e19 in every experiment
                # (an unsigned wrap far beyond any real in-flight count): mark it unusable, so Coz's
                # latency predictions show n/a instead of a ratio of garbage.
                diff = int(kv["difference"])
                exps[-1]["points"][kv["name"]] = {
                    "kind": "latency", "arrivals": float(kv["arrivals"]),
                    "departures": float(kv["departures"]),
                    "in_flight": float(diff) if diff < 1 << 40 else float("nan")}
    return exps


def read_whatif(path):
    """whatif JSONL (docs/profile-format.md) -> the same experiment shape as read_coz."""
    exps = []
    if not os.path.exists(path):
        return exps
    with open(path, errors="replace") as f:
        for text in f:
            try:
                rec = json.loads(text)
            except ValueError:
                continue  # a truncated last line is allowed
            if rec.get("type") != "experiment" or rec.get("set_aside") is True:
                continue  # set aside by the runtime: the readers skip it (docs/profile-format.md)
            points = {}
            for p in rec.get("points", []):
                if p.get("kind") == "latency":
                    points[p["name"]] = {"kind": "latency", "arrivals": float(p.get("arrivals", 0)),
                                         "departures": float(p.get("departures", 0)),
                                         "in_flight": float(p.get("in_flight_effective_avg", p.get("in_flight_avg", 0)))}
                else:
                    points[p["name"]] = {"kind": "throughput", "delta": float(p.get("delta", 0))}
            cpu, duration = rec.get("cpu_ns"), rec.get("duration_ns", 0)
            quiet = (cpu < IDLE_CPU_SHARE * duration if cpu is not None and duration > 0
                     else rec.get("total_samples") == 0 and rec.get("unscoped_samples", 0) == 0)
            if quiet and all(v.get("delta", 0) == 0 and v.get("arrivals", 0) == 0 for v in points.values()):
                continue  # the program was idle through it: the readers leave it out (docs/profile-format.md)
            dur = rec.get("effective_duration_ns")
            if dur is None:
                dur = rec.get("duration_ns", 0) - rec.get("delay_ns", 0)
            exps.append({"selected": rec.get("selected"), "speedup": float(rec.get("speedup", 0)),
                         "duration": float(dur), "points": points,
                         "delay_ns": float(rec.get("delay_ns", 0)),
                         "selected_samples": float(rec.get("selected_samples", 0))})
    return exps


def aggregate(exps, metric):
    """Combines experiments (sum durations and counts, Coz's viewer and our format doc) -> the
    progress period (throughput) or the mean latency by Little's law, weighted like Coz's viewer."""
    name = LATENCY_POINT if metric == "latency" else THROUGHPUT_POINT
    dur = delta = arrivals = 0.0
    in_flight_weighted = 0.0
    n = 0
    for e in exps:
        p = e["points"].get(name)
        if p is None:
            continue
        n += 1
        dur += e["duration"]
        if metric == "latency":
            arrivals += p["arrivals"]
            in_flight_weighted += p["in_flight"] * e["duration"]
        else:
            delta += p["delta"]
    if n == 0 or dur <= 0:
        return float("nan"), n
    if metric == "latency":
        if arrivals <= 0 or math.isnan(in_flight_weighted):
            return float("nan"), n
        return (in_flight_weighted / dur) / (arrivals / dur), n
    return (dur / delta if delta > 0 else float("nan")), n


def delay_ratio(exps, period_ns):
    """Inserted delay over what the selected line's samples call for, sum(delay_ns) /
    sum(selected_samples * speedup * P): 1.0 when delay accounting is exact (each sample in the
    selected line makes the others pause speedup * P once); NaN without the fields (Coz)."""
    due = sum(e.get("selected_samples", 0) * e["speedup"] * period_ns for e in exps)
    if due <= 0 or not any("delay_ns" in e for e in exps):
        return float("nan")
    return sum(e.get("delay_ns", 0) for e in exps) / due


def predicted(base_exps, exps, metric):
    """Program speedup 1 - v_s / v_0 (a shorter period or latency is a positive speedup)."""
    v0, n0 = aggregate(base_exps, metric)
    vs, ns = aggregate(exps, metric)
    if n0 == 0 or ns == 0 or math.isnan(v0) or math.isnan(vs) or v0 <= 0:
        return float("nan"), n0, ns
    return 1.0 - vs / v0, n0, ns


# ---------------------------------------------------------------------------------------------
# Profilers

class Profiler:
    name = ""

    def __init__(self, build):
        self.build = build
        self.ok = True
        self.why = ""

    def binary(self, workload):
        raise NotImplementedError


class Coz(Profiler):
    name = "coz"

    def __init__(self, build, bindir):
        super().__init__(build)
        self.bindir = bindir
        self.exe = shutil.which("coz")
        if not self.exe:
            self.ok, self.why = False, "coz not installed (apt-get install coz-profiler)"

    def binary(self, workload):
        return os.path.join(self.bindir, "wl_%s_dwarf3" % exe_name(workload))  # Coz reads DWARF <= 3 only

    def command(self, workload, args, out, fixed_line=None, fixed_speedup=None):
        cmd = [self.exe, "run", "-o", out]
        if fixed_line:
            cmd += ["--fixed-line", fixed_line]
        if fixed_speedup is not None:
            cmd += ["--fixed-speedup", str(int(round(fixed_speedup * 100)))]
        return cmd + ["---", self.binary(workload)] + args

    def read(self, path):
        return read_coz(path)


class Whatif(Profiler):
    name = "whatif"

    def __init__(self, build, bindir, sampler=None, extra=()):
        super().__init__(build)
        self.bindir = bindir
        # --profilers "whatif+--sampling-period 0.25" (or "whatif@DIR+OPTIONS" for another build):
        # extra `whatif run` options, to compare settings on the same workloads and native runs.
        self.extra = list(extra)
        # --profilers whatif-perf (or whatif-timer, whatif-user): whatif with that --sampler, to
        # compare samplers on the same workloads.
        self.sampler = sampler
        if sampler:
            self.name = "whatif-" + sampler
        self.exe = os.path.join(build, "launcher", "whatif")
        self.help = ""
        if not os.access(self.exe, os.X_OK):
            self.ok, self.why = False, "%s not built" % self.exe
            return
        try:
            p = subprocess.run([self.exe, "run", "--help"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=20)
            self.help = p.stdout
            if p.returncode != 0 or "fixed-speedup" not in p.stdout:
                self.ok = False
                self.why = "`whatif run --help` failed or lacks --fixed-speedup (exit %s): %s" % (
                    p.returncode, p.stdout.strip().splitlines()[-1] if p.stdout.strip() else "")
        except (OSError, subprocess.TimeoutExpired) as e:
            self.ok, self.why = False, "`whatif run --help` did not run: %s" % e

    def binary(self, workload):
        return os.path.join(self.bindir, "wl_%s" % exe_name(workload))

    def command(self, workload, args, out, fixed_line=None, fixed_speedup=None):
        # Extra words of the form WHATIF_NAME=VALUE set the runtime's environment (docs/environment.md)
        # for this profiler alone: "whatif+WHATIF_CREDIT_DIVISIONS=1".
        assignments = [o for o in self.extra if o.startswith("WHATIF_") and "=" in o]
        cmd = (["env"] + assignments if assignments else []) + [self.exe, "run", "-o", out]
        if self.sampler:
            cmd += ["--sampler", self.sampler]
        cmd += [o for o in self.extra if o not in assignments]
        if fixed_line:
            cmd += ["--fixed-line", fixed_line]
        if fixed_speedup is not None:
            cmd += ["--fixed-speedup", str(int(round(fixed_speedup * 100)))]
        return cmd + ["---", self.binary(workload)] + args

    def read(self, path):
        return read_whatif(path)

    def report_json(self, paths):
        """`whatif report --format json PROFILES...`; returns the parsed JSON or None."""
        try:
            p = subprocess.run([self.exe, "report", "--format", "json"] + paths,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if p.returncode != 0:
            return None
        try:
            return json.loads(p.stdout)
        except ValueError:
            return None


def report_available(build):
    exe = os.path.join(build, "launcher", "whatif")
    try:
        p = subprocess.run([exe, "report", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return exe if p.returncode == 0 and "--format" in p.stdout else None


def report_prediction(exe, files, fixed, point, s):
    """The program speedup `whatif report --format json` predicts for line `fixed` (basename:line) at
    line speedup s, from the given profiles (whatif or Coz); NaN when the report has no such point."""
    files = [f for f in files if os.path.exists(f) and os.path.getsize(f) > 0]
    if not exe or not files:
        return float("nan")
    try:
        p = subprocess.run([exe, "report", "--format", "json", "--bootstrap", "0"] + files,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        rep = json.loads(p.stdout) if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError):
        rep = None
    if not isinstance(rep, dict):
        return float("nan")
    for line in rep.get("lines", []):
        name = str(line.get("line", ""))
        if name != fixed and not name.endswith("/" + fixed):
            continue
        for pt in line.get("points", []):
            if pt.get("name") != point:
                continue
            for c in pt.get("curve", []):
                if c.get("program_speedup") is not None and abs(float(c.get("speedup", -1)) - s) < 0.005:
                    return float(c["program_speedup"])
    return float("nan")


# ---------------------------------------------------------------------------------------------
# Phases of the benchmark

def ground_truth(bindir, workloads, speedups, reps):
    """Native runs with each line's work scaled by (1 - s), interleaved, medians.
    Returns {wl: {"base": median metric, (line, s): speedup}} and the raw samples."""
    configs = []
    for wl in workloads:
        configs.append((wl, None, 0.0))
        for line in WORKLOADS[wl]["lines"]:
            for s in speedups:
                configs.append((wl, line, s))
    samples = {c: [] for c in configs}
    for rep in range(reps):
        order = configs[:]
        random.shuffle(order)
        for i, (wl, line, s) in enumerate(order):
            log("[native %d/%d] %d/%d %s %s %s" % (rep + 1, reps, i + 1, len(order), wl, line or "-", s))
            wall, res, rc, err = run([os.path.join(bindir, "wl_" + exe_name(wl))] + args_for(wl, line, s))
            if res is None:
                log("  native run failed (%s): %s" % (rc, err.strip()[-300:]))
                continue
            key = "mean_latency_ns" if WORKLOADS[wl]["metric"] == "latency" else "elapsed_ns"
            samples[(wl, line, s)].append(res[key] / max(res.get("progress", 1), 1)
                                          if key == "elapsed_ns" else res[key])
    truth = {}
    for wl in workloads:
        base = median(samples[(wl, None, 0.0)])
        base_noise = half_range(samples[(wl, None, 0.0)], base)
        truth[wl] = {"base": base, "base_samples": samples[(wl, None, 0.0)], "base_noise": base_noise}
        for line in WORKLOADS[wl]["lines"]:
            for s in speedups:
                m = median(samples[(wl, line, s)])
                truth[wl][(line, s)] = 1.0 - m / base if base > 0 else float("nan")
                # The native answer's own noise, in speedup units: half the range of this
                # configuration's repeats and of the baseline's, both over the baseline median,
                # added in quadrature. An error below it says nothing about the profiler.
                own = half_range(samples[(wl, line, s)], base)
                truth[wl][("noise", line, s)] = math.hypot(own, base_noise)
    return truth, samples


def half_range(xs, ref):
    """(max - min) / 2 / ref over the finite samples; NaN with fewer than two or no reference."""
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    if len(xs) < 2 or not ref or math.isnan(ref):
        return float("nan")
    return (max(xs) - min(xs)) / 2.0 / ref


def profiled_predictions(prof, workloads, speedups, reps, outdir, report_exe=None):
    """Fixed-line, fixed-speedup runs (plus speedup-0 baselines) under one profiler.
    Returns {wl: {(line, s): {"pred", "n0", "ns", "report"}}} and per-run records."""
    runs = []
    configs = []
    for wl in workloads:
        src, lines = line_numbers(wl)
        first = WORKLOADS[wl]["lines"][0]
        configs.append((wl, first, 0.0))
        for line in WORKLOADS[wl]["lines"]:
            for s in speedups:
                configs.append((wl, line, s))
    pdir = os.path.join(outdir, "profiles", prof.name)
    os.makedirs(pdir, exist_ok=True)
    files = {c: [] for c in configs}
    failures = []
    for rep in range(reps):
        order = configs[:]
        random.shuffle(order)
        for i, (wl, line, s) in enumerate(order):
            src, lines = line_numbers(wl)
            fixed = "%s:%d" % (os.path.basename(src), lines[line])
            out = os.path.join(pdir, "%s_%s_%03d_r%d.%s" % (wl, line, int(round(s * 100)), rep,
                                                            "coz" if prof.name == "coz" else "jsonl"))
            if os.path.exists(out):
                os.remove(out)
            log("[%s %d/%d] %d/%d %s %s %s" % (prof.name, rep + 1, reps, i + 1, len(order), wl, fixed, s))
            with tempfile.TemporaryDirectory() as cwd:
                wall, res, rc, err = run(prof.command(wl, args_for(wl), out, fixed, s), cwd=cwd)
            exps = prof.read(out)
            runs.append({"profiler": prof.name, "workload": wl, "line": line, "speedup": s,
                         "rep": rep, "wall_s": wall, "rc": rc, "experiments": len(exps), "profile": out})
            if rc != 0 or res is None:
                failures.append("%s %s %s s=%s: exit %s: %s" % (prof.name, wl, fixed, s, rc,
                                                                 err.strip()[-400:]))
                log("  run failed (exit %s): %s" % (rc, err.strip()[-400:]))
            files[(wl, line, s)].append(out)
    preds = {}
    for wl in workloads:
        metric = WORKLOADS[wl]["metric"]
        first = WORKLOADS[wl]["lines"][0]
        base_files = files[(wl, first, 0.0)]
        base = [e for f in base_files for e in prof.read(f) if abs(e["speedup"]) < 1e-6]
        preds[wl] = {}
        for line in WORKLOADS[wl]["lines"]:
            for s in speedups:
                run_exps = [e for f in files[(wl, line, s)] for e in prof.read(f)]
                exps = [e for e in run_exps if abs(e["speedup"] - s) < 0.005]
                # whatif's --fixed-speedup runs interleave their own baselines (pairs of 0 and s):
                # predict from those, as a user would from one run; Coz's runs need the separate
                # speedup-0 runs of the workload.
                own_base = [e for e in run_exps if abs(e["speedup"]) < 1e-6] if s > 0 else []
                pred, n0, ns = predicted(own_base or base, exps, metric)
                src, lines = line_numbers(wl)
                fixed = "%s:%d" % (os.path.basename(src), lines[line])
                point = LATENCY_POINT if metric == "latency" else THROUGHPUT_POINT
                rep = report_prediction(report_exe, ([] if own_base else base_files) + files[(wl, line, s)],
                                        fixed, point, s)
                entry = {"pred": pred, "report": rep, "n0": n0, "ns": ns, "files": files[(wl, line, s)],
                         "delay_ratio": delay_ratio(exps, 1e6),
                         "base_files": base_files}
                preds[wl][(line, s)] = entry
    return preds, runs, failures


def overhead(profilers, bindir, workloads, reps):
    """Wall time over native: sampling only (fixed speedup 0) and full random experiments."""
    configs = []
    for wl in workloads:
        configs.append((wl, "native", None))
        for prof in profilers:
            configs.append((wl, prof.name, "sampling"))
            configs.append((wl, prof.name, "full"))
    walls = {c: [] for c in configs}
    exps = {c: [] for c in configs}
    byname = {p.name: p for p in profilers}
    tmp = tempfile.mkdtemp(prefix="whatif-bench-")
    try:
        for rep in range(reps):
            order = configs[:]
            random.shuffle(order)
            for i, (wl, who, mode) in enumerate(order):
                log("[overhead %d/%d] %d/%d %s %s %s" % (rep + 1, reps, i + 1, len(order), wl, who, mode or ""))
                if who == "native":
                    wall, res, rc, err = run([os.path.join(bindir, "wl_" + exe_name(wl))] + args_for(wl))
                    if res is not None:
                        walls[(wl, who, mode)].append(wall)
                    continue
                prof = byname[who]
                out = os.path.join(tmp, "p.out")
                if os.path.exists(out):
                    os.remove(out)
                cmd = prof.command(wl, args_for(wl), out, None, 0.0 if mode == "sampling" else None)
                wall, res, rc, err = run(cmd, cwd=tmp)
                if res is None or rc != 0:
                    log("  run failed (exit %s): %s" % (rc, err.strip()[-300:]))
                    continue
                walls[(wl, who, mode)].append(wall)
                exps[(wl, who, mode)].append(len(prof.read(out)))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return walls, exps


# ---------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", required=True, help="build dir with launcher/whatif")
    ap.add_argument("--bindir", help="dir holding the wl_* workloads (default BUILD/benchmarks/causal)")
    ap.add_argument("--out", default=os.path.join(REPO, "bench-out"))
    ap.add_argument("--reps", type=int, default=3, help="interleaved repeats per configuration")
    ap.add_argument("--native-reps", type=int, default=None,
                    help="repeats of the native ground truth (default 2 x --reps): the answer the "
                         "profilers are judged against should be the less noisy side")
    ap.add_argument("--overhead-reps", type=int, default=5)
    ap.add_argument("--speedups", default="0.25,0.5,0.75,1.0")
    ap.add_argument("--length", type=float, default=1.0,
                    help="multiply every workload's item count (same work per item, longer runs): the "
                         "profiled runs hold more experiments and the native runs more rounds, so less of "
                         "the error is one run's noise")
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--profilers", default="whatif,coz")
    ap.add_argument("--quick", action="store_true", help="1 repeat, speedups 0.5 and 1.0, 2 overhead repeats")
    ap.add_argument("--skip", default="", help="comma list of phases to skip: accuracy,overhead")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--boost", action="store_true",
                    help="raise this session's autogroup priority (root, session leader; see run.sh)")
    a = ap.parse_args()
    global LENGTH
    LENGTH = a.length
    if a.quick:
        a.reps, a.overhead_reps, a.speedups = 1, 2, "0.5,1.0"
    if a.native_reps is None:
        a.native_reps = 2 * a.reps
    random.seed(a.seed)
    speedups = [float(x) for x in a.speedups.split(",") if x]
    workloads = [w for w in a.workloads.split(",") if w]
    for w in workloads:
        if w not in WORKLOADS:
            sys.exit("unknown workload '%s' (known: %s)" % (w, ", ".join(WORKLOADS)))
    # The profiled runs start in their own working directories: a relative --build or --bindir
    # failed there, after all the native runs.
    a.build = os.path.abspath(a.build)
    bindir = os.path.abspath(a.bindir) if a.bindir else os.path.join(a.build, "benchmarks", "causal")
    if not os.access(os.path.join(a.build, "launcher", "whatif"), os.X_OK) and any(
            p.startswith("whatif") for p in a.profilers.split(",")):
        sys.exit("no launcher at %s/launcher/whatif: build it first (make build)" % a.build)
    for w in workloads:
        for suffix in ("", "_dwarf3"):
            if not os.access(os.path.join(bindir, "wl_" + exe_name(w) + suffix), os.X_OK):
                sys.exit("workload binary %s missing: build the bench_workloads target"
                         % os.path.join(bindir, "wl_" + exe_name(w) + suffix))
    os.makedirs(a.out, exist_ok=True)
    skip = set(a.skip.split(","))

    profilers = []
    notes = []
    wanted = [p for p in a.profilers.split(",") if p]
    for name in wanted:
        if name.startswith(("whatif@", "whatif+")):
            # whatif@DIR: the whatif of another build tree (e.g. the commit before a change) on the
            # same workload binaries and native runs, named after DIR's last two path parts (old-build).
            # whatif+OPTIONS, whatif@DIR+OPTIONS: with extra `whatif run` options (or WHATIF_NAME=VALUE
            # settings of the runtime), named as given.
            where, _, options = name[len("whatif"):].partition("+")
            other = where[1:] if where else a.build
            prof = Whatif(other, bindir, extra=options.split())
            prof.name = name if options else "whatif@" + "-".join(os.path.normpath(other).split(os.sep)[-2:])
        elif name.startswith("whatif-"):
            prof = Whatif(a.build, bindir, sampler=name[len("whatif-"):])
        else:
            prof = Whatif(a.build, bindir) if name == "whatif" else Coz(a.build, bindir)
        if prof.ok:
            profilers.append(prof)
        else:
            notes.append("%s skipped: %s" % (name, prof.why))
            log("NOTE: %s skipped: %s" % (name, prof.why))

    if a.boost:
        # Autogroups (one per session) share the CPUs between sessions whatever the nice values
        # inside them; a session of our own at autogroup nice -20 keeps other sessions' builds
        # from stretching the measured runs. Children inherit it.
        try:
            if os.getsid(0) != os.getpid():
                raise OSError("not a session leader (start through setsid)")
            with open("/proc/self/autogroup", "w") as f:
                f.write("-20")
            notes.append("runs at autogroup nice -20 (own session)")
        except OSError as e:
            notes.append("priority boost unavailable: %s" % e)

    started = time.time()
    out_lines = []

    def emit(s=""):
        print(s, flush=True)
        out_lines.append(s)

    emit("# whatif causal-profiling benchmark  (%s, %d cpus, reps %d, native reps %d, speedups %s)"
         % (time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), os.cpu_count(), a.reps,
            a.native_reps, a.speedups))
    for n in notes:
        emit("NOTE: " + n)
    emit("load average at start: %s (other work on the machine makes every figure noisier)"
         % " ".join("%.2f" % x for x in os.getloadavg()))

    results = {"config": vars(a), "notes": notes}
    if "accuracy" not in skip:
        truth, raw = ground_truth(bindir, workloads, speedups, a.native_reps)
        preds, runs, failures = {}, [], []
        report_exe = report_available(a.build)
        if not report_exe:
            emit("NOTE: `whatif report` unavailable: the 'report' columns stay n/a")
        for prof in profilers:
            p, r, f = profiled_predictions(prof, workloads, speedups, a.reps, a.out, report_exe)
            preds[prof.name], runs, failures = p, runs + r, failures + f
        for f in failures:
            emit("FAILED: " + f)
        names = [p.name for p in profilers]
        emit("")
        emit("## Accuracy: program speedup (%) from optimising one line by s; error = predicted - actual (pp)")
        emit("## <profiler>: computed here from the raw experiments (docs/profile-format.md, Coz viewer's sums);")
        emit("## rep: what `whatif report --format json` makes of the same profiles (phase-corrected)")
        emit("## ±nat: the native answer's own noise (half-range of the native repeats, pp); an error")
        emit("## within it is not evidence against the profiler")
        head = "%-10s %-4s %-5s %8s %6s" % ("workload", "line", "s", "actual", "±nat")
        for n in names:
            head += " %8s %7s %8s %7s" % (n, "err", "rep", "err")
        emit(head)
        errs = {n: [] for n in names}
        rerrs = {n: [] for n in names}
        by_wl = {(n, wl): [] for n in names for wl in workloads}
        table = []
        for wl in workloads:
            for line in WORKLOADS[wl]["lines"]:
                for s in speedups:
                    act = truth[wl][(line, s)]
                    noise = truth[wl][("noise", line, s)]
                    row = "%-10s %-4s %-5g %8s %6s" % (wl, line, s, fmt_pct(act), fmt_pct(noise))
                    rec = {"workload": wl, "line": line, "speedup": s, "actual": act, "native_noise": noise}
                    for n in names:
                        pr = preds[n][wl][(line, s)]["pred"]
                        err = pr - act if not (math.isnan(pr) or math.isnan(act)) else float("nan")
                        rp = preds[n][wl][(line, s)]["report"]
                        rerr = rp - act if not (math.isnan(rp) or math.isnan(act)) else float("nan")
                        if not math.isnan(err):
                            errs[n].append(abs(err))
                            by_wl[(n, wl)].append(abs(err))
                        if not math.isnan(rerr):
                            rerrs[n].append(abs(rerr))
                        row += " %8s %7s %8s %7s" % (fmt_pct(pr), fmt_pct(err, True), fmt_pct(rp),
                                                     fmt_pct(rerr, True))
                        rec[n] = {"pred": pr, "err": err, "report": rp, "report_err": rerr,
                                  "delay_ratio": preds[n][wl][(line, s)]["delay_ratio"],
                                  "n0": preds[n][wl][(line, s)]["n0"], "ns": preds[n][wl][(line, s)]["ns"]}
                    emit(row)
                    table.append(rec)
        if names:
            emit("")
            emit("## Per workload: mean and worst absolute error (pp, computed column); native noise: "
                 "baseline spread and mean ±nat")
            head = "%-10s %9s %9s" % ("workload", "base ±", "mean ±nat")
            for n in names:
                head += " %10s %10s" % (n + " mean", n + " worst")
            emit(head)
            summary = {}
            for wl in workloads:
                nz = [truth[wl][("noise", l, s)] for l in WORKLOADS[wl]["lines"] for s in speedups]
                nz = [x for x in nz if not math.isnan(x)]
                row = "%-10s %9s %9s" % (wl, fmt_pct(truth[wl]["base_noise"]),
                                         fmt_pct(statistics.mean(nz) if nz else float("nan")))
                summary[wl] = {"base_noise": truth[wl]["base_noise"]}
                for n in names:
                    xs = by_wl[(n, wl)]
                    mean = statistics.mean(xs) if xs else float("nan")
                    worst = max(xs) if xs else float("nan")
                    row += " %10s %10s" % (fmt_pct(mean), fmt_pct(worst))
                    summary[wl][n] = {"mean_abs_err": mean, "worst_abs_err": worst}
                emit(row)
            results["accuracy_by_workload"] = summary
        for n in names:
            mae = statistics.mean(errs[n]) if errs[n] else float("nan")
            worst = max(errs[n]) if errs[n] else float("nan")
            rmae = statistics.mean(rerrs[n]) if rerrs[n] else float("nan")
            emit("mean absolute error %-7s %5s pp, worst %5s pp, over %d points; via whatif report %5s pp over %d"
                 % (n, fmt_pct(mae), fmt_pct(worst), len(errs[n]), fmt_pct(rmae), len(rerrs[n])))
        if not names:
            emit("(no profiler ran: actual speedups only)")
        if "whatif" in names:
            emit("")
            emit("## whatif delay accounting: inserted delay / (selected samples x s x 1 ms); exact = 1.00")
            for wl in workloads:
                cells = []
                for line in WORKLOADS[wl]["lines"]:
                    rs = [preds["whatif"][wl][(line, s)]["delay_ratio"] for s in speedups]
                    cells.append("%s: %s" % (line, " ".join(fmt_ratio(r) for r in rs)))
                emit("%-10s %s" % (wl, "   ".join(cells)))
        results["accuracy"] = table
        results["runs"] = runs
        results["native_base"] = {wl: truth[wl]["base_samples"] for wl in workloads}
        # Every native repeat (the metric per run), to judge the ground truth's noise afterwards.
        results["native_samples"] = {"%s %s %g" % (wl, line or "-", s): xs for (wl, line, s), xs in raw.items()}

    if "overhead" not in skip:
        walls, exps = overhead(profilers, bindir, workloads, a.overhead_reps)
        emit("")
        emit("## Overhead: median wall time over native (sampling = fixed speedup 0; full = random experiments)")
        head = "%-9s %9s" % ("workload", "native s")
        for p in profilers:
            head += " %12s %10s" % (p.name + " sampl", p.name + " full")
        emit(head)
        ratios = {(p.name, m): [] for p in profilers for m in ("sampling", "full")}
        rows = []
        for wl in workloads:
            nat = median(walls[(wl, "native", None)])
            row = "%-9s %9.2f" % (wl, nat)
            rec = {"workload": wl, "native_s": nat}
            for p in profilers:
                for m, w in (("sampling", 12), ("full", 10)):
                    r = median(walls[(wl, p.name, m)]) / nat if nat > 0 else float("nan")
                    if not math.isnan(r):
                        ratios[(p.name, m)].append(r)
                    row += " %*s" % (w, fmt_ratio(r))
                    rec["%s_%s" % (p.name, m)] = r
            emit(row)
            rows.append(rec)
        row = "%-9s %9s" % ("geomean", "")
        for p in profilers:
            for m, w in (("sampling", 12), ("full", 10)):
                xs = ratios[(p.name, m)]
                g = math.exp(statistics.mean(math.log(x) for x in xs)) if xs else float("nan")
                row += " %*s" % (w, fmt_ratio(g))
        emit(row)
        emit("")
        emit("## Speed to an answer: experiments recorded per minute of wall time (full mode)")
        per = {}
        for p in profilers:
            n = sum(sum(exps[(wl, p.name, "full")]) for wl in workloads)
            t = sum(sum(walls[(wl, p.name, "full")]) for wl in workloads)
            per[p.name] = n / (t / 60.0) if t > 0 else float("nan")
            emit("%-7s %7.1f experiments/min  (%d experiments in %.0f s)" % (p.name, per[p.name], n, t))
        if "whatif" in per and "coz" in per and per["coz"] > 0:
            emit("whatif / coz: %.2f" % (per["whatif"] / per["coz"]))
        results["overhead"] = rows
        results["experiments_per_min"] = per

    emit("")
    emit("load average at end: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    emit("(total bench time %.0f s; profiles and results in %s)" % (time.time() - started, a.out))
    with open(os.path.join(a.out, "results.txt"), "w") as f:
        f.write("\n".join(out_lines) + "\n")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)


if __name__ == "__main__":
    main()
