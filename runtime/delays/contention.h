// CPU contention: how much wall time one unit of a thread's CPU time took recently. While the
// program wants more CPUs than it has (oversubscribed), pauses spin and every run-queue wait counts
// (WallPerCpu); otherwise pauses sleep and only the waits other processes caused count. Pure arithmetic, run on the profiler thread (or a forked child's
// forwarder) from each thread's /proc schedstat; the result scales delay per selected sample.
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
/// Schedstat windows summed with decaying weights (WallPerCpu, TreeDemand): each closed window's
/// weight is multiplied by this at every later one.
inline constexpr double kWindowKeep = 0.875;

/// Never scale by more than this: beyond it the machine is too loaded for any prediction.
inline constexpr uint32_t kMaxContention = 4000;
/// A thread that ran less than this in the window keeps its previous figure: too little to measure.
inline constexpr uint64_t kMinRunNs = 2000000;

/// Spinning pauses: a paused thread stays runnable and keeps the CPU share of the working thread it
/// stands for, so a sample of CPU time stands for the wall time that share made of it, whoever made
/// the thread wait: other processes, or the program's own threads when they outnumber the CPUs
/// (N busy threads on C < N CPUs: each sample of the line stands for N/C of it in wall time; N
/// threads of one line sped by 50% then predict 50%, where unscaled pauses under-predict and
/// sleeping ones miss either way). Fed cumulative schedstat readings of one thread, it closes a
/// window once the thread has run kMinRunNs, however long that takes: one of forty processes on
/// two CPUs runs 1 ms in the profiler's 20 ms. The figure is the ratio of the closed windows' run
/// and wait times summed with decaying weights (kWindowKeep): one window holds one or two scheduler
/// slices of the thread, and its own ratio jumped by a factor of two from one window to the next.
class WallPerCpu {
 public:
  /// (run + wait) / run of the closed windows, decayed, in permille, within [kNoContention,
  /// kMaxSpinContention]; 0 while the window is open (keep the previous figure). Readings that went
  /// backwards (a reused thread id) start anew.
  uint32_t update(uint64_t run_ns, uint64_t wait_ns);
  /// Some window has closed: the thread has a figure of its own.
  bool measured() const { return measured_; }

 private:
  uint64_t run_ns_ = 0;
  uint64_t wait_ns_ = 0;
  double run_sum_ = 0;   ///< run time of the closed windows, decayed
  double wait_sum_ = 0;  ///< their wait time, decayed alike
  bool known_ = false;
  bool measured_ = false;
};

/// The whole program's wall time per CPU time over a window, (run + wait) / run in permille within
/// [kNoContention, kMaxSpinContention]: the figure a thread starts from while it has none of its
/// own. A thread pool's task that lives 1.5 ms never closes a window of its own, and unscaled its
/// samples stood for a third less than the wall time they took (three std::async tasks on two
/// CPUs: 10.5% predicted for 22%).
uint32_t tree_wall_per_cpu(uint64_t run_ns, uint64_t wait_ns);

/// Whether a program (a process tree: every process's threads) wanted more CPU time than the
/// `cpus` it may use over a window: its threads' run + run-queue wait above kOversubscribedPermille
/// of the CPUs' time. `was` is the previous answer: once on, it stays on until the demand falls
/// below the CPUs' time (a pool between batches should not flip pauses back and forth).
bool oversubscribed(uint64_t run_ns, uint64_t wait_ns, uint64_t window_ns, int cpus, bool was);
inline constexpr uint32_t kOversubscribedPermille = 1100;

/// The `oversubscribed` answer for a program, fed window after window (the root's profiler thread).
/// It judges the windows' run + wait and CPU time summed with decaying weights (kWindowKeep),
/// not one window alone: schedstat advances a running thread's run time only when the scheduler
/// accounts it (at its ticks) and its wait when the wait ends, so a window can hold part of its
/// neighbour's time. Two always-runnable threads on two CPUs (a spin lock's holder and waiter) read
/// 0.88-1.15 CPUs' worth per CPU from one 20-ms window to the next, 1.00 in truth; one window over
/// 1.1 turned spinning pauses, scaled samples and the no-drain ending on for a program that fits
/// its CPUs, and the hysteresis kept them on for every window at or above 1.00 after it. The part
/// a window misses shows up in the next, so the sums are exact within a tick.
class TreeDemand {
 public:
  /// Adds one window (the tree's run and wait in it, its length, the CPUs the program may use) and
  /// returns whether the program is oversubscribed now.
  bool update(uint64_t run_ns, uint64_t wait_ns, uint64_t window_ns, int cpus);
  bool on() const { return on_; }

 private:
  double demand_sum_ = 0;    ///< run + wait of the windows, decayed
  double capacity_sum_ = 0;  ///< their CPU time (window x cpus), decayed alike
  bool on_ = false;
};

/// Spinning pauses scale up to this: 64 runnable threads per CPU.
inline constexpr uint32_t kMaxSpinContention = 64000;

/// Sleeping pauses: per thread, (run + wait caused from outside) / run in permille, for a window of `window_ns` on a
/// machine whose program may use `cpus` CPUs. Only while one thread of the program runs: then
/// nobody pauses for its samples and the scaled delay is pure accounting, exact for a thread whose
/// CPU share stays what it was. While several run, the others pause by sleeping, and under outside
/// load the scheduler pays a sleeper back with a larger share when it wakes, so a scaled pause costs
/// it less than its length (a 2-stage pipeline under a load of 5: 43% predicted for 33%, against 23%
/// unscaled); those windows are left at kNoContention. Waiting is outside contention only in so far
/// as the program's own demand (sum of run + wait) fits the CPUs. Threads with too little run time
/// get 0 ("keep the previous figure"). `exited` is what the program ran and waited outside
/// `threads`: its threads that exited during the window (read as they exited) and its forked
/// children. They ran too, so a window where short-lived threads or children ran beside one long
/// thread is not a one-thread window (a thread per task: the main thread's waits for a CPU were
/// its own tasks', not other processes').
std::vector<uint32_t> contention_permille(const std::vector<SchedWindow>& threads, uint64_t window_ns, int cpus,
                                          const SchedWindow& exited = {});

}  // namespace whatif::delays
