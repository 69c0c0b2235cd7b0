// Where experiments go once lines have been seen: the line and speedup of the next experiment,
// chosen to settle the head of the ranking sooner (LUCB over each line's estimated slope).
// Pure decisions over samples and experiment results; owned by the profiler thread's machine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

namespace whatif::experiment {

inline constexpr int kSpeedupSteps = 20;             ///< non-zero speedups are multiples of 1/20
inline constexpr int kWantedSpeedups = 3;            ///< distinct speedups a line should reach first
inline constexpr double kExploreProbability = 0.25;  ///< keep the sampled line (discovers new lines)
inline constexpr double kPriorSlopeSd = 0.5;         ///< a line never measured: its slope is unknown
inline constexpr double kPriorNoise = 0.1;           ///< relative rate noise until baselines tell
inline constexpr uint64_t kRecentSamples = 400;      ///< a line is running if sampled in this window
inline constexpr double kMinShare = 0.002;           ///< ... and holds this share of all samples
inline constexpr std::size_t kTopLines = 3;           ///< the ranking's head that must be settled
inline constexpr double kBoundZ = 1.96;               ///< bounds are 95% normal intervals

/// One line's evidence: experiments at non-zero speedups against the run's baseline rate.
struct LineEvidence {
  uint64_t samples = 0;
  uint64_t last_sample = 0;  ///< the run's sample count when this line was last sampled
  double sum_se = 0;         ///< Σ speedup × effect
  double sum_ss = 0;         ///< Σ speedup²
  int experiments = 0;
  uint32_t speedups_seen = 0;  ///< bit i: speedup (i+1)/20 measured
};

/// Chooses lines and speedups. `adaptive` false keeps the Coz paper's policy: the first line
/// sampled after the cool-off (lines in proportion to their samples), speedups uniform.
class Allocator {
 public:
  explicit Allocator(bool adaptive) : adaptive_(adaptive) {}

  /// A sample attributed to `line` (>= 0).
  void on_sample(int32_t line, uint64_t weight);
  /// A finished experiment on `line` at `speedup` whose progress points were visited `visits`
  /// times in `effective_ns` of effective (delay-free) time. Without visits it teaches nothing.
  void on_result(int32_t line, double speedup, uint64_t visits, double effective_ns);

  /// The line of the next experiment: `candidate` (the first line sampled after the cool-off), or
  /// under the adaptive policy, mostly the running line that unsettles the top of the ranking.
  int32_t choose_line(int32_t candidate, std::mt19937_64& random);
  /// A non-zero speedup for `line`: while it has fewer than kWantedSpeedups distinct ones, one it
  /// has not had.
  double choose_nonzero_speedup(int32_t line, std::mt19937_64& random) const;

  /// Estimated slope (program speedup per unit of line speedup) and its standard error.
  double slope(int32_t line) const;
  double slope_error(int32_t line) const;
  bool adaptive() const { return adaptive_; }

 private:
  LineEvidence& evidence(int32_t line);
  bool running(const LineEvidence& line) const;
  double noise() const;

  bool adaptive_;
  std::vector<LineEvidence> lines_;
  uint64_t total_samples_ = 0;
  // Baseline rates (Welford): the reference every effect is measured against.
  int baselines_ = 0;
  double baseline_mean_ = 0;
  double baseline_m2_ = 0;
};

}  // namespace whatif::experiment
