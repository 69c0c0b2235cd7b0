// Virtual-speedup delay accounting (Coz paper §3.4): one global delay clock and a local one per
// thread. Samples in the selected line advance a thread's local clock (the thread itself, for
// samples whose IP is in the selected line's published ranges; the profiler thread for the rest);
// every thread pauses until its local clock reaches the global one. catch_up runs on the owning
// thread, in its signal handler or in interposed calls.
#pragma once
#include <atomic>
#include <cstdint>

#include "base/signal_safe.h"
#include "os/perf_event.h"

namespace whatif::delays {

/// Experiment phases as the delay logic sees them.
enum class Phase : int {
  kIdle,      ///< no experiment: threads forgive outstanding delays
  kRunning,   ///< delays accrue and are executed
  kDraining,  ///< no new delays; threads still execute what they owe
};

/// The selected line's address ranges, published by the profiler thread at the start of an
/// experiment so that a thread can credit its own samples in that line itself, before it wakes
/// another thread, instead of up to a profiler tick later (seqlock: odd sequence while written).
struct SelectedRanges {
  static constexpr uint32_t kMax = 64;
  std::atomic<uint32_t> sequence{0};
  std::atomic<uint32_t> count{0};
  std::atomic<uint64_t> begin[kMax] = {};
  std::atomic<uint64_t> end[kMax] = {};
};

/// A thread's consistent copy of SelectedRanges (on its stack, in signal context too).
struct RangesSnapshot {
  uint32_t count = 0;
  uint64_t begin[SelectedRanges::kMax];
  uint64_t end[SelectedRanges::kMax];
  WHATIF_SIGNAL_SAFE bool contains(uint64_t address) const {
    for (uint32_t i = 0; i < count; ++i) {
      if (address >= begin[i] && address < end[i]) return true;
    }
    return false;
  }
};

/// Process-wide delay state.
struct GlobalDelays {
  std::atomic<uint64_t> global_ns{0};   ///< total delay every thread must have executed
  std::atomic<uint64_t> delay_size_ns{0};  ///< delay per selected-line sample (speedup × period × PeriodsPerSample)
  std::atomic<int> phase{static_cast<int>(Phase::kIdle)};
  /// global_ns when the current experiment started: debts from before it are forgiven.
  std::atomic<uint64_t> epoch_start_ns{0};
  /// Real time all threads (of the process tree) have slept paying delays: how much the virtual
  /// speedup really paused the program, beside global_ns, what it asked for (diagnostics).
  /// Written at every pause, by every thread: on a cache line of its own, away from the clock and
  /// phase that every blocking call reads.
  alignas(64) std::atomic<uint64_t> paused_ns{0};
  /// CPU time all threads (of the process tree) have spun paying delays: whatif's, not the
  /// program's, in the CPU time an experiment records (profile::ExperimentRecord::cpu_ns).
  std::atomic<uint64_t> spun_cpu_ns{0};
  /// CPU time all threads (of the process tree) took for their sleeping pauses: the sleep's system
  /// calls and context switches, the handler or call around it and a nudge's delivery (~80 us of a
  /// thread's CPU a pause in this VM, against ~600 us of delay). whatif's, not the program's, like
  /// spun_cpu_ns (threads::settle_delays adds it).
  std::atomic<uint64_t> paused_cpu_ns{0};
  /// Pauses spin (default) or sleep (WHATIF_PAUSE=sleep, Coz's way); set before threads run. From
  /// here on, read-mostly again.
  alignas(64) std::atomic<bool> spin_pauses{true};
  /// Written by the root's profiler every 20 ms: the program's threads, its forked children's
  /// included, wanted more CPU time than the CPUs it may use (run + run-queue wait beyond them).
  /// Only then do pauses spin and samples scale by every wait (delays/contention.h): elsewhere
  /// the waits are other processes', which may be the program's own clients.
  std::atomic<bool> oversubscribed{false};
  /// Written with `oversubscribed`: the tree's wall time per CPU time in permille (1000 when not
  /// oversubscribed). A thread without a figure of its own yet (just born, or too short-lived to
  /// close a window) scales its samples and decides whether to spin by it.
  std::atomic<uint32_t> tree_wall_per_cpu{1000};
  SelectedRanges selected;
  /// Raises global_ns to at least `value` (never lowers it). Returns how much it rose.
  WHATIF_SIGNAL_SAFE uint64_t raise_to(uint64_t value);
};

/// Profiler thread, while no experiment runs: publishes the next selected line's ranges (at most
/// SelectedRanges::kMax; samples in the others are credited by the profiler).
void publish_selected_ranges(GlobalDelays& global, const uint64_t* begins, const uint64_t* ends, uint32_t count);

/// Owning thread: copies the published ranges when an experiment with a non-zero delay runs and the
/// copy is consistent. Returns false (nothing to credit) otherwise.
WHATIF_SIGNAL_SAFE bool snapshot_selected_ranges(const GlobalDelays& global, RangesSnapshot& out);

/// RAII over LocalDelays::busy: a signal handler that interrupts the owning thread's catch-up or
/// self-crediting sees it held and leaves the work to the interrupted code. Only the owning thread
/// and its own handlers take it, so a load and a store suffice (a handler that runs between them
/// takes and releases it whole before the thread goes on); signal fences keep the compiler from
/// moving the guarded work outside. No locked instruction: the shims take it at every lock, unlock
/// and I/O call, and `xchg` was most of settle_delays' cost on memcached.
class BusyScope {
 public:
  WHATIF_SIGNAL_SAFE explicit BusyScope(std::atomic<bool>& busy)
      : busy_(busy), held_(!busy.load(std::memory_order_relaxed)) {
    if (held_) busy_.store(true, std::memory_order_relaxed);
    std::atomic_signal_fence(std::memory_order_seq_cst);
  }
  WHATIF_SIGNAL_SAFE ~BusyScope() {
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (held_) busy_.store(false, std::memory_order_relaxed);
  }
  BusyScope(const BusyScope&) = delete;
  BusyScope& operator=(const BusyScope&) = delete;
  WHATIF_SIGNAL_SAFE bool held() const { return held_; }

 private:
  std::atomic<bool>& busy_;
  bool held_;
};

/// One thread's delay state. local_ns is shared with the profiler thread; the rest belongs to the
/// owning thread.
struct LocalDelays {
  std::atomic<uint64_t> local_ns{0};     ///< delay this thread has executed or been credited
  uint64_t excess_ns = 0;                ///< oversleep carried into future pauses
  std::atomic<bool> busy{false};         ///< set while catch_up or self-crediting runs (re-entry guard;
                                         ///< the owning thread and its handlers only)
  std::atomic<uint64_t> paused_ns{0};    ///< total real time slept for delays (diagnostics)
  /// Monotonic time of the thread's newest sample signal (its handler writes it; 0: none yet). A
  /// thread sampled within the last few periods is running user code: only such a thread is
  /// nudged (threads::NudgeTable), never one inside a system call that a signal would cut short.
  std::atomic<uint64_t> last_sample_ns{0};
  /// Monotonic time another thread sent this one a nudge that its handler has not taken yet (0:
  /// none); the first of several pending, as their signals merge into one. The handler counts the
  /// time from then to its entry as paid (settle_delays' `nudge_ns`).
  std::atomic<uint64_t> nudged_at_ns{0};
  /// Wall time per unit of this thread's CPU time recently, in permille, counting its run-queue
  /// waits (with sleeping pauses only those other processes caused; delays/contention.h); written
  /// by the profiler thread, or a forked child's forwarder. A sample
  /// stands for this much of the line's wall time, so a selected sample credits delay × it / 1000
  /// (in an oversubscribed program, by awake_permille once the thread has one).
  std::atomic<uint32_t> contention_permille{1000};
  /// Inside a call that may block (between before_blocking and after_blocking): such a thread owes
  /// nothing now, it is credited or pays when it returns. Read by the profiler to end a drain.
  std::atomic<bool> blocked{false};
  /// Its newest scanned sample was in the selected line (in any frame). Written by the owning thread;
  /// read by the threads that nudge (NudgeTable::nudge_owing).
  std::atomic<bool> in_selected_line{false};
  /// The thread's sampling events, stopped while it spins (nullptr: none to stop). Set when its
  /// sampler starts, before it can be signalled.
  os::SamplingPause* sampling_pause = nullptr;
  /// Owning thread only: when its current blocking call began, and the wall time it spent in such
  /// calls and in sched_yield so far (measure_burst subtracts it from the wall time it was awake).
  uint64_t blocked_since_ns = 0;
  uint64_t blocked_total_ns = 0;
  /// Owning thread only: when its current sched_yield began (after it settled).
  uint64_t yield_since_ns = 0;
  /// Owning thread only: when its current blocking call returned, as end_wait read it for the
  /// call's shim (0: not read); after_blocking takes it rather than reading the clock again.
  uint64_t wait_ended_ns = 0;
  /// Owning thread only: its run-queue wait (os::own_run_queue_wait_ns) and the process's burst clock
  /// (RunnableThreads::burst_clock_ns) at absorb_cpu_wait's last reading. The wait starts at 0, where
  /// a new thread's schedstat starts (its wait to first run counts); the clock at its creation.
  uint64_t wait_seen_ns = 0;
  uint64_t burst_seen_ns = 0;
  /// Owning thread only: wall, CPU and blocked time at measure_burst's last reading (0: none yet).
  uint64_t burst_wall_ns = 0;
  uint64_t burst_cpu_ns = 0;
  uint64_t burst_blocked_ns = 0;
  /// Wall time per CPU time since the thread's previous reading (at least kBurstMinCpuNs of CPU
  /// time: about its last sampling period), in permille, while more of the program's threads want
  /// a CPU than there are CPUs (1000 otherwise): written by measure_burst on the owning thread,
  /// read by whoever credits its samples.
  std::atomic<uint32_t> burst_permille{1000};
  /// The same reading whoever made the thread wait (other processes too), in any program: what a
  /// selected sample stands for while the program is oversubscribed (0: no reading yet).
  std::atomic<uint32_t> awake_permille{0};
  /// Owning thread writes, its handlers read: inside sched_yield now, and when its last sched_yield
  /// returned (0: none yet) and whether that call continued a loop of yields (waiting_in_yield).
  std::atomic<bool> in_yield{false};
  std::atomic<uint64_t> yield_returned_ns{0};
  std::atomic<bool> yield_loop{false};
};

/// The program's threads that may want a CPU now: registered, and not inside a call that may
/// block; every process's of a process tree (the count lives in the tree's shared memory). A
/// fan-out of more tasks than CPUs oversubscribes the program for a few milliseconds, which the
/// profiler's 20-ms windows average away (std::async tasks of 1.3 ms, three on two CPUs, each
/// running at 2/3 speed: their samples stood for 1 ms of the line where the line took 1.5 ms of
/// the program's time).
struct RunnableThreads {
  int32_t cpus = 1;      ///< the CPUs the program may use; set at start-up
  bool enabled = false;  ///< spinning pauses with contention scaling (the defaults); set at start-up
  /// The counts move at both ends of every blocking call of every thread: on a cache line of their
  /// own, away from the settings above, which every call reads (sharing it, the read of `enabled`
  /// missed the cache at each call: 1.6% of memcached's CPU time under whatif).
  alignas(64) std::atomic<int32_t> live{0};
  std::atomic<int32_t> blocked{0};
  /// The burst clock: wall time so far during which more_than_cpus held, as the counts' changes
  /// saw it (burst_total_ns, plus now - burst_since_ns while one lasts; 0: none now).
  std::atomic<uint64_t> burst_total_ns{0};
  std::atomic<uint64_t> burst_since_ns{0};
  /// Any thread, signal context too: the program's threads outside blocking calls now.
  WHATIF_SIGNAL_SAFE int32_t runnable() const {
    return live.load(std::memory_order_relaxed) - blocked.load(std::memory_order_relaxed);
  }
  WHATIF_SIGNAL_SAFE bool more_than_cpus() const { return runnable() > cpus; }
  /// Any thread, signal context too: while more_than_cpus, the wall time per CPU time each
  /// runnable thread gets now (runnable / cpus, in permille); 1000 (kNoContention) otherwise or
  /// when counting is off.
  WHATIF_SIGNAL_SAFE uint32_t burst_share_permille() const {
    const int32_t now = runnable();
    if (!enabled || cpus <= 0 || now <= cpus) return 1000;
    return static_cast<uint32_t>(static_cast<int64_t>(now) * 1000 / cpus);
  }
  /// Any thread, signal context too: moves a count by `delta` and starts or stops the burst clock
  /// when more_than_cpus changed. Concurrent changes may misplace an edge by the time between them.
  WHATIF_SIGNAL_SAFE void add_live(int32_t delta);
  WHATIF_SIGNAL_SAFE void add_blocked(int32_t delta);
  WHATIF_SIGNAL_SAFE void note_change();
  WHATIF_SIGNAL_SAFE uint64_t burst_clock_ns() const;
};
/// The program's count: this process's, or once shared (share_runnable_threads) the tree's.
RunnableThreads& runnable_threads();

/// What one process of a tree added to the tree's RunnableThreads, so that its threads leave the
/// count with it: its own exit (leave_runnable_threads), or the root's cleanup when it vanished.
struct RunnableTally {
  std::atomic<int32_t> live{0};
  std::atomic<int32_t> blocked{0};
};
/// The root at start-up, before any fork: the program's count moves to `shared` (the process
/// tree's memory), with this process's threads counted so far and the settings. A forked child's
/// runnable threads then count beside its parent's: a parent that forks two workers on two CPUs
/// and computes meanwhile is a burst of three, as the same program with threads is, and each
/// process's waits for a CPU in it absorb its debt (absorb_cpu_wait). Counted per process, a
/// fork-per-task parent's line was predicted at 0% for 21%.
void share_runnable_threads(RunnableThreads& shared);
/// The root's profiler: a child that vanished without leaving (killed) takes its threads out.
void forget_runnable_threads(RunnableTally& tally);
/// A forked child of the tree, on its exit or exec path: its threads leave the count.
void leave_runnable_threads();

/// Owning thread, when it has new samples (threads::settle_delays): its wall time per CPU time since
/// the last reading, less the time it spent blocked, becomes its awake_permille, and its
/// burst_permille while the program has more runnable threads than CPUs (1000 otherwise). Readings
/// closer than kBurstMinCpuNs of CPU time are merged into the next.
WHATIF_SIGNAL_SAFE void measure_burst(LocalDelays& local);
inline constexpr uint64_t kBurstMinCpuNs = 200000;
/// A registered thread starts its burst readings (normal context, the thread itself).
void start_burst(LocalDelays& local);
/// A thread the program creates through the runtime counts as live from its creation, not from
/// when it first runs: a thread created into a burst waits for a CPU before it can register, and
/// that wait is the burst's (absorb_cpu_wait).
struct ThreadCreation {
  bool counted = false;         ///< RunnableThreads::live already counts the thread
  uint64_t burst_clock_ns = 0;  ///< the burst clock when it was created
};
/// The creating thread, before pthread_create: counts the new thread live.
ThreadCreation thread_created();
/// The thread was not created, or started while the runtime no longer runs: uncounts it.
void thread_not_started(const ThreadCreation& creation);
/// The calling thread joins RunnableThreads (unless `creation` counted it already) and starts its
/// burst readings (registration).
void thread_started(LocalDelays& local, const ThreadCreation* creation = nullptr);
/// The calling thread leaves RunnableThreads, out of the blocked count too if it left from a
/// blocking call (its exit, normal context).
void thread_exited(const LocalDelays& local);
/// The forking thread of a process tree, before fork(): the child's thread counts live in the tree
/// from now, as a thread does from its creation. A child runs after its parent has gone on (its
/// wait for a CPU before it first runs is the burst's); counted only once it ran, the second of a
/// parent's two children came too late, the burst never began and no child's wait absorbed its debt.
ThreadCreation child_forking();
/// The forking thread, when fork() failed: uncounts the child.
void child_not_forked(const ThreadCreation& creation);
/// In a forked child of the tree: the calling thread is the process's only one, and its readings
/// start anew. It counts in the tree's shared count (already, if `creation` counted it), and the
/// process tallies in `tally` (its slot's) what it adds there.
void only_thread_after_fork(LocalDelays& local, RunnableTally& tally, const ThreadCreation& creation);
/// In a forked child that runs unprofiled: it leaves the tree's count and counts on its own.
void unprofiled_after_fork(const ThreadCreation& creation);

/// Owning thread, before it pays what it owes (threads::settle_delays, after_blocking) and before a
/// thread it creates inherits its clock: the part of its debt it already spent waiting for a CPU
/// while the program had more runnable threads than CPUs counts as paid. Such a wait is the
/// fan-out's: the threads it waits behind run the line and free their CPUs sooner when the line is
/// faster, as a thread woken by one that ran the line is credited (std::async: a main thread that
/// has started two of three tasks waits for a CPU until one ends, then starts the third; paying the
/// first two tasks' delay again delayed the third, and halved the prediction, 17% for 36%).
/// Bounded by the debt, the thread's run-queue wait and the burst clock since its last reading; not
/// in a program oversubscribed over the profiler's windows, whose contention scaling covers CPU waits,
/// nor where the waits were other processes' (no burst of the program's own). Returns the absorbed ns.
WHATIF_SIGNAL_SAFE uint64_t absorb_cpu_wait(const GlobalDelays& global, LocalDelays& local);

/// Owning thread: pauses until local reaches global (subtracting previous oversleep). In the idle
/// phase it forgives outstanding delays instead. Safe in a signal handler. Does nothing when
/// re-entered (LocalDelays::busy held).
WHATIF_SIGNAL_SAFE void catch_up(GlobalDelays& global, LocalDelays& local);
/// While GlobalDelays::oversubscribed (and GlobalDelays::spin_pauses), a pause spins if the thread
/// pays what accrued while it ran (catch_up_held's `working`: in its handler, at a call that blocks
/// or wakes another thread, at its exit), or if its recent wall time per CPU time (LocalDelays::contention_permille)
/// is at least this: a thread that waits for a CPU, returning from a wait to pay what accrued in it.
inline constexpr uint32_t kSpinFromPermille = 1200;
/// A spinning pause spins at most this much CPU time between looks at the experiment's state.
inline constexpr uint64_t kSpinRoundNs = 500000;

/// catch_up for a caller that already holds LocalDelays::busy (and has called absorb_cpu_wait, as
/// catch_up and threads::settle_delays do). With `keep_up` (a thread not running
/// the selected line) it pauses again for delay that accrued while it slept, until it has caught up
/// or the experiment stops: the model freezes it for as long as others run the line. `working`: the
/// thread pays what accrued while it ran (threads::settle_delays: its handler, a blocking or waking
/// call, its exit), not on its return from a wait (catch_up): in an oversubscribed program its
/// pause spins, whatever its own recent figure, at the larger of that figure and its burst figure;
/// elsewhere it spins while more of the program's threads are runnable than CPUs
/// (RunnableThreads::burst_share_permille). Returns the wall time its sleeping pauses took (its
/// spinning ones not): the caller counts what the pause cost around them (threads::settle_delays).
WHATIF_SIGNAL_SAFE uint64_t catch_up_held(GlobalDelays& global, LocalDelays& local, bool keep_up, bool may_spin = true,
                                      bool working = false);

/// Owning thread, after catch_up_held returned `asleep` ns of sleeping pauses: what the pause cost
/// beside its sleeps, from `pause_from_ns` (monotonic) and `cpu_from_ns` (the thread's CPU clock),
/// none of which the baselines run. Its wall time beyond the sleeps counts as paid (excess_ns: the
/// next pause is that much shorter), and its CPU time, plus `extra_cpu_ns` spent before
/// `cpu_from_ns` (a nudge's delivery), as whatif's (GlobalDelays::paused_cpu_ns). Nothing when it
/// did not sleep: a spin's cost counts in its CPU time.
WHATIF_SIGNAL_SAFE void count_sleeping_pause(GlobalDelays& global, LocalDelays& local, uint64_t asleep,
                                             uint64_t pause_from_ns, uint64_t cpu_from_ns, uint64_t extra_cpu_ns = 0);

/// Owning thread, once its owed delays are executed (threads::before_blocking): it enters a call
/// that may block.
WHATIF_SIGNAL_SAFE void mark_blocked(LocalDelays& local);

/// Owning thread, as its blocking call returns, before after_blocking: how long the call blocked (0
/// outside one). A shim that needs the duration to judge who ended the wait reads it here, and
/// after_blocking reuses the reading: each clock read costs ~30 ns in this VM, and a server makes
/// several such calls a request.
WHATIF_SIGNAL_SAFE uint64_t end_wait(LocalDelays& local);

/// Profiler thread: whether this thread still owes delays up to `target` that it can execute now
/// (it is not inside a blocking call).
inline bool owes_while_running(const LocalDelays& local, uint64_t target) {
  return !local.blocked.load(std::memory_order_acquire) && local.local_ns.load(std::memory_order_acquire) < target;
}

/// Owning thread, after a blocking call returns (clears blocked). If another thread woke it (`woken_by_thread`),
/// its clock is raised to the global one (the waker executed those delays); otherwise (I/O,
/// sleep, timeout) the delays that accrued while it was blocked are executed now.
WHATIF_SIGNAL_SAFE void after_blocking(GlobalDelays& global, LocalDelays& local, bool woken_by_thread);

/// Owning thread: raises its clock to the global one, forgiving what it owes. A thread that waited
/// for another thread (woken by it, or sampled spinning for it) owes nothing for the wait: the
/// thread it waited for executed those delays, or ran the line (Coz's rule for blocking calls).
WHATIF_SIGNAL_SAFE void credit_to_global(const GlobalDelays& global, LocalDelays& local);

/// A loop that polls and calls sched_yield (`while (!ready) std::this_thread::yield();`, Rust's
/// yield_now) waits for another thread as a spin loop does: a call that comes within this long of
/// the previous one's return continues such a loop. Longer gaps are work between courtesy yields.
inline constexpr uint64_t kYieldLoopGapNs = 20000;

/// Whether a sched_yield entered at `now_ns` continues a loop whose previous call returned at
/// `returned_ns` (0: none).
WHATIF_SIGNAL_SAFE inline bool continues_yield_loop(uint64_t returned_ns, uint64_t now_ns) {
  return returned_ns != 0 && now_ns >= returned_ns && now_ns - returned_ns < kYieldLoopGapNs;
}

/// Owning thread, entering sched_yield (threads::before_yield decides `continues_loop` and settles
/// a first call's debts before): a call that continues a loop of yields is credited what accrued
/// since the previous one (credit_to_global), as a thread woken by another.
WHATIF_SIGNAL_SAFE void before_yield(const GlobalDelays& global, LocalDelays& local, bool continues_loop);
/// Owning thread, as sched_yield returns.
WHATIF_SIGNAL_SAFE void after_yield(LocalDelays& local);
/// Owning thread or its handler at `now_ns`: whether the thread is waiting in a yield: inside the
/// call, or between the calls of a loop of them.
WHATIF_SIGNAL_SAFE bool waiting_in_yield(const LocalDelays& local, uint64_t now_ns);

/// A sample of this thread fell in the selected line, so its own time already counts as one delay
/// (minimal-delay optimisation, §3.4.3); others must catch up. The owning thread (for samples it
/// scanned) or the profiler thread (for the rest). Each sample is worth delay_size_ns scaled by the
/// thread's contention_permille. Returns how much the global clock rose: the virtual time removed
/// from every other thread.
WHATIF_SIGNAL_SAFE uint64_t credit_selected_sample(GlobalDelays& global, LocalDelays& local, uint32_t periods = 1);

/// A new thread inherits its parent's local clock: delays the parent executed delayed the child's
/// creation too.
inline void inherit(LocalDelays& child, const LocalDelays& parent) {
  child.local_ns.store(parent.local_ns.load(std::memory_order_acquire), std::memory_order_release);
}

}  // namespace whatif::delays
