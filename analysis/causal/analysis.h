// Causal-profile analysis: per line and progress point, the program speedup predicted at each
// measured line speedup, impact (average over the curve), slope, 95% CIs (bootstrap, never narrower
// than the run's measured per-experiment noise), contention, baselines, combined runs, phase correction
// (Coz paper, eq. 8) and the evidence-aware ranking. Mirrored by viewer/src/analysis.js; both are
// checked against the same golden vectors (tests/fixtures/profiles/golden/).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/profile/profile.h"

namespace whatif::analysis {

struct Options {
  int bootstrap = 500;             ///< bootstrap replicates (0: no CIs)
  std::uint32_t seed = 1;          ///< combined with a hash of line and point name
  bool phase_correction = true;    ///< apply eq. 8 where the profile carries its inputs
  std::optional<std::string> point;  ///< rank by this progress point (default: best of all)
};

/// A value with its 95% interval (docs/report.md, "95% intervals"). `valid` is false when the value
/// cannot be computed; `has_ci` is false when its uncertainty is unknown.
struct Estimate {
  bool valid = false;
  double value = 0;
  bool has_ci = false;
  double ci_low = 0;
  double ci_high = 0;
};

struct CurvePoint {
  double speedup = 0;          ///< line speedup x
  double program_speedup = 0;  ///< predicted program speedup at x (phase-corrected if applied)
  bool has_ci = false;
  double ci_low = 0;
  double ci_high = 0;
  int n_experiments = 0;
};

enum class Baseline { line, run, none };
const char* baseline_name(Baseline baseline);

struct PointResult {
  std::string name;
  PointKind kind = PointKind::throughput;
  Baseline baseline = Baseline::none;
  std::vector<CurvePoint> curve;
  Estimate impact;  ///< mean predicted program speedup over [0, max measured x], trapezoid rule
  Estimate slope;   ///< least-squares slope of the curve (with (0,0) when no own baseline)
  double intercept = 0;
  double max = 0;
  double min = 0;
  int n_experiments = 0;
  int n_speedups = 0;
  bool contention = false;  ///< falling curve: slope <= kContentionSlope and its upper 95% bound < 0
  bool enough_evidence = false;  ///< >= kMinEvidenceSpeedups non-zero speedups, >= kMinEvidenceExperiments
  bool has_rank_bound = false;   ///< the point's noise is known (PointSummary::noise_known)
  double rank_bound = 0;         ///< impact minus the half-width of its noise-floor interval
};

struct PhaseCorrection {
  bool applied = false;
  double factor = 1;   ///< t_A / T estimate, at most 1
  std::string reason;  ///< why it was not applied
};

struct LineResult {
  std::string line;
  int n_experiments = 0;
  int n_speedups = 0;
  PhaseCorrection phase;
  std::vector<PointResult> points;
  std::optional<double> rank_impact;  ///< the impact of the line's ranking point
  std::optional<double> rank_bound;   ///< that point's rank_bound (conservative impact), when known
  bool enough_evidence = false;       ///< of that point; lines without it rank after all others
  bool contention = false;
};

struct PointSummary {
  std::string name;
  PointKind kind = PointKind::throughput;
  int experiments = 0;       ///< experiments that report this point
  double visits = 0;         ///< total deltas (throughput) or arrivals (latency)
  double mean_visits = 0;    ///< per experiment
  int baseline_experiments = 0;
  bool noise_known = false;  ///< at least kMinNoiseDegrees degrees of freedom
  double noise = 0;          ///< per-experiment relative standard deviation of the period within a cell
  int noise_degrees = 0;     ///< its degrees of freedom: experiments minus cells (line, speedup) pooled
};

struct Report {
  Options options;
  /// The line speedup of --fixed-speedup runs (0 < x <= 1) when every profile is one and they agree,
  /// else -1: the answer a user asked for is then each line's curve point at x, not its impact.
  double fixed_speedup = -1;
  int n_experiments = 0;
  int phase_corrected_lines = 0;
  std::vector<PointSummary> points;
  std::vector<LineResult> lines;  ///< ranked (docs/report.md, "Ranking")
  std::vector<std::string> warnings;
};

/// Contention needs a slope at or below this (besides an upper 95% bound below zero): a practically
/// relevant slowdown, not just a statistically detectable one.
inline constexpr double kContentionSlope = -0.05;

/// The per-experiment noise of a point is estimated only with at least this many degrees of freedom.
inline constexpr int kMinNoiseDegrees = 4;

/// A point's curve is evidence enough for ranking with at least this many distinct non-zero speedups
/// and this many experiments (its own baseline included); lines below rank after all others.
inline constexpr int kMinEvidenceSpeedups = 2;
inline constexpr int kMinEvidenceExperiments = 3;
/// And the line sampled this many times in its sped experiments (each sample inserts the delay of
/// one period): memcached's merged report ranked first a line with 6 experiments at 4 speedups
/// and one sample among them (+52%: the rounds' different rates, not the line).
inline constexpr double kMinEvidenceSamples = 10;

/// Too few visits per experiment for a progress point to give a usable rate.
inline constexpr double kMinVisitsPerExperiment = 5;

/// A point whose median visited experiment saw at least this many visits is busy: an experiment
/// without a visit beside one with visits marks where its activity started or stopped (an edge),
/// not chance (Poisson: e^-20).
inline constexpr double kEdgeMinVisits = 20;

/// Analyses the experiments of all `profiles` together (equal line, speedup and point add up).
Report analyse(const std::vector<Profile>& profiles, const Options& options);

/// The speedup every header of every profile names with --fixed-speedup (0 < x <= 1), or -1 when one
/// has none (a Coz profile, a run of random speedups) or two disagree.
double common_fixed_speedup(const std::vector<Profile>& profiles);

/// The point's measured curve point at line speedup `speedup`, or nullptr (not measured).
const CurvePoint* curve_point_at(const PointResult& point, double speedup);

/// Mulberry32: the bootstrap's generator; 32-bit arithmetic so JavaScript reproduces it exactly.
class Mulberry32 {
 public:
  explicit Mulberry32(std::uint32_t seed) : state_(seed) {}
  std::uint32_t next() {
    state_ += 0x6D2B79F5u;
    std::uint32_t t = state_;
    t = (t ^ (t >> 15)) * (t | 1u);
    t ^= t + (t ^ (t >> 7)) * (t | 61u);
    return t ^ (t >> 14);
  }
  /// Uniform index in [0, n) for n < 2^21: floor(next() * n / 2^32).
  std::uint32_t index(std::uint32_t n) {
    return static_cast<std::uint32_t>((static_cast<std::uint64_t>(next()) * n) >> 32);
  }

 private:
  std::uint32_t state_;
};

/// FNV-1a over the bytes of `text`.
std::uint32_t fnv1a(const std::string& text);

}  // namespace whatif::analysis
