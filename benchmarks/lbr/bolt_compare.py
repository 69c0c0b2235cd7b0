#!/usr/bin/env python3
"""BOLT from --lbr's profile against BOLT from an exact one.

Builds nothing: takes BINARY (linked with -Wl,--emit-relocs, -no-pie) and a workload, writes
  * lbr.fdata   with `whatif run --lbr` + `whatif export --bolt`,
  * exact.fdata from callgrind's exact jump counts (same function/offset naming as the export),
bolts both with llvm-bolt-16 (-reorder-blocks=ext-tsp -reorder-functions=hfsort) and times the
original and the two bolted binaries, interleaved, medians over --repeat runs.

Usage: bolt_compare.py WHATIF BINARY ARGS... [--repeat N]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fidelity  # noqa: E402


def function_symbols(binary):
    """(address, size, name) of sized functions, locals as NAME/N like llvm-bolt."""
    out = subprocess.run(["readelf", "-sW", binary], check=True, capture_output=True, text=True).stdout
    symbols, counts, seen_symtab = [], {}, False
    for line in out.splitlines():
        if "'.symtab'" in line:
            seen_symtab, symbols, counts = True, [], {}
        fields = line.split()
        if len(fields) < 8 or fields[3] != "FUNC" or int(fields[2], 0 if fields[2].startswith("0x") else 10) == 0:
            continue
        name = fields[7].split("@")[0]
        if fields[4] == "LOCAL":
            counts[name] = counts.get(name, 0) + 1
            name = f"{name}/{counts[name]}"
        symbols.append((int(fields[1], 16), int(fields[2], 0 if fields[2].startswith("0x") else 10), name))
    return sorted(symbols)


def to_fdata(edges, symbols):
    def where(address):
        for start, size, name in symbols:
            if start <= address < start + size:
                return name, address - start
        return None
    lines = []
    for (source, target), count in edges.items():
        a, b = where(source), where(target)
        if a and b:
            lines.append(f"1 {a[0]} {a[1]:x} 1 {b[0]} {b[1]:x} 0 {count}\n")
    return "".join(lines)


def timed(command):
    start = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def main():
    args = sys.argv[1:]
    repeat = 7
    if "--repeat" in args:
        i = args.index("--repeat")
        repeat = int(args[i + 1])
        del args[i:i + 2]
    whatif, binary, workload = args[0], os.path.abspath(args[1]), args[2:]
    with tempfile.TemporaryDirectory() as workdir:
        profile = os.path.join(workdir, "p.jsonl")
        subprocess.run([whatif, "run", "-q", "-o", profile, "--lbr", "--lbr-every", "1", "--end-to-end", "---", binary] + workload,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        lbr = subprocess.run([whatif, "export", "--bolt", profile], check=True, capture_output=True, text=True).stdout
        exact = to_fdata(fidelity.callgrind_jumps(binary, workload, workdir), function_symbols(binary))
        binaries = {"original": binary}
        for name, text in (("lbr", lbr), ("exact", exact)):
            fdata = os.path.join(workdir, f"{name}.fdata")
            with open(fdata, "w") as f:
                f.write(text)
            out = os.path.join(workdir, f"{name}.bolt")
            subprocess.run(["llvm-bolt-16", binary, "-o", out, f"-data={fdata}", "-reorder-blocks=ext-tsp",
                            "-reorder-functions=hfsort"], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            binaries[name] = out
        times = {name: [] for name in binaries}
        for _ in range(repeat):
            for name, path in binaries.items():
                times[name].append(timed([path] + workload))
        base = statistics.median(times["original"])
        for name in binaries:
            median = statistics.median(times[name])
            print(f"{name:9} {median:7.3f} s  speedup {100 * (base / median - 1):+5.1f}%")
    with open("/proc/loadavg") as f:
        print("loadavg:", f.read().strip())


if __name__ == "__main__":
    main()
