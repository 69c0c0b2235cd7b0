// Process-wide interval counters: opened on the initialising thread, read by the profiler thread
// (the ready flag orders the two).
#include "fncounters/process_counters.h"

#include <cerrno>
#include <cstring>

namespace whatif::fncounters {

std::string unavailable_reason(int error, bool forced) {
  if (forced) return "forced by WHATIF_UNAVAILABLE_EVENTS";
  if (error == ENOENT || error == ENODEV || error == EOPNOTSUPP) return "this machine has no hardware PMU for it";
  if (error == EACCES || error == EPERM) {
    return std::string(std::strerror(error)) + ": perf is restricted (lower /proc/sys/kernel/perf_event_paranoid)";
  }
  return std::strerror(error);
}

void ProcessCounters::open(const std::vector<config::CounterEvent>& events, uint64_t now_ns) {
  events_.clear();
  events_.reserve(events.size());
  for (const config::CounterEvent& spec : events) {
    Event event;
    event.name = spec.name;
    int result = -ENOENT;
    if (!spec.forced_unavailable) result = event.event.open(spec.encoding, 0, -1, {.inherit = true});
    if (result != 0) event.unavailable = unavailable_reason(-result, spec.forced_unavailable);
    else event.event.read(event.last);
    events_.push_back(std::move(event));
  }
  last_ns_ = now_ns;
  ready_.store(true, std::memory_order_release);
}

Interval ProcessCounters::read(uint64_t now_ns) {
  Interval interval;
  interval.interval_ns = now_ns > last_ns_ ? now_ns - last_ns_ : 0;
  last_ns_ = now_ns;
  for (Event& event : events_) {
    if (!event.unavailable.empty()) {
      interval.unavailable.emplace_back(event.name, event.unavailable);
      continue;
    }
    os::CounterReading now;
    if (!event.event.read(now)) {
      interval.unavailable.emplace_back(event.name, std::string("read failed: ") + std::strerror(errno));
      continue;
    }
    // The interval's own change in value, enabled and running time: scaling each interval by itself.
    os::CounterReading delta{now.value - event.last.value, now.time_enabled - event.last.time_enabled,
                             now.time_running - event.last.time_running};
    event.last = now;
    interval.values.push_back({event.name, os::scaled_value(delta), os::running_fraction(delta)});
  }
  return interval;
}

}  // namespace whatif::fncounters
