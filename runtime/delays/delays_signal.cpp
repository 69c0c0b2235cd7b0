// Delay execution: runs on the owning thread, in its signal handler or interposed calls.
// Signal-safe only: atomics and the raw nanosleep syscall.
#include "delays/delays.h"

#include <algorithm>
#include <cstdint>

#include "delays/contention.h"
#include "os/os.h"

namespace whatif::delays {

WHATIF_SIGNAL_SAFE uint64_t GlobalDelays::raise_to(uint64_t value) {
  uint64_t current = global_ns.load(std::memory_order_relaxed);
  // acq_rel: publishes the raise to threads reading global_ns with acquire in catch_up.
  while (current < value &&
         !global_ns.compare_exchange_weak(current, value, std::memory_order_acq_rel, std::memory_order_relaxed)) {
  }
  return current < value ? value - current : 0;
}

WHATIF_SIGNAL_SAFE bool snapshot_selected_ranges(const GlobalDelays& global, RangesSnapshot& out) {
  out.count = 0;
  if (static_cast<Phase>(global.phase.load(std::memory_order_acquire)) != Phase::kRunning) return false;
  if (global.delay_size_ns.load(std::memory_order_acquire) == 0) return false;
  const SelectedRanges& ranges = global.selected;
  // Acquire pairs with publish_selected_ranges' release store of the even sequence.
  uint32_t before = ranges.sequence.load(std::memory_order_acquire);
  if (before & 1) return false;
  uint32_t count = ranges.count.load(std::memory_order_relaxed);
  if (count > SelectedRanges::kMax) return false;
  for (uint32_t i = 0; i < count; ++i) {
    out.begin[i] = ranges.begin[i].load(std::memory_order_relaxed);
    out.end[i] = ranges.end[i].load(std::memory_order_relaxed);
  }
  // Acquire fence orders the copies before the re-read: a changed sequence means a torn copy.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (ranges.sequence.load(std::memory_order_relaxed) != before) return false;
  out.count = count;
  return count > 0;
}

namespace {
RunnableThreads g_own_runnable;
RunnableTally g_own_tally;
// Set before the process has other threads (start-up, the forked child) and read from then on.
RunnableThreads* g_runnable = &g_own_runnable;
RunnableTally* g_tally = &g_own_tally;

/// Any thread, signal context too: a change of this process's counts, in the program's count and
/// in the process's tally of it.
WHATIF_SIGNAL_SAFE void add_live(int32_t delta) {
  g_tally->live.fetch_add(delta, std::memory_order_relaxed);
  g_runnable->add_live(delta);
}
/// The tally is only ever taken out of a shared count (a forked child's): a process counting alone
/// skips it, one contended atomic fewer at each end of every blocking call.
WHATIF_SIGNAL_SAFE void add_blocked(int32_t delta) {
  if (g_tally != &g_own_tally) g_tally->blocked.fetch_add(delta, std::memory_order_relaxed);
  g_runnable->add_blocked(delta);
}
/// Takes a tally's counts out of the program's count, once.
void take_out(RunnableTally& tally) {
  int32_t live = tally.live.exchange(0, std::memory_order_relaxed);
  int32_t blocked = tally.blocked.exchange(0, std::memory_order_relaxed);
  if (blocked != 0) g_runnable->add_blocked(-blocked);
  if (live != 0) g_runnable->add_live(-live);
}
}  // namespace

RunnableThreads& runnable_threads() { return *g_runnable; }

void share_runnable_threads(RunnableThreads& shared) {
  shared.cpus = g_own_runnable.cpus;
  shared.enabled = g_own_runnable.enabled;
  shared.live.store(g_own_runnable.live.load(std::memory_order_relaxed), std::memory_order_relaxed);
  shared.blocked.store(g_own_runnable.blocked.load(std::memory_order_relaxed), std::memory_order_relaxed);
  g_runnable = &shared;
  g_runnable->note_change();
}

void forget_runnable_threads(RunnableTally& tally) { take_out(tally); }

void leave_runnable_threads() {
  if (g_tally != &g_own_tally) take_out(*g_tally);
}

WHATIF_SIGNAL_SAFE void RunnableThreads::note_change() {
  if (!enabled) return;
  bool burst = more_than_cpus();
  uint64_t since = burst_since_ns.load(std::memory_order_relaxed);
  if (burst == (since != 0)) return;
  uint64_t now = os::monotonic_ns();
  if (burst) {
    burst_since_ns.compare_exchange_strong(since, now == 0 ? 1 : now, std::memory_order_relaxed);
  } else if (burst_since_ns.compare_exchange_strong(since, 0, std::memory_order_relaxed) && now > since) {
    burst_total_ns.fetch_add(now - since, std::memory_order_relaxed);
  }
}

WHATIF_SIGNAL_SAFE void RunnableThreads::add_live(int32_t delta) {
  live.fetch_add(delta, std::memory_order_relaxed);
  note_change();
}

WHATIF_SIGNAL_SAFE void RunnableThreads::add_blocked(int32_t delta) {
  blocked.fetch_add(delta, std::memory_order_relaxed);
  note_change();
}

WHATIF_SIGNAL_SAFE uint64_t RunnableThreads::burst_clock_ns() const {
  uint64_t total = burst_total_ns.load(std::memory_order_relaxed);
  uint64_t since = burst_since_ns.load(std::memory_order_relaxed);
  if (since == 0) return total;
  uint64_t now = os::monotonic_ns();
  return now > since ? total + (now - since) : total;
}

namespace {
/// Owning thread: debt from before the current experiment (or its measured part) is forgiven; the
/// thread's clock, raised to the epoch if it was behind.
WHATIF_SIGNAL_SAFE uint64_t forgive_before_epoch(const GlobalDelays& global, LocalDelays& local) {
  uint64_t mine = local.local_ns.load(std::memory_order_acquire);
  uint64_t epoch = global.epoch_start_ns.load(std::memory_order_acquire);
  if (mine >= epoch) return mine;
  local.local_ns.fetch_add(epoch - mine, std::memory_order_acq_rel);
  local.excess_ns = 0;
  return epoch;
}
}  // namespace

WHATIF_SIGNAL_SAFE uint64_t absorb_cpu_wait(const GlobalDelays& global, LocalDelays& local) {
  if (!g_runnable->enabled || global.oversubscribed.load(std::memory_order_relaxed)) return 0;
  if (static_cast<Phase>(global.phase.load(std::memory_order_acquire)) == Phase::kIdle) return 0;
  uint64_t target = global.global_ns.load(std::memory_order_acquire);
  uint64_t mine = forgive_before_epoch(global, local);
  if (mine >= target) return 0;  // nothing owed: the reading stays (no system call on this path)
  uint64_t burst = g_runnable->burst_clock_ns();
  if (burst <= local.burst_seen_ns) return 0;  // no burst since: its waits were other processes'
  uint64_t wait = 0;
  if (!os::own_run_queue_wait_ns(wait)) return 0;
  uint64_t waited = wait > local.wait_seen_ns ? wait - local.wait_seen_ns : 0;
  uint64_t bursted = burst - local.burst_seen_ns;
  local.wait_seen_ns = wait;
  local.burst_seen_ns = burst;
  uint64_t absorbed = std::min({target - mine, waited, bursted});
  if (absorbed == 0) return 0;
  // Raised, never past the global clock: a concurrent credit of this thread's own only adds.
  local.local_ns.fetch_add(absorbed, std::memory_order_acq_rel);
  return absorbed;
}

WHATIF_SIGNAL_SAFE void mark_blocked(LocalDelays& local) {
  if (!local.blocked.load(std::memory_order_relaxed)) {
    add_blocked(1);
    local.blocked_since_ns = os::monotonic_ns();
  }
  local.blocked.store(true, std::memory_order_release);  // pairs with the profiler's acquire
}

WHATIF_SIGNAL_SAFE uint64_t end_wait(LocalDelays& local) {
  if (!local.blocked.load(std::memory_order_relaxed)) return 0;
  local.wait_ended_ns = os::monotonic_ns();
  return local.wait_ended_ns > local.blocked_since_ns ? local.wait_ended_ns - local.blocked_since_ns : 0;
}

void start_burst(LocalDelays& local) {
  local.burst_wall_ns = os::monotonic_ns();
  local.burst_cpu_ns = os::thread_cpu_ns();
  local.burst_blocked_ns = local.blocked_total_ns;
}

namespace {
/// A new task's readings: its burst readings from now, its run-queue wait from schedstat's zero (its
/// wait before it first ran counts), the burst clock from `burst_seen_ns`.
void start_readings(LocalDelays& local, uint64_t burst_seen_ns) {
  start_burst(local);
  local.wait_seen_ns = 0;
  local.burst_seen_ns = burst_seen_ns;
}
}  // namespace

ThreadCreation thread_created() {
  add_live(1);
  return {true, g_runnable->burst_clock_ns()};
}

void thread_not_started(const ThreadCreation& creation) {
  if (creation.counted) add_live(-1);
}

void thread_started(LocalDelays& local, const ThreadCreation* creation) {
  bool counted = creation != nullptr && creation->counted;
  if (!counted) add_live(1);
  start_readings(local, counted ? creation->burst_clock_ns : g_runnable->burst_clock_ns());
}

void thread_exited(const LocalDelays& local) {
  if (local.blocked.load(std::memory_order_relaxed)) {
    if (g_tally != &g_own_tally) g_tally->blocked.fetch_sub(1, std::memory_order_relaxed);
    g_runnable->blocked.fetch_sub(1, std::memory_order_relaxed);
  }
  add_live(-1);
}

ThreadCreation child_forking() {
  g_runnable->add_live(1);  // not in this process's tally: the child's own takes it over
  return {true, g_runnable->burst_clock_ns()};
}

void child_not_forked(const ThreadCreation& creation) {
  if (creation.counted) g_runnable->add_live(-1);
}

void unprofiled_after_fork(const ThreadCreation& creation) {
  child_not_forked(creation);
  g_runnable = &g_own_runnable;
  g_tally = &g_own_tally;
}

void only_thread_after_fork(LocalDelays& local, RunnableTally& tally, const ThreadCreation& creation) {
  local.burst_permille.store(kNoContention, std::memory_order_relaxed);
  local.awake_permille.store(0, std::memory_order_relaxed);
  // The parent's threads still run and count; this one is new beside them.
  g_tally = &tally;
  g_tally->live.store(creation.counted ? 1 : 0, std::memory_order_relaxed);
  g_tally->blocked.store(0, std::memory_order_relaxed);
  if (!creation.counted) add_live(1);
  start_readings(local, creation.counted ? creation.burst_clock_ns : g_runnable->burst_clock_ns());
}

WHATIF_SIGNAL_SAFE void measure_burst(LocalDelays& local) {
  if (!g_runnable->enabled || local.burst_wall_ns == 0) return;
  uint64_t cpu = os::thread_cpu_ns();
  if (cpu < local.burst_cpu_ns + kBurstMinCpuNs) return;
  uint64_t now = os::monotonic_ns();
  uint64_t cpu_ns = cpu - local.burst_cpu_ns;
  uint64_t wall_ns = now - local.burst_wall_ns;
  uint64_t blocked_ns = local.blocked_total_ns - local.burst_blocked_ns;
  uint64_t awake_ns = wall_ns > blocked_ns ? wall_ns - blocked_ns : 0;
  uint64_t awake = kNoContention;
  if (awake_ns > cpu_ns) awake = std::min<uint64_t>(awake_ns * kNoContention / cpu_ns, kMaxSpinContention);
  local.awake_permille.store(static_cast<uint32_t>(awake), std::memory_order_relaxed);
  local.burst_permille.store(static_cast<uint32_t>(g_runnable->more_than_cpus() ? awake : kNoContention),
                             std::memory_order_relaxed);
  local.burst_wall_ns = now;
  local.burst_cpu_ns = cpu;
  local.burst_blocked_ns = local.blocked_total_ns;
}

WHATIF_SIGNAL_SAFE uint64_t credit_selected_sample(GlobalDelays& global, LocalDelays& local, uint32_t periods) {
  uint64_t size = global.delay_size_ns.load(std::memory_order_acquire) * periods;
  if (size == 0) return 0;
  // Under outside CPU load the sample's period of CPU time took longer in wall time; a real speedup
  // of the line gives back that wall time (the thread's share of the CPU stays the same). So does a
  // burst of the program's own threads beyond its CPUs (burst_permille). In an oversubscribed
  // program, what the sample's own period took (awake_permille): the windows' figure
  // (contention_permille) is the thread's average over its other lines too, and a pool's main
  // thread, which waited for a CPU while the tasks ran, had its serial line's samples, run alone,
  // scaled by 1.6 (the Rust book's pool: +30% predicted for +18%). Until the thread has a reading
  // of its own, the windows' figure.
  uint64_t contention = local.contention_permille.load(std::memory_order_relaxed);
  if (!global.oversubscribed.load(std::memory_order_relaxed)) {
    contention = std::max<uint64_t>(contention, local.burst_permille.load(std::memory_order_relaxed));
  } else if (uint32_t awake = local.awake_permille.load(std::memory_order_relaxed); awake != 0) {
    contention = awake;
  }
  if (contention > 1000) size = size * contention / 1000;
  uint64_t mine = local.local_ns.fetch_add(size, std::memory_order_acq_rel) + size;
  return global.raise_to(mine);
}

WHATIF_SIGNAL_SAFE void catch_up(GlobalDelays& global, LocalDelays& local) {
  // Nothing owed (most calls of a server's threads): nothing to absorb or pay either.
  if (local.local_ns.load(std::memory_order_acquire) >= global.global_ns.load(std::memory_order_acquire)) return;
  BusyScope busy(local.busy);
  if (!busy.held()) return;  // re-entered from the handler
  // A thread that pays on its return from a wait pays the same costs around its sleep as one that
  // pays in its handler (threads::settle_delays). Counted there only, a thread woken into a debt
  // lost them from its work on top of the delay, and their CPU time raised the experiment's CPU
  // bound (the twin of session 45's fix; measured as noise on 14 programs).
  const uint64_t pause_from = os::monotonic_ns();
  const uint64_t cpu_from = os::thread_cpu_ns();
  absorb_cpu_wait(global, local);
  const uint64_t asleep = catch_up_held(global, local, /*keep_up=*/false);
  count_sleeping_pause(global, local, asleep, pause_from, cpu_from);
}

WHATIF_SIGNAL_SAFE void count_sleeping_pause(GlobalDelays& global, LocalDelays& local, uint64_t asleep,
                                             uint64_t pause_from_ns, uint64_t cpu_from_ns, uint64_t extra_cpu_ns) {
  if (asleep == 0) return;
  const uint64_t spent = os::monotonic_ns() - pause_from_ns;
  if (spent > asleep) local.excess_ns += spent - asleep;
  const uint64_t cpu = os::thread_cpu_ns() - cpu_from_ns;
  global.paused_cpu_ns.fetch_add(cpu + extra_cpu_ns, std::memory_order_relaxed);
}

namespace {
/// A spinning pause stops its thread's sampling events once and restarts them when the catch-up
/// returns, however many rounds it spun. Stopping and restarting them is part of the pause: each
/// restarts an hrtimer, 15-20 us an event in this nested VM, 30-40 us a thread with kernel-mode
/// samples. The stop's CPU time counts as spun (stop_sampling returns it), the restart's as excess
/// that the next pause deducts: uncounted, every spinning pause lasted that much longer than it
/// paid for, and threads that paused at each of their samples ran 3-4% slower in the experiments
/// that paused them than in the baselines.
class SpinScope {
 public:
  WHATIF_SIGNAL_SAFE SpinScope(os::SamplingPause* pause, LocalDelays& local) : pause_(pause), local_(local) {}
  WHATIF_SIGNAL_SAFE ~SpinScope() {
    if (!stopped_) return;
    const uint64_t before = os::thread_cpu_ns();
    pause_->resume();
    const uint64_t cpu = os::thread_cpu_ns() - before;
    local_.excess_ns += cpu * permille_ / kNoContention;  // the wall time it stands for, as a spin's
  }
  SpinScope(const SpinScope&) = delete;
  SpinScope& operator=(const SpinScope&) = delete;
  /// Stops the events (once) for a spin at `permille` wall per CPU; returns the CPU time that took.
  WHATIF_SIGNAL_SAFE uint64_t stop_sampling(uint32_t permille) {
    permille_ = permille;
    if (stopped_ || pause_ == nullptr) return 0;
    const uint64_t before = os::thread_cpu_ns();
    stopped_ = pause_->stop();
    return stopped_ ? os::thread_cpu_ns() - before : 0;
  }

 private:
  os::SamplingPause* pause_;
  LocalDelays& local_;
  uint32_t permille_ = kNoContention;
  bool stopped_ = false;
};
}  // namespace

WHATIF_SIGNAL_SAFE uint64_t catch_up_held(GlobalDelays& global, LocalDelays& local, bool keep_up, bool may_spin, bool working) {
  // A thread outside the selected line is frozen in the model while another runs the line; delay
  // that accrues during its pause would otherwise be paid only after it ran on for another period.
  constexpr int kMaxRounds = 1000000;
  SpinScope spinning(local.sampling_pause, local);
  uint64_t limit = UINT64_MAX;  // without keep_up: pay what was owed on entry, not what accrues since
  uint64_t asleep = 0;           // the wall time of the sleeping pauses
  for (int round = 0; round < kMaxRounds; ++round) {
    auto phase = static_cast<Phase>(global.phase.load(std::memory_order_acquire));
    uint64_t target = std::min(global.global_ns.load(std::memory_order_acquire), limit);  // pairs with raise_to
    if (!keep_up) limit = target;
    uint64_t mine = forgive_before_epoch(global, local);
    if (mine >= target) return asleep;
    uint64_t owed = target - mine;
    uint64_t pay = owed;  // what this round settles
    bool slept_now = false;
    if (phase == Phase::kIdle) {
      local.excess_ns = 0;
    } else if (owed <= local.excess_ns) {
      local.excess_ns -= owed;
    } else {
      uint64_t request = owed - local.excess_ns;
      uint64_t slept = 0;
      uint32_t permille = local.contention_permille.load(std::memory_order_relaxed);
      uint32_t burst = local.burst_permille.load(std::memory_order_relaxed);
      // A thread paused in the middle of its work stands for that work: in an oversubscribed program
      // it would hold its CPU share, whatever its own recent figure says. That figure counts the
      // thread's earlier pauses, and sleeping ones wait for no CPU: gated on it, a pipeline stage of
      // 3 threads on 2 CPUs slept every pause, the program ran on 1.3 CPUs instead of 1.95 in the
      // experiments that paused it, and its off-critical line came out at -12% to -24% for +3% to
      // +6% (holdout `semjthread` B; -1% to +3% spinning).
      bool oversubscribed = global.oversubscribed.load(std::memory_order_relaxed) &&
                            (working || permille >= kSpinFromPermille);
      // Its share is the larger of the windows' figure and its last period's (a burst of the
      // program's own threads that the windows average away): spun at a smaller figure, the pause
      // takes more of the thread's CPU time, and lasts longer in wall time, than it pays.
      if (oversubscribed && working) permille = std::max({permille, burst, kNoContention});
      if (!oversubscribed && working) {
        // A working thread, while more of the program's threads are runnable than CPUs, in a
        // program that fits them over the windows (tasks fanned out beside the thread that runs
        // the line): a sleeper's CPU goes to a thread waiting for one, and the virtual speedup
        // erases the work that thread did in the pause as if it cost nothing. Spun at the share
        // each runnable thread has now. Sleeping, a main thread's serial line beside its
        // std::async tasks came out at +19% for +10% (holdout futures B). Not on a return from a
        // wait: a woken pipeline stage makes such a burst itself, and spinning there too lowered
        // lines of programs that fit their CPUs (a holdout slice: 3.26 pp against 2.68).
        if (uint32_t share = g_runnable->burst_share_permille(); share > kNoContention) {
          oversubscribed = true;
          permille = std::max(burst, share);
        }
      }
      if (!oversubscribed && burst >= kSpinFromPermille) {
        // A burst of the program's threads beyond its CPUs, too short for the profiler's windows:
        // the thread waits for a CPU now, so it keeps its share as in an oversubscribed program.
        oversubscribed = true;
        permille = burst;
      }
      if (may_spin && global.spin_pauses.load(std::memory_order_relaxed) && oversubscribed) {
        // Spinning keeps the thread runnable: the scheduler goes on giving it the CPU share the
        // working thread it stands for would have, where a sleeper's share goes to a thread
        // waiting for a CPU (and comes back to it later as a bonus). Only where threads do wait:
        // elsewhere a sleeper's CPU idles either way, and a spinner would take it from the
        // profiler thread and, on a hyperthread, from its sibling (a request server beside a
        // paused generator: 10-14% predicted for 17-30%). Nor where only other processes make
        // it wait: a spinning server starves a load generator on the same machine (memcached's
        // get path then looked like contention, -2500%).
        //
        // The spin is counted in the thread's CPU time: the working thread it stands for would have
        // run request / wall-per-CPU of it meanwhile, and that is what the pause must take from the
        // program. Spinning for wall time took more: a pause starts while its thread runs (in the
        // handler of a sample), and one shorter than the scheduler's slice ran whole on its CPU
        // (16-27% more CPU per ms paused than the thread's share: crowd under-predicted by 5 pp,
        // 8 threads on 2 CPUs by 7-17). Its samples are stopped meanwhile (os::SamplingPause).
        // It spins at most kSpinRoundNs of CPU time a round: a debt the profiler forgives (the
        // experiment ended, or its measured part began) ends the pause at the next round.
        uint64_t wall_per_round = kSpinRoundNs * permille / kNoContention;
        if (request > wall_per_round) {
          request = wall_per_round;
          pay = request + local.excess_ns;
        }
        const uint64_t cpu_request = request * kNoContention / permille;
        const uint64_t stopping = spinning.stop_sampling(permille);
        uint64_t spun = stopping >= cpu_request ? stopping : stopping + os::spin_cpu_ns(cpu_request - stopping);
        global.spun_cpu_ns.fetch_add(spun, std::memory_order_relaxed);
        slept = spun * permille / kNoContention;  // the wall time it stands for
      } else {
        slept = os::sleep_ns(request);
        asleep += slept;
      }
      local.paused_ns.fetch_add(slept, std::memory_order_relaxed);
      global.paused_ns.fetch_add(slept, std::memory_order_relaxed);
      local.excess_ns = slept > request ? slept - request : 0;
      slept_now = true;
    }
    // fetch_add, not store: the profiler may credit this thread concurrently.
    local.local_ns.fetch_add(pay, std::memory_order_acq_rel);
    if (pay < owed) continue;  // a spin round: the rest is still owed, unless forgiven meanwhile
    if (!keep_up || !slept_now || phase != Phase::kRunning) return asleep;
  }
  return asleep;
}

WHATIF_SIGNAL_SAFE void after_blocking(GlobalDelays& global, LocalDelays& local, bool woken_by_thread) {
  if (local.blocked.load(std::memory_order_relaxed)) {
    add_blocked(-1);
    uint64_t ended = local.wait_ended_ns != 0 ? local.wait_ended_ns : os::monotonic_ns();
    local.blocked_total_ns += ended > local.blocked_since_ns ? ended - local.blocked_since_ns : 0;
  }
  local.wait_ended_ns = 0;
  local.blocked.store(false, std::memory_order_release);
  if (woken_by_thread) credit_to_global(global, local);
  catch_up(global, local);
}

WHATIF_SIGNAL_SAFE void credit_to_global(const GlobalDelays& global, LocalDelays& local) {
  // A max, not an add of (now - global_before_block): the profiler credits samples late, so this
  // thread's own samples may have raised both its clock and the global one while it waited, and
  // adding would count them twice and push the global clock ahead of the real delays.
  uint64_t now = global.global_ns.load(std::memory_order_acquire);
  uint64_t mine = local.local_ns.load(std::memory_order_acquire);
  while (mine < now &&
         !local.local_ns.compare_exchange_weak(mine, now, std::memory_order_acq_rel, std::memory_order_acquire)) {
  }
}

WHATIF_SIGNAL_SAFE void before_yield(const GlobalDelays& global, LocalDelays& local, bool continues_loop) {
  local.yield_loop.store(continues_loop, std::memory_order_relaxed);
  local.yield_since_ns = os::monotonic_ns();
  local.in_yield.store(true, std::memory_order_relaxed);
  // The loop waited for another thread since its previous call: what accrued meanwhile was the
  // other thread's to execute (or it ran the line), as for a thread that a waker ends the wait of.
  if (continues_loop) credit_to_global(global, local);
}

WHATIF_SIGNAL_SAFE void after_yield(LocalDelays& local) {
  const uint64_t now = os::monotonic_ns();
  // A yield that others took the CPU in is a wait the thread chose, not contention of the code it
  // runs: like a blocking call's, its wall time is not awake time (measure_burst). A thread that
  // notified workers and then waited for them in std::atomic::wait (which yields before it sleeps)
  // waited behind them in its yields, and its serial line's samples, scaled by that, came out at
  // 32-42% for 24.6% (atomicq B; 21-24% with no scaling).
  if (local.yield_since_ns != 0 && now > local.yield_since_ns) local.blocked_total_ns += now - local.yield_since_ns;
  local.yield_since_ns = 0;
  local.yield_returned_ns.store(now, std::memory_order_relaxed);
  local.in_yield.store(false, std::memory_order_relaxed);
}

WHATIF_SIGNAL_SAFE bool waiting_in_yield(const LocalDelays& local, uint64_t now_ns) {
  if (local.in_yield.load(std::memory_order_relaxed)) return true;
  return local.yield_loop.load(std::memory_order_relaxed) &&
         continues_yield_loop(local.yield_returned_ns.load(std::memory_order_relaxed), now_ns);
}

}  // namespace whatif::delays
