// Experiment allocation (see allocation.h). Pure: runs on the profiler thread, or in tests.
#include "experiment/allocation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

namespace whatif::experiment {

LineEvidence& Allocator::evidence(int32_t line) {
  if (static_cast<std::size_t>(line) >= lines_.size()) lines_.resize(static_cast<std::size_t>(line) + 1);
  return lines_[static_cast<std::size_t>(line)];
}

void Allocator::on_sample(int32_t line, uint64_t weight) {
  if (line < 0) return;
  total_samples_ += weight;
  LineEvidence& e = evidence(line);
  e.samples += weight;
  e.last_sample = total_samples_;
}

void Allocator::on_result(int32_t line, double speedup, uint64_t visits, double effective_ns) {
  if (line < 0 || visits == 0 || !(effective_ns > 0)) return;
  double rate = static_cast<double>(visits) / effective_ns;
  if (speedup <= 0) {
    ++baselines_;
    double delta = rate - baseline_mean_;
    baseline_mean_ += delta / baselines_;
    baseline_m2_ += delta * (rate - baseline_mean_);
    return;
  }
  if (baselines_ == 0) return;  // nothing to compare with yet
  double effect = rate / baseline_mean_ - 1;
  LineEvidence& e = evidence(line);
  e.sum_se += speedup * effect;
  e.sum_ss += speedup * speedup;
  ++e.experiments;
  int step = static_cast<int>(std::lround(speedup * kSpeedupSteps));
  if (step >= 1 && step <= kSpeedupSteps) e.speedups_seen |= 1u << (step - 1);
}

double Allocator::noise() const {
  if (baselines_ < 3 || !(baseline_mean_ > 0)) return kPriorNoise;
  return std::sqrt(baseline_m2_ / (baselines_ - 1)) / baseline_mean_;
}

double Allocator::slope(int32_t line) const {
  if (line < 0 || static_cast<std::size_t>(line) >= lines_.size()) return 0;
  const LineEvidence& e = lines_[static_cast<std::size_t>(line)];
  return e.sum_ss > 0 ? e.sum_se / e.sum_ss : 0;
}

double Allocator::slope_error(int32_t line) const {
  if (line < 0 || static_cast<std::size_t>(line) >= lines_.size()) return kPriorSlopeSd;
  const LineEvidence& e = lines_[static_cast<std::size_t>(line)];
  if (!(e.sum_ss > 0)) return kPriorSlopeSd;
  // The effect's noise compounds the experiment's and the baseline mean's.
  double per_experiment = noise() * std::sqrt(1 + 1.0 / std::max(baselines_, 1));
  return per_experiment / std::sqrt(e.sum_ss);
}

bool Allocator::running(const LineEvidence& line) const {
  return line.samples > 0 && total_samples_ - line.last_sample < kRecentSamples &&
         static_cast<double>(line.samples) >= kMinShare * static_cast<double>(total_samples_);
}

int32_t Allocator::choose_line(int32_t candidate, std::mt19937_64& random) {
  if (!adaptive_ || candidate < 0) return candidate;
  // Exploration: the first line sampled after the cool-off, in proportion to samples (Coz's policy),
  // gives every line its first experiments.
  if (std::uniform_real_distribution<double>(0, 1)(random) < kExploreProbability) return candidate;
  // LUCB-like for the top kTopLines (after Kalyanakrishnan et al., 2012): among measured lines that
  // are running now, ranked by estimated slope, a top line still short of kWantedSpeedups speedups
  // comes first; then, wherever two neighbours of the head (the last top line against the strongest
  // outsider) have overlapping intervals, the least certain of them is measured.
  std::vector<int32_t> measured;
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    if (lines_[i].experiments > 0 && (running(lines_[i]) || static_cast<int32_t>(i) == candidate)) {
      measured.push_back(static_cast<int32_t>(i));
    }
  }
  if (measured.empty()) return candidate;
  std::sort(measured.begin(), measured.end(), [&](int32_t a, int32_t b) { return slope(a) > slope(b); });
  std::size_t top = std::min<std::size_t>(kTopLines, measured.size());
  for (std::size_t i = 0; i < top; ++i) {
    const LineEvidence& e = lines_[static_cast<std::size_t>(measured[i])];
    if (std::popcount(e.speedups_seen) < kWantedSpeedups) return measured[i];
  }
  auto lower = [&](int32_t line) { return slope(line) - kBoundZ * slope_error(line); };
  auto upper = [&](int32_t line) { return slope(line) + kBoundZ * slope_error(line); };
  // Neighbours in the ranking (within the top lines, and the last of them against the strongest
  // outsider) whose intervals overlap leave the order in doubt: the least certain of them gets it.
  std::size_t last = std::min(top + 1, measured.size());
  int32_t strongest = top < measured.size() ? measured[top] : -1;
  for (std::size_t i = top + 1; i < measured.size(); ++i) {
    if (upper(measured[i]) > upper(strongest)) strongest = measured[i];
  }
  int32_t chosen = -1;
  for (std::size_t i = 0; i + 1 < last; ++i) {
    int32_t above = measured[i];
    int32_t below = i + 1 == top ? strongest : measured[i + 1];
    if (upper(below) <= lower(above)) continue;  // settled here
    for (int32_t line : {above, below}) {
      if (chosen < 0 || slope_error(line) > slope_error(chosen)) chosen = line;
    }
  }
  return chosen >= 0 ? chosen : candidate;  // settled: keep exploring
}

double Allocator::choose_nonzero_speedup(int32_t line, std::mt19937_64& random) const {
  uint32_t seen = 0;
  if (adaptive_ && line >= 0 && static_cast<std::size_t>(line) < lines_.size()) {
    seen = lines_[static_cast<std::size_t>(line)].speedups_seen;
  }
  if (std::popcount(seen) < kWantedSpeedups) {
    int unseen = kSpeedupSteps - std::popcount(seen);
    int pick = std::uniform_int_distribution<int>(0, unseen - 1)(random);
    for (int step = 1; step <= kSpeedupSteps; ++step) {
      if ((seen >> (step - 1) & 1) != 0) continue;
      if (pick-- == 0) return step * (1.0 / kSpeedupSteps);
    }
  }
  return std::uniform_int_distribution<int>(1, kSpeedupSteps)(random) * (1.0 / kSpeedupSteps);
}

}  // namespace whatif::experiment
