// Per-thread runtime state and the registry of live threads. A thread registers itself when it
// starts (or at start-up for the main thread) and retires when it exits; the profiler thread
// drains, then frees retired threads. The current thread's state is reachable from its signal handler.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/signal_safe.h"
#include "delays/contention.h"
#include "delays/delays.h"
#include "lbr/tracer.h"
#include "sampling/sampler.h"
#include "sampling/switch_rule.h"

namespace whatif::threads {

struct ThreadState {
  static constexpr int kMaxBreakpoints = 4;  // x86 has four debug registers

  pid_t tid = 0;
  delays::LocalDelays delays;
  delays::ThreadCreation forking;  ///< while it forks: its child's thread, counted live (delays::child_forking)
  std::unique_ptr<sampling::ThreadSampler> sampler;
  uint64_t sampler_lost_seen = 0;  ///< profiler thread: the sampler's lost() at its last drain
  std::unique_ptr<lbr::ThreadTracer> tracer;  ///< --lbr only; its handlers run on this thread
  std::atomic<bool> retired{false};   ///< release-set by the thread at exit; profiler frees it after
  int breakpoint_fds[kMaxBreakpoints] = {-1, -1, -1, -1};  ///< profiler thread only
  bool breakpoints_opened = false;                          ///< profiler thread only
  uint64_t sched_run_ns = 0;   ///< profiler thread (or a child's forwarder) only: the last schedstat reading
  uint64_t sched_wait_ns = 0;  ///< profiler thread only
  bool sched_known = false;    ///< profiler thread only: the two above hold a reading
  /// The thread's readings as it exits, taken by itself (ExitReadings; before `retired`'s release
  /// store, the profiler reads them after the acquire): a thread that lived between two readings of
  /// the profiler still counts in the program's demand for CPUs (ExitDemand).
  uint64_t exit_run_ns = 0;
  uint64_t exit_wait_ns = 0;
  uint64_t exit_cpu_ns = 0;  ///< its CPU clock then (every exit reads it; see ExitReadings)
  bool exit_known = false;   ///< exit_cpu_ns holds a reading
  bool exit_read = false;    ///< exit_run_ns and exit_wait_ns too: the exit had its turn to read schedstat
  /// Profiler thread (or a forked child's forwarder) only: spinning pauses' contention window.
  delays::WallPerCpu wall_per_cpu;
  uint64_t voluntary_switches = 0;  ///< profiler thread only: at the last reading, for the adaptive sampler
  uint64_t switch_run_ns = 0;       ///< profiler thread only: schedstat CPU time at that reading
  bool switches_known = false;      ///< profiler thread only: the two above hold a reading
  sampling::SwitchState sampler_switch;  ///< profiler thread only: the adaptive sampler's rule
  bool used_timer = false;     ///< profiler thread only: an adaptive sampler moved it to the timer once
  int nudge_slot = -1;         ///< its slot in nudge_table(), or -1 (none: never nudged)
  /// The process's reading thread only (the root's profiler thread, or a forked child's forwarder):
  /// its /proc schedstat and status files kept open (read_task_schedstat), or -1.
  int schedstat_fd = -1;
  int status_fd = -1;
};

/// The process's registered threads by slot, for prompt payment: a thread whose sample in the
/// selected line raised the global clock signals, from its handler, the others that owe, so that
/// they pause now rather than at their own next sample (threads::credit_selected). A thread takes a
/// slot when it registers and leaves it at exit, before it retires; whoever frees retired threads
/// first waits until no nudge may still read them (quiesce).
class NudgeTable {
 public:
  static constexpr uint32_t kSlots = 1024;
  /// A thread whose newest sample is older than this (wall time) is not nudged: 3 of the default
  /// 1-ms periods, so a running thread taking a jittered period, or a short run-queue wait, counts.
  static constexpr uint64_t kRecentSampleNs = 3000000;
  /// A nudge's delivery (from its send to the handler's entry) longer than this is not counted as
  /// paid: the thread was waiting for a CPU meanwhile, not interrupted by the nudge. A signal to a
  /// running thread takes 10-25 us in this nested VM, far less on bare metal.
  static constexpr uint64_t kMaxNudgeDeliveryNs = 100000;
  /// The registering thread (the signal and the process id are set here: a forked child's first).
  void enter(ThreadState* state, int signal);
  /// The exiting thread, before its `retired` store.
  void leave(ThreadState* state);
  /// Before freeing retired threads: waits for nudges in flight.
  void quiesce() const;
  /// Fork child only: forgets every slot but `survivor`'s.
  void keep_only(const ThreadState* survivor);
  /// Any thread, signal context too: signals every other thread in the table that is not inside a
  /// blocking call and owes delay up to `target`. Returns how many it signalled.
  WHATIF_SIGNAL_SAFE uint32_t nudge_owing(const ThreadState* self, uint64_t target) const;

 private:
  std::atomic<ThreadState*> slots_[kSlots] = {};
  std::atomic<uint32_t> end_{0};  ///< one past the highest slot taken so far
  std::atomic<int> signal_{0};
  std::atomic<pid_t> pid_{0};
  mutable std::atomic<uint32_t> readers_{0};
};
NudgeTable& nudge_table();

/// The calling thread's state, or nullptr (not registered, retired, or a runtime thread).
WHATIF_SIGNAL_SAFE ThreadState* current_thread();
void set_current_thread(ThreadState* state);
/// Profiler thread (or a forked child's forwarder): records a schedstat reading of `thread` and
/// returns how much it ran and waited since the previous one; false on the first reading or when
/// the counters went backwards (a reused thread id).
/// A thread's first reading fills `since` with its whole life (a thread born since the last window
/// ran then) but still returns false.
bool advance_schedstat(ThreadState& thread, uint64_t run_ns, uint64_t wait_ns, delays::SchedWindow& since);

/// At most this many /proc files are kept open per process, and at most an eighth of its descriptor
/// limit: beyond, a thread's files are opened and closed at each reading as before.
inline constexpr int kMaxKeptTaskFiles = 256;
/// The process's reading thread only: the thread's schedstat (os::read_schedstat) and voluntary
/// switches (os::read_voluntary_switches) through descriptors kept open for it. The profiler reads
/// every thread's schedstat every 20-ms window (a forked child's forwarder every millisecond), and
/// an open and a close cost several times the read: with memcached's 9 threads, ~2% of a CPU.
bool read_task_schedstat(ThreadState& thread, uint64_t& run_ns, uint64_t& wait_ns);
bool read_task_switches(ThreadState& thread, uint64_t& switches);
/// Closes the thread's kept files: a retired thread before it is freed, or a fork child's copies.
void close_task_files(ThreadState& thread);
/// An exiting thread's reading of its own demand (retire path). Reading schedstat cost a thread that
/// lived a millisecond ~30 us, a third of what whatif adds to its creation and exit (the kernel
/// allocates a dentry and an inode for /proc/self/task/TID and its schedstat), so when threads
/// exit faster than kReadsPerWindow per kWindowNs, each exit reads it with the probability that
/// keeps to that rate. Every exit reads its CPU clock (a system call that allocates nothing);
/// ExitDemand estimates the readings the others did not take. The draw is random, not the first
/// exit after a deadline: exits come in groups (a fork-join's workers), and the first of a group
/// is the one that waited least.
class ExitReadings {
 public:
  static constexpr uint64_t kWindowNs = 100000000;
  static constexpr uint32_t kReadsPerWindow = 10;
  /// Whether the exit at `now_ns` reads schedstat, given a uniform 32-bit `draw`. Until the first
  /// window closes every exit does.
  bool take_turn(uint64_t now_ns, uint32_t draw);
  /// Fills thread.exit_* for the calling thread, which is `thread` and is exiting.
  void record(ThreadState& thread);

 private:
  std::atomic<uint64_t> window_start_ns_{0};
  std::atomic<uint32_t> exits_in_window_{0};
  std::atomic<uint32_t> threshold_{UINT32_MAX};  ///< a draw at or below it reads: the probability in 2^-32
};
ExitReadings& exit_readings();

/// Profiler thread (or a forked child's forwarder): the demand of retired threads, what each ran
/// and waited since its previous reading (its whole life when nobody read it before; zero when it
/// took no reading). An exit that read schedstat gives its own figures. One that read only its CPU
/// clock gives what the reading would have said: its CPU time since, times the run and the wait per
/// CPU time of the exits that read both, decayed over exits. That is not its CPU time itself:
/// schedstat's run lacks the slice a thread is running (the scheduler adds it at its next tick or
/// switch), which an exiting thread never makes up, and the oversubscription rule (TreeDemand) is
/// set against those readings. Counting the whole CPU time put a program that wants 1.0-1.3 CPUs
/// of two (spawnjoin) over the rule's threshold in one window and under it in the next, and its
/// predictions moved by 28 points between runs.
class ExitDemand {
 public:
  static constexpr double kKeep = 0.9;  ///< each read exit's weight is multiplied by this at every later one
  delays::SchedWindow account(ThreadState& thread);

 private:
  double cpu_sum_ = 0;   ///< read exits' CPU time since their previous reading, decayed
  double run_sum_ = 0;   ///< their schedstat run time since, decayed alike
  double wait_sum_ = 0;  ///< their wait since, decayed alike
};

class ThreadRegistry {
 public:
  /// Adds a live thread (any thread). Lock-free readers never see a half-built entry.
  void add(ThreadState* state);
  /// Profiler thread: a snapshot of registered threads (live and retired but not yet freed).
  void snapshot(std::vector<ThreadState*>& out);
  /// Profiler thread: removes and returns retired threads for final draining and freeing.
  void take_retired(std::vector<ThreadState*>& out);
  /// Fork child only: the lock may have been held by a thread that no longer exists. Call
  /// for_each next to close the inherited descriptors, then keep_only.
  void reset_after_fork() { lock_.clear(std::memory_order_relaxed); }
  /// Fork child only: forgets every thread but `survivor` (the thread that forked, or nullptr). The
  /// vanished threads' states are not freed: their owners never retire them.
  void keep_only(ThreadState* survivor);
  /// All threads (fork child: to close inherited descriptors).
  template <typename F>
  void for_each(F&& visit) {
    lock();
    for (ThreadState* state : threads_) visit(state);
    unlock();
  }

 private:
  void lock();
  void unlock();
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;  // spin lock: pthread mutexes are interposed
  std::vector<ThreadState*> threads_;
};

}  // namespace whatif::threads
