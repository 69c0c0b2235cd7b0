// The counter registry behind _coz_get_counter (any thread, before main too) and its reading on
// the profiler thread.
#include "progress/progress_points.h"

#include <sched.h>

#include <cstring>
#include <map>

namespace whatif::progress {

CounterRegistry& counters() {
  static CounterRegistry registry;  // constant-initialised: usable from any constructor
  return registry;
}

CozCounter* CounterRegistry::get(int type, const char* name) {
  if (type < 1 || type > 3 || name == nullptr) return nullptr;
  // A spin lock, not a mutex: this may run before the runtime resolved pthread's real symbols.
  while (lock_.test_and_set(std::memory_order_acquire)) sched_yield();
  CozCounter* result = nullptr;
  std::size_t used = used_.load(std::memory_order_relaxed);
  for (std::size_t i = 0; i < used; ++i) {
    if (slots_[i].type == type && std::strncmp(slots_[i].name, name, sizeof(slots_[i].name) - 1) == 0) {
      result = &slots_[i].counter;
      break;
    }
  }
  if (result == nullptr && used < kMaxCounters) {
    CounterSlot& slot = slots_[used];
    slot.type = type;
    std::strncpy(slot.name, name, sizeof(slot.name) - 1);
    if (type != static_cast<int>(CounterType::kThroughput)) {
      int other = type == static_cast<int>(CounterType::kBegin) ? static_cast<int>(CounterType::kEnd)
                                                                  : static_cast<int>(CounterType::kBegin);
      for (std::size_t i = 0; i < used; ++i) {
        if (slots_[i].type == other && std::strncmp(slots_[i].name, slot.name, sizeof(slot.name)) == 0) {
          // Release pairs with on_delay_inserted's acquire: the partner's slot is complete.
          slot.partner.store(static_cast<int>(i), std::memory_order_release);
          slots_[i].partner.store(static_cast<int>(used), std::memory_order_release);
          break;
        }
      }
    }
    slot.ready.store(true, std::memory_order_release);
    used_.store(used + 1, std::memory_order_release);  // pairs with size()'s acquire
    if (type == static_cast<int>(CounterType::kBegin)) {
      std::size_t latency = latency_used_.load(std::memory_order_relaxed);  // only written under lock_
      latency_[latency] = static_cast<uint16_t>(used);
      // Release pairs with on_delay_inserted's acquire: the index and the slot are complete.
      latency_used_.store(latency + 1, std::memory_order_release);
    }
    result = &slot.counter;
  }
  lock_.clear(std::memory_order_release);
  return result;
}

std::vector<PointReading> read_source_points() {
  CounterRegistry& registry = counters();
  std::vector<PointReading> readings;
  std::map<std::string, std::size_t> latency_index;
  for (std::size_t i = 0; i < registry.size(); ++i) {
    const CounterSlot& slot = registry.slot(i);
    uint64_t value = __atomic_load_n(&slot.counter.count, __ATOMIC_RELAXED);
    if (slot.type == static_cast<int>(CounterType::kThroughput)) {
      readings.push_back({slot.name, false, value, 0});
      continue;
    }
    auto [it, inserted] = latency_index.try_emplace(slot.name, readings.size());
    if (inserted) readings.push_back({slot.name, true, 0, 0});
    PointReading& reading = readings[it->second];
    if (slot.type == static_cast<int>(CounterType::kBegin)) {
      reading.visits = value;
      reading.delayed_in_flight_ns = slot.delayed_in_flight_ns.load(std::memory_order_relaxed);
    } else {
      reading.departures = value;
    }
  }
  return readings;
}

}  // namespace whatif::progress
