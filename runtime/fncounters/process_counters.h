// Process-wide counting events for `--counters`' intervals (CPI and utilisation over time): task-clock,
// instructions and cycles, inherited by the threads created after they open. Opened on the initialising
// thread once the profiler thread runs (so whatif's own thread is not counted); read by the profiler thread.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "os/perf_counter.h"

namespace whatif::fncounters {

/// One event's change over an interval.
struct IntervalValue {
  std::string name;
  double value = 0;             ///< the delta, scaled by enabled / running over the interval
  double running_fraction = 1;  ///< of the interval's enabled time, how much it counted (1: not multiplexed)
};

/// One interval: the counted events' deltas and the events that could not be counted (name, why).
struct Interval {
  uint64_t interval_ns = 0;
  std::vector<IntervalValue> values;
  std::vector<std::pair<std::string, std::string>> unavailable;
};

class ProcessCounters {
 public:
  /// Opens `events` on the calling thread with inherit (initialising thread). The reasons an event
  /// could not open are kept for every interval.
  void open(const std::vector<config::CounterEvent>& events, uint64_t now_ns);
  bool ready() const { return ready_.load(std::memory_order_acquire); }
  /// The interval since the previous read (or the open), ending at `now_ns`; profiler thread.
  Interval read(uint64_t now_ns);

 private:
  struct Event {
    std::string name;
    os::CountingEvent event;
    std::string unavailable;  ///< why it could not open; empty when it counts
    os::CounterReading last;
  };
  std::vector<Event> events_;
  uint64_t last_ns_ = 0;
  std::atomic<bool> ready_{false};
};

/// Why a counting event could not open (`error`: a positive errno), for the user.
std::string unavailable_reason(int error, bool forced);

}  // namespace whatif::fncounters
