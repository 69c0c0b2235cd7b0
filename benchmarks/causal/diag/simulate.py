#!/usr/bin/env python3
"""Replays whatif's delay rules (sleeping pauses) on two workloads' shapes with native timings, no
profiler overhead: what the rules themselves predict, apart from everything a real run adds.
Offline model (stdlib), not the runtime: a time-stepped simulation of two threads.

Rules modelled (runtime/delays, runtime/threads/settle_signal.cpp, runtime/interpose/shims.cpp):
a thread samples itself every P of its CPU time; a sample in the selected line raises its own clock
and the global one by s*P; at each sample a thread pays what it owes (and, outside the line, keeps
pausing while the global clock rises: keep_up); a contended lock and a barrier pay before blocking;
an unlock settles before it wakes; a thread woken by another is credited up to the global clock; a
sleep overshoots by OV, carried as excess into the next pause.

Usage: simulate.py lock A_US B_US S P_US OV_US [SIM_US]    (lock.c: A outside a mutex, B inside)
       simulate.py amdahl A_US B_US C_US S P_US OV_US      (amdahl.c: A || B, barrier, C)
       simulate.py amdahl3 A_US B_US S P_US OV_US          (amdahl3.c: A alone, then B on two workers;
                                                            the line is B, B_US the phase's wall time)
       simulate.py spinlock LINE A_US B_US S P_US OV_US    (spinlock.c: LINE is A or B; SPIN_HOOKS below)
Prints the real period, the delay per item and the effective period (real - delay).
With ABSORB=1 in the environment, a candidate rule (not the runtime's): a debt is first absorbed by
the time the paying thread spent blocked and woken by another thread within the last P of wall time
(the waits that the continuous model's small pauses would have fitted into).
JITTER=1 draws each period from [3P/4, 5P/4) as the runtime's perf sampler does (fixed periods strobe
a cycle of a whole number of periods: `lock 800 1200 0.6 1000 60` gives 700 us fixed, 658 jittered);
NUDGE=1 has a selected sample's thread make every other running thread that owes pay at once (the
runtime's nudges, while a program fits its CPUs); LINE=A selects lock.c's line A instead of B.
"""
import os
import random
import sys

HANDOFF_US = 3.6  # futex hand-off of lock.c on this VM (native period 93.4 us for B = 90.3 us of work)
WAKE_US = 12.0    # barrier wake-up of amdahl.c on this VM


class Thread:
    def __init__(self, first_tick):
        self.cpu = 0.0
        self.next_tick = first_tick
        self.local = 0.0
        self.excess = 0.0
        self.in_line = False
        self.state = "run"  # run | pause | blocked | waking
        self.waits = []  # [end, length] of recent waits ended by another thread (ABSORB)
        self.blocked_at = None
        self.until = 0.0
        self.owed = 0.0
        self.keep_up = False
        self.then = None
        self.seg = "A"
        self.rem = 0.0


class Rules:
    def __init__(self, s, period, overshoot):
        self.delay = s * period
        self.period = period
        self.overshoot = overshoot
        self.global_ns = 0.0
        self.now = 0.0
        self.absorb = os.environ.get("ABSORB") == "1"
        self.jitter = os.environ.get("JITTER") == "1"
        self.nudge = os.environ.get("NUDGE") == "1"
        self.threads = []  # the threads a nudge reaches (set by the shapes that model it)

    def absorbed(self, t, owed):
        """ABSORB: how much of `owed` the thread's recent waits cover (consumed oldest first)."""
        t.waits = [w for w in t.waits if w[0] > self.now - self.period]
        use = min(owed, sum(w[1] for w in t.waits))
        left = use
        for w in t.waits:
            take = min(left, w[1])
            w[1] -= take
            left -= take
        return use

    def woken(self, t):
        if t.blocked_at is not None:
            t.waits.append([self.now, self.now - t.blocked_at])
            t.blocked_at = None
        self.credit(t)

    def pause(self, t, keep_up, then):
        """catch_up_held: True when the thread goes to sleep (then(t) runs once it has paid)."""
        if t.local >= self.global_ns:
            return False
        owed = self.global_ns - t.local
        if self.absorb:
            use = self.absorbed(t, owed)
            t.local += use
            owed -= use
            if owed <= 0:
                return False
        if owed <= t.excess:
            t.excess -= owed
            t.local += owed
            return False
        t.state, t.until, t.owed, t.keep_up, t.then = "pause", self.now + owed - t.excess + self.overshoot, owed, keep_up, then
        return True

    def end_pause(self, t):
        t.local += t.owed
        t.excess = self.overshoot
        t.state = "run"
        if t.keep_up and self.pause(t, True, t.then):
            return
        then, t.then = t.then, None
        if then:
            then(t)

    def settle(self, t, then):
        if not self.pause(t, not t.in_line, then):
            then(t)

    def credit(self, t):
        self.global_ns = max(self.global_ns, t.local)
        t.local = self.global_ns

    def run_cpu(self, t, dt, selected):
        """Advances a running thread by dt of CPU; True when a sample made it pause."""
        t.cpu += dt
        t.rem -= dt
        if t.cpu < t.next_tick:
            return False
        t.next_tick += self.period * (0.75 + 0.5 * random.random()) if self.jitter else self.period
        t.in_line = t.seg == selected and self.delay > 0
        if t.in_line:
            t.local += self.delay
            self.global_ns = max(self.global_ns, t.local)
            if self.nudge:
                for other in self.threads:
                    if other is not t and other.state == "run" and other.local < self.global_ns:
                        self.settle(other, lambda _: None)
        self.settle(t, lambda _: None)
        return t.state != "run"


def simulate_lock(a, b, s, period, overshoot, horizon=400000.0, dt=0.25):
    rules = Rules(s, period, overshoot)
    random.seed(1)
    threads = [Thread(period * random.random()) for _ in range(2)]
    rules.threads = threads
    for i, t in enumerate(threads):
        t.seg, t.rem = "A", a * (0.3 + 0.7 * i)
    lock = {"holder": None, "waiters": []}
    items = [0]

    def enter_b(t):
        t.seg, t.rem, t.state = "B", b, "run"

    def woken(t):
        rules.woken(t)
        enter_b(t)

    def try_lock(t):
        if lock["holder"] is None:
            lock["holder"] = t
            enter_b(t)
            return

        def block(t):  # before_blocking paid; now the real lock
            if lock["holder"] is None:
                lock["holder"] = t
                woken(t)
            else:
                t.state, t.blocked_at = "blocked", rules.now
                lock["waiters"].append(t)
        rules.settle(t, block)

    def unlock(t):
        items[0] += 1

        def release(t):
            lock["holder"] = None
            if lock["waiters"]:
                w = lock["waiters"].pop(0)
                lock["holder"] = w
                w.state, w.until = "waking", rules.now + HANDOFF_US
            t.seg, t.rem = "A", a
        rules.settle(t, release)  # before_waking

    while rules.now < horizon:
        for t in threads:
            if t.state == "pause" and rules.now >= t.until:
                rules.end_pause(t)
            elif t.state == "waking" and rules.now >= t.until:
                woken(t)
            if t.state != "run" or rules.run_cpu(t, dt, os.environ.get("LINE", "B")):
                continue
            if t.rem <= 0:
                if t.seg == "A":
                    try_lock(t)
                else:
                    unlock(t)
        rules.now += dt
    return rules.now / items[0], rules.global_ns / items[0]


def simulate_spinlock(line, a, b, s, period, overshoot, horizon=2000000.0, dt=1.0):
    """spinlock.c: A outside a user-space spin lock, B inside; a waiter spins (on its CPU, sampled)
    until the flag is free. No call is interposed, so by today's rules a thread settles only at its
    samples. SPIN_HOOKS (letters) adds Coz's blocking rules as if the spin lock were instrumented:
    s = settle before spinning (before_blocking), w = a waiter that acquires after spinning is
    credited up to the global clock (woken by a thread), r = the holder settles before it releases
    (as an unlock does before it wakes a waiter). Segments vary by +-10% so that samples do not
    lock to the items' phase."""
    hooks = os.environ.get("SPIN_HOOKS", "")
    rules = Rules(s, period, overshoot)
    random.seed(3)
    threads = [Thread(period * random.random()) for _ in range(2)]
    for i, t in enumerate(threads):
        t.seg, t.rem = "A", a * (0.3 + 0.7 * i)
    lock = {"holder": None}
    items = [0]

    def acquire(t, spun):
        lock["holder"] = t
        t.seg, t.rem = "B", b * random.uniform(0.9, 1.1)
        if spun and "w" in hooks:
            rules.credit(t)

    def release(t):
        lock["holder"] = None
        items[0] += 1
        t.seg, t.rem = "A", a * random.uniform(0.9, 1.1)

    while rules.now < horizon:
        for t in threads:
            if t.state == "pause":
                if rules.now >= t.until:
                    rules.end_pause(t)
                continue
            if t.seg == "spin" and lock["holder"] is None:
                acquire(t, True)
            if t.state != "run" or rules.run_cpu(t, dt, line):
                continue
            if t.seg == "A" and t.rem <= 0:
                if lock["holder"] is None:
                    acquire(t, False)
                else:
                    t.seg = "spin"
                    if "s" in hooks:
                        t.in_line = False
                        rules.settle(t, lambda _: None)
            elif t.seg == "B" and t.rem <= 0:
                if "r" in hooks and t.local < rules.global_ns:
                    t.in_line = False
                    rules.settle(t, release)
                else:
                    release(t)
        rules.now += dt
    return rules.now / items[0], rules.global_ns / items[0]


def simulate_amdahl(a, b, c, s, period, overshoot, rounds=300, dt=0.25):
    """Thread 0 runs A then (after the barrier) C; thread 1 runs B. Event order by hand."""
    rules = Rules(s, period, overshoot)
    t0, t1 = Thread(period * 0.37), Thread(period * 0.81)
    start = 0.0
    for _ in range(rounds):
        # Thread 1's B from start + WAKE_US: the times of its samples (its own clock stays caught up).
        ticks, cpu_at, now = [], t1.cpu, start + WAKE_US
        left = b
        while t1.next_tick - cpu_at <= left:
            step = t1.next_tick - cpu_at
            cpu_at += step
            now += step
            left -= step
            ticks.append(now)
            t1.next_tick += period
        t1.cpu = cpu_at + left
        b_end = now + left
        pending = list(ticks)

        def advance(until):
            while pending and pending[0] <= until:
                pending.pop(0)
                rules.global_ns += rules.delay

        def run(t, work, now):
            left = work
            while left > 0:
                step = min(left, t.next_tick - t.cpu)
                t.cpu += step
                left -= step
                now += step
                if t.cpu >= t.next_tick:
                    t.next_tick += period
                    now = pay(t, now)
            return now

        def pay(t, now):
            advance(now)
            while t.local < rules.global_ns:
                owed = rules.global_ns - t.local
                if owed <= t.excess:
                    t.excess -= owed
                    t.local += owed
                    break
                now += owed - t.excess + overshoot
                t.excess = overshoot
                t.local += owed
                advance(now)
            return now

        now = run(t0, a, start)
        now = pay(t0, now)  # barrier: pay before blocking
        if now < b_end:  # thread 0 waits; woken by thread 1, credited
            advance(b_end)
            t0.local = max(t0.local, rules.global_ns)
            now = b_end + WAKE_US
        advance(now)
        now = run(t0, c, now)
        start = now
    return start / rounds, rules.global_ns / rounds


def simulate_amdahl3(a, b, s, period, overshoot, rounds=300, dt=0.5):
    """The main thread runs A while both workers wait (no delay accrues); then both workers run the
    line B at once, each crediting its own samples; each pays up to the global clock at its samples
    and before the closing barrier; the barrier's last arrival credits the others."""
    rules = Rules(s, period, overshoot)
    random.seed(2)
    workers = [Thread(period * random.random()) for _ in range(2)]
    now = 0.0
    for _ in range(rounds):
        now += a  # main's serial line; the workers are blocked, credited when it wakes them
        for w in workers:
            rules.credit(w)
            w.rem, w.state, w.seg = b, "run", "B"
        rules.now = now + WAKE_US
        done = [None, None]
        while None in done:
            for i, w in enumerate(workers):
                if done[i] is not None:
                    continue
                if w.state == "pause":
                    if rules.now >= w.until:
                        rules.end_pause(w)
                    continue
                if w.rem > 0:
                    rules.run_cpu(w, dt, "B")
                    continue

                def arrive(w, i=i):
                    done[i] = rules.now
                if not rules.pause(w, False, arrive):  # before_blocking at the closing barrier
                    arrive(w)
            rules.now += dt
        now = max(done) + WAKE_US
        for w in workers:
            rules.credit(w)
    return now / rounds, rules.global_ns / rounds


def main():
    shape = sys.argv[1]
    if shape == "spinlock":
        period, delay = simulate_spinlock(sys.argv[2], *[float(x) for x in sys.argv[3:]])
        print("real period %.2f us, delay per item %.2f us, effective period %.2f us" % (period, delay, period - delay))
        return
    args = [float(x) for x in sys.argv[2:]]
    if shape == "lock":
        period, delay = simulate_lock(*args)
    elif shape == "amdahl":
        period, delay = simulate_amdahl(*args)
    elif shape == "amdahl3":
        period, delay = simulate_amdahl3(*args)
    else:
        sys.exit("shape must be lock, spinlock, amdahl or amdahl3")
    print("real period %.2f us, delay per item %.2f us, effective period %.2f us" % (period, delay, period - delay))


if __name__ == "__main__":
    main()
