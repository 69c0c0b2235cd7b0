// Thread registry (any thread adds; the profiler thread snapshots and reaps) and the thread-local
// pointer read by signal handlers.
#include "threads/threads.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>

namespace whatif::threads {
namespace {
// initial-exec: no lazy TLS allocation when the signal handler first touches it.
__attribute__((tls_model("initial-exec"))) thread_local ThreadState* t_current = nullptr;
}  // namespace

WHATIF_SIGNAL_SAFE ThreadState* current_thread() { return t_current; }

void set_current_thread(ThreadState* state) { t_current = state; }

bool advance_schedstat(ThreadState& thread, uint64_t run_ns, uint64_t wait_ns, delays::SchedWindow& since) {
  bool known = thread.sched_known && run_ns >= thread.sched_run_ns && wait_ns >= thread.sched_wait_ns;
  if (known) since = {run_ns - thread.sched_run_ns, wait_ns - thread.sched_wait_ns};
  else if (!thread.sched_known) since = {run_ns, wait_ns};  // its life so far
  thread.sched_run_ns = run_ns;
  thread.sched_wait_ns = wait_ns;
  thread.sched_known = true;
  return known;
}

delays::SchedWindow exit_demand(ThreadState& thread) {
  delays::SchedWindow since;
  if (thread.exit_known) advance_schedstat(thread, thread.exit_run_ns, thread.exit_wait_ns, since);
  return since;
}

NudgeTable& nudge_table() {
  static NudgeTable table;
  return table;
}

void NudgeTable::enter(ThreadState* state, int signal) {
  signal_.store(signal, std::memory_order_relaxed);
  pid_.store(getpid(), std::memory_order_relaxed);
  for (uint32_t i = 0; i < kSlots; ++i) {
    ThreadState* expected = nullptr;
    if (slots_[i].compare_exchange_strong(expected, state, std::memory_order_acq_rel)) {
      state->nudge_slot = static_cast<int>(i);
      uint32_t end = end_.load(std::memory_order_relaxed);
      while (end < i + 1 && !end_.compare_exchange_weak(end, i + 1, std::memory_order_acq_rel)) {
      }
      return;
    }
  }
  // Full: the thread pays at its own samples, as every thread did before prompt payment.
}

void NudgeTable::leave(ThreadState* state) {
  if (state->nudge_slot < 0) return;
  slots_[state->nudge_slot].store(nullptr, std::memory_order_seq_cst);
  state->nudge_slot = -1;
}

void NudgeTable::quiesce() const {
  // seq_cst pairs with nudge_owing's increment: a reader that loaded a slot before leave() cleared
  // it is counted here; one that starts after sees the slot empty.
  while (readers_.load(std::memory_order_seq_cst) != 0) sched_yield();
}

void NudgeTable::keep_only(const ThreadState* survivor) {
  pid_.store(getpid(), std::memory_order_relaxed);
  readers_.store(0, std::memory_order_relaxed);  // a nudge in flight in another thread did not fork
  for (auto& slot : slots_) {
    if (slot.load(std::memory_order_relaxed) != survivor) slot.store(nullptr, std::memory_order_relaxed);
  }
}

void ThreadRegistry::lock() {
  while (lock_.test_and_set(std::memory_order_acquire)) sched_yield();
}
void ThreadRegistry::unlock() { lock_.clear(std::memory_order_release); }

void ThreadRegistry::add(ThreadState* state) {
  lock();
  threads_.push_back(state);
  unlock();
}

void ThreadRegistry::snapshot(std::vector<ThreadState*>& out) {
  out.clear();
  lock();
  out.insert(out.end(), threads_.begin(), threads_.end());
  unlock();
}

void ThreadRegistry::take_retired(std::vector<ThreadState*>& out) {
  out.clear();
  lock();
  // Acquire pairs with the retiring thread's release store: its last samples are in the ring.
  auto retired = std::stable_partition(threads_.begin(), threads_.end(), [](ThreadState* state) {
    return !state->retired.load(std::memory_order_acquire);
  });
  out.insert(out.end(), retired, threads_.end());
  threads_.erase(retired, threads_.end());
  unlock();
  if (!out.empty()) nudge_table().quiesce();  // the caller frees them next
}

void ThreadRegistry::keep_only(ThreadState* survivor) {
  lock();
  threads_.clear();
  if (survivor != nullptr) threads_.push_back(survivor);
  unlock();
  nudge_table().keep_only(survivor);
}

}  // namespace whatif::threads
