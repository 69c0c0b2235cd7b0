#!/usr/bin/env python3
# Frequency-estimate accuracy of the stall analysis (issue #12, DCPI section 6.2): compares each
# analysed instruction's estimated executions (the `stalls` records `whatif run` appends) with the
# exact count from `valgrind --tool=callgrind --dump-instr=yes` of the same fixed-work run, and prints
# the share of samples whose instruction's estimate is within 5%, 10% and 15% (DCPI: 73/87/92%).
# The program must be built without PIE so callgrind's addresses are the ELF's.
# Usage: accuracy.py PROFILE CALLGRIND_OUT
import json
import re
import sys


def callgrind_counts(path):
    """Instruction address -> executions (Ir), summed over contexts; call-cost lines skipped."""
    counts = {}
    positions = ["line"]
    last = [0, 0]
    skip_next = False
    for raw in open(path, errors="replace"):
        line = raw.rstrip("\n")
        if line.startswith("positions:"):
            positions = line.split()[1:]
            last = [0] * len(positions)
            continue
        if line.startswith("calls="):
            skip_next = True
            continue
        if not line or not (line[0].isdigit() or line[0] in "+-*" or line.startswith("0x")):
            continue
        fields = line.split()
        values = []
        for i in range(len(positions)):
            f = fields[i]
            if f == "*":
                v = last[i]
            elif f[0] in "+-":
                v = last[i] + int(f, 0)
            else:
                v = int(f, 0)
            values.append(v)
        last = values
        if skip_next:
            skip_next = False
            continue
        if positions[0] != "instr" or len(fields) <= len(positions):
            continue
        counts[values[0]] = counts.get(values[0], 0) + int(fields[len(positions)])
    return counts


def main():
    profile, out = sys.argv[1], sys.argv[2]
    exact = callgrind_counts(out)
    rows = []
    for raw in open(profile):
        record = json.loads(raw)
        if record.get("type") != "stalls":
            continue
        for i in record["instructions"]:
            n = exact.get(i["address"], 0)
            if i["samples"] > 0 and n > 0 and i["executions"] >= 0:
                rows.append((record["procedure"], i["address"], i["samples"], i["executions"], n, i["confidence"]))
    total = sum(r[2] for r in rows)
    if total == 0:
        sys.exit("no sampled instruction with an exact count: was the program built with -no-pie?")

    def shares(scale):
        out = []
        for limit in (0.05, 0.10, 0.15):
            within = sum(r[2] for r in rows if abs(r[3] * scale / r[4] - 1) <= limit)
            out.append(100.0 * within / total)
        return out

    print(f"{len(rows)} sampled instructions, {total:.0f} samples")
    a = shares(1.0)
    print(f"absolute (executions = F x period x nominal clock): within 5% {a[0]:.0f}%, 10% {a[1]:.0f}%, 15% {a[2]:.0f}%")
    ratios = sorted(r[4] / r[3] for r in rows if r[3] > 0 for _ in range(int(r[2])))
    median = ratios[len(ratios) // 2] if ratios else 1
    b = shares(median)
    print(f"one global scale (x{median:.3f}, absorbs the real clock rate): within 5% {b[0]:.0f}%, 10% {b[1]:.0f}%, 15% {b[2]:.0f}%")
    for confidence in ("high", "medium", "low"):
        s = sum(r[2] for r in rows if r[5] == confidence)
        ok = sum(r[2] for r in rows if r[5] == confidence and abs(r[3] * median / r[4] - 1) <= 0.15)
        if s:
            print(f"  {confidence} confidence: {100 * s / total:.0f}% of samples, {100 * ok / s:.0f}% of them within 15% (scaled)")
    by = {}
    for r in rows:
        p = by.setdefault(r[0], [0, 0])
        p[0] += r[2]
        p[1] += r[2] * (r[3] * median / r[4])
    for name, (s, weighted) in sorted(by.items(), key=lambda kv: -kv[1][0]):
        print(f"  {name}: {s:.0f} samples, sample-weighted estimate/exact {weighted / s:.2f}")


if __name__ == "__main__":
    main()
