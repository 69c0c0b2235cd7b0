// When a thread's sampling moves between the perf_event sampler and the CPU-time timer: a pure rule
// over the thread's CPU time and voluntary context switches, applied by the profiler thread every
// schedstat window, with thresholds from the switch cost the profiler measured. No system calls.
#pragma once
#include <cstdint>

namespace whatif::sampling {

/// A per-thread perf event is scheduled out and in at every context switch of its thread, and
/// its hrtimer restarted each time. What that costs depends on the machine: about 1 us where the
/// hrtimer is cheap to program, 10-15 us an event in this nested VM (the event's 1-ms timer is the
/// CPU's earliest, so each start and cancel reprograms the clock device: a VM exit). A pinned
/// pipe ping-pong took 7.7 us a round trip natively, 35 us with one event per thread and 52 us
/// with two (user and kernel mode, as whatif opens). The profiler measures the cost through the
/// run (os::SwitchCostProbe: a mean over rounds spread in time) and a thread that blocks or yields
/// more often than its CPU time can pay for within kPerfCostBudget moves to the timer, whose cost
/// is per tick, not per switch;
/// it moves back below a quarter of that rate, after kCalmWindows windows in a row, so a thread
/// near one threshold does not flap. Only voluntary switches count: a computing thread preempted by
/// others on a busy machine keeps perf_event's precision. The timer costs precision: its samples
/// come at scheduler ticks (4 ms here), each weighing the periods it stands for, so the delays a
/// thread's selected samples insert come in lumps that others pay late. A main thread that started
/// two threads and joined them every 0.9 ms of its CPU (2,200 blocks a CPU-second) moved at a
/// fixed 2000 in some runs and not in others, and its line's prediction was 4-13% in the first and
/// 20-23% in the second (24%). At a floor of 1000, a thread-pool's main thread (2,200-2,500 a
/// CPU-second, 0.5-ms bursts among 4 workers on 2 CPUs) moved: its line's samples fell by a third
/// (ticks come where the scheduler preempts) and its prediction from 20% to 3-14% (26%). So the
/// thresholds stay between kFewestToTimer and kMostToTimer whatever the cost: what moves is a
/// server's request thread (memcached's workers: 7,200 a CPU-second), not a thread handing over
/// millisecond work items, which pays up to 12% here for its precision.
struct SwitchRule {
  static constexpr uint64_t kMostToTimer = 10000;   // the threshold where switching is cheap
  static constexpr uint64_t kFewestToTimer = 4000;  // however dear: never below
  static constexpr double kPerfCostBudget = 0.03;   // of a thread's CPU time, spent on perf switches
  /// A window is judged once it holds this much evidence: CPU time or switches, whichever first.
  static constexpr uint64_t kMinRunNs = 10000000;  // 10 ms
  static constexpr uint64_t kMinSwitches = 100;
  static constexpr uint32_t kCalmWindows = 3;
};

/// Voluntary switches per CPU-second at which a thread moves to the timer, and below which it
/// moves back to perf_event.
struct SwitchThresholds {
  uint64_t to_timer = SwitchRule::kMostToTimer;
  uint64_t to_perf = SwitchRule::kMostToTimer / 4;
  /// For a machine where one sched-out and sched-in of one sampling event costs `switch_ns` and
  /// each thread has `events` of them: the rate whose switches cost kPerfCostBudget of the CPU
  /// time, within [kFewestToTimer, kMostToTimer]. `switch_ns` 0 (not measured): kMostToTimer.
  static SwitchThresholds for_cost(uint64_t switch_ns, uint32_t events);
};

/// The process's thresholds (set once by the profiler thread at start-up, before it judges any
/// window; forked children inherit them). Any thread.
SwitchThresholds switch_thresholds();
void set_switch_thresholds(SwitchThresholds thresholds);

/// One thread's position under the rule (profiler thread only).
struct SwitchState {
  bool on_timer = false;
  uint64_t run_ns = 0;    ///< CPU time in the window being gathered
  uint64_t switches = 0;  ///< voluntary context switches during it
  uint32_t calm = 0;      ///< consecutive judged windows below the to_perf threshold while on the timer
};

/// Adds `run_ns` of CPU time and `switches` voluntary context switches to the thread's window, judges the window
/// when it holds enough evidence, and returns whether the thread should sample with the timer now.
bool next_on_timer(SwitchState& state, uint64_t run_ns, uint64_t switches,
                   const SwitchThresholds& thresholds = SwitchThresholds{});

}  // namespace whatif::sampling
