// The analysis behind `whatif report` (and, via golden vectors, the viewer's analysis.js). Every
// floating-point sum runs in a fixed order (experiment order, ascending speedup) so that C++ and
// JavaScript produce the same numbers; see docs/report.md for the definitions.
#include "analysis/causal/analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

namespace whatif::analysis {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// One experiment's contribution to one progress point: D and the point's counts (I = L_avg * D).
struct Unit {
  double duration = 0;
  double visits = 0;     ///< delta (throughput) or arrivals (latency)
  double in_flight = 0;  ///< in_flight_avg * duration (latency only)
};

/// Progress period (throughput) or latency (Little's law) of a set of units; NaN when undefined.
double period(PointKind kind, double duration, double visits, double in_flight) {
  if (!(visits > 0)) return kNaN;
  if (kind == PointKind::throughput) return duration > 0 ? duration / visits : kNaN;
  return in_flight > 0 ? in_flight / visits : kNaN;  // W = (I/D) / (A/D) = I / A
}

double period_of(PointKind kind, const std::vector<Unit>& units) {
  double duration = 0, visits = 0, in_flight = 0;
  for (const Unit& unit : units) {
    duration += unit.duration;
    visits += unit.visits;
    in_flight += unit.in_flight;
  }
  return period(kind, duration, visits, in_flight);
}

double resampled_period(PointKind kind, const std::vector<Unit>& units, Mulberry32& rng) {
  double duration = 0, visits = 0, in_flight = 0;
  std::uint32_t n = static_cast<std::uint32_t>(units.size());
  for (std::uint32_t i = 0; i < n; ++i) {
    const Unit& unit = units[rng.index(n)];
    duration += unit.duration;
    visits += unit.visits;
    in_flight += unit.in_flight;
  }
  return period(kind, duration, visits, in_flight);
}

/// Area under the fit points (trapezoids) divided by the largest x; NaN without a positive x.
double mean_height(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() < 2 || !(x.back() > 0)) return kNaN;
  double area = 0;
  for (size_t i = 1; i < x.size(); ++i) area += (y[i - 1] + y[i]) / 2 * (x[i] - x[i - 1]);
  return area / x.back();
}

/// Least-squares slope and intercept; NaN slope with fewer than two distinct x.
std::pair<double, double> fit(const std::vector<double>& x, const std::vector<double>& y) {
  size_t n = x.size();
  if (n < 2) return {kNaN, kNaN};
  double sx = 0, sy = 0;
  for (size_t i = 0; i < n; ++i) {
    sx += x[i];
    sy += y[i];
  }
  double xm = sx / static_cast<double>(n), ym = sy / static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - xm) * (y[i] - ym);
    sxx += (x[i] - xm) * (x[i] - xm);
  }
  if (!(sxx > 0)) return {kNaN, kNaN};
  double slope = sxy / sxx;
  return {slope, ym - slope * xm};
}

/// Percentile (linear interpolation between order statistics, "type 7") of finite values.
double quantile(std::vector<double>& values, double p) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  double position = p * static_cast<double>(values.size() - 1);
  size_t lower = static_cast<size_t>(std::floor(position));
  if (lower + 1 >= values.size()) return values.back();
  double fraction = position - static_cast<double>(lower);
  return values[lower] + (values[lower + 1] - values[lower]) * fraction;
}

void set_ci(std::vector<double>& samples, bool& has_ci, double& low, double& high) {
  if (samples.empty()) return;
  has_ci = true;
  low = quantile(samples, 0.025);
  high = quantile(samples, 0.975);
}

bool finite(double value) { return std::isfinite(value); }

/// Per point: units by line, then by speedup key (per mille).
struct PointData {
  PointKind kind = PointKind::throughput;
  std::map<std::string, std::map<long, std::vector<Unit>>> by_line;
  std::vector<Unit> baseline;  ///< every speedup-0 unit of every line: the run-wide baseline
  PointSummary summary;
};

/// Per line: what phase correction needs, summed over experiments and over profiles.
struct LineData {
  int experiments = 0;
  std::set<long> speedups;
  double t_obs = 0;
  double s_obs = 0;
  bool s_obs_known = true;
  std::map<size_t, std::pair<double, double>> s_and_t;  ///< per profile: (s, T)
  std::set<size_t> profiles;
  bool fixed_line = false;  ///< measured by a --fixed-line run: in every phase, not only its own
};

PhaseCorrection phase_for(const LineData& line, const Options& options) {
  PhaseCorrection phase;
  if (!options.phase_correction) {
    phase.reason = "disabled";
    return phase;
  }
  if (line.fixed_line) {
    // Eq. 8 corrects experiments that only run while the line runs (lines chosen from recent
    // samples). --fixed-line experiments run in every phase: their average is already weighted.
    phase.reason = "--fixed-line experiments ran in every phase";
    return phase;
  }
  if (!line.s_obs_known || !(line.s_obs > 0)) {
    phase.reason = "no samples in the line during its experiments";
    return phase;
  }
  double s = 0, total = 0;
  for (size_t profile : line.profiles) {
    auto it = line.s_and_t.find(profile);
    if (it == line.s_and_t.end()) {
      phase.reason = "the profile has no sample totals or run time";
      return phase;
    }
    s += it->second.first;
    total += it->second.second;
  }
  if (!(s > 0) || !(total > 0) || !(line.t_obs > 0)) {
    phase.reason = "the profile has no sample totals or run time";
    return phase;
  }
  phase.applied = true;
  phase.factor = std::min(1.0, (line.t_obs / line.s_obs) * (s / total));
  return phase;
}

PointResult analyse_point(const std::string& line, const std::string& name, const PointData& data,
                          const std::map<long, std::vector<Unit>>& groups, double factor,
                          const Options& options) {
  PointResult result;
  result.name = name;
  result.kind = data.kind;
  for (const auto& [key, units] : groups) result.n_experiments += static_cast<int>(units.size());
  result.n_speedups = static_cast<int>(groups.size());

  auto own = groups.find(0);
  const std::vector<Unit>* baseline = nullptr;
  if (own != groups.end() && finite(period_of(data.kind, own->second))) {
    baseline = &own->second;
    result.baseline = Baseline::line;
  } else if (!data.baseline.empty() && finite(period_of(data.kind, data.baseline))) {
    baseline = &data.baseline;
    result.baseline = Baseline::run;
  } else {
    return result;
  }

  // Levels with a valid period, ascending speedup; the baseline level (own) is exactly 0.
  double base = period_of(data.kind, *baseline);
  std::vector<long> keys;
  std::vector<const std::vector<Unit>*> level_units;
  for (const auto& [key, units] : groups) {
    if (key == 0 && result.baseline == Baseline::line) {
      keys.push_back(0);
      level_units.push_back(&units);
      result.curve.push_back({0, 0, options.bootstrap > 0, 0, 0, static_cast<int>(units.size())});
      continue;
    }
    double value = period_of(data.kind, units);
    if (!finite(value)) continue;
    keys.push_back(key);
    level_units.push_back(&units);
    CurvePoint point;
    point.speedup = static_cast<double>(key) / 1000;
    point.program_speedup = (1 - value / base) * factor;
    point.n_experiments = static_cast<int>(units.size());
    result.curve.push_back(point);
  }
  if (result.curve.empty()) return result;

  // Fit points: the curve, anchored at (0, 0) when the line has no baseline level of its own.
  auto fit_points = [&](const std::vector<double>& ys, std::vector<double>& fx, std::vector<double>& fy) {
    fx.clear();
    fy.clear();
    if (keys.front() != 0) {
      fx.push_back(0);
      fy.push_back(0);
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      fx.push_back(static_cast<double>(keys[i]) / 1000);
      fy.push_back(ys[i]);
    }
  };
  std::vector<double> ys, fx, fy;
  for (const CurvePoint& point : result.curve) ys.push_back(point.program_speedup);
  fit_points(ys, fx, fy);
  double impact = mean_height(fx, fy);
  auto [slope, intercept] = fit(fx, fy);
  result.impact.valid = finite(impact);
  result.impact.value = result.impact.valid ? impact : 0;
  result.slope.valid = finite(slope);
  result.slope.value = result.slope.valid ? slope : 0;
  result.intercept = finite(intercept) ? intercept : 0;
  result.max = *std::max_element(ys.begin(), ys.end());
  result.min = *std::min_element(ys.begin(), ys.end());

  if (options.bootstrap > 0) {
    Mulberry32 rng(options.seed ^ fnv1a(line + "\n" + name));
    std::vector<std::vector<double>> level_samples(keys.size());
    std::vector<double> impact_samples, slope_samples;
    std::vector<double> replicate(keys.size());
    for (int b = 0; b < options.bootstrap; ++b) {
      double base_b = resampled_period(data.kind, *baseline, rng);
      bool complete = true;
      for (size_t i = 0; i < keys.size(); ++i) {
        if (keys[i] == 0 && result.baseline == Baseline::line) {
          replicate[i] = 0;
          continue;
        }
        double value = resampled_period(data.kind, *level_units[i], rng);
        replicate[i] = (1 - value / base_b) * factor;
        if (finite(replicate[i])) level_samples[i].push_back(replicate[i]);
        else complete = false;
      }
      if (!complete) continue;
      fit_points(replicate, fx, fy);
      double impact_b = mean_height(fx, fy);
      double slope_b = fit(fx, fy).first;
      if (finite(impact_b)) impact_samples.push_back(impact_b);
      if (finite(slope_b)) slope_samples.push_back(slope_b);
    }
    for (size_t i = 0; i < keys.size(); ++i) {
      CurvePoint& point = result.curve[i];
      if (keys[i] == 0 && result.baseline == Baseline::line) continue;  // [0, 0] by definition
      if (point.n_experiments < 2) continue;  // one experiment has no spread to resample
      set_ci(level_samples[i], point.has_ci, point.ci_low, point.ci_high);
    }
    if (result.impact.valid)
      set_ci(impact_samples, result.impact.has_ci, result.impact.ci_low, result.impact.ci_high);
    if (result.slope.valid)
      set_ci(slope_samples, result.slope.has_ci, result.slope.ci_low, result.slope.ci_high);
  }
  int nonzero = 0;
  for (long key : keys) nonzero += key != 0;
  result.contention = result.slope.valid && result.slope.has_ci && result.slope.ci_high < 0 &&
                      result.slope.value <= kContentionSlope && nonzero >= 2;
  return result;
}

std::string list_some(const std::vector<std::string>& names, size_t limit) {
  std::string text;
  for (size_t i = 0; i < names.size() && i < limit; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > limit) text += fmt::format(" and {} more", names.size() - limit);
  return text;
}

}  // namespace

const char* baseline_name(Baseline baseline) {
  switch (baseline) {
    case Baseline::line: return "line";
    case Baseline::run: return "run";
    case Baseline::none: return "none";
  }
  return "none";
}

std::uint32_t fnv1a(const std::string& text) {
  std::uint32_t hash = 2166136261u;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash;
}

Report analyse(const std::vector<Profile>& profiles, const Options& options) {
  Report report;
  report.options = options;
  std::map<std::string, PointData> points;
  std::map<std::string, LineData> lines;
  int invalid_durations = 0;

  for (size_t p = 0; p < profiles.size(); ++p) {
    const Profile& profile = profiles[p];
    std::map<std::string, std::pair<double, double>> last_running;  // line -> (s, T) so far
    for (const Experiment& experiment : profile.experiments) {
      // Effective durations add across experiments with equal settings (Coz's viewer does the
      // same): one near or below zero is data, not an error.
      if (!(experiment.duration_ns > 0) || experiment.selected.empty()) {
        ++invalid_durations;
        continue;
      }
      ++report.n_experiments;
      long key = std::lround(experiment.speedup * 1000);
      LineData& line = lines[experiment.selected];
      ++line.experiments;
      line.fixed_line = line.fixed_line || profile.fixed_line;
      line.speedups.insert(key);
      line.profiles.insert(p);
      // t_obs in real time: the selected line's samples accrue in real time (its thread is not the one
      // paused for a virtual speedup; with one thread nobody pauses at all).
      line.t_obs += experiment.duration_ns;
      if (experiment.selected_samples >= 0) line.s_obs += experiment.selected_samples;
      else line.s_obs_known = false;
      if (experiment.line_samples_total >= 0 && experiment.elapsed_ns > 0)
        last_running[experiment.selected] = {experiment.line_samples_total, experiment.elapsed_ns};

      std::set<std::string> seen;
      for (const PointObservation& observation : experiment.points) {
        if (!seen.insert(observation.name).second) continue;
        auto [it, inserted] = points.try_emplace(observation.name);
        PointData& data = it->second;
        if (inserted) {
          data.kind = observation.kind;
          data.summary.name = observation.name;
          data.summary.kind = observation.kind;
        } else if (data.kind != observation.kind) {
          continue;
        }
        Unit unit;
        unit.duration = experiment.effective_duration_ns;
        if (observation.kind == PointKind::throughput) {
          unit.visits = observation.delta;
        } else {
          unit.visits = observation.arrivals;
          unit.in_flight = observation.in_flight_avg * experiment.effective_duration_ns;
        }
        data.by_line[experiment.selected][key].push_back(unit);
        if (key == 0) {
          data.baseline.push_back(unit);
          ++data.summary.baseline_experiments;
        }
        ++data.summary.experiments;
        data.summary.visits += unit.visits;
      }
    }
    // s and T per line for this profile: the final samples record, else the line's last experiment.
    // T is the real elapsed time, delays included, like t_obs: samples accrue in real time.
    double total = profile.samples_elapsed_ns > 0 ? profile.samples_elapsed_ns : profile.runtime_ns;
    for (auto& [name, line] : lines) {
      if (!line.profiles.count(p)) continue;
      if (!profile.sample_counts.empty() && total > 0) {
        auto count = profile.sample_counts.find(name);
        line.s_and_t[p] = {count == profile.sample_counts.end() ? 0.0 : count->second, total};
      } else if (auto running = last_running.find(name); running != last_running.end()) {
        line.s_and_t[p] = running->second;
      }
    }
  }

  if (invalid_durations > 0)
    report.warnings.push_back(fmt::format(
        "skipped {} experiment(s) without a positive duration or selected line", invalid_durations));

  for (auto& [name, data] : points) {
    PointSummary& summary = data.summary;
    summary.mean_visits = summary.experiments ? summary.visits / summary.experiments : 0;
    if (summary.mean_visits < kMinVisitsPerExperiment)
      report.warnings.push_back(fmt::format(
          "progress point '{}' has only {:.1f} {} per experiment on average: its rates are noisy; put it "
          "where it runs more often, or lengthen experiments",
          name, summary.mean_visits, data.kind == PointKind::latency ? "arrivals" : "visits"));
    if (summary.baseline_experiments == 0)
      report.warnings.push_back(fmt::format(
          "progress point '{}' has no baseline (speedup 0) experiments: no speedups can be computed for it", name));
    report.points.push_back(summary);
  }
  if (points.empty() && report.n_experiments > 0)
    report.warnings.push_back("no progress point was visited: add COZ_PROGRESS/COZ_BEGIN/COZ_END or use -p");
  if (report.n_experiments == 0)
    report.warnings.push_back("no experiments: the run ended before the first experiment finished");

  std::vector<std::string> run_baseline_lines;
  for (auto& [name, data] : lines) {
    LineResult result;
    result.line = name;
    result.n_experiments = data.experiments;
    result.n_speedups = static_cast<int>(data.speedups.size());
    result.phase = phase_for(data, options);
    if (result.phase.applied) ++report.phase_corrected_lines;
    bool uses_run_baseline = false;
    for (auto& [point_name, point] : points) {
      auto groups = point.by_line.find(name);
      if (groups == point.by_line.end()) continue;
      PointResult point_result =
          analyse_point(name, point_name, point, groups->second, result.phase.factor, options);
      uses_run_baseline |= point_result.baseline == Baseline::run;
      result.contention |= point_result.contention;
      if (point_result.impact.valid && (!options.point || *options.point == point_name))
        if (!result.rank_impact || point_result.impact.value > *result.rank_impact)
          result.rank_impact = point_result.impact.value;
      result.points.push_back(std::move(point_result));
    }
    if (uses_run_baseline) run_baseline_lines.push_back(name);
    report.lines.push_back(std::move(result));
  }
  if (!run_baseline_lines.empty())
    report.warnings.push_back(fmt::format(
        "{} line(s) have no baseline (speedup 0) experiments of their own; their predictions use the "
        "run-wide baseline: {}",
        run_baseline_lines.size(), list_some(run_baseline_lines, 5)));

  std::stable_sort(report.lines.begin(), report.lines.end(), [](const LineResult& a, const LineResult& b) {
    if (a.rank_impact.has_value() != b.rank_impact.has_value()) return a.rank_impact.has_value();
    if (a.rank_impact && *a.rank_impact != *b.rank_impact) return *a.rank_impact > *b.rank_impact;
    return a.line < b.line;
  });
  return report;
}

}  // namespace whatif::analysis
