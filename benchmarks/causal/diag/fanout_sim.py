#!/usr/bin/env python3
"""Replays whatif's delay rules on asyncfan's shape (std::async fan-out) with native timings and no
profiler cost: what the rules themselves predict. Offline model (stdlib), not the runtime.

Shape: per round the main thread runs B (TB us of CPU) alone, creates 3 tasks (CREATE us each) and
joins them; each task runs A (TA us of CPU). Two CPUs are shared equally by the runnable threads
(processor sharing), so the task phase takes about 1.5 TA (native: 3.6 ms a round, A at 50% saves
35%). Rules: a thread samples itself every P of its CPU time (first period uniform in (0, P]); a
sample of the selected line raises its clock by s*P*scale, the global clock to the max; at each
sample a thread pays what it owes by spinning (its CPU share kept, owed/scale of CPU time); a thread
pays before joining and before it exits; the joiner is credited up to the global clock when woken.
scale: `exact` = runnable threads / CPUs at the sample, `one` = unscaled, `fixed X`.

Usage: fanout_sim.py LINE S MODE [X]     (env: P us (1000), R rounds (150), DT step us (4))
Findings (R=150): truth 34.7-34.8%. one: 18.0% (what the runtime credits while its 20-ms window
says the program fits its CPUs: 15-18% measured); exact: 29.1%; the rest is sampling
granularity, a task of 1.7 ms of CPU gets 1 or 2 samples and the join waits for the task whose
samples fell short (max over tasks): P=300 gives 32.6%, P=100 34.1%.
"""
import os
import random
import sys

P_US = float(os.environ.get("P", "1000"))
ROUNDS = int(os.environ.get("R", "150"))
DT = float(os.environ.get("DT", "4"))


class Thread:
    def __init__(self, rnd, work, local, line):
        self.work = work
        self.local = local
        self.line = line
        self.to_sample = rnd.uniform(0, P_US)
        self.spin_cpu = 0.0
        self.done = False


def run(line, s, mode, fixed=1.5, native=False, seed=1, TA=1680.0, TB=1000.0, CREATE=40.0, CPUS=2):
    """Returns (wall time, global delay) of ROUNDS rounds."""
    rnd = random.Random(seed)
    now = 0.0
    G = 0.0
    D = 0.0

    def scale(n):
        if mode == "exact":
            return max(1.0, n / CPUS)
        return 1.0 if mode == "one" else fixed

    main = Thread(rnd, 0, 0.0, "B")
    sped = (lambda l: 1 - s if native and l == line else 1)
    for _ in range(ROUNDS):
        main.work, main.line = TB * sped("B"), "B"
        tasks, phase, created = [], "B", 0
        while True:
            if main.work <= 0 and main.spin_cpu <= 0:
                if phase == "B":
                    phase, main.work, main.line = "create", CREATE, "create"
                    continue
                if phase == "create":
                    if created < 3:
                        tasks.append(Thread(rnd, TA * sped("A"), main.local, "A"))
                        created += 1
                        if created < 3:
                            main.work = CREATE
                            continue
                    phase = "join"
                    if G > main.local and not native:  # pays before it blocks
                        main.spin_cpu, main.local = G - main.local, G
                        continue
                if phase == "join" and all(t.done for t in tasks):
                    main.local = max(main.local, G)  # woken by a thread: credited
                    break
            for t in tasks:
                if not t.done and t.work <= 0 and t.spin_cpu <= 0:
                    t.done = True
            runnable = [t for t in [main] + tasks if not t.done and (t.work > 0 or t.spin_cpu > 0)]
            n = len(runnable)
            share = min(1.0, CPUS / n) if n else 0.0
            for t in runnable:
                c = share * DT
                if t.spin_cpu > 0:
                    t.spin_cpu -= c
                    continue
                t.work -= c
                if native:
                    continue
                t.to_sample -= c
                if t.to_sample <= 0:
                    t.to_sample += P_US
                    if t.line == line:
                        t.local += s * P_US * scale(n)
                        if t.local > G:
                            D += t.local - G
                            G = t.local
                    if G > t.local:
                        t.spin_cpu, t.local = (G - t.local) / scale(n), G
                if t is not main and t.work <= 0 and t.spin_cpu <= 0 and G > t.local:
                    t.spin_cpu, t.local = (G - t.local) / scale(n), G  # pays before it exits
            now += DT
    return now, D


def main():
    line, s, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    fixed = float(sys.argv[4]) if len(sys.argv) > 4 else 1.5
    native0, _ = run(line, 0, mode, native=True)
    native_s, _ = run(line, s, mode, native=True)
    base, _ = run(line, 0, mode, fixed, seed=2)
    raw, delay = run(line, s, mode, fixed, seed=3)
    print("native round %.0f us, sped %.0f: truth %.3f | profiled: base %.0f, raw %.0f, delay %.0f, effective %.0f: "
          "predicted %.3f" % (native0 / ROUNDS, native_s / ROUNDS, 1 - native_s / native0, base / ROUNDS, raw / ROUNDS,
                              delay / ROUNDS, (raw - delay) / ROUNDS, 1 - (raw - delay) / base))


if __name__ == "__main__":
    main()
