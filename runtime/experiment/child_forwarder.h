// The profiler's stand-in in a forked child process: a thread that drains the child's samples,
// credits those in the selected line to the tree's one delay clock, and forwards samples and
// progress visits through the child's ProcessSlot to the root's profiler, which attributes them
// and runs the experiments. Runs on its own runtime thread (all signals blocked) in the child, and
// once more on the exiting thread to flush.
#pragma once
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <vector>

#include "delays/delays.h"
#include "threads/process_tree.h"
#include "threads/threads.h"

namespace whatif::experiment {

class ChildForwarder {
 public:
  /// The forked child, right after fork: `slot` is the one it claimed in `tree`. The progress
  /// counts it inherited are the parent's and are not forwarded.
  /// With `count_demand` (contention on) it adds its threads' run and wait to the tree's, which the
  /// root counts as the program's own; with `scale_by_waits` (spinning pauses too) it also measures
  /// each thread's wall time per CPU time, as the root's profiler does for its threads.
  /// `born_ns`: the monotonic clock when the child's setup began (0: unknown), for its life's length.
  ChildForwarder(threads::ProcessTree& tree, threads::ProcessSlot& slot, threads::ThreadRegistry& threads,
                 bool count_demand, bool scale_by_waits, uint64_t born_ns = 0);
  /// Starts the thread (with all signals blocked). Returns 0 or an errno.
  int start();
  /// The exiting (or exec'ing) thread: takes the draining over from the thread (which it neither
  /// wakes nor joins: it returns on its own, or ends with the process), forwards the last samples
  /// and visits, and marks the slot exited. The calling thread must have its sample signal blocked.
  void stop_and_flush();

 private:
  static void* thread_main(void* self);
  /// Drains every thread, forwards visits and, every kSchedstatTicks and at the `last` (the flush),
  /// adds the threads' CPU demand to the tree's.
  void tick(bool last = false);
  /// Reads each live thread's schedstat: its demand since the last reading, and its wall time per CPU.
  void read_threads();
  void add_demand(const delays::SchedWindow& since);
  void drain_thread(threads::ThreadState* thread);
  void forward(threads::ThreadState* thread, const os::RawSample& sample);
  void forward_visits();
  /// Every schedstat window: the adaptive sampler's switch rule for each of this process's threads.
  void switch_samplers();

  threads::ProcessTree& tree_;
  threads::ProcessSlot& slot_;
  threads::ThreadRegistry& threads_;
  pthread_t thread_{};
  bool thread_started_ = false;
  static constexpr uint32_t kIdle = 0, kTicking = 1, kFlushing = 2;
  std::atomic<uint32_t> owner_{kIdle};  // who drains: the forwarder's tick, or for good the exit flush
  std::vector<uint64_t> forwarded_;  // per counter-registry slot: visits counted already
  std::vector<threads::ThreadState*> snapshot_;
  std::vector<threads::ThreadState*> retired_;
  delays::RangesSnapshot ranges_;  // this tick's selected line, when an experiment runs
  bool crediting_ = false;
  bool count_demand_ = false;
  bool scale_by_waits_ = false;
  uint64_t born_ns_ = 0;
  threads::ExitDemand exit_demand_;  // the demand of this process's exited threads
  uint64_t ticks_ = 0;
  uint64_t last_switch_ns_ = 0;
};

}  // namespace whatif::experiment
