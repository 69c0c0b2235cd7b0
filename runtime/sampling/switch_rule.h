// When a thread's sampling moves between the perf_event sampler and the CPU-time timer: a pure rule
// over the thread's CPU time and voluntary context switches, applied by the profiler thread every
// schedstat window. Unit-tested; no system calls.
#pragma once
#include <cstdint>

namespace whatif::sampling {

/// A per-thread perf event is scheduled out and in at every context switch of its thread, and
/// its hrtimer reprogrammed each time: 3-4 us a switch in a VM (a pipe ping-pong's CPU time went from
/// 0.8 s to 2.1 s for 400,000 switches). A thread that blocks or yields more often than
/// kToTimerPerCpuSecond per second of its CPU time (bursts under 0.1 ms, as a server's request
/// threads) moves to the timer, whose cost is per tick, not per switch; it moves back below
/// kToPerfPerCpuSecond, after kCalmWindows windows in a row, so a thread near one threshold does not
/// flap. Only voluntary switches count: a computing thread preempted by others on a busy machine
/// keeps perf_event's precision. The timer costs precision: its samples come at scheduler ticks
/// (4 ms here), each weighing the periods it stands for, so the delays a thread's selected samples
/// insert come in lumps that others pay late. A main thread that started two threads and joined
/// them every 0.9 ms of its CPU (2,200 blocks a CPU-second) moved at the former 2000 in some runs and
/// not in others, and its line's prediction was 4-13% in the first and 20-23% in the second (24%).
struct SwitchRule {
  static constexpr uint64_t kToTimerPerCpuSecond = 10000;  // perf costs ~3.5% of its CPU time here
  static constexpr uint64_t kToPerfPerCpuSecond = 2500;
  /// A window is judged once it holds this much evidence: CPU time or switches, whichever first.
  static constexpr uint64_t kMinRunNs = 10000000;  // 10 ms
  static constexpr uint64_t kMinSwitches = 100;
  static constexpr uint32_t kCalmWindows = 3;
};

/// One thread's position under the rule (profiler thread only).
struct SwitchState {
  bool on_timer = false;
  uint64_t run_ns = 0;    ///< CPU time in the window being gathered
  uint64_t switches = 0;  ///< voluntary context switches during it
  uint32_t calm = 0;      ///< consecutive judged windows below kToPerfPerCpuSecond while on the timer
};

/// Adds `run_ns` of CPU time and `switches` voluntary context switches to the thread's window, judges the window
/// when it holds enough evidence, and returns whether the thread should sample with the timer now.
bool next_on_timer(SwitchState& state, uint64_t run_ns, uint64_t switches);

}  // namespace whatif::sampling
