// Latency points during an experiment: the time integral of the requests in flight (sampled at
// each profiler tick) and the source-point results built from it at the experiment's end.
// Profiler thread only.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/profile_writer.h"
#include "progress/progress_points.h"

namespace whatif::experiment {

/// Per latency point, the integral over the experiment of its requests in flight (count × ns).
class InFlightIntegral {
 public:
  /// Starts a new experiment at `now`: forgets the integrals.
  void reset(uint64_t now);
  /// Adds, for each latency point in `readings`, its requests in flight × the time since the last
  /// call (or reset).
  void integrate(uint64_t now, const std::vector<progress::PointReading>& readings);
  /// The integral of point `name`, or nullptr when it was never integrated.
  const double* find(const std::string& name) const;

 private:
  std::unordered_map<std::string, double> integral_;  // latency name -> count·ns
  uint64_t last_ns_ = 0;
};

/// One result per source point in `now`: its visits (and for latency points departures and the
/// in-flight averages over real and effective time) since `at_start`. `duration_ns` is the
/// experiment's real time; `delay_ns` the global delay inserted meanwhile (virtual time removed).
std::vector<profile::PointResult> source_point_deltas(const std::vector<progress::PointReading>& now,
                                                      const std::vector<progress::PointReading>& at_start,
                                                      const InFlightIntegral& in_flight, double duration_ns,
                                                      uint64_t delay_ns);

}  // namespace whatif::experiment
