#!/usr/bin/env python3
"""Server benchmark: memcached under a memcslap get load, natively and under profilers.

Builds memcached from Debian's source (-O2 -g -gdwarf-3: Coz reads DWARF 3 at most) twice: as it
is, and with a COZ_PROGRESS on the get path (proto_text.c, before each key's lookup). Then, in
interleaved rounds, times the same load in each mode:

  native          the unmodified server
  whatif-source   whatif run, the COZ_PROGRESS build (a source progress point)
  whatif-p        whatif run -p proto_text.c:LINE on the unmodified build (a code patch)
  whatif-p-trap   the same, WHATIF_PROGRESS_PATCH=off (a hardware breakpoint per visit)
  whatif-*-perf   any whatif mode with --sampler perf (perf_event on every thread, never the timer)
  whatif-*-async  any whatif mode with WHATIF_SAMPLE_TRAP=off (two perf events a thread, O_ASYNC
                  signals, instead of one that signals by SIGTRAP)
  whatif-*-nodelay  any whatif mode with --fixed-speedup 0: sampling and experiments without their
                  delays (what the virtual speedups themselves cost is the difference)
  coz             coz run, the COZ_PROGRESS build
  MODE@other      a whatif mode with the whatif of --other-build (e.g. the commit before a change)

and prints each mode's median load time over native's, the server's CPU seconds, the experiments per minute and the top
lines with their intervals from `whatif report`. With --settle, also each whatif run's time to a
confident answer (benchmarks/causal/confidence.py: the top three lines with three speedups each and
disjoint intervals); --allocation picks the experiment allocation policy of the whatif modes, so two
invocations compare policies on the same server. Exits 0 with a "skipped:" line when memcached or
memcslap cannot be had. Usage: memcached_bench.py --build BUILD [--reps N] [--gets N] [--out DIR]
[--allocation samples|adaptive] [--settle]
"""
import argparse
import json
import os
import random
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

GET_LINE = re.compile(r"^\s*it = limited_get\(key, nkey, c, exptime, should_touch, DO_UPDATE, &overflow\);")
MODES = ["native", "whatif-source", "whatif-p", "whatif-p-trap", "coz"]


class Skip(Exception):
    pass


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def find_source(cache: Path, given: str | None) -> Path:
    """A memcached source tree: --memcached-src, the cache, or `apt-get source memcached`."""
    if given:
        path = Path(given)
        if not (path / "proto_text.c").exists():
            raise Skip(f"--memcached-src {given} has no proto_text.c")
        return path
    for candidate in sorted(cache.glob("memcached-*/proto_text.c")):
        return candidate.parent
    if not shutil.which("apt-get") or not shutil.which("dpkg-source"):
        raise Skip("memcached's source is not here and apt-get/dpkg-source (dpkg-dev) are missing; "
                   "pass --memcached-src DIR")
    ensure_deb_src()
    cache.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["apt-get", "source", "-qq", "memcached"], cwd=cache, capture_output=True, text=True)
    for candidate in sorted(cache.glob("memcached-*/proto_text.c")):
        return candidate.parent
    raise Skip("`apt-get source memcached` failed: " + (result.stderr.strip().splitlines() or ["?"])[-1])


def ensure_deb_src():
    """Adds a deb-src entry beside Debian's deb entry (as root) when there is none."""
    lists = list(Path("/etc/apt").glob("sources.list.d/*.sources")) + list(Path("/etc/apt").glob("sources.list*"))
    text = "".join(p.read_text(errors="replace") for p in lists if p.is_file())
    if re.search(r"^\s*(Types:.*\bdeb-src\b|deb-src\s)", text, re.M):
        return
    main = Path("/etc/apt/sources.list.d/debian.sources")
    if os.geteuid() != 0 or not main.exists():
        raise Skip("no deb-src entry in /etc/apt and not root to add one; add one or pass --memcached-src DIR")
    stanza = main.read_text().split("\n\n")[0]  # the main archive's stanza, as its deb entry has it
    entry = re.sub(r"^Types:.*$", "Types: deb-src", stanza, flags=re.M)
    Path("/etc/apt/sources.list.d/whatif-deb-src.sources").write_text(entry.strip() + "\n")
    run(["apt-get", "update", "-qq"], stdout=subprocess.DEVNULL)


def build(source: Path, into: Path, progress: bool, include: Path) -> Path:
    """Configures and builds one variant in its own copy; returns the binary (cached)."""
    binary = into / "memcached"
    if binary.exists():
        return binary
    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(source, into, symlinks=True)
    flags = "-O2 -g -gdwarf-3"
    if progress:
        text = (into / "proto_text.c").read_text().splitlines(keepends=True)
        line = next(i for i, l in enumerate(text) if GET_LINE.match(l))
        text.insert(line, "            COZ_PROGRESS;\n")
        last_include = max(i for i, l in enumerate(text[:line]) if l.startswith("#include"))
        # After memcached's own headers (config.h defines _GNU_SOURCE); coz.h, like whatif.h,
        # redeclares dlsym weak, which memcached's -Werror -Wredundant-decls rejects.
        text[last_include + 1:last_include + 1] = ['#pragma GCC diagnostic ignored "-Wredundant-decls"\n',
                                                   "#include <whatif.h>\n"]
        (into / "proto_text.c").write_text("".join(text))
        flags += f" -I{include}"
    log = into / "build.log"
    with open(log, "w") as out:
        if subprocess.run(["./configure", f"CFLAGS={flags}"], cwd=into, stdout=out, stderr=out).returncode != 0:
            raise Skip(f"memcached's configure failed (is libevent-dev installed?): see {log}")
        if subprocess.run(["make", "-j2", "memcached"], cwd=into, stdout=out, stderr=out).returncode != 0:
            raise Skip(f"building memcached failed: see {log}")
    return binary


def get_line(source: Path) -> int:
    for number, line in enumerate((source / "proto_text.c").read_text().splitlines(), start=1):
        if GET_LINE.match(line):
            return number
    raise Skip("proto_text.c has no `it = limited_get(...)` line (another memcached version?)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited ({process.returncode}) before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("the server did not listen within a minute")


def one_run(mode, args, binaries, line, out_dir: Path, rep: int):
    """Starts the server in `mode`, runs the memcslap load, stops the server. Returns the seconds
    memcslap reports for its get phase (its wall time when it reports none)."""
    port = free_port()
    # A whatif mode with `-perf` appended runs with --sampler perf (perf_event on every thread, the
    # sampler before adaptive switching), to compare the two on the same server.
    # `-nodelay` appended: --fixed-speedup 0, every experiment a baseline, so nothing pauses.
    other = mode.endswith("@other")
    plain_mode = mode.removesuffix("@other")
    nodelay = plain_mode.endswith("-nodelay")
    plain_mode = plain_mode.removesuffix("-nodelay")
    asynchronous = plain_mode.endswith("-async")
    plain_mode = plain_mode.removesuffix("-async")
    perf = plain_mode.endswith("-perf")
    base = plain_mode.removesuffix("-perf")
    server = [str(binaries["progress" if base in ("whatif-source", "coz") else "plain"]),
              f"--threads={args.threads}", "--udp-port=0", f"--port={port}", "--listen=127.0.0.1", "--user=root"]
    env = dict(os.environ)
    profile = out_dir / f"{mode}-{rep}.jsonl"
    if mode == "native":
        cmd = server
    elif mode == "coz":
        cmd = ["coz", "run", "---"] + server
    else:
        cmd = [str(args.other_whatif if other else args.whatif), "run", "-q", "-o", str(profile)]
        if args.allocation:
            cmd += ["--allocation", args.allocation]
        if base.startswith("whatif-p"):
            cmd += ["-p", f"proto_text.c:{line}"]
        if perf:
            cmd += ["--sampler", "perf"]
        if nodelay:
            cmd += ["--fixed-speedup", "0"]
        cmd += shlex.split(args.whatif_args) + ["---"] + server
        if base == "whatif-p-trap":
            env["WHATIF_PROGRESS_PATCH"] = "off"
        if asynchronous:
            env["WHATIF_SAMPLE_TRAP"] = "off"
    cwd = out_dir / f"{mode}-{rep}.d"
    cwd.mkdir(parents=True, exist_ok=True)
    log = open(cwd / "server.log", "w")
    # A process group of its own (to stop the profiler and the server together), in this session so
    # that a --boost autogroup covers it.
    process = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, process_group=0)
    try:
        wait_for_port(port, process)
        cpu_before = server_cpu_seconds(process.pid)
        start = time.monotonic()
        load = subprocess.run([args.memcslap, f"--servers=127.0.0.1:{port}", "--test=get",
                               f"--concurrency={args.clients}", f"--execute-number={args.gets}"],
                              check=True, capture_output=True, text=True)
        elapsed = time.monotonic() - start
        # The get phase (where the progress point fires); memcslap first generates and sets the keys.
        timed = re.search(r"Time to get\s+\d+ keys by\s+\d+ threads:\s+([0-9.]+) seconds", load.stdout)
        if timed:
            elapsed = float(timed.group(1))
        cpu[(mode, rep)] = server_cpu_seconds(process.pid) - cpu_before
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
    if mode == "coz" and (cwd / "profile.coz").exists():
        shutil.move(str(cwd / "profile.coz"), out_dir / f"coz-{rep}.coz")
    return elapsed


def slowdown_interval(native, profiled, draws=2000):
    """95% interval of median(profiled) / median(native), rounds resampled (pairs kept together)."""
    rng = random.Random(len(native))
    rounds = list(zip(native, profiled))
    values = []
    for _ in range(draws):
        sample = [rng.choice(rounds) for _ in rounds]
        values.append(statistics.median(p for _, p in sample) / statistics.median(n for n, _ in sample))
    values.sort()
    return values[int(0.025 * draws)], values[int(0.975 * draws) - 1]


cpu = {}  # (mode, rep): the server's CPU seconds over the whole memcslap run (sets and gets)


def server_cpu_seconds(group: int) -> float:
    """User + system CPU seconds of the memcached process in process group `group` (/proc/PID/stat)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        # fields[0] is state (field 3); pgrp is field 5, utime 14, stime 15.
        if name == "memcached" and int(fields[2]) == group:
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def experiments_of(profile: Path):
    """(experiments, seconds profiled, mechanism of each -p point) from a whatif profile."""
    import json
    experiments, elapsed, mechanisms = 0, 0.0, []
    for line in profile.read_text().splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if record.get("type") == "experiment":
            experiments += 1
        elif record.get("type") == "runtime":
            elapsed = record.get("elapsed_ns", 0) / 1e9
        elif record.get("type") == "progress_point":
            mechanisms.append(f"{record.get('name')}: {record.get('mechanism')} {record.get('reason', '')}".strip())
    return experiments, elapsed, mechanisms


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True, help="the whatif build directory")
    parser.add_argument("--out", default="bench-out/server")
    parser.add_argument("--memcached-src", help="a memcached source tree (default: apt-get source memcached)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--gets", type=int, default=20000, help="memcslap --execute-number (keys; each client gets them all)")
    parser.add_argument("--clients", type=int, default=4, help="memcslap --concurrency")
    parser.add_argument("--threads", type=int, default=2, help="memcached -t")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--top", type=int, default=6, help="lines of `whatif report` to show per mode")
    parser.add_argument("--allocation", choices=["samples", "adaptive"],
                        help="whatif's --allocation in the whatif modes (default: whatif's own default)")
    parser.add_argument("--whatif-args", default="",
                        help="more `whatif run` options for the whatif modes, e.g. '--fixed-speedup 0' (no delays: "
                             "the overhead of sampling and experiments alone)")
    parser.add_argument("--other-build", help="another whatif build directory, for the MODE@other modes")
    parser.add_argument("--settle", action="store_true",
                        help="print each whatif run's time to a confident answer (confidence.py's test)")
    parser.add_argument("--boost", action="store_true",
                        help="raise this session's autogroup priority (root, session leader; see run.sh)")
    args = parser.parse_args()
    if args.boost:
        # As in causal/bench.py: a session of our own at autogroup nice -20 keeps other sessions'
        # builds from stretching the timed runs; children inherit it.
        try:
            if os.getsid(0) != os.getpid():
                raise OSError("not a session leader (start through setsid)")
            Path("/proc/self/autogroup").write_text("-20")
            print("runs at autogroup nice -20 (own session)")
        except OSError as why:
            print(f"priority boost unavailable: {why}")
    build_dir = Path(args.build).resolve()
    repo = Path(__file__).resolve().parents[2]
    args.whatif = next((p for p in [build_dir / "whatif", build_dir / "launcher" / "whatif", build_dir / "bin" / "whatif"]
                        if p.exists()), None)
    modes = [m for m in args.modes.split(",") if m]
    args.other_whatif = Path(args.other_build).resolve() / "launcher" / "whatif" if args.other_build else None
    try:
        if args.whatif is None:
            raise Skip(f"no whatif launcher in {build_dir}")
        if any(m.endswith("@other") for m in modes) and not (args.other_whatif and args.other_whatif.exists()):
            raise Skip("a MODE@other mode needs --other-build DIR with launcher/whatif")
        args.memcslap = shutil.which("memcslap") or shutil.which("memslap")
        if not args.memcslap:
            raise Skip("memcslap is missing (Debian package libmemcached-tools)")
        if "coz" in modes and not shutil.which("coz"):
            print("note: coz not found (Debian package coz-profiler); no coz mode", file=sys.stderr)
            modes.remove("coz")
        cache = build_dir / "bench-memcached"
        source = find_source(cache, args.memcached_src)
        binaries = {"plain": build(source, cache / "plain", False, repo / "include"),
                    "progress": build(source, cache / "progress", True, repo / "include")}
        line = get_line(source)
    except Skip as why:
        print(f"server benchmark skipped: {why}")
        return 0

    out_dir = Path(args.out).resolve()
    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    print(f"memcached {source.name}: -t {args.threads}, memcslap --test=get --concurrency={args.clients} "
          f"--execute-number={args.gets}; -p proto_text.c:{line}; {args.reps} interleaved rounds")
    times = {m: [] for m in modes}
    loads = []
    for rep in range(args.reps):
        for mode in modes:
            times[mode].append(one_run(mode, args, binaries, line, out_dir, rep))
            loads.append(os.getloadavg()[0])
        print(f"round {rep + 1}: " + ", ".join(f"{m} {times[m][-1]:.2f}s" for m in modes), flush=True)

    native = statistics.median(times["native"]) if "native" in times else None
    print(f"\nthe get phase's time (memcslap 'Time to get'), median of {args.reps}, over native's")
    # This VM runs the same load 0.7-1.5x as fast from one minute to the next: the interval says what
    # the rounds resolve (rounds resampled), the per-round ratio what interleaving removes of it.
    print(f"{'mode':<15} {'median s':>9} {'slowdown':>9} {'95% interval':>14} {'per round':>10}   runs (s)")
    for mode in modes:
        median = statistics.median(times[mode])
        ratio = f"{median / native:.2f}x" if native else "-"
        interval = per_round = "-"
        if native and mode != "native":
            low, high = slowdown_interval(times["native"], times[mode])
            interval = f"[{low:.2f}, {high:.2f}]"
            per_round = f"{statistics.median(t / n for t, n in zip(times[mode], times['native'])):.2f}x"
        print(f"{mode:<15} {median:9.3f} {ratio:>9} {interval:>14} {per_round:>10}   " + " ".join(f"{t:.2f}" for t in times[mode]))
    print(f"\nthe server's CPU seconds over the whole load (sets and gets), median of {args.reps}")
    for mode in modes:
        values = [cpu[(mode, rep)] for rep in range(args.reps) if (mode, rep) in cpu]
        if values:
            print(f"{mode:<15} {statistics.median(values):9.2f}   " + " ".join(f"{v:.2f}" for v in values))
    print(f"load average (1 min) during the runs: median {statistics.median(loads):.2f}, "
          f"max {max(loads):.2f}; /proc/loadavg now: {Path('/proc/loadavg').read_text().strip()}")
    # The figures beside the profiles: --out is emptied at the start, so a log kept there is lost.
    (out_dir / "results.json").write_text(json.dumps({
        "reps": args.reps, "get_seconds": times,
        "server_cpu_seconds": {m: [cpu[(m, r)] for r in range(args.reps) if (m, r) in cpu] for m in modes},
        "loads": loads}, indent=1))

    for mode in [m for m in modes if m.startswith("whatif")]:
        total_experiments, total_seconds = 0, 0.0
        mechanisms = []
        for rep in range(args.reps):
            profile = out_dir / f"{mode}-{rep}.jsonl"
            if profile.exists():
                e, s, mechanisms = experiments_of(profile)
                total_experiments += e
                total_seconds += s
        per_minute = total_experiments / total_seconds * 60 if total_seconds else 0
        print(f"\n{mode}: {total_experiments} experiments in {total_seconds:.1f} s profiled "
              f"({per_minute:.0f} per minute)" + ("; " + "; ".join(mechanisms) if mechanisms else ""))
        profiles = [str(out_dir / f"{mode}-{rep}.jsonl") for rep in range(args.reps)
                    if (out_dir / f"{mode}-{rep}.jsonl").exists()]
        if args.settle:
            sys.path.insert(0, str(repo / "benchmarks" / "causal"))
            import confidence  # noqa: E402  (the settled test and its profile cuts)
            import tempfile
            settled_after = []
            with tempfile.TemporaryDirectory() as tmp:
                for path in profiles:
                    seconds, k = confidence.time_to_settle(str(args.whatif), path, 4, tmp)
                    settled_after.append(seconds)
                    print(f"{mode} {Path(path).name} ({args.allocation or 'default'} allocation): " +
                          (f"settled after {seconds:.1f} s ({k} experiments)" if seconds is not None
                           else f"never settled ({k} experiments)"))
            done = [s for s in settled_after if s is not None]
            print(f"{mode}: settled in {len(done)} of {len(settled_after)} runs" +
                  (f", median {statistics.median(done):.1f} s" if done else ""))
        if profiles:
            report = subprocess.run([str(args.whatif), "report", *profiles], capture_output=True, text=True)
            lines = (report.stdout or report.stderr).splitlines()
            # The summary line, then the table's header and its first rows (the per-file lines skipped).
            summary = [l for l in lines if re.match(r"^\d+ experiments, ", l)]
            table = next((i for i, l in enumerate(lines) if l.lstrip().startswith("#  line")), None)
            print("\n".join(summary + (lines[table:table + 1 + args.top] if table is not None else lines[:14])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
