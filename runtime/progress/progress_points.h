// Progress points: the Coz-ABI counter registry (_coz_get_counter), breakpoint points counted by
// per-thread hardware breakpoints, and sampled points. Counters are registered from any thread,
// also before main; the profiler thread reads them.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/signal_safe.h"

namespace whatif::progress {

/// Coz's counter layout; must stay {size_t count; size_t backoff;}.
struct CozCounter {
  size_t count;
  size_t backoff;
};
static_assert(sizeof(CozCounter) == 2 * sizeof(size_t), "Coz ABI: coz_counter_t layout");

enum class CounterType : int { kThroughput = 1, kBegin = 2, kEnd = 3 };

struct CounterSlot {
  CozCounter counter{0, 0};
  int type = 0;
  char name[160] = {};
  std::atomic<bool> ready{false};  ///< release-published once type and name are set
  /// BEGIN and END slots of one name: the other's index, or -1 (set when the second registers).
  std::atomic<int> partner{-1};
  /// BEGIN slots: the integral of (begins - ends) over the global delay clock, in count·ns. The
  /// virtual time each raise removes, weighted by the requests in flight when it is inserted.
  std::atomic<int64_t> delayed_in_flight_ns{0};
};

/// A fixed table: no allocation, so it works before main and before the runtime initialises.
class CounterRegistry {
 public:
  static constexpr std::size_t kMaxCounters = 512;
  /// Returns a counter stable for the process's lifetime; the same (type, name) gives the same
  /// counter. nullptr when the table is full or type is unknown.
  CozCounter* get(int type, const char* name);
  /// Profiler thread: the published slots (valid indices [0, size())).
  std::size_t size() const { return used_.load(std::memory_order_acquire); }
  const CounterSlot& slot(std::size_t index) const { return slots_[index]; }
  /// Any thread: how many latency BEGIN slots are registered (what on_delay_inserted visits).
  std::size_t latency_size() const { return latency_used_.load(std::memory_order_acquire); }
  /// Any thread, signal context too: the global delay clock rose by `delay_ns` (virtual time removed
  /// from the program); weights it by each latency point's requests in flight now. Visits only the
  /// registered BEGIN slots, not the whole table.
  WHATIF_SIGNAL_SAFE void on_delay_inserted(uint64_t delay_ns);

 private:
  CounterSlot slots_[kMaxCounters];
  std::atomic<std::size_t> used_{0};
  /// Indices of the BEGIN slots, in registration order; entry i is written once, under lock_,
  /// before latency_used_ (release) covers it, and read only below latency_used_ (acquire).
  uint16_t latency_[kMaxCounters] = {};
  static_assert(kMaxCounters <= 65536, "latency_ holds slot indices in 16 bits");
  std::atomic<std::size_t> latency_used_{0};
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;
};

CounterRegistry& counters();

/// A reading of one progress point.
struct PointReading {
  std::string name;
  bool latency = false;
  uint64_t visits = 0;    ///< throughput visits, or arrivals (begins) for latency
  uint64_t departures = 0;  ///< ends (latency only)
  int64_t delayed_in_flight_ns = 0;  ///< latency only: CounterSlot::delayed_in_flight_ns
};

/// Reads every source-level point; pairs BEGIN/END counters of equal name into latency points.
std::vector<PointReading> read_source_points();

}  // namespace whatif::progress
