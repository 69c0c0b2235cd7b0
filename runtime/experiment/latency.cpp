// In-flight integration of latency points and source-point results (see latency.h). Profiler
// thread only.
#include "experiment/latency.h"

#include <algorithm>

namespace whatif::experiment {

namespace {
double in_flight_of(const progress::PointReading& reading) {
  return static_cast<double>(static_cast<int64_t>(reading.visits - reading.departures));
}
}  // namespace

void InFlightIntegral::reset(uint64_t now, const std::vector<progress::PointReading>& readings) {
  integral_.clear();
  last_.clear();
  last_ns_ = now;
  for (const progress::PointReading& reading : readings)
    if (reading.latency) last_[reading.name] = in_flight_of(reading);
}

void InFlightIntegral::integrate(uint64_t now, const std::vector<progress::PointReading>& readings) {
  if (now <= last_ns_) return;
  const double elapsed = static_cast<double>(now - last_ns_);
  last_ns_ = now;
  for (const progress::PointReading& reading : readings) {
    if (!reading.latency) continue;
    const double in_flight = in_flight_of(reading);
    auto previous = last_.try_emplace(reading.name, in_flight).first;  // first reading: this one
    integral_[reading.name] += (previous->second + in_flight) / 2 * elapsed;
    previous->second = in_flight;
  }
}

uint64_t InFlightIntegral::next_gap_ns() {
  return std::uniform_int_distribution<uint64_t>(kMinGapNs, kMaxGapNs)(random_);
}

const double* InFlightIntegral::find(const std::string& name) const {
  auto found = integral_.find(name);
  return found != integral_.end() ? &found->second : nullptr;
}

std::vector<profile::PointResult> source_point_deltas(const std::vector<progress::PointReading>& now,
                                                      const std::vector<progress::PointReading>& at_start,
                                                      const InFlightIntegral& in_flight, double duration_ns,
                                                      uint64_t delay_ns) {
  std::vector<profile::PointResult> results;
  for (const progress::PointReading& reading : now) {
    const progress::PointReading* before = nullptr;
    for (const auto& start : at_start) {
      if (start.name == reading.name && start.latency == reading.latency) before = &start;
    }
    profile::PointResult result;
    result.name = reading.name;
    result.latency = reading.latency;
    result.delta = reading.visits - (before ? before->visits : 0);
    if (reading.latency) {
      result.departures = reading.departures - (before ? before->departures : 0);
      result.in_flight_end = static_cast<int64_t>(reading.visits - reading.departures);
      const double* integral = in_flight.find(reading.name);
      result.in_flight_avg = integral != nullptr && duration_ns > 0 ? *integral / duration_ns : 0;
      // Over effective time: the real-time integral less the virtual time removed, weighted by
      // the requests in flight when each delay was inserted (exact, unlike the tick's readings).
      double delayed = static_cast<double>(reading.delayed_in_flight_ns - (before ? before->delayed_in_flight_ns : 0));
      double effective_duration = duration_ns - static_cast<double>(delay_ns);
      double real = integral != nullptr ? *integral : 0;
      result.in_flight_effective_avg = effective_duration > 0 ? std::max(0.0, (real - delayed) / effective_duration) : 0;
    }
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace whatif::experiment
