// Latency points during an experiment: the time integral of the requests in flight (read at each
// profiler tick and at random moments between ticks) and the source-point results built from it at
// the experiment's end. Profiler thread only.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "profile/profile_writer.h"
#include "progress/progress_points.h"

namespace whatif::experiment {

/// Per latency point, the integral over the experiment of its requests in flight (count × ns), by
/// trapezoids between readings. Little's law needs the time average: readings must not keep step
/// with the program. One reading per 3-ms tick, in step with a server fed in 6-ms bursts, made its
/// mean latency (W = L / λ) 25-36% longer than the program itself measured (the suite's `latency`:
/// 3.29 and 3.87 ms against 2.64 and 2.85), so between ticks it is read at random gaps (next_gap_ns).
class InFlightIntegral {
 public:
  /// Shortest and longest gap between two readings within a tick's sleep (uniform between them).
  static constexpr uint64_t kMinGapNs = 100000;
  static constexpr uint64_t kMaxGapNs = 900000;

  explicit InFlightIntegral(uint64_t seed = 1) : random_(seed) {}
  /// Starts a new experiment at `now` with `readings` as its first reading: forgets the integrals.
  void reset(uint64_t now, const std::vector<progress::PointReading>& readings);
  /// Adds, for each latency point in `readings`, the trapezoid from its previous reading (or the
  /// reset's; none: this one) to this one.
  void integrate(uint64_t now, const std::vector<progress::PointReading>& readings);
  /// The integral of point `name`, or nullptr when it was never integrated.
  const double* find(const std::string& name) const;
  /// Whether the last reading held a latency point (then readings between ticks are worth taking).
  bool tracking() const { return !last_.empty(); }
  /// The next gap between readings: uniform in [kMinGapNs, kMaxGapNs].
  uint64_t next_gap_ns();

 private:
  std::unordered_map<std::string, double> integral_;  // latency name -> count·ns
  std::unordered_map<std::string, double> last_;      // latency name -> in flight at the last reading
  uint64_t last_ns_ = 0;
  std::mt19937_64 random_;
};

/// One result per source point in `now`: its visits (and for latency points departures and the
/// in-flight averages over real and effective time) since `at_start`. `duration_ns` is the
/// experiment's real time; `delay_ns` the global delay inserted meanwhile (virtual time removed).
std::vector<profile::PointResult> source_point_deltas(const std::vector<progress::PointReading>& now,
                                                      const std::vector<progress::PointReading>& at_start,
                                                      const InFlightIntegral& in_flight, double duration_ns,
                                                      uint64_t delay_ns);

}  // namespace whatif::experiment
