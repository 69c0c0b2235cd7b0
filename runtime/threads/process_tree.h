// The process tree: memory the root process maps before any fork (MAP_SHARED|MAP_ANONYMOUS) and
// every forked descendant inherits. It holds the one global delay clock, one slot per child
// process through which the child forwards its samples to the root's profiler, and the progress
// visits children make. Any thread of any process in the tree; the delay clock in signal context.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "delays/delays.h"
#include "progress/progress_points.h"
#include "sampling/sampler.h"

namespace whatif::threads {

/// A sample forwarded by a child process: a RawSample without its stack snapshot. The root
/// attributes it by its IP and frame-pointer callchain; a forked child shares the root's address
/// layout. No member initialisers: the rings stay untouched (and unbacked) until used.
struct ForwardedSample {
  static constexpr uint32_t kMaxCallchain = 16;
  uint64_t ip;
  uint32_t weight;
  uint32_t callchain_length;
  uint64_t callchain[kMaxCallchain];
};

/// One child process's channel to the root: a single-producer (the child's forwarder thread),
/// single-consumer (the root's profiler thread) ring of samples, and the slot's life cycle
/// (free → claimed by a child → live → exited by the child → free again by the root).
class ProcessSlot {
 public:
  enum State : int { kFree, kClaimed, kLive, kExited };
  static constexpr uint64_t kRingSize = 1024;  // a power of two

  /// Child's forwarder: appends a sample; counts it lost when the ring is full.
  void push(const os::RawSample& sample);
  /// Root's profiler: hands every forwarded sample to `visit`. Returns how many.
  std::size_t drain(sampling::SampleVisitor visit, void* context);
  State state() const { return static_cast<State>(state_.load(std::memory_order_acquire)); }
  pid_t pid() const { return pid_.load(std::memory_order_acquire); }
  uint64_t lost() const { return lost_.load(std::memory_order_relaxed); }
  /// Child, after its last push: the root may free the slot once it drained it.
  void mark_exited() { state_.store(kExited, std::memory_order_release); }  // pairs with state()
  /// Child: whatif's own wall time in it (its setup after fork, its exit flush), and at its exit,
  /// its life from fork to exit. Read by the root before it releases the slot.
  void add_own_ns(uint64_t ns) { own_ns_.fetch_add(ns, std::memory_order_relaxed); }
  void set_life_ns(uint64_t ns) { life_ns_.store(ns, std::memory_order_relaxed); }
  uint64_t own_ns() const { return own_ns_.load(std::memory_order_relaxed); }
  uint64_t life_ns() const { return life_ns_.load(std::memory_order_relaxed); }  ///< 0: not known
  /// What the child's threads add to the tree's runnable count (delays::only_thread_after_fork).
  delays::RunnableTally& runnable_tally() { return runnable_tally_; }
  /// Root, after the last drain of an exited (or vanished) child.
  void release();

 private:
  friend class ProcessTree;
  std::atomic<int> state_{kFree};
  std::atomic<pid_t> pid_{0};
  std::atomic<uint64_t> head_{0};  // written by the producer
  std::atomic<uint64_t> tail_{0};  // written by the consumer
  std::atomic<uint64_t> lost_{0};
  std::atomic<uint64_t> own_ns_{0};
  std::atomic<uint64_t> life_ns_{0};
  delays::RunnableTally runnable_tally_;
  ForwardedSample ring_[kRingSize];
};

/// Visits of one progress point made in child processes (type and name as in Coz's ABI).
struct TreeCounter {
  std::atomic<bool> ready{false};  ///< release-published once type and name are set
  int type = 0;
  char name[sizeof(progress::CounterSlot::name)] = {};
  std::atomic<uint64_t> count{0};
};

class ProcessTree {
 public:
  static constexpr std::size_t kMaxProcesses = 64;  // live children at once; more run unprofiled
  static constexpr std::size_t kMaxCounters = 128;

  /// Root, at start-up and before any fork: maps and initialises the shared memory. nullptr when
  /// the kernel refuses the mapping (children then run unprofiled).
  static ProcessTree* create();

  /// The one delay clock of every process in the tree.
  delays::GlobalDelays& delays() { return delays_; }
  /// The runnable threads of every process in the tree (delays::share_runnable_threads).
  delays::RunnableThreads& runnable() { return runnable_; }
  /// Whether the root still profiles: false once it finished, so children no longer join.
  bool open() const { return open_.load(std::memory_order_acquire); }
  /// Root, when its profiler stops.
  void close() { open_.store(false, std::memory_order_release); }

  /// A forked child, right after fork: a free slot for `pid`, live from now on, or nullptr (the
  /// tree is full or closed).
  ProcessSlot* claim(pid_t pid);
  /// How many children found the tree full and ran unprofiled (the root warns).
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  /// A parent in the tree: one fork took `ns` of its wall time (whatif's cost of a fork is the
  /// larger address space and threads it copies; the root compares it with the children's lives).
  void add_fork(uint64_t ns) {
    forks_.fetch_add(1, std::memory_order_relaxed);
    fork_ns_.fetch_add(ns, std::memory_order_relaxed);
  }
  uint64_t forks() const { return forks_.load(std::memory_order_relaxed); }
  uint64_t fork_ns() const { return fork_ns_.load(std::memory_order_relaxed); }
  /// Whether any child ever tried to join: until then the root's profiler skips the slots.
  bool forked() const { return forked_.load(std::memory_order_acquire); }
  ProcessSlot& slot(std::size_t index) { return slots_[index]; }

  /// A child's forwarder: its adaptive sampler moved thread `tid` to the timer (first time).
  void note_timer_thread(pid_t tid);
  /// Root's profiler, at the end: how many children's threads moved, and the first kTimerIds of them.
  uint32_t timer_threads() const { return timer_threads_.load(std::memory_order_acquire); }
  std::vector<pid_t> timer_thread_ids() const;
  static constexpr uint32_t kTimerIds = 8;

  /// A child's forwarder: its threads ran `run_ns` more and waited `wait_ns` more for a CPU.
  void add_children_demand(uint64_t run_ns, uint64_t wait_ns) {
    children_run_ns_.fetch_add(run_ns, std::memory_order_relaxed);
    children_wait_ns_.fetch_add(wait_ns, std::memory_order_relaxed);
  }
  /// Root's profiler: the children's run and wait times so far (cumulative).
  uint64_t children_run_ns() const { return children_run_ns_.load(std::memory_order_relaxed); }
  uint64_t children_wait_ns() const { return children_wait_ns_.load(std::memory_order_relaxed); }

  /// A child's forwarder: `delta` more visits of the point (type, name).
  void add_visits(int type, const char* name, uint64_t delta);
  /// Root's profiler: this process's source-level points with the children's visits added.
  std::vector<progress::PointReading> read_points() const;

 private:
  ProcessTree() = default;
  delays::GlobalDelays delays_;
  delays::RunnableThreads runnable_;
  std::atomic<bool> open_{true};
  std::atomic<uint64_t> refused_{0};
  std::atomic<bool> forked_{false};
  std::atomic<uint32_t> timer_threads_{0};
  std::atomic<uint64_t> children_run_ns_{0};
  std::atomic<uint64_t> children_wait_ns_{0};
  std::atomic<uint64_t> forks_{0};
  std::atomic<uint64_t> fork_ns_{0};
  std::atomic<pid_t> timer_thread_ids_[kTimerIds] = {};  // 0: not (yet) written
  std::atomic_flag counters_lock_ = ATOMIC_FLAG_INIT;  // registration only (forwarder threads)
  std::atomic<uint32_t> counters_used_{0};
  TreeCounter counters_[kMaxCounters];
  ProcessSlot slots_[kMaxProcesses];
};

}  // namespace whatif::threads
