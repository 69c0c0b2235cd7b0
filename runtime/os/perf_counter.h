// Counting perf events (no sampling): open one on a thread or a whole process tree (inherit) and read
// it with its enabled/running times. (Per-thread counts do not use inherit_stat's exit records: the kernel's context-switch
// optimisation swaps counts between unlike events of cloned contexts, see docs/counters.md.)
// Used by the launcher (`whatif stat`, one thread) and the runtime's `--counters` hooks (application
// threads: the owning thread reads its own events, by rdpmc through the perf mmap page where allowed).
#pragma once
#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
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
    /// Start disabled (enable() later): an event set not yet in use.
    bool start_disabled = false;
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
  /// PERF_EVENT_IOC_ENABLE / DISABLE: start or stop counting (the count is kept). 0 or -errno.
  int enable() const;
  int disable() const;

  /// Maps the event's perf page (read-only, no ring) for rdpmc reads by the thread the event counts.
  /// Returns an empty string when user-space reads are possible, else why not (for the user).
  std::string map_user_page();
  /// The event's value by rdpmc (the calling thread must be the one it counts). False when the page
  /// is not mapped or the event has no hardware counter right now (index 0): read(2) then.
  bool read_user(uint64_t& value) const;
  void close();

 private:
  int fd_ = -1;
  const perf_event_mmap_page* page_ = nullptr;
};

/// One read of a perf mmap page by its seqlock (kernel's perf_event_mmap_page documentation): offset
/// plus the counter `index - 1` read with `rdpmc`, sign-extended from pmc_width bits. False when the
/// kernel does not allow user reads (cap_user_rdpmc 0) or the event has no counter now (index 0).
/// `rdpmc` is the instruction in production and a stand-in in the tests. Any thread context.
template <typename Rdpmc>
bool read_user_page(const volatile perf_event_mmap_page* page, Rdpmc&& rdpmc, uint64_t& value) {
  uint32_t sequence = 0;
  do {
    sequence = page->lock;
    asm volatile("" ::: "memory");
    uint32_t index = page->index;
    if (!page->cap_user_rdpmc || index == 0) return false;
    int64_t offset = page->offset;
    uint16_t width = page->pmc_width;
    uint64_t count = rdpmc(index - 1);
    if (width > 0 && width < 64) {
      count <<= 64 - width;  // sign-extend the counter's width
      count = static_cast<uint64_t>(static_cast<int64_t>(count) >> (64 - width));
    }
    value = static_cast<uint64_t>(offset) + count;
    asm volatile("" ::: "memory");
  } while (page->lock != sequence);
  return true;
}

/// The rdpmc instruction (x86-64): counter `counter`'s raw value. Faults unless the kernel allows it
/// (a mapped perf page with cap_user_rdpmc), so only read_user_page calls it.
inline uint64_t rdpmc_instruction(uint32_t counter) {
  uint32_t low = 0, high = 0;
  asm volatile("rdpmc" : "=a"(low), "=d"(high) : "c"(counter));
  return static_cast<uint64_t>(high) << 32 | low;
}

/// value × enabled / running: the count the event would have reached had it counted all the time
/// it was enabled. 0 when it never ran. Pure.
double scaled_value(const CounterReading& reading);
/// running / enabled in [0, 1] (1 when enabled is 0: nothing to scale). Pure.
double running_fraction(const CounterReading& reading);

}  // namespace whatif::os
