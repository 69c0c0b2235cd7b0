#!/usr/bin/env python3
"""Holdout known-answer tests for the whatif causal profiler.

For each program and each marked line (`// @line:A`, `// @line:B`):
  truth      = 1 - median(elapsed at scale 1-s) / median(elapsed at scale 1.0), from
               interleaved native runs (the baseline runs are shared by a program's lines), half
               of them before the program's profiled runs and half after; the truth's bootstrap
               95% interval and its drift between the halves are reported beside it;
  prediction = whatif's predicted program speedup for that line at virtual speedup s,
               from R runs of `whatif run --fixed-line FILE:LINE --fixed-speedup S`.

Usage:
  ./holdout.py                         # all programs, s=60%, 7 native reps, 3 whatif reps
  ./holdout.py --programs helper,barrier --native-reps 5 --reps 2
  ./holdout.py --smoke                 # tiny sizes: check build, native runs, one whatif run each
"""
import argparse
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SRC = os.path.join(HERE, "src")
BIN = os.path.join(REPO, "build", "benchmarks", "holdout")  # --bindir; outside the source tree
DEFAULT_WHATIF = os.path.join(REPO, "build", "launcher", "whatif")
DRIFT_PP = 5.0  # a truth that moved more than this between its two halves is reported as moved

# name -> (source file, description, item count for --smoke); the source may be a tuple of files
# (the program's own first) when a marked line lives in another one, e.g. a shared library's
PROGRAMS = {
    "prodcons": ("prodcons.cpp", "1 producer -> 3 consumers, deque+mutex+condvar (cap 8)", 100),
    "mutex4":   ("mutex4.cpp", "4 threads: non-critical work + mutex critical section", 40),
    "forkjoin": ("forkjoin.c", "serial main + 2 pthreads created/joined each round", 40),
    "libcall":  ("libcall.c", "single thread: libc calls (snprintf/memcpy/strlen) vs arithmetic", 60),
    "sleepy":   ("sleepy.c", "compute + usleep(1000) loop, one thread", 80),
    "pipeline": ("pipeline.c", "3-stage pipeline with POSIX semaphores", 100),
    "helper":   ("helper.c", "line A inside noinline helper, line B in caller", 80),
    "barrier":  ("barrier.c", "2 threads, barrier phases: unbalanced A, balanced B", 60),
    "pipe2":    ("pipe2.cpp", "2-stage pipeline, deque+mutex+2 condvars (cap 4): 1.4 / 2 ms", 100),
    "lock2":    ("lock2.c", "2 pthreads: 0.8 ms non-critical + 1.2 ms pthread_mutex section", 80),
    "amdahl":   ("amdahl.c", "serial main 2 ms, then 2 workers x 2 ms between pthread_barriers", 50),
    "sleeppace": ("sleeppace.c", "compute 1 ms + nanosleep 1 ms + compute 0.3 ms, one thread", 85),
    "memsetl2": ("memsetl2.c", "single thread: memset of a 256 KiB buffer (A) vs arithmetic (B)", 95),
    "spinpipe": ("spinpipe.c", "2 threads handing over through flags spun on without pause: 1 / 0.6 ms", 100),
    "ticker":   ("ticker.c", "fixed-rate loop: absolute 2-ms deadlines, 0.6 + 0.4 ms of work a tick", 100),
    "yieldq":   ("yieldq.cpp", "request/reply between 2 std::threads, waits in std::this_thread::yield() loops: 0.5 / 1 ms", 100),
    "ompfor":   ("ompfor.c", "OpenMP: serial master 1.5 ms, then parallel for over 4 x 0.75 ms chunks", 50),
    "taskpool": ("taskpool.cpp", "4-thread pool (condvar wait_for 50 ms): main submits 8 x 0.25 ms tasks, does 0.5 ms, waits", 120),
    "rwcache":  ("rwcache.cpp", "std::shared_mutex: 3 readers 0.3 ms shared + 0.3 ms; 1 writer 0.5 ms exclusive + 0.5 ms", 400),
    "evloop":   ("evloop.c", "epoll loop on an eventfd (0.6 ms an event) fed by a 1 ms producer, 4 outstanding", 150),
    "cvphase":  ("cvphase.cpp", "3 threads, mutex+condvar generation barrier: 2 vs 1 ms phase, then 3 x 1 ms", 45),
    "solib":    (("solib.c", "solib_lib.c"), "single thread: line A in a shared library (libholdoutwork.so), B in main, 1 ms each", 80),
    "futexsem": ("futexsem.c", "producer 1 ms -> consumer 0.6 ms, ring of 4, hand-written semaphore on raw futex syscalls", 150),
    "fileio":   ("fileio.c", "single thread: pwrite+pread of 64 KiB blocks on a /tmp file (A) vs arithmetic (B), 1 ms each", 100),
    "spawnjoin": ("spawnjoin.c", "per round 2 fresh pthreads run 1 ms (A) while main runs 0.7 ms (B), then joins", 100),
    "stdsort":  ("stdsort.cpp", "single thread: std::sort with a lambda on 33 chunks of 1024 records (A) vs arithmetic (B), 1 ms each", 100),
    "qsortcb":  ("qsortcb.c", "single thread: libc qsort with a user comparator on 20 chunks of 1024 ints (A) vs arithmetic (B), 1 ms each", 100),
    "mallocmt": ("mallocmt.c", "2 independent workers: 25000 malloc/free of 16..2048 bytes (A) + arithmetic (B), 1 ms each", 200),
    "tcprpc":   ("tcprpc.c", "request/reply between 2 pthreads over loopback TCP (TCP_NODELAY, blocking send/recv): 0.6 / 1 ms, strictly serial", 100),
    "forkwork": ("forkwork.c", "per round the parent forks 2 children that run 1 ms (A) and _exit, runs 0.7 ms (B), then waitpid()s both", 60),
    "recurse":  ("recurse.c", "single thread: leaf work (A) inside a noinline recursive binary-tree walk of depth 12 vs a loop (B), 1 ms each", 80),
    "atomicq":  ("atomicq.cpp", "C++20 atomics: 3 workers fetch_add 12 x 0.2 ms tasks (A) a round, main 0.8 ms (B) between rounds, atomic wait/notify_all", 50),
    "pipeproc": ("pipeproc.c", "2 processes over pipes: parent produces 1 ms items (A), child 0.6 ms each (B) and acks, 3 outstanding", 150),
    "pagefault": ("pagefault.c", "single thread: mmap 2 MiB + first-touch 512 pages + munmap (A, page faults, ~1 ms) vs arithmetic (B, 1 ms)", 80),
    # session 30: written by a helper that read only the contract (common.h, rcommon.rs, whatif.h, this driver)
    "msort":    ("msort.cpp", "std::async divide and conquer, depth 2: 4 leaves of 0.5 ms (A) on 2 CPUs, 3 merges of 0.3 ms (B) after future::get", 100),
    "rwlockc":  ("rwlockc.c", "pthread_rwlock_t (default, reader-preferring): writer 0.6 ms exclusive (B) + 0.6 ms; 3 readers 0.4 ms shared (A) + 0.3 ms, one per version", 100),
    "sockpool": ("sockpool.c", "client -> 2 server threads over 2 AF_UNIX socketpairs round-robin: server 0.8 ms (A), client 0.3 ms a reply (B), 2 outstanding", 300),
    "twocallers": ("twocallers.c", "line A in a noinline helper called by 2 threads: main 0.6 ms (A) + 0.6 ms (B) an item; condvar-fed background 0.3 ms (A) an item, off the critical path", 130),
    # session 33: calls glibc serves past the pthread shims (C11 threads) and clock waits
    "c11fan":   ("c11fan.c", "C11 threads: main 0.6 ms (B) while a thrd_create'd worker runs 1 ms (A), mtx_t + cnd_t hand-offs", 150),
    "timedmtx": ("timedmtx.cpp", "2 std::threads: 0.8 ms outside (A) + 1.2 ms inside (B) a std::timed_mutex taken with try_lock_for", 80),
    # session 34: stdio, whose reads and writes glibc makes past the read/write shims, and whose
    # stream locks a profiler thread must not switch on in a single-threaded program
    "stdiopipe": ("stdiopipe.c", "2 pthreads over 2 pipes through stdio (fprintf+fflush, fgets): producer 1 ms (A), consumer 0.6 ms (B) and acks, 3 outstanding", 150),
    "stdioloop": ("stdioloop.c", "single thread: putc of ~300,000 characters to /dev/null (A) vs arithmetic (B), ~1 ms each", 100),
    # session 34: a known miss, kept so the suite shows it: a sped-up experiment's backlog is drained by the next baselines
    "backlog":  ("backlog.c", "producer 2 ms (A) -> consumer 1.4 ms (B) over a pipe that never fills: producer-bound, queue unbounded", 100),
    # session 35: written by a helper that read only the contract and three example programs:
    # library time in the C++ unwinder and in iostreams, poll() on eventfds, signals as hand-offs
    # (sigwait/pthread_kill), spin locks, C++20 counting_semaphore and jthread
    "excthrow": ("excthrow.cpp", "single thread: ~1350 throw+catch of std::runtime_error (A, libstdc++/libgcc_s unwinder) vs arithmetic (B), ~1 ms each", 80),
    "ostrfmt":  ("ostrfmt.cpp", "single thread: ~1350 std::ostringstream formats of 2 doubles + an int (A, libstdc++) vs arithmetic (B), ~1 ms each", 80),
    "pollfd":   ("pollfd.c", "main 0.6 ms (B) -> worker 1 ms (A) over eventfds waited on with poll(), ack eventfd, 2 outstanding", 150),
    "sigwaitq": ("sigwaitq.c", "request/reply between 2 pthreads by signals (pthread_kill + sigwait): main 0.5 ms (B), worker 1 ms (A), strictly serial", 100),
    "spinlock2": ("spinlock2.c", "2 pthreads: 0.8 ms non-critical (A) + 1.2 ms pthread_spinlock_t section (B): lock-bound", 70),
    "semjthread": ("semjthread.cpp", "C++20 3-stage pipeline, std::jthread + counting_semaphore rings (cap 3): 0.5 / 1.5 (A) / 1 (B) ms", 100),
    # session 37: written by a helper that read only the contract and three example programs:
    # a std::thread pool with fine-grained tasks, an epoll server, std::async futures, an unbounded
    # Rust channel with a backlog, a batched condvar pipeline, and a counter polled with usleep
    "wpool4":   ("wpool4.cpp", "4 std::thread workers on a mutex+condvar task queue: main submits 24 x 0.05 ms tasks (A) a batch, waits (counter+condvar), then 0.5 ms serial (B)", 160),
    "epollsrv": ("epollsrv.c", "single-threaded epoll server, 3 client threads over AF_UNIX socketpairs: server 0.3 ms a request (A), client 0.6 ms between requests (B), closed loop", 360),
    "futures":  ("futures.cpp", "per round 3 std::async(launch::async) tasks of 0.5/0.8/1.1 ms (A) while main runs 0.5 ms (B), then future::get()s: 4 threads on 2 CPUs", 90),
    "stage3cv": ("stage3cv.c", "3-stage pthread pipeline, mutex+cond queues of 2 batches of 4 items: 0.4 / 1.2 (A) / 0.8 (B) ms an item", 176),
    "pollflag": ("pollflag.c", "2 workers 1 ms an item (A) bump an atomic counter; main polls it with usleep(200), 0.3 ms of bookkeeping (B) per new item", 340),
    # Rust (std only, rcommon.rs): std's Mutex/Condvar/channels/park are futex-based, not pthread_mutex/cond.
    # Bigger smoke sizes (~0.7 s natively): a Rust binary carries ~4 MB of std's debug info and the
    # first experiment came only ~0.4 s into a run (session 29), so ~0.2 s runs held none. Since
    # session 30 it comes ~60 ms in (a line's ranges no longer read the standard library's units).
    "rmpsc":    ("rmpsc.rs", "Rust: 2-stage pipeline, std::thread per stage, mpsc::sync_channel(4): 1.4 (A) / 2 (B) ms", 350),
    "rmutex":   ("rmutex.rs", "Rust: 2 threads, 0.8 ms outside (A) + 1.2 ms inside (B) an Arc<Mutex<u64>>: lock-bound", 175),
    "rscope":   ("rscope.rs", "Rust: per round thread::scope spawns 2 threads of 1 ms (A), implicit wait at scope end, then main 0.7 ms (B)", 400),
    "rpool":    ("rpool.rs", "Rust: the book's thread pool (4 workers, Arc<Mutex<Receiver<Job>>>): 6 x 0.3 ms jobs (A) a round, then main 0.5 ms (B)", 500),
    "rcondvar": ("rcondvar.rs", "Rust: producer 1 ms (A) -> 2 consumers 1.5 ms (B), Mutex<VecDeque> + 2 Condvars, cap 4", 560),
    "rsleep":   ("rsleep.rs", "Rust: single thread, compute 1 ms (A) + thread::sleep(800 us) + compute 0.4 ms (B)", 310),
    "rbarrier": ("rbarrier.rs", "Rust: 3 threads, std::sync::Barrier(3) each round: thread 0 1 ms (A), threads 1 and 2 0.6 ms (B) each, on 2 CPUs", 550),
    "indep":    ("indep.c", "2 threads that never interact: main 1 ms (B) + 1 ms an item; a helper spins line A until main is done (A ~0%)", 60),
    "runbounded": ("runbounded.rs", "Rust: 2 producers 0.9 ms an item (A) -> unbounded mpsc::channel -> main consumer 0.7 ms (B): backlog grows, consumer never starved (session 37)", 560),
}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def find_lines(src):
    """Return {'A': 'file:lineno', 'B': 'file:lineno'} from the `// @line:X` markers in the
    program's source file, or in each of its files when PROGRAMS names a tuple of them."""
    lines = {}
    for src_file in ((src,) if isinstance(src, str) else src):
        with open(os.path.join(SRC, src_file)) as f:
            for no, text in enumerate(f, 1):
                m = re.search(r"//\s*@line:([A-Z])\s*$", text)
                if m:
                    if m.group(1) in lines:
                        sys.exit("line %s marked twice (%s, %s:%d)" % (m.group(1), lines[m.group(1)], src_file, no))
                    lines[m.group(1)] = "%s:%d" % (src_file, no)
    return lines


def build():
    log("building programs (make -C %s)" % HERE)
    r = subprocess.run(["make", "-C", HERE, "-s", "BIN=" + BIN], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("build failed:\n" + r.stdout + r.stderr)


def run_native(prog, args, timeout=120):
    cmd = [os.path.join(BIN, prog)] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=HERE)
    if r.returncode != 0:
        raise RuntimeError("%s failed (rc %d): %s" % (" ".join(cmd), r.returncode, r.stderr))
    m = re.search(r"elapsed_ns=(\d+)", r.stdout)
    if not m:
        raise RuntimeError("%s printed no elapsed_ns: %r" % (" ".join(cmd), r.stdout))
    return int(m.group(1))


def scale_arg(line_letter, scale):
    return "scale%s=%g" % (line_letter, scale)


def interleaved_times(prog, conds, args_of, reps, first_rep=0):
    """Native runs of `prog` under each condition (program arguments `args_of(cond)`), interleaved:
    per rep, every condition once, in an order rotated by the rep (continued from `first_rep`).
    Returns {condition: [ns, ...]}."""
    conds = list(conds)
    times = {c: [] for c in conds}
    for rep in range(first_rep, first_rep + reps):
        k = rep % len(conds)
        for c in conds[k:] + conds[:k]:
            times[c].append(run_native(prog, args_of(c)))
    return times


def native_times(prog, letters, s, reps, extra, first_rep=0):
    """Interleaved native runs: per rep, the baseline and each line's sped-up run, in a rotating
    order (continued from `first_rep`). Returns {condition: [ns, ...]}, None the baseline."""
    return interleaved_times(
        prog, [None] + list(letters),  # None = baseline
        lambda c: list(extra) if c is None else [scale_arg(c, 1.0 - s / 100.0)] + list(extra), reps, first_rep)


def truth_of(base_times, line_times):
    return 100.0 * (1.0 - statistics.median(line_times) / statistics.median(base_times))


def truth_interval(base_times, line_times, draws=2000):
    """95% bootstrap interval of the truth: its own noise, which bounds how close any prediction
    can be judged to come."""
    rng = random.Random(len(base_times) * 1000003 + len(line_times))
    values = sorted(truth_of([rng.choice(base_times) for _ in base_times], [rng.choice(line_times) for _ in line_times])
                    for _ in range(draws))
    return values[int(0.025 * draws)], values[int(0.975 * draws) - 1]


def parse_report_json(text, file_line, s):
    d = json.loads(text)
    want = "/" + file_line
    for entry in d.get("lines", []):
        name = entry.get("line", "")
        if not (name == file_line or name.endswith(want)):
            continue
        for p in entry.get("points", []):
            if p.get("name") != "item":
                continue
            # the curve point at the fixed speedup; fall back to `max`
            for c in p.get("curve", []):
                if abs(c.get("speedup", -1) - s / 100.0) < 1e-6 and c.get("program_speedup") is not None:
                    return 100.0 * c["program_speedup"]
            # no curve at all (other report version): use `max`; a curve without the
            # sped-up point means no sped-up experiment finished, so no prediction
            if "curve" not in p and p.get("max") is not None:
                return 100.0 * p["max"]
    return None


def parse_profiler(spec):
    """`LAUNCHER[+VAR=VALUE ...]` (as benchmarks/causal/bench.py's --profilers): the launcher and the
    environment variables its runs get."""
    path, _, env = spec.partition("+")
    variables = dict(item.split("=", 1) for item in env.split() if "=" in item)
    return os.path.abspath(path), variables


def whatif_predict(whatif, prog, file_line, s, out_path, extra, run_args):
    whatif, variables = parse_profiler(whatif)
    cmd = [whatif, "run", "-q", "-o", out_path, "--fixed-line", file_line,
           "--fixed-speedup", str(int(s))] + run_args + ["---", os.path.join(BIN, prog)] + list(extra)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=HERE, env=dict(os.environ, **variables))
    if r.returncode != 0:
        raise RuntimeError("whatif run failed (rc %d): %s" % (r.returncode, r.stderr[-2000:]))
    r = subprocess.run([whatif, "report", "--format", "json", out_path], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("whatif report failed (rc %d): %s" % (r.returncode, r.stderr[-2000:]))
    return parse_report_json(r.stdout, file_line, s)


def fmt(v, width=7, signed=True):
    if v is None:
        return "-".rjust(width)
    return ("%+.1f" % v if signed else "%.1f" % v).rjust(width)


def smoke(args, progs):
    ok = True
    for prog in progs:
        src, desc, n_small = PROGRAMS[prog]
        lines = find_lines(src)
        extra = ["n=%d" % n_small]
        try:
            t1 = run_native(prog, extra)
            tA = run_native(prog, [scale_arg("A", 1.0 - args.speedup / 100.0)] + extra)
            letter = "A"
            fl = lines[letter]
            out_path = os.path.join(args.out, "smoke_%s_%s.jsonl" % (prog, letter))
            # short experiments so that a tiny run holds both baseline and sped-up ones
            pred = whatif_predict(args.whatif[0], prog, fl, args.speedup, out_path, extra,
                                  ["--experiment-length", "20"] + args.run_args)
            if pred is None:
                # A run of a few hundred ms holds a handful of experiments: one of forkjoin's held no
                # sped-up one in a clean-clone CI run (session 22). A second run says whether whatif
                # predicts at all, which is what the smoke test checks.
                pred = whatif_predict(args.whatif[0], prog, fl, args.speedup, out_path, extra,
                                      ["--experiment-length", "20"] + args.run_args)
            if pred is None:
                raise RuntimeError("whatif gave no prediction for %s (no sped-up experiment?)" % fl)
            log("smoke %-9s lines=%s native n=%d: %.0f ms (scaleA=%.2f: %.0f ms); whatif %s -> %+.1f%%"
                % (prog, ",".join("%s@%s" % (c, fl_c.rsplit(":", 1)[1]) for c, fl_c in sorted(lines.items())), n_small, t1 / 1e6,
                   1 - args.speedup / 100.0, tA / 1e6, fl, pred))
        except Exception as e:  # noqa: BLE001
            ok = False
            log("smoke %-9s FAILED: %s" % (prog, e))
    return 0 if ok else 1


# Programs with one thread: a line's time there is additive, so a knob that really speeds the line
# up by s saves s x (T(1) - T(0)) of the run, where T(scale) is its native run time.
SINGLE_THREADED = {"fileio", "helper", "libcall", "memsetl2", "pagefault", "qsortcb", "recurse", "sleeppace",
                   "sleepy", "solib", "stdioloop", "ticker", "excthrow", "ostrfmt", "stdsort", "rsleep"}
LINEARITY_TOLERANCE_PP = 3.0  # 3 native repeats of these programs move a truth by 1-2 points


def check_linearity(args, progs):
    """A truth is only the answer to "the line runs s faster" if the line's scale knob cuts its time
    by s. For each line, from interleaved native medians: r = (T(1) - T(1-s)) / (s (T(1) - T(0))),
    and the points the truth is off by, 100 ((T(1) - T(1-s)) - s (T(1) - T(0))) / T(1). In a
    single-threaded program r must be 1: `recurse` A's leaf loop read 1.20 (shorter chains
    overlapped the recursion around them, session 48) and its truth sat 5-6 points above what its
    share of the run allowed. With threads r measures the program's structure as much as the knob,
    so it is printed, not judged."""
    s = args.speedup / 100.0
    bad = 0
    for prog in progs:
        lines = find_lines(PROGRAMS[prog][0])
        for c in sorted(lines):
            times = interleaved_times(prog, [1.0, 1.0 - s, 0.0],
                                      lambda scale: [scale_arg(c, scale)] + args.prog_args, args.native_reps)
            t = {k: statistics.median(v) for k, v in times.items()}
            removed = t[1.0] - t[0.0]
            ratio = (t[1.0] - t[1.0 - s]) / (s * removed) if removed > 0 else float("nan")
            off_pp = 100.0 * ((t[1.0] - t[1.0 - s]) - s * removed) / t[1.0]
            if prog not in SINGLE_THREADED:
                note = "  (not judged: threads)"
            elif removed <= 0.05 * t[1.0]:
                note = "  (not judged: the knob moves under 5% of the run)"
            elif abs(off_pp) > LINEARITY_TOLERANCE_PP:
                note = "  NOT LINEAR: the truth is not this line running %d%% faster" % args.speedup
                bad += 1
            else:
                note = ""
            log("%-10s %s  T(1) %7.1f ms  T(%.2f) %7.1f  T(0) %7.1f  ratio %5.2f  truth off by %+5.1f pp%s" % (
                prog, c, t[1.0] / 1e6, 1.0 - s, t[1.0 - s] / 1e6, t[0.0] / 1e6, ratio, off_pp, note))
    return 1 if bad else 0


def main():
    global BIN
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--programs", default=",".join(PROGRAMS), help="comma-separated subset of: " + ",".join(PROGRAMS))
    ap.add_argument("--lines", default=None, help="restrict to these line letters, e.g. A or A,B")
    ap.add_argument("--native-reps", type=int, default=7)
    ap.add_argument("--reps", type=int, default=3, help="whatif runs per line")
    ap.add_argument("--speedup", type=float, default=60.0, help="line speedup s in percent")
    ap.add_argument("--whatif", action="append", default=[],
                    help="launcher binary, optionally with environment variables for its runs "
                         "(LAUNCHER+VAR=VALUE ...); repeat to compare builds, whose runs are interleaved "
                         "and judged against the same native truth (default %s)" % DEFAULT_WHATIF)
    ap.add_argument("--out", default=os.path.join(REPO, "bench-out", "holdout"), help="directory for profiles and results")
    ap.add_argument("--bindir", default=BIN, help="where the programs are built (default %(default)s)")
    ap.add_argument("--run-arg", dest="run_args", action="append", default=[],
                    help="extra argument passed to `whatif run` (repeatable), e.g. --run-arg=--pause=sleep")
    ap.add_argument("--prog-arg", dest="prog_args", action="append", default=[],
                    help="extra program argument for every run (repeatable), e.g. --prog-arg n=50 for a short test")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--smoke", action="store_true", help="tiny runs only: check that everything works")
    ap.add_argument("--check-linearity", action="store_true",
                    help="native runs only: check that each line's knob cuts its time by s (single-threaded programs)")
    args = ap.parse_args()
    BIN = os.path.abspath(args.bindir)

    progs = [p.strip() for p in args.programs.split(",") if p.strip()]
    for p in progs:
        if p not in PROGRAMS:
            sys.exit("unknown program %s (known: %s)" % (p, ",".join(PROGRAMS)))
    if not (0 < args.speedup <= 100) or args.speedup != int(args.speedup):
        sys.exit("--speedup must be an integer percent in 1..100 (whatif --fixed-speedup takes integers)")
    args.whatif = args.whatif or [DEFAULT_WHATIF]
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    if not args.no_build:
        build()
    if args.smoke:
        return smoke(args, progs)
    if args.check_linearity:
        return check_linearity(args, progs)

    want_letters = set(args.lines.split(",")) if args.lines else None
    s = args.speedup
    rows = []
    t_start = time.time()
    for prog in progs:
        src, desc, _ = PROGRAMS[prog]
        lines = find_lines(src)
        letters = [c for c in sorted(lines) if want_letters is None or c in want_letters]
        # The truth is measured around the profiled runs, half before and half after: a machine
        # whose state changes meanwhile (this VM's vCPUs have run a program 30% slower for minutes)
        # shows as a drift between the halves instead of passing for whatif's error.
        before_reps = (args.native_reps + 1) // 2
        log("[%s] native truth: %d interleaved reps x %d conditions before the profiled runs, %d after"
            % (prog, before_reps, len(letters) + 1, args.native_reps - before_reps))
        before = native_times(prog, letters, s, before_reps, args.prog_args)
        predictions = {}
        for c in letters:
            fl = lines[c]
            preds = [[] for _ in args.whatif]
            for r in range(args.reps):
                for w, whatif in enumerate(args.whatif):  # the builds interleaved, rep by rep
                    out_path = os.path.join(args.out, "%s_%s_s%d_r%d%s.jsonl" % (prog, c, int(s), r, "_w%d" % w if w else ""))
                    try:
                        p = whatif_predict(whatif, prog, fl, s, out_path, args.prog_args, args.run_args)
                    except Exception as e:  # noqa: BLE001
                        log("[%s] line %s rep %d (%s): %s" % (prog, c, r, whatif, e))
                        p = None
                    log("[%s] line %s (%s) whatif %d rep %d: %s" % (prog, c, fl, w, r, "-" if p is None else "%+.1f%%" % p))
                    if p is not None:
                        preds[w].append(p)
            predictions[c] = preds
        after = native_times(prog, letters, s, args.native_reps - before_reps, args.prog_args, first_rep=before_reps)
        base_times = before[None] + after[None]
        base = statistics.median(base_times)
        log("[%s] baseline median %.1f ms (min %.1f, max %.1f)"
            % (prog, base / 1e6, min(base_times) / 1e6, max(base_times) / 1e6))
        for c in letters:
            line_times = before[c] + after[c]
            truth = truth_of(base_times, line_times)
            drift = truth_of(after[None], after[c]) - truth_of(before[None], before[c]) if after[None] else 0.0
            low, high = truth_interval(base_times, line_times)
            log("[%s] line %s truth %+.1f%% [%+.1f, %+.1f], after the profiled runs %+.1f than before"
                % (prog, c, truth, low, high, drift))
            for w, whatif in enumerate(args.whatif):
                preds = predictions[c][w]
                pred = statistics.median(preds) if preds else None
                rows.append({
                    "program": prog, "line": c, "file_line": lines[c], "speedup": s, "whatif": whatif,
                    "native_ms": base / 1e6, "truth": truth, "truth_interval": [low, high], "truth_drift": drift,
                    "truth_times_ms": [t / 1e6 for t in line_times],
                    "base_times_ms": [t / 1e6 for t in base_times],
                    "predictions": preds, "pred": pred,
                    "error": None if pred is None else pred - truth,
                    "spread": (min(preds), max(preds)) if preds else None,
                })

    for w, whatif in enumerate(args.whatif):
        print("whatif holdout: line speedup s=%g%%, native reps %d, whatif reps %d (%s)"
              % (s, args.native_reps, args.reps, whatif))
        print("%-9s %-4s %-16s %8s %8s %-15s %7s %8s %8s  %s" % ("program", "line", "file:line", "base_ms", "truth",
                                                               "truth 95%", "drift", "pred", "error", "spread (min..max)"))
        mine = [r for r in rows if r["whatif"] == whatif]
        for r in mine:
            spread = "-" if r["spread"] is None else "%+.1f..%+.1f" % r["spread"]
            interval = "[%+.1f, %+.1f]" % tuple(r["truth_interval"])
            print("%-9s %-4s %-16s %8.1f %s %-15s %s %s %s  %s" % (r["program"], r["line"], r["file_line"], r["native_ms"],
                                                                 fmt(r["truth"], 8), interval, fmt(r["truth_drift"], 7),
                                                                 fmt(r["pred"], 8), fmt(r["error"], 8), spread))
        errs = [abs(r["error"]) for r in mine if r["error"] is not None]
        if errs:
            worst = max((r for r in mine if r["error"] is not None), key=lambda r: abs(r["error"]))
            print("mean |error| = %.1f pp over %d lines; worst |error| = %.1f pp (%s line %s)"
                  % (statistics.mean(errs), len(errs), abs(worst["error"]), worst["program"], worst["line"]))
            print("the truth's own 95%% interval: +/-%.1f pp on average (noise that every error above carries)"
                  % statistics.mean((r["truth_interval"][1] - r["truth_interval"][0]) / 2 for r in mine))
            moved = [r for r in mine if abs(r["truth_drift"]) > DRIFT_PP and r["error"] is not None]
            if moved:
                steady = [abs(r["error"]) for r in mine if abs(r["truth_drift"]) <= DRIFT_PP and r["error"] is not None]
                print("the truth moved by more than %g pp between before and after the profiled runs on %d lines (%s); "
                      "mean |error| on the other %d: %.1f pp"
                      % (DRIFT_PP, len(moved), ", ".join("%s %s %+.1f" % (r["program"], r["line"], r["truth_drift"]) for r in moved),
                         len(steady), statistics.mean(steady) if steady else float("nan")))
        missing = [r for r in mine if r["pred"] is None]
        if missing:
            print("no prediction for: " + ", ".join("%s:%s" % (r["program"], r["line"]) for r in missing))
        print()
    res_path = os.path.join(args.out, "results_s%d.json" % int(s))
    with open(res_path, "w") as f:
        json.dump({"speedup": s, "native_reps": args.native_reps, "reps": args.reps, "whatif": args.whatif,
                   "wall_s": time.time() - t_start, "rows": rows}, f, indent=1)
    log("results written to " + res_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
