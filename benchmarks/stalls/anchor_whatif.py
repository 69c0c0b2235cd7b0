#!/usr/bin/env python3
# What-if for the frequency scale (issue #12, README "Frequency accuracy"): how close the estimates of
# `micro mix` would come if the loop trip counts were known, which the branch records do not give.
# The one unstalled procedure with a medium/high estimate is the anchor; main calls the four kernels
# from one basic block, so every kernel runs as many calls as the anchor; each kernel's executions are
# then calls x trip count (exact, from callgrind: loop head / entry, standing in for the exit edges the
# records lack) x the records' relative count (the split of a branch). Offline diagnostic only.
# Usage: anchor_whatif.py WHATIF PROFILE CALLGRIND_OUT
import json
import subprocess
import sys

import accuracy


def functions(path):
    """Function name -> (start, end) addresses, from the symbol table."""
    out = {}
    for line in subprocess.run(["nm", "-S", path], capture_output=True, text=True, check=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            out[parts[3]] = (int(parts[0], 16), int(parts[0], 16) + int(parts[1], 16))
    return out


def main():
    whatif, profile, cg = sys.argv[1], sys.argv[2], sys.argv[3]
    exact = accuracy.callgrind_counts(cg)
    records = [json.loads(line) for line in open(profile)]
    branches = [r for r in records if r.get("type") == "branches"][-1]
    bounds = functions(branches["path"])
    start = {name: b[0] for name, b in bounds.items()}

    def owner(a):
        return next((name for name, (lo, hi) in bounds.items() if lo <= a < hi), None)

    stats = [r for r in records if r.get("type") == "branch_stats"]
    crossing = sum(c for f, t, c in branches["edges"] if owner(f) != owner(t))
    print(f"records: {stats[-1]['bursts'] if stats else '?'} bursts, {sum(c for _, _, c in branches['edges'])} taken "
          f"edges, {crossing} of them between procedures (calls, returns: the only way to a trip count)")

    def relative(a):
        return sum(c for s, e, c in branches["ranges"] if s <= a <= e)

    rows = [r for r in accuracy.estimates(whatif, profile) if exact.get(r[1], 0) > 0 and r[3] >= 0]
    by = {}
    for r in rows:
        by.setdefault(r[0], []).append(r)
    anchors = [p for p, rs in by.items() if all(r[4] != "low" for r in rs) and p in start]
    if not anchors:
        print("no medium/high-confidence procedure to anchor on")
        return
    anchor = max(anchors, key=lambda p: sum(r[2] for r in by[p]))
    # The anchor's calls per run: its estimated executions over its exact trip count.
    a_rows = by[anchor]
    calls = sum(r[2] * r[3] / (exact[r[1]] / exact[start[anchor]]) for r in a_rows) / sum(r[2] for r in a_rows)
    total, within = 0, [0, 0, 0]
    for p, rs in sorted(by.items(), key=lambda kv: -sum(r[2] for r in kv[1])):
        low, high = bounds.get(p, (0, 0))
        head = max((a for a in exact if low <= a < high and relative(a) > 0),
                   key=relative, default=None)
        samples = sum(r[2] for r in rs)
        ratios = []
        for (_, a, s, e, c) in rs:
            if p in start and head is not None and exact.get(start[p], 0) > 0 and relative(a) > 0:
                e = calls * (exact[head] / exact[start[p]]) * relative(a) / relative(head)
            ratio = e / exact[a]
            ratios.append((s, ratio))
            total += s
            for k, limit in enumerate(accuracy.LIMITS):
                within[k] += s if abs(ratio - 1) <= limit else 0
        mean = sum(s * r for s, r in ratios) / samples
        print(f"  {p}: {samples:.0f} samples, estimate/exact {mean:.3f}")
    print(f"anchor {anchor}: {calls:.0f} calls (exact {exact[start[anchor]]}); within 5/10/15%: "
          + "/".join(f"{100 * w / total:.0f}" for w in within) + "%")


if __name__ == "__main__":
    main()
