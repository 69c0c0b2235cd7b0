// Thread registry (any thread adds; the profiler thread snapshots and reaps) and the thread-local
// pointer read by signal handlers.
#include "threads/threads.h"

#include "base/fill_once.h"
#include "base/mix.h"
#include "os/os.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

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

bool ExitReadings::take_turn(uint64_t now_ns, uint32_t draw) {
  uint64_t start = window_start_ns_.load(std::memory_order_relaxed);
  if (start == 0) {
    window_start_ns_.compare_exchange_strong(start, now_ns, std::memory_order_relaxed);
  } else if (now_ns - start >= kWindowNs && window_start_ns_.compare_exchange_strong(start, now_ns, std::memory_order_relaxed)) {
    // The last window's exit rate sets this one's probability.
    uint32_t exits = exits_in_window_.exchange(0, std::memory_order_relaxed);
    threshold_.store(exits <= kReadsPerWindow ? UINT32_MAX : UINT32_MAX / exits * kReadsPerWindow,
                     std::memory_order_relaxed);
  }
  exits_in_window_.fetch_add(1, std::memory_order_relaxed);
  return draw <= threshold_.load(std::memory_order_relaxed);
}

void ExitReadings::record(ThreadState& thread) {
  const uint64_t now = os::monotonic_ns();
  // Exits at the same moment draw unrelated numbers.
  const uint64_t draw = mix_seed(now, static_cast<uint64_t>(thread.tid));
  // schedstat first: reading the CPU clock brings sum_exec_runtime up to date (update_curr), and
  // the reading would then no longer be the one the other exits' estimates stand for.
  thread.exit_read = take_turn(now, static_cast<uint32_t>(draw)) &&
                     os::read_schedstat(thread.tid, thread.exit_run_ns, thread.exit_wait_ns);
  thread.exit_cpu_ns = os::thread_cpu_ns();
  thread.exit_known = thread.exit_cpu_ns != 0;
  thread.exit_read = thread.exit_read && thread.exit_known;
}

ExitReadings& exit_readings() {
  static ExitReadings readings;
  return readings;
}

delays::SchedWindow ExitDemand::account(ThreadState& thread) {
  delays::SchedWindow since;
  if (!thread.exit_known) return since;
  // Its CPU time since the previous reading, whose run is schedstat's (behind the CPU clock, never ahead).
  const uint64_t before = thread.sched_known ? thread.sched_run_ns : 0;
  const double cpu = thread.exit_cpu_ns > before ? static_cast<double>(thread.exit_cpu_ns - before) : 0.0;
  if (thread.exit_read) {
    advance_schedstat(thread, thread.exit_run_ns, thread.exit_wait_ns, since);
    cpu_sum_ = cpu_sum_ * kKeep + cpu;
    run_sum_ = run_sum_ * kKeep + static_cast<double>(since.run_ns);
    wait_sum_ = wait_sum_ * kKeep + static_cast<double>(since.wait_ns);
    return since;
  }
  if (cpu_sum_ <= 0) return since;
  since.run_ns = static_cast<uint64_t>(cpu * run_sum_ / cpu_sum_ + 0.5);
  since.wait_ns = static_cast<uint64_t>(cpu * wait_sum_ / cpu_sum_ + 0.5);
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

namespace {
std::atomic<int> g_kept_task_files{0};  // descriptors open in ThreadState::schedstat_fd and status_fd

/// `fd`, opened on first use while the process keeps fewer than its share of /proc files; -1 when
/// it may not keep one.
int kept_task_file(int& fd, pid_t tid, const char* file) {
  if (fd >= 0) return fd;
  // Not a guarded static: a forked child whose parent's profiler thread was building one at the
  // fork waited for ever on its guard at exit (holdout `forkwork`).
  static std::atomic<int> known_limit{-1};
  const int limit = base::fill_once(known_limit, -1, [] {
    return static_cast<int>(std::min<uint64_t>(kMaxKeptTaskFiles, os::fd_soft_limit() / 8));
  });
  if (g_kept_task_files.load(std::memory_order_relaxed) >= limit) return -1;
  fd = os::open_task_file(tid, file);
  if (fd >= 0) g_kept_task_files.fetch_add(1, std::memory_order_relaxed);
  return fd;
}

void close_kept(int& fd) {
  if (fd < 0) return;
  os::close_task_file(fd);
  fd = -1;
  g_kept_task_files.fetch_sub(1, std::memory_order_relaxed);
}
}  // namespace

bool read_task_schedstat(ThreadState& thread, uint64_t& run_ns, uint64_t& wait_ns) {
  int fd = kept_task_file(thread.schedstat_fd, thread.tid, "schedstat");
  if (fd < 0) return os::read_schedstat(thread.tid, run_ns, wait_ns);
  if (os::read_schedstat_fd(fd, run_ns, wait_ns)) return true;
  close_kept(thread.schedstat_fd);  // the thread is gone
  return false;
}

bool read_task_switches(ThreadState& thread, uint64_t& switches) {
  int fd = kept_task_file(thread.status_fd, thread.tid, "status");
  if (fd < 0) return os::read_voluntary_switches(thread.tid, switches);
  if (os::read_voluntary_switches_fd(fd, switches)) return true;
  close_kept(thread.status_fd);
  return false;
}

void close_task_files(ThreadState& thread) {
  close_kept(thread.schedstat_fd);
  close_kept(thread.status_fd);
}

}  // namespace whatif::threads
