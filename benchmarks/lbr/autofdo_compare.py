#!/usr/bin/env python3
"""GCC AutoFDO from --lbr's profile against GCC's instrumented (exact) PGO and no profile.

For each workload of branchy.c, builds (gcc -O2 -gdwarf-4):
  * plain      no profile;
  * autofdo    -fauto-profile from `whatif run --lbr` -> `whatif export --autofdo` -> create_gcov
               (--profiler=text --gcov_version=2) -> scripts/afdo_gcc12.py;
  * instrumented  -fprofile-generate, one training run, -fprofile-use (the exact profile);
then times the three, interleaved, medians over --repeat runs of the child's CPU time (user +
system: steadier than wall time on a shared machine). The training and timed runs use the same
input.

Usage: autofdo_compare.py WHATIF [--rounds MODE=N ...] [--repeat N] [--modes sort,search,...]
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "branchy.c")
CONVERT = os.path.join(HERE, "..", "..", "scripts", "afdo_gcc12.py")
ROUNDS = {"sort": 3000, "search": 3000, "interp": 3000, "collatz": 60}
FLAGS = ["gcc", "-O2", "-gdwarf-4"]


def run(command, **kwargs):
    return subprocess.run(command, check=True, **kwargs)


def timed(command):
    """CPU seconds (user + system) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run(command, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build(workdir, whatif, mode, rounds):
    binaries = {}
    plain = os.path.join(workdir, f"plain_{mode}")
    run(FLAGS + [SOURCE, "-o", plain])
    binaries["plain"] = plain
    # AutoFDO from the software branch records.
    profile = os.path.join(workdir, f"{mode}.jsonl")
    run([whatif, "run", "-q", "-o", profile, "--lbr", "--lbr-every", "1", "--end-to-end", "---", plain, mode, str(rounds)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = os.path.join(workdir, f"{mode}.afdo.txt")
    with open(text, "w") as f:
        run([whatif, "export", "--autofdo", profile], stdout=f)
    old = os.path.join(workdir, f"{mode}.old.afdo")
    run(["create_gcov", f"--binary={plain}", f"--profile={text}", "--profiler=text", f"--gcov={old}", "--gcov_version=2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    afdo = os.path.join(workdir, f"{mode}.afdo")
    run([sys.executable, CONVERT, old, afdo])
    binaries["autofdo"] = os.path.join(workdir, f"autofdo_{mode}")
    run(FLAGS + [f"-fauto-profile={afdo}", SOURCE, "-o", binaries["autofdo"]])
    # Instrumented PGO: the exact counts.
    gen = os.path.join(workdir, f"gen_{mode}")
    pgo_dir = os.path.join(workdir, f"pgo_{mode}")
    run(FLAGS + [f"-fprofile-generate={pgo_dir}", SOURCE, "-o", gen])
    run([gen, mode, str(rounds)], stdout=subprocess.DEVNULL)
    binaries["instrumented"] = os.path.join(workdir, f"pgo_{mode}.bin")
    run(FLAGS + [f"-fprofile-use={pgo_dir}", "-Wno-missing-profile", SOURCE, "-o", binaries["instrumented"]])
    return binaries


def main():
    args = sys.argv[1:]
    repeat, modes = 7, list(ROUNDS)
    if "--repeat" in args:
        i = args.index("--repeat")
        repeat = int(args[i + 1])
        del args[i:i + 2]
    if "--modes" in args:
        i = args.index("--modes")
        modes = args[i + 1].split(",")
        del args[i:i + 2]
    while "--rounds" in args:
        i = args.index("--rounds")
        mode, count = args[i + 1].split("=")
        ROUNDS[mode] = int(count)
        del args[i:i + 2]
    whatif = args[0]
    with open("/proc/loadavg") as f:
        print("loadavg before:", f.read().strip())
    with tempfile.TemporaryDirectory() as workdir:
        for mode in modes:
            binaries = build(workdir, whatif, mode, ROUNDS[mode])
            times = {name: [] for name in binaries}
            for _ in range(repeat):
                for name, path in binaries.items():
                    times[name].append(timed([path, mode, str(ROUNDS[mode])]))
            base = statistics.median(times["plain"])
            for name in binaries:
                median = statistics.median(times[name])
                spread = max(times[name]) - min(times[name])
                print(f"{mode:8} {name:13} {median:7.3f} s CPU (range {spread:.3f})  speedup {100 * (base / median - 1):+5.1f}%")
    with open("/proc/loadavg") as f:
        print("loadavg after:", f.read().strip())


if __name__ == "__main__":
    main()
