#!/usr/bin/env python3
"""Fidelity of --lbr's edge profile against exact jump counts from callgrind.

For each workload of branchy.c (and the integration tests' lbr_loop), runs
  valgrind --tool=callgrind --collect-jumps=yes --dump-instr=yes
for the exact taken-jump counts of the main binary, and `whatif run --lbr` for the sampled ones,
then reports the weighted overlap sum_e min(p_e, q_e) of the two normalised distributions over
jumps (conditional and unconditional jumps inside the main binary: the edges callgrind records;
calls and returns are left out of both), in [0, 1] like AutoFDO's profile_diff. Build the program
with -no-pie so callgrind's and the profile's addresses agree.

Usage: fidelity.py WHATIF BRANCHY [--every N] [--lbr-loop LBR_LOOP] [--naive] [--registers N]
Prints one line per workload: the overlap, the breakpoint stops per taken branch and the breakpoints
moved per taken branch (a stop with lookahead moves several; branch_stats).
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile


def callgrind_jumps(binary, args, workdir):
    out = os.path.join(workdir, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", "--collect-jumps=yes", "--dump-instr=yes", "--compress-pos=no",
                    "--compress-strings=no", f"--callgrind-out-file={out}", binary] + args,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    edges = collections.Counter()
    current_object = None
    pending = []
    main = os.path.realpath(binary)
    with open(out) as f:
        for line in f:
            line = line.strip()
            if line.startswith("ob="):
                current_object = os.path.realpath(line[3:].split(") ")[-1]) if line[3:] else None
            elif line.startswith("jcnd=") or line.startswith("jump="):
                kind, rest = line.split("=", 1)
                fields = rest.split()
                # jcnd=JUMPED/EXECUTED: the taken count comes first.
                count = int(fields[0].split("/")[0]) if kind == "jcnd" else int(fields[0])
                pending.append((int(fields[1], 16), count))
            elif line.startswith("0x") and pending:
                source = int(line.split()[0], 16)
                if current_object == main:
                    for target, count in pending:
                        if count > 0:
                            edges[(source, target)] += count
                pending = []
            elif pending and not line.startswith("0x"):
                pending = [] if line.startswith(("fn=", "fl=", "fi=", "fe=")) else pending
    return edges


def whatif_edges(whatif, binary, args, every, workdir, env=None):
    profile = os.path.join(workdir, "p.jsonl")
    if os.path.exists(profile):
        os.remove(profile)
    subprocess.run([whatif, "run", "-q", "-o", profile, "--lbr", "--lbr-every", str(every), "--end-to-end", "---",
                    binary] + args, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=dict(os.environ, **(env or {})))
    objects, stats = {}, None
    with open(profile) as f:
        for line in f:
            if '"branch' not in line:
                continue
            record = json.loads(line)
            if record["type"] == "branches":
                objects[record["path"]] = record
            elif record["type"] == "branch_stats":
                stats = record
    main = os.path.realpath(binary)
    edges = collections.Counter()
    for path, record in objects.items():
        if os.path.realpath(path) == main:
            for source, target, count in record["edges"]:
                edges[(source, target)] += count
    return edges, stats


def overlap(exact, sampled):
    """Weighted overlap of the two distributions over exact's jump sources."""
    sources = {source for source, _ in exact}
    sampled = {edge: count for edge, count in sampled.items() if edge[0] in sources}
    total_exact, total_sampled = sum(exact.values()), sum(sampled.values())
    if total_exact == 0 or total_sampled == 0:
        return 0.0, total_sampled
    keys = set(exact) | set(sampled)
    return sum(min(exact.get(k, 0) / total_exact, sampled.get(k, 0) / total_sampled) for k in keys), total_sampled


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("whatif")
    parser.add_argument("branchy")
    parser.add_argument("--every", type=int, default=1)
    parser.add_argument("--lbr-loop", help="the integration tests' lbr_loop, built -no-pie", default=None)
    parser.add_argument("--naive", action="store_true", help="WHATIF_LBR_NAIVE=1 (no data flow)")
    parser.add_argument("--registers", type=int, default=0, help="WHATIF_LBR_REGISTERS=N (1: no lookahead)")
    args = parser.parse_args()
    workloads = [(args.branchy, [mode, rounds], mode) for mode, rounds in
                 (("sort", "40"), ("search", "15"), ("interp", "60"), ("collatz", "6"))]
    scale = {"sort": "400", "search": "150", "interp": "600", "collatz": "60"}
    if args.lbr_loop:
        workloads.append((args.lbr_loop, ["loop", "50"], "lbr_loop"))
        workloads.append((args.lbr_loop, ["chain", "50"], "lbr_chain"))  # two memory-dependent branches per iteration
    env = {"WHATIF_LBR_NAIVE": "1"} if args.naive else {}
    if args.registers:
        env["WHATIF_LBR_REGISTERS"] = str(args.registers)
    print(f"{'workload':10} {'overlap':>8} {'edges':>8} {'bp/taken':>9} {'moves/taken':>12} {'lookahead':>10}")
    with tempfile.TemporaryDirectory() as workdir:
        for binary, wargs, name in workloads:
            exact = callgrind_jumps(binary, wargs, workdir)
            # whatif runs natively: a longer run for enough bursts; the distribution is per round.
            long_args = [wargs[0], scale.get(name, wargs[1])] if name in scale else [wargs[0], "600"]
            sampled, stats = whatif_edges(args.whatif, binary, long_args, args.every, workdir, env)
            score, count = overlap(exact, sampled)
            bp = stats["breakpoints_per_taken"] if stats else float("nan")
            moves = stats.get("breakpoint_moves", 0) / max(1, stats["taken"]) if stats else float("nan")
            settled = stats.get("lookahead_settled", 0) if stats else 0
            print(f"{name:10} {score:8.3f} {count:8d} {bp:9.3f} {moves:12.3f} {settled:10d}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
