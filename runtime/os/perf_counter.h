// Counting perf events (no sampling): open one on a thread or a whole process tree (inherit) and read
// it with its enabled/running times. (Per-thread counts do not use inherit_stat's exit records: the kernel's context-switch
// optimisation swaps counts between unlike events of cloned contexts, see docs/counters.md.)
// Used by the launcher (`whatif stat`, one thread); pure syscalls, usable by the runtime too.
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <vector>


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

/// A counting event. Move-only; closes its descriptor.
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
  };

  /// Opens `encoding` on `pid` (a thread id, or 0 for the calling thread) on `cpu` (-1: any CPU).
  /// Returns 0 or -errno: ENOENT/ENODEV/EOPNOTSUPP when this machine cannot count the event
  /// (no hardware PMU, event unknown to this CPU), EACCES/EPERM when perf is denied. An event that
  /// includes the kernel is retried user-only when the kernel part is denied (perf_event_paranoid).
  int open(const EventEncoding& encoding, pid_t pid, int cpu, const Options& options);
  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  /// read(2): value and times, the process tree's total for an inherited event. False on error.
  bool read(CounterReading& reading) const;
  void close();

 private:
  int fd_ = -1;
};

/// value × enabled / running: the count the event would have reached had it counted all the time
/// it was enabled. 0 when it never ran. Pure.
double scaled_value(const CounterReading& reading);
/// running / enabled in [0, 1] (1 when enabled is 0: nothing to scale). Pure.
double running_fraction(const CounterReading& reading);

}  // namespace whatif::os
