// CPU contention from outside the program: how much wall time one unit of a thread's CPU time took
// recently, counting only run-queue waits that other processes caused. Pure arithmetic, run on the
// profiler thread from each thread's /proc schedstat; the result scales delay per selected sample.
#pragma once
#include <cstdint>
#include <vector>

namespace whatif::delays {

/// One thread's scheduler times over a window (deltas of /proc/self/task/TID/schedstat).
struct SchedWindow {
  uint64_t run_ns = 0;   ///< time on a CPU
  uint64_t wait_ns = 0;  ///< time runnable but waiting on a run queue
};

/// Wall time per unit of CPU time is reported in permille; 1000 means no outside contention.
inline constexpr uint32_t kNoContention = 1000;
/// Never scale by more than this: beyond it the machine is too loaded for any prediction.
inline constexpr uint32_t kMaxContention = 4000;
/// A thread that ran less than this in the window keeps its previous figure: too little to measure.
inline constexpr uint64_t kMinRunNs = 2000000;

/// Per thread, (run + wait caused from outside) / run in permille, for a window of `window_ns` on a
/// machine whose program may use `cpus` CPUs. Only while one thread of the program runs: then
/// nobody pauses for its samples and the scaled delay is pure accounting, exact for a thread whose
/// CPU share stays what it was. While several run, the others pause by sleeping, and under outside
/// load the scheduler pays a sleeper back with a larger share when it wakes, so a scaled pause costs
/// it less than its length (a 2-stage pipeline under a load of 5: 43% predicted for 33%, against 23%
/// unscaled); those windows are left at kNoContention. Waiting is outside contention only in so far
/// as the program's own demand (sum of run + wait) fits the CPUs. Threads with too little run time
/// get 0 ("keep the previous figure").
std::vector<uint32_t> contention_permille(const std::vector<SchedWindow>& threads, uint64_t window_ns, int cpus);

}  // namespace whatif::delays
