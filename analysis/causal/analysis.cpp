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

bool finite(double value) { return std::isfinite(value); }

/// Per-experiment relative noise of a point's period, pooled over the lines' own baselines.
struct Noise {
  bool known = false;
  double sigma = 0;  ///< relative standard deviation of one experiment's period
  int degrees = 0;
  double t = kNaN;   ///< two-sided 95% Student-t multiplier for `degrees`
};

/// Student-t 97.5% quantile by the Cornish-Fisher expansion to 1/df^2 (within 4% from 4 degrees of
/// freedom up, exact in the limit); plain products so JavaScript gets the same bits.
double t975(int degrees) {
  const double z = 1.959963984540054;
  const double z3 = z * z * z, z5 = z3 * z * z;
  const double df = static_cast<double>(degrees);
  return z + (z3 + z) / 4 / df + (5 * z5 + 16 * z3 + 3 * z) / 96 / (df * df);
}

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

/// The 95% interval from its two sources: the bootstrap's percentiles (when every cell it resamples
/// has two experiments or more: one experiment shows no spread) and the noise floor value ± half
/// (when the point's noise is known). Both: their hull. Neither: unknown.
void set_ci(std::vector<double>& samples, bool bootstrap_complete, double value, double half, bool& has_ci,
            double& low, double& high) {
  bool from_bootstrap = bootstrap_complete && !samples.empty();
  bool from_noise = finite(half);
  has_ci = from_bootstrap || from_noise;
  if (from_bootstrap) {
    low = quantile(samples, 0.025);
    high = quantile(samples, 0.975);
  }
  if (from_noise) {
    low = from_bootstrap ? std::min(low, value - half) : value - half;
    high = from_bootstrap ? std::max(high, value + half) : value + half;
  }
}


/// Edges of a point's activity (docs/report.md, "Edges of activity"): (record, point) of each
/// experiment that saw a busy point visited next to an experiment record of the same process that
/// did not. The point's activity began or ended during it (a server's load), so its rate mixes two
/// regimes: one such baseline at a load's tail made memcached's top line +54% [+46, +62].
std::set<std::pair<long, std::string>> activity_edges(const Profile& profile) {
  const std::vector<ExperimentActivity>& records = profile.activity;
  auto visits_in = [&](size_t r, const std::string& name) {
    for (const auto& [point, visits] : records[r].visits)
      if (point == name) return visits;
    return 0.0;
  };
  std::map<std::string, std::vector<double>> active;  // point -> its visits where visited, in file order
  for (const ExperimentActivity& record : records)
    for (const auto& [point, visits] : record.visits)
      if (visits > 0) active[point].push_back(visits);
  std::set<std::pair<long, std::string>> edges;
  for (auto& [name, visits] : active) {
    if (!(quantile(visits, 0.5) >= kEdgeMinVisits)) continue;
    for (size_t r = 0; r < records.size(); ++r) {
      if (!(visits_in(r, name) > 0)) continue;
      const size_t process = records[r].process;
      bool before = r > 0 && records[r - 1].process == process && !(visits_in(r - 1, name) > 0);
      bool after = r + 1 < records.size() && records[r + 1].process == process && !(visits_in(r + 1, name) > 0);
      if (before || after) edges.emplace(static_cast<long>(r), name);
    }
  }
  return edges;
}

/// Per point: units by line, then by speedup key (per mille).
struct PointData {
  PointKind kind = PointKind::throughput;
  std::map<std::string, std::map<long, std::vector<Unit>>> by_line;
  std::vector<Unit> baseline;  ///< every speedup-0 unit of every line: the run-wide baseline
  std::vector<Unit> units;                   ///< every unit, in experiment order (the noise estimate)
  std::vector<std::pair<std::string, long>> unit_cells;  ///< each unit's cell: (line, speedup key)
  Noise noise;
  PointSummary summary;
};

/// Per line: what phase correction needs, summed over experiments and over profiles.
struct LineData {
  int experiments = 0;
  std::set<long> speedups;
  double t_obs = 0;
  double s_obs = 0;
  bool s_obs_known = true;
  double sped_samples = 0;  ///< the line's samples in its experiments at a non-zero speedup: delays inserted
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

/// Each experiment's rate of progress relative to its own cell's pooled rate (the cell: its line and
/// speedup), summed in experiment order: sigma^2 = sum (P_cell / p_i - 1)^2 / (experiments - cells),
/// p the period. Within-cell deviations, so that neither the effect of a speedup nor lines selected in
/// different phases of the program count as noise. Every cell, not only the baselines: the noise floor
/// applies sigma to the sped cells as well, and experiments under a virtual speedup are often the
/// noisier ones (pauses, phases). The rate's deviation, not the period's: the two agree to first
/// order, but an experiment that saw 1 visit where its cell averages 1000 (the edge of a program's
/// phase) deviated by 999 in its period and made sigma hundreds (intervals of thousands of points on every
/// line of a memcached run); its rate deviates by at most 1.
Noise estimate_noise(const PointData& data) {
  Noise noise;
  std::map<std::pair<std::string, long>, std::pair<double, int>> cells;  // cell -> (pooled period, used)
  double sum = 0;
  int used = 0;
  for (size_t i = 0; i < data.units.size(); ++i) {
    auto [it, inserted] = cells.try_emplace(data.unit_cells[i], kNaN, 0);
    if (inserted) it->second.first = period_of(data.kind, data.by_line.at(it->first.first).at(it->first.second));
    const Unit& unit = data.units[i];
    double own = period(data.kind, unit.duration, unit.visits, unit.in_flight);
    double pooled = it->second.first;
    if (!finite(own) || !finite(pooled)) continue;
    double r = pooled / own - 1;
    sum += r * r;
    ++used;
    ++it->second.second;
  }
  int groups = 0;
  for (const auto& [cell, counted] : cells) groups += counted.second > 0;
  noise.degrees = used - groups;
  if (noise.degrees >= kMinNoiseDegrees) {
    noise.known = true;
    noise.sigma = std::sqrt(sum / noise.degrees);
    noise.t = t975(noise.degrees);
  }
  return noise;
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
  const bool own_baseline = result.baseline == Baseline::line;
  const double n0 = static_cast<double>(baseline->size());

  // Levels with a valid period, ascending speedup; the baseline level (own) is exactly 0.
  double base = period_of(data.kind, *baseline);
  std::vector<long> keys;
  std::vector<const std::vector<Unit>*> level_units;
  std::vector<double> ratios;  ///< p_x / p_0 per level (0 for the own baseline, which has no error)
  for (const auto& [key, units] : groups) {
    if (key == 0 && own_baseline) {
      keys.push_back(0);
      level_units.push_back(&units);
      ratios.push_back(0);
      result.curve.push_back({0, 0, true, 0, 0, static_cast<int>(units.size())});
      continue;
    }
    double value = period_of(data.kind, units);
    if (!finite(value)) continue;
    keys.push_back(key);
    level_units.push_back(&units);
    ratios.push_back(value / base);
    CurvePoint point;
    point.speedup = static_cast<double>(key) / 1000;
    point.program_speedup = (1 - value / base) * factor;
    point.n_experiments = static_cast<int>(units.size());
    result.curve.push_back(point);
  }
  if (result.curve.empty()) return result;
  auto fixed = [&](size_t i) { return keys[i] == 0 && own_baseline; };

  // Fit points: the curve, anchored at (0, 0) when the line has no baseline level of its own.
  const size_t offset = keys.front() != 0 ? 1 : 0;
  auto fit_points = [&](const std::vector<double>& ys, std::vector<double>& fx, std::vector<double>& fy) {
    fx.clear();
    fy.clear();
    if (offset) {
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

  // Evidence: distinct non-zero speedups and experiments on the curve.
  int nonzero = 0, curve_experiments = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    nonzero += keys[i] != 0;
    curve_experiments += result.curve[i].n_experiments;
  }
  result.enough_evidence = nonzero >= kMinEvidenceSpeedups && curve_experiments >= kMinEvidenceExperiments;

  // Noise floor (delta method): y_i = f (1 - p_i / p_0) with relative errors e_i ~ sigma / sqrt(n_i) in
  // p_i and e_0 ~ sigma / sqrt(n_0) in p_0, so dy_i = -f R_i (e_i - e_0). A linear combination
  // sum_i a_i y_i (impact: trapezoid weights; slope: least-squares weights) has variance
  // f^2 sigma^2 [sum_i (a_i R_i)^2 / n_i + (sum_i a_i R_i)^2 / n_0]: the shared baseline adds up.
  std::vector<double> half_level(keys.size(), kNaN);
  double half_impact = kNaN, half_slope = kNaN;
  const Noise& noise = data.noise;
  if (noise.known) {
    const double scale = noise.t * noise.sigma * std::fabs(factor);
    for (size_t i = 0; i < keys.size(); ++i)
      if (!fixed(i))
        half_level[i] = scale * std::fabs(ratios[i]) *
                        std::sqrt(1 / static_cast<double>(level_units[i]->size()) + 1 / n0);
    const size_t m = fx.size();
    const double top = fx.back();
    double xs = 0;
    for (size_t j = 0; j < m; ++j) xs += fx[j];
    const double xm = xs / static_cast<double>(m);
    double sxx = 0;
    for (size_t j = 0; j < m; ++j) sxx += (fx[j] - xm) * (fx[j] - xm);
    double impact_sq = 0, impact_lin = 0, slope_sq = 0, slope_lin = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (fixed(i)) continue;
      const size_t j = i + offset;
      const double left = j > 0 ? fx[j] - fx[j - 1] : 0;
      const double right = j + 1 < m ? fx[j + 1] - fx[j] : 0;
      const double a = (left + right) / 2 / top * ratios[i];
      const double c = (fx[j] - xm) / sxx * ratios[i];
      const double n = static_cast<double>(level_units[i]->size());
      impact_sq += a * a / n;
      impact_lin += a;
      slope_sq += c * c / n;
      slope_lin += c;
    }
    if (result.impact.valid) half_impact = scale * std::sqrt(impact_sq + impact_lin * impact_lin / n0);
    if (result.slope.valid) half_slope = scale * std::sqrt(slope_sq + slope_lin * slope_lin / n0);
    if (result.impact.valid) {
      result.has_rank_bound = true;
      result.rank_bound = result.impact.value - half_impact;
    }
  }

  // Bootstrap: complete for a value when every cell it resamples has two experiments or more.
  bool complete_all = n0 >= 2;
  for (size_t i = 0; i < keys.size(); ++i)
    if (!fixed(i)) complete_all = complete_all && level_units[i]->size() >= 2;
  std::vector<std::vector<double>> level_samples(keys.size());
  std::vector<double> impact_samples, slope_samples;
  if (options.bootstrap > 0) {
    Mulberry32 rng(options.seed ^ fnv1a(line + "\n" + name));
    std::vector<double> replicate(keys.size());
    for (int b = 0; b < options.bootstrap; ++b) {
      double base_b = resampled_period(data.kind, *baseline, rng);
      bool complete = true;
      for (size_t i = 0; i < keys.size(); ++i) {
        if (fixed(i)) {
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
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    CurvePoint& point = result.curve[i];
    if (fixed(i)) continue;  // [0, 0] by definition
    set_ci(level_samples[i], n0 >= 2 && level_units[i]->size() >= 2, point.program_speedup, half_level[i],
           point.has_ci, point.ci_low, point.ci_high);
  }
  if (result.impact.valid)
    set_ci(impact_samples, complete_all, result.impact.value, half_impact, result.impact.has_ci,
           result.impact.ci_low, result.impact.ci_high);
  if (result.slope.valid)
    set_ci(slope_samples, complete_all, result.slope.value, half_slope, result.slope.has_ci, result.slope.ci_low,
           result.slope.ci_high);
  result.contention = result.slope.valid && result.slope.has_ci && result.slope.ci_high < 0 &&
                      result.slope.value <= kContentionSlope && nonzero >= 2;
  return result;
}

/// Ranking order of two impacts (docs/report.md, "Ranking"): enough evidence first, then a known
/// noise floor first, then the higher conservative bound, then the higher impact. Negative: a first.
int compare_rank(bool evidence_a, bool bounded_a, double bound_a, double impact_a, bool evidence_b, bool bounded_b,
                 double bound_b, double impact_b) {
  if (evidence_a != evidence_b) return evidence_a ? -1 : 1;
  if (bounded_a != bounded_b) return bounded_a ? -1 : 1;
  if (bounded_a && bound_a != bound_b) return bound_a > bound_b ? -1 : 1;
  if (impact_a != impact_b) return impact_a > impact_b ? -1 : 1;
  return 0;
}

bool ranks_before(const PointResult& a, const PointResult& b) {
  return compare_rank(a.enough_evidence, a.has_rank_bound, a.rank_bound, a.impact.value, b.enough_evidence,
                      b.has_rank_bound, b.rank_bound, b.impact.value) < 0;
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

double common_fixed_speedup(const std::vector<Profile>& profiles) {
  double common = -1;
  for (const Profile& profile : profiles) {
    if (profile.headers.empty()) return -1;
    for (const Header& header : profile.headers) {
      // --end-to-end with --fixed-speedup measures that speedup alone, with no baseline of its own.
      if (header.end_to_end || !(header.fixed_speedup > 0 && header.fixed_speedup <= 1)) return -1;
      if (common > 0 && std::lround(header.fixed_speedup * 1000) != std::lround(common * 1000)) return -1;
      common = header.fixed_speedup;
    }
  }
  return common;
}

const CurvePoint* curve_point_at(const PointResult& point, double speedup) {
  for (const CurvePoint& c : point.curve) {
    if (std::lround(c.speedup * 1000) == std::lround(speedup * 1000)) return &c;
  }
  return nullptr;
}

Report analyse(const std::vector<Profile>& profiles, const Options& options) {
  Report report;
  report.options = options;
  report.fixed_speedup = common_fixed_speedup(profiles);
  std::map<std::string, PointData> points;
  std::map<std::string, LineData> lines;
  int invalid_durations = 0;
  std::map<std::string, int> edges_left_out;  // point -> experiments left out at its activity's edges

  for (size_t p = 0; p < profiles.size(); ++p) {
    const Profile& profile = profiles[p];
    const std::set<std::pair<long, std::string>> edges = activity_edges(profile);
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
      if (key != 0 && experiment.selected_samples > 0) line.sped_samples += experiment.selected_samples;
      if (experiment.line_samples_total >= 0 && experiment.elapsed_ns > 0)
        last_running[experiment.selected] = {experiment.line_samples_total, experiment.elapsed_ns};

      std::set<std::string> seen;
      for (const PointObservation& observation : experiment.points) {
        if (!seen.insert(observation.name).second) continue;
        if (edges.count({experiment.record, observation.name})) {
          ++edges_left_out[observation.name];
          continue;
        }
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
        data.units.push_back(unit);
        data.unit_cells.emplace_back(experiment.selected, key);
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
  for (const auto& [name, count] : edges_left_out)
    report.warnings.push_back(fmt::format(
        "progress point '{}': left out {} experiment(s) at the edges of its activity, next to one without a visit: "
        "its visits began or stopped during them (a load starting or ending), so their rates mix two regimes",
        name, count));

  for (auto& [name, data] : points) {
    PointSummary& summary = data.summary;
    summary.mean_visits = summary.experiments ? summary.visits / summary.experiments : 0;
    data.noise = estimate_noise(data);
    summary.noise_known = data.noise.known;
    summary.noise = data.noise.sigma;
    summary.noise_degrees = data.noise.degrees;
    if (summary.mean_visits < kMinVisitsPerExperiment)
      report.warnings.push_back(fmt::format(
          "progress point '{}' has only {:.1f} {} per experiment on average: its rates are noisy; put it "
          "where it runs more often, or lengthen experiments",
          name, summary.mean_visits, data.kind == PointKind::latency ? "arrivals" : "visits"));
    if (summary.baseline_experiments == 0)
      report.warnings.push_back(fmt::format(
          "progress point '{}' has no baseline (speedup 0) experiments: no speedups can be computed for it", name));
    else if (!data.noise.known)
      report.warnings.push_back(fmt::format(
          "progress point '{}' has too few repeated experiments (two or more of one line at one speedup) to "
          "estimate their noise ({} degrees of freedom, {} needed): speedups measured once have no interval, and "
          "lines are ranked by impact alone",
          name, data.noise.degrees, kMinNoiseDegrees));
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
    const PointResult* ranking = nullptr;  // the line's ranking point
    for (auto& [point_name, point] : points) {
      auto groups = point.by_line.find(name);
      if (groups == point.by_line.end()) continue;
      PointResult point_result =
          analyse_point(name, point_name, point, groups->second, result.phase.factor, options);
      uses_run_baseline |= point_result.baseline == Baseline::run;
      result.contention |= point_result.contention;
      result.points.push_back(std::move(point_result));
    }
    for (const PointResult& point : result.points)
      if (point.impact.valid && (!options.point || *options.point == point.name) &&
          (!ranking || ranks_before(point, *ranking)))
        ranking = &point;
    if (ranking) {
      result.rank_impact = ranking->impact.value;
      if (ranking->has_rank_bound) result.rank_bound = ranking->rank_bound;
      // Experiments in which the line was (almost) never sampled inserted no delay: they did not
      // speed it up, whatever their speedup, and their curve is the program's noise.
      result.enough_evidence =
          ranking->enough_evidence && (!data.s_obs_known || data.sped_samples >= kMinEvidenceSamples);
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
    if (!a.rank_impact) return a.line < b.line;
    int order = compare_rank(a.enough_evidence, a.rank_bound.has_value(), a.rank_bound.value_or(0), *a.rank_impact,
                             b.enough_evidence, b.rank_bound.has_value(), b.rank_bound.value_or(0), *b.rank_impact);
    if (order != 0) return order < 0;
    return a.line < b.line;
  });
  return report;
}

}  // namespace whatif::analysis
