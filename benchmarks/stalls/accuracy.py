#!/usr/bin/env python3
# Frequency-estimate accuracy of the stall analysis (issue #12, DCPI section 6.2): compares each
# sampled instruction's estimated executions (F x period x clock, from `whatif report --annotate`) with
# the exact count from `valgrind --tool=callgrind --dump-instr=yes` of the same fixed-work run, and
# prints the share of samples whose estimate is within 5%, 10% and 15% (DCPI: 73/87/92%), overall and
# per confidence class. A profile with `branches` records (whatif run --lbr) is analysed twice on the
# same samples: with the records, and with them removed (DCPI's heuristic alone).
# The program must be built without PIE so callgrind's addresses are the ELF's.
# Usage: accuracy.py WHATIF PROFILE CALLGRIND_OUT
import json
import os
import re
import subprocess
import sys
import tempfile


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


LIMITS = (0.05, 0.10, 0.15)


def within(rows, scale=1.0):
    """Shares (%) of the rows' samples whose estimate x scale is within 5, 10, 15% of the exact count."""
    total = sum(r[2] for r in rows)
    if total == 0:
        return [0.0 for _ in LIMITS]
    return [100.0 * sum(r[2] for r in rows if abs(r[3] * scale / r[4] - 1) <= limit) / total for limit in LIMITS]


ROW = re.compile(r"^\s+([0-9a-f]+)  (.*?)\s+([0-9.]+)\s+([0-9.]+)\s+(-|[0-9.e+-]+)\s+(low|medi|medium|high)\s")


def estimates(whatif, profile):
    """(procedure, address, samples, executions, confidence) of every sampled instruction of every
    procedure with samples, as `whatif report --annotate` gives them."""
    listing = subprocess.run([whatif, "report", "--procedures", profile], capture_output=True, text=True, check=True).stdout
    names = [line.split()[3] for line in listing.splitlines() if re.match(r"^\s+\d+\s+[0-9.]+%", line)]
    out, header = [], ""
    for name in names:
        if name == "(unknown)":
            continue
        text = subprocess.run([whatif, "report", "--annotate", name, profile], capture_output=True, text=True).stdout
        for line in text.splitlines():
            if line.startswith("*** Best-case") and not header:
                header = line
            m = ROW.match(line)
            if m and float(m.group(3)) > 0 and m.group(5) != "-":
                confidence = "medium" if m.group(6).startswith("medi") else m.group(6)  # the table prints 4 letters
                out.append((name, int(m.group(1), 16), float(m.group(3)), float(m.group(5)), confidence))
    return out


def report(title, rows, exact):
    rows = [(p, a, s, e, exact[a], c) for (p, a, s, e, c) in rows if exact.get(a, 0) > 0 and e >= 0]
    total = sum(r[2] for r in rows)
    print(f"== {title}")
    if total == 0:
        print("no sampled instruction with an exact count: was the program built with -no-pie?")
        return
    print(f"{len(rows)} sampled instructions, {total:.0f} samples")
    a = within(rows)
    print(f"absolute (executions = F x period x clock): within 5% {a[0]:.0f}%, 10% {a[1]:.0f}%, 15% {a[2]:.0f}%")
    for confidence in ("high", "medium", "low"):
        part = [r for r in rows if r[5] == confidence]
        s = sum(r[2] for r in part)
        if s:
            c = within(part)
            print(f"  {confidence} confidence: {100 * s / total:.0f}% of samples; of them within 5% {c[0]:.0f}%, "
                  f"10% {c[1]:.0f}%, 15% {c[2]:.0f}%")
    ratios = sorted(r[4] / r[3] for r in rows if r[3] > 0 for _ in range(int(r[2])))
    median = ratios[len(ratios) // 2] if ratios else 1
    b = within(rows, median)
    print(f"diagnostic, one global scale (x{median:.3f}): within 5% {b[0]:.0f}%, 10% {b[1]:.0f}%, 15% {b[2]:.0f}%")
    by = {}
    for r in rows:
        p = by.setdefault(r[0], [0, 0, r[5]])
        p[0] += r[2]
        p[1] += r[2] * (r[3] / r[4])
    for name, (s, weighted, confidence) in sorted(by.items(), key=lambda kv: -kv[1][0]):
        print(f"  {name}: {s:.0f} samples, sample-weighted estimate/exact {weighted / s:.2f} ({confidence})")


def main():
    whatif, profile, out = sys.argv[1], sys.argv[2], sys.argv[3]
    exact = callgrind_counts(out)
    lines = open(profile).read().splitlines()
    clock = "nominal (header cpu_mhz)"
    for line in lines:
        record = json.loads(line)
        if record.get("type") == "clock":
            clock = f"measured {record['measured_mhz']:.0f} MHz"
    has_records = any(json.loads(line).get("type") == "branches" for line in lines)
    print(f"{profile}: clock {clock}")
    if has_records:
        report("with branch records", estimates(whatif, profile), exact)
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as stripped:
        for line in lines:
            if json.loads(line).get("type") not in ("branches", "branch_stats", "stalls"):
                stripped.write(line + "\n")
    try:
        report("samples only (DCPI heuristic)", estimates(whatif, stripped.name), exact)
    finally:
        os.unlink(stripped.name)


if __name__ == "__main__":
    main()
