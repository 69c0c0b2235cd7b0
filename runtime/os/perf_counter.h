// Counting perf events (no sampling): open one on a thread or a whole process tree (inherit), read it
// with its enabled/running times, and read a thread's own counter with rdpmc where the mmap page
// allows. (Per-thread counts do not use inherit_stat's exit records: the kernel's context-switch
// optimisation swaps counts between unlike events of cloned contexts, see docs/counters.md.)
// Used by the launcher (`whatif stat`, one thread) and by the runtime's function counters (each
// application thread opens and reads its own; normal context).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "base/signal_safe.h"

namespace whatif::os {

/// What perf_event_open needs to count one event: perf_event_attr's type and config words and the
/// privilege filter, as libpfm4 (or perf's own tables) resolve an event name.
struct EventEncoding {
  uint32_t type = 0;
  uint64_t config = 0, config1 = 0, config2 = 0;
  bool exclude_kernel = true;
  bool exclude_hv = true;
};

/// One read of a counting event: the raw count and the times it was enabled and actually counting
/// (they differ when the kernel multiplexes more events than the PMU has counters).
struct CounterReading {
  uint64_t value = 0;
  uint64_t time_enabled = 0;
  uint64_t time_running = 0;
};

/// A counting event. Move-only; closes its descriptor and ring.
class CountingEvent {
 public:
  CountingEvent() = default;
  CountingEvent(const CountingEvent&) = delete;
  CountingEvent& operator=(const CountingEvent&) = delete;
  CountingEvent(CountingEvent&& other) noexcept;
  CountingEvent& operator=(CountingEvent&& other) noexcept;
  ~CountingEvent() { close(); }

  struct Options {
    /// Count `pid`'s future threads and children too (read() then returns the tree's total).
    bool inherit = false;
    /// Start disabled and enable at the target's next exec (the launcher opens before exec).
    bool enable_on_exec = false;
    /// Start disabled (enable() later).
    bool disabled = false;
    /// Map the first page so the owning thread can read with rdpmc (read_fast()).
    bool map_user_page = false;
  };

  /// Opens `encoding` on `pid` (a thread id, or 0 for the calling thread) on `cpu` (-1: any CPU).
  /// Returns 0 or -errno: ENOENT/ENODEV/EOPNOTSUPP when this machine cannot count the event
  /// (no hardware PMU, event unknown to this CPU), EACCES/EPERM when perf is denied. An event that
  /// includes the kernel is retried user-only when the kernel part is denied (perf_event_paranoid).
  int open(const EventEncoding& encoding, pid_t pid, int cpu, const Options& options);
  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int enable();
  int disable();
  /// read(2): value and times, the process tree's total for an inherited event. False on error.
  bool read(CounterReading& reading) const;
  /// The calling thread's own counter through the mmap page and rdpmc, when the kernel allows it
  /// (cap_user_rdpmc and the event is on the PMU); otherwise falls back to read(2). Signal-safe.
  WHATIF_SIGNAL_SAFE bool read_fast(CounterReading& reading) const;
  /// Whether read_fast uses rdpmc (false: it uses read(2)).
  bool rdpmc_allowed() const;
  void close();

 private:
  int fd_ = -1;
  void* mapping_ = nullptr;
  std::size_t mapping_bytes_ = 0;
};

/// value × enabled / running: the count the event would have reached had it counted all the time
/// it was enabled. 0 when it never ran. Pure.
double scaled_value(const CounterReading& reading);
/// Several CPUs' readings of one event on one task as one reading: counts and running times add;
/// the enabled time is the task's, the same on each CPU (the largest is kept). Pure.
CounterReading merge_cpus(const CounterReading& a, const CounterReading& b);
/// running / enabled in [0, 1] (1 when enabled is 0: nothing to scale). Pure.
double running_fraction(const CounterReading& reading);

}  // namespace whatif::os
