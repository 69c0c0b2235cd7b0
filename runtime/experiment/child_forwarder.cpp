// A forked child's forwarder thread (see child_forwarder.h). Runs on its own runtime thread in
// the child (all signals blocked, re-entry guard set), and on the exiting thread for the flush.
#include "experiment/child_forwarder.h"

#include <signal.h>

#include "libc/guard.h"
#include "libc/real.h"
#include "os/os.h"
#include "progress/progress_points.h"
#include "threads/sampler_switch.h"
#include "threads/settle.h"

namespace whatif::experiment {
namespace {
constexpr uint64_t kTickNs = 1000000;  // as the root profiler's fine tick: what it forwards arrives that much later
// schedstat every 2 ms: a pool's worker lives tens of ms, and its samples are unscaled until its
// first window closes (after 2 ms of its run time); the root reads every 20 ms, for many threads.
constexpr uint64_t kSchedstatTicks = 2;
constexpr uint64_t kSwitchWindowNs = 20000000;  // as the root's schedstat window

/// Whether a sample is in the published selected line: its IP, or a return address in any frame
/// (the root attributes a sample outside the scope to its nearest in-scope caller).
bool in_selected_line(const os::RawSample& sample, const delays::RangesSnapshot& ranges) {
  if (ranges.contains(sample.ip)) return true;
  for (uint32_t i = 1; i < sample.callchain_length; ++i) {
    if (ranges.contains(sample.callchain[i] - 1)) return true;
  }
  return false;
}
}  // namespace

ChildForwarder::ChildForwarder(threads::ProcessTree& tree, threads::ProcessSlot& slot, threads::ThreadRegistry& threads,
                               bool count_demand, bool scale_by_waits, uint64_t born_ns)
    : tree_(tree),
      slot_(slot),
      threads_(threads),
      count_demand_(count_demand || scale_by_waits),
      scale_by_waits_(scale_by_waits),
      born_ns_(born_ns) {
  const progress::CounterRegistry& registry = progress::counters();
  forwarded_.resize(registry.size());
  for (std::size_t i = 0; i < forwarded_.size(); ++i) {
    forwarded_[i] = __atomic_load_n(&registry.slot(i).counter.count, __ATOMIC_RELAXED);
  }
}

int ChildForwarder::start() {
  // The switch rule's first window closes 20 ms from now, as a new thread's does in the root: its
  // baseline is the forked thread's zero counts (after_fork_in_child), not a /proc read at once.
  last_switch_ns_ = os::monotonic_ns();
  int result = real::create_runtime_thread(&thread_, &ChildForwarder::thread_main, this);
  thread_started_ = result == 0;
  return result;
}

void* ChildForwarder::thread_main(void* self) {
  interpose::mark_runtime_thread();
  auto* forwarder = static_cast<ChildForwarder*>(self);
  for (;;) {
    uint32_t idle = kIdle;  // kFlushing once stop_and_flush took the draining over: leave
    if (!forwarder->owner_.compare_exchange_strong(idle, kTicking, std::memory_order_acq_rel)) break;
    forwarder->tick();
    if (uint64_t now = os::monotonic_ns(); now - forwarder->last_switch_ns_ >= kSwitchWindowNs) {
      forwarder->last_switch_ns_ = now;
      forwarder->switch_samplers();  // not in the exit path's flush: the process is leaving
    }
    forwarder->owner_.store(kIdle, std::memory_order_release);
    os::sleep_ns(kTickNs);
  }
  return nullptr;
}

void ChildForwarder::stop_and_flush() {
  const uint64_t begin = os::monotonic_ns();
  if (thread_started_) {
    // The exiting thread takes the draining over without waking or joining the forwarder: a join
    // waited for it to be scheduled (a wake-up, often of an idle CPU), serial in a parent that
    // waits for its children, on every child's exit. The forwarder, asleep or back from a tick,
    // finds the work taken and returns; exit_group ends it first, most often.
    uint32_t idle = kIdle;
    while (!owner_.compare_exchange_weak(idle, kFlushing, std::memory_order_acq_rel)) {
      idle = kIdle;  // a tick in progress: tens of microseconds
      real::sched_yield();
    }
    thread_started_ = false;
  }
  tick(/*last=*/true);
  const uint64_t end = os::monotonic_ns();
  slot_.add_own_ns(end - begin);
  if (born_ns_ != 0) slot_.set_life_ns(end - born_ns_);
  slot_.mark_exited();
}

void ChildForwarder::tick(bool last) {
  crediting_ = delays::snapshot_selected_ranges(tree_.delays(), ranges_);
  threads_.snapshot(snapshot_);
  for (threads::ThreadState* thread : snapshot_) drain_thread(thread);
  // The last tick reads too: the process's final milliseconds count in the tree's demand.
  if (count_demand_ && (++ticks_ % kSchedstatTicks == 0 || last)) read_threads();
  threads_.take_retired(retired_);
  for (threads::ThreadState* thread : retired_) {
    if (count_demand_) add_demand(exit_demand_.account(*thread));
    drain_thread(thread);
    threads::close_task_files(*thread);
    delete thread;
  }
  forward_visits();
}

void ChildForwarder::read_threads() {
  // The root decides from every process's demand whether the tree wants more CPUs than it has;
  // only then do this child's threads scale by every wait (else their waits are other processes').
  const bool oversubscribed = tree_.delays().oversubscribed.load(std::memory_order_relaxed);
  for (threads::ThreadState* thread : snapshot_) {
    if (thread->retired.load(std::memory_order_acquire)) continue;  // counted by its exit reading
    uint64_t run = 0, wait = 0;
    if (!threads::read_task_schedstat(*thread, run, wait)) continue;
    // As the root counts its own threads: a thread's first reading brings its whole life so far.
    delays::SchedWindow since;
    threads::advance_schedstat(*thread, run, wait, since);
    add_demand(since);
    if (!scale_by_waits_) continue;  // sleeping pauses: the root scales by outside load alone
    uint32_t wall_per_cpu = thread->wall_per_cpu.update(run, wait);  // 0 while its window is open
    uint32_t contention = oversubscribed ? wall_per_cpu : delays::kNoContention;
    if (contention != 0) thread->delays.contention_permille.store(contention, std::memory_order_relaxed);
  }
}

void ChildForwarder::add_demand(const delays::SchedWindow& since) {
  if (since.run_ns != 0 || since.wait_ns != 0) tree_.add_children_demand(since.run_ns, since.wait_ns);
}

void ChildForwarder::switch_samplers() {
  // The root's profiler rule for this process's threads: one blocking thousands of times a second
  // (a pre-fork server's worker) moves to the timer; the root's end-of-run warning names it. A fresh
  // snapshot: tick() freed the threads it took as retired.
  threads_.snapshot(snapshot_);
  for (threads::ThreadState* thread : snapshot_) {
    if (thread->retired.load(std::memory_order_acquire)) continue;
    uint64_t run = 0, wait = 0;
    if (threads::read_task_schedstat(*thread, run, wait) && threads::apply_switch_rule(*thread, run)) {
      tree_.note_timer_thread(thread->tid);
    }
  }
}

void ChildForwarder::drain_thread(threads::ThreadState* thread) {
  if (!thread->sampler) return;
  struct Context {
    ChildForwarder* self;
    threads::ThreadState* thread;
  } context{this, thread};
  thread->sampler->drain(
      [](void* raw, const os::RawSample& sample) {
        auto* c = static_cast<Context*>(raw);
        c->self->forward(c->thread, sample);
      },
      &context);
}

void ChildForwarder::forward(threads::ThreadState* thread, const os::RawSample& sample) {
  // The thread credited the samples it scanned whose IP is in the ranges; the rest are ours, as
  // they are the profiler's in the root (threads::profiler_credits).
  if (crediting_ && threads::profiler_credits(sample, ranges_) && in_selected_line(sample, ranges_)) {
    threads::credit_selected(tree_.delays(), *thread, sample.weight);
  }
  slot_.push(sample);
}

void ChildForwarder::forward_visits() {
  const progress::CounterRegistry& registry = progress::counters();
  std::size_t size = registry.size();
  if (forwarded_.size() < size) forwarded_.resize(size, 0);  // registered in this child: all new
  for (std::size_t i = 0; i < size; ++i) {
    const progress::CounterSlot& counter = registry.slot(i);
    uint64_t count = __atomic_load_n(&counter.counter.count, __ATOMIC_RELAXED);
    if (count <= forwarded_[i]) continue;
    tree_.add_visits(counter.type, counter.name, count - forwarded_[i]);
    forwarded_[i] = count;
  }
}

}  // namespace whatif::experiment
