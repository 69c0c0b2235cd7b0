// Text, JSON and CSV renderings of a Report. The JSON shape is a contract (docs/report.md): add
// fields freely, never rename or remove one without bumping "whatif_report".
#include "analysis/causal/report_output.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace whatif::analysis {
namespace {

using nlohmann::json;

json number_or_null(bool valid, double value) { return valid && std::isfinite(value) ? json(value) : json(nullptr); }

json estimate_json(const Estimate& estimate) {
  return {{"value", number_or_null(estimate.valid, estimate.value)},
          {"ci_low", number_or_null(estimate.valid && estimate.has_ci, estimate.ci_low)},
          {"ci_high", number_or_null(estimate.valid && estimate.has_ci, estimate.ci_high)}};
}

bool shown(const PointResult& point, const OutputOptions& output) {
  return !output.point || *output.point == point.name;
}

/// The lines a table (text or CSV) shows, in rank order: those with a shown point, at most --top.
std::vector<const LineResult*> table_lines(const Report& report, const OutputOptions& output) {
  std::vector<const LineResult*> lines;
  for (const LineResult& line : report.lines) {
    if (output.top > 0 && static_cast<int>(lines.size()) >= output.top) break;
    if (std::any_of(line.points.begin(), line.points.end(), [&](const PointResult& p) { return shown(p, output); }))
      lines.push_back(&line);
  }
  return lines;
}

std::string percent(double value) { return fmt::format("{:+.1f}%", value * 100); }

/// Display width of UTF-8 text (code points; good enough for file names).
size_t width(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& text, size_t columns, bool right) {
  size_t w = width(text);
  if (w >= columns) return text;
  std::string fill(columns - w, ' ');
  return right ? fill + text : text + fill;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

std::string format_duration(double ns) {
  if (ns < 0) return "unknown";
  if (ns >= 1e9) return fmt::format("{:.2f} s", ns / 1e9);
  return fmt::format("{:.1f} ms", ns / 1e6);
}

/// Aligned columns; the third (the point) only when the report has several points.
std::string render_table(const std::vector<std::vector<std::string>>& rows, const std::vector<bool>& right,
                         bool several_points) {
  if (rows.size() == 1) return "no lines to report\n";
  std::string out;
  std::vector<size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], width(row[i]));
  for (const auto& row : rows) {
    std::string text;
    for (size_t i = 0; i < row.size(); ++i) {
      if (i == 2 && !several_points) continue;
      text += pad(row[i], i + 1 == row.size() ? 0 : widths[i], right[i]);
      if (i + 1 != row.size()) text += "  ";
    }
    while (!text.empty() && text.back() == ' ') text.pop_back();
    out += text + "\n";
  }
  return out;
}

std::string render_warnings(const Report& report) {
  if (report.warnings.empty()) return "";
  std::string out = "\n";
  for (const std::string& warning : report.warnings) out += "warning: " + warning + "\n";
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : ", ") + part;
  return text;
}

/// One row per shown line and point, in rank order: the rank and line on a line's first row, the
/// point, then `cells(line, point)`.
template <typename Cells>
std::vector<std::vector<std::string>> table_rows(const Report& report, const OutputOptions& output,
                                                 std::vector<std::string> header, Cells cells) {
  std::vector<std::vector<std::string>> rows{std::move(header)};
  int rank = 0;
  for (const LineResult* line : table_lines(report, output)) {
    ++rank;
    bool first = true;
    for (const PointResult& point : line->points) {
      if (!shown(point, output)) continue;
      std::vector<std::string> row{first ? std::to_string(rank) : "", first ? line->line : "", point.name};
      for (std::string& cell : cells(*line, point)) row.push_back(std::move(cell));
      rows.push_back(std::move(row));
      first = false;
    }
  }
  return rows;
}

/// The notes every table gives a point.
std::vector<std::string> point_notes(const PointResult& point) {
  std::vector<std::string> notes;
  if (point.contention) notes.push_back("CONTENTION");
  if (point.baseline == Baseline::run) notes.push_back("run baseline");
  if (point.baseline == Baseline::none) notes.push_back("no baseline");
  if (point.kind == PointKind::latency) notes.push_back("latency");
  return notes;
}

std::string phase_cell(const LineResult& line) {
  return line.phase.applied ? fmt::format("{:.2f}", line.phase.factor) : "-";
}

/// --fixed-speedup runs: each line's curve point at that speedup is the answer, with the experiments
/// behind it. Its single non-zero speedup is the design, not missing evidence.
std::string render_fixed_rows(const Report& report, const OutputOptions& output) {
  const std::string at = fmt::format("at {:.0f}%", report.fixed_speedup * 100);
  auto rows = table_rows(report, output, {"#", "line", "point", at, "95% CI", "sped", "baselines", "phase", "notes"},
                         [&](const LineResult& line, const PointResult& point) {
                           const CurvePoint* sped = curve_point_at(point, report.fixed_speedup);
                           const CurvePoint* base = curve_point_at(point, 0);
                           std::vector<std::string> notes = point_notes(point);
                           if (sped == nullptr) notes.push_back("never measured at this speedup");
                           return std::vector<std::string>{
                               sped ? percent(sped->program_speedup) : "-",
                               sped && sped->has_ci ? fmt::format("[{}, {}]", percent(sped->ci_low), percent(sped->ci_high)) : "",
                               std::to_string(sped ? sped->n_experiments : 0), std::to_string(base ? base->n_experiments : 0),
                               phase_cell(line), join(notes)};
                         });
  return render_table(rows, {true, false, false, true, false, true, true, true, false}, report.points.size() > 1) +
         render_warnings(report);
}

}  // namespace

json report_json(const Report& report, const std::vector<Profile>& profiles, const OutputOptions& output) {
  json root;
  root["whatif_report"] = 1;
  json profile_list = json::array();
  for (const Profile& profile : profiles) {
    profile_list.push_back({{"path", profile.path},
                            {"format", format_name(profile.format)},
                            {"command", profile.command},
                            {"experiments", profile.experiments.size()},
                            {"runtime_ns", number_or_null(profile.runtime_ns >= 0, profile.runtime_ns)},
                            {"sampler", profile.sampler},
                            {"notes", profile.notes},
                            {"warnings", profile.warnings}});
  }
  root["profiles"] = profile_list;
  root["options"] = {{"bootstrap", report.options.bootstrap},
                     {"seed", report.options.seed},
                     {"phase_correction", report.options.phase_correction},
                     {"point", output.point ? json(*output.point) : json(nullptr)},
                     {"top", output.top > 0 ? json(output.top) : json(nullptr)}};
  root["fixed_speedup"] = number_or_null(report.fixed_speedup > 0, report.fixed_speedup);
  root["experiments"] = report.n_experiments;
  root["phase_corrected_lines"] = report.phase_corrected_lines;
  json points = json::array();
  for (const PointSummary& point : report.points) {
    points.push_back({{"name", point.name},
                      {"kind", kind_name(point.kind)},
                      {"experiments", point.experiments},
                      {"visits", point.visits},
                      {"mean_visits_per_experiment", point.mean_visits},
                      {"baseline_experiments", point.baseline_experiments},
                      {"noise", number_or_null(point.noise_known, point.noise)},
                      {"noise_degrees", point.noise_degrees}});
  }
  root["points"] = points;
  root["warnings"] = report.warnings;
  json lines = json::array();
  int rank = 0;
  for (const LineResult& line : report.lines) {
    if (output.point && std::none_of(line.points.begin(), line.points.end(),
                                     [&](const PointResult& p) { return shown(p, output); }))
      continue;
    if (output.top > 0 && rank >= output.top) break;
    json line_json = {{"rank", ++rank},
                      {"line", line.line},
                      {"experiments", line.n_experiments},
                      {"speedups", line.n_speedups},
                      {"impact", line.rank_impact ? json(*line.rank_impact) : json(nullptr)},
                      {"rank_bound", line.rank_bound ? json(*line.rank_bound) : json(nullptr)},
                      {"enough_evidence", line.enough_evidence},
                      {"contention", line.contention},
                      {"phase_correction",
                       {{"applied", line.phase.applied},
                        {"factor", line.phase.factor},
                        {"reason", line.phase.applied ? json(nullptr) : json(line.phase.reason)}}}};
    json point_list = json::array();
    for (const PointResult& point : line.points) {
      if (!shown(point, output)) continue;
      json curve = json::array();
      for (const CurvePoint& c : point.curve)
        curve.push_back({{"speedup", c.speedup},
                         {"program_speedup", c.program_speedup},
                         {"ci_low", number_or_null(c.has_ci, c.ci_low)},
                         {"ci_high", number_or_null(c.has_ci, c.ci_high)},
                         {"n_experiments", c.n_experiments}});
      bool has_curve = !point.curve.empty();
      const CurvePoint* at_fixed = report.fixed_speedup > 0 ? curve_point_at(point, report.fixed_speedup) : nullptr;
      Estimate fixed_estimate;
      if (at_fixed != nullptr) fixed_estimate = {true, at_fixed->program_speedup, at_fixed->has_ci, at_fixed->ci_low, at_fixed->ci_high};
      point_list.push_back({{"name", point.name},
                            {"kind", kind_name(point.kind)},
                            {"baseline", baseline_name(point.baseline)},
                            {"experiments", point.n_experiments},
                            {"speedups", point.n_speedups},
                            {"impact", estimate_json(point.impact)},
                            {"slope", estimate_json(point.slope)},
                            {"intercept", number_or_null(point.slope.valid, point.intercept)},
                            {"max", number_or_null(has_curve, point.max)},
                            {"min", number_or_null(has_curve, point.min)},
                            {"contention", point.contention},
                            {"enough_evidence", point.enough_evidence},
                            {"rank_bound", number_or_null(point.has_rank_bound, point.rank_bound)},
                            {"at_fixed_speedup", estimate_json(fixed_estimate)},
                            {"curve", curve}});
    }
    line_json["points"] = point_list;
    lines.push_back(line_json);
  }
  root["lines"] = lines;
  return root;
}

std::string render_json(const Report& report, const std::vector<Profile>& profiles, const OutputOptions& output) {
  return report_json(report, profiles, output).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string render_csv(const Report& report, const OutputOptions& output) {
  std::string out =
      "rank,line,point,kind,impact,impact_ci_low,impact_ci_high,slope,slope_ci_low,slope_ci_high,max,min,"
      "experiments,speedups,baseline,contention,phase_factor,rank_bound,enough_evidence\n";
  auto num = [](bool valid, double value) {
    return valid && std::isfinite(value) ? fmt::format("{:.6g}", value) : std::string();
  };
  int rank = 0;
  for (const LineResult* shown_line : table_lines(report, output)) {
    const LineResult& line = *shown_line;
    ++rank;
    for (const PointResult& point : line.points) {
      if (!shown(point, output)) continue;
      bool curve = !point.curve.empty();
      out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", rank, csv_field(line.line),
                         csv_field(point.name), kind_name(point.kind), num(point.impact.valid, point.impact.value),
                         num(point.impact.has_ci, point.impact.ci_low), num(point.impact.has_ci, point.impact.ci_high),
                         num(point.slope.valid, point.slope.value), num(point.slope.has_ci, point.slope.ci_low),
                         num(point.slope.has_ci, point.slope.ci_high), num(curve, point.max), num(curve, point.min),
                         point.n_experiments, point.n_speedups, baseline_name(point.baseline),
                         point.contention ? "yes" : "no", num(true, line.phase.factor),
                         num(point.has_rank_bound, point.rank_bound), point.enough_evidence ? "yes" : "no");
    }
  }
  return out;
}

std::string render_text(const Report& report, const std::vector<Profile>& profiles, const OutputOptions& output) {
  std::string out;
  for (const Profile& profile : profiles) {
    std::string command;
    for (const std::string& argument : profile.command) command += (command.empty() ? "" : " ") + argument;
    out += fmt::format("profile  {} ({}, {} experiments, runtime {}){}\n", profile.path, format_name(profile.format),
                       profile.experiments.size(), format_duration(profile.runtime_ns),
                       command.empty() ? "" : "\n         command: " + command);
    for (const std::string& note : profile.notes) out += fmt::format("         note: {}\n", note);
    for (const std::string& warning : profile.warnings) out += fmt::format("         warning: {}\n", warning);
  }
  out += fmt::format("{} experiments, {} lines, {} progress point(s)", report.n_experiments, report.lines.size(),
                     report.points.size());
  for (const PointSummary& point : report.points)
    out += fmt::format("{} {} ({}, {:.0f} per experiment)", &point == &report.points.front() ? ":" : ";",
                       point.name, kind_name(point.kind), point.mean_visits);
  out += "\n";
  if (report.phase_corrected_lines > 0)
    out += fmt::format("phase correction (Coz eq. 8) applied to {} of {} lines; column 'phase' shows the factor\n",
                       report.phase_corrected_lines, report.lines.size());
  else
    out += "phase correction: not applied (the profiles lack per-line sample totals or run time)\n";
  const bool fixed = report.fixed_speedup > 0;
  if (fixed) {
    out += fmt::format(
        "--fixed-speedup {0:.0f}: the program speedup predicted if the line ran {0:.0f}% faster, from the run's experiments\n"
        "at {0:.0f}% against its own speedup-0 baselines; 95% CIs by bootstrap, never narrower than the run's\n"
        "per-experiment noise\n\n",
        report.fixed_speedup * 100);
    return out + render_fixed_rows(report, output);
  }
  out += "impact = mean predicted program speedup over the measured line speedups; 95% CIs by bootstrap, never\n"
         "narrower than the run's per-experiment noise; ranked by the impact's lower noise bound, lines with\n"
         "not enough evidence (under 2 non-zero speedups, 3 experiments, or 10 samples of the line in its\n"
         "sped experiments) last\n\n";

  auto rows = table_rows(
      report, output, {"#", "line", "point", "impact", "95% CI", "slope", "max", "exps", "speedups", "phase", "notes"},
      [](const LineResult& line, const PointResult& point) {
        std::vector<std::string> notes = point_notes(point);
        if (point.n_speedups < 3) notes.push_back("few speedups");
        if (!point.curve.empty() && (!point.enough_evidence || !line.enough_evidence)) notes.push_back("not enough evidence");
        return std::vector<std::string>{
            point.impact.valid ? percent(point.impact.value) : "-",
            point.impact.has_ci ? fmt::format("[{}, {}]", percent(point.impact.ci_low), percent(point.impact.ci_high)) : "",
            point.slope.valid ? fmt::format("{:+.2f}", point.slope.value) : "-",
            point.curve.empty() ? "-" : percent(point.max), std::to_string(point.n_experiments),
            std::to_string(point.n_speedups), phase_cell(line), join(notes)};
      });
  const bool several_points = report.points.size() > 1;
  return out + render_table(rows, {true, false, false, true, false, true, true, true, true, true, false}, several_points) +
         render_warnings(report);
}

}  // namespace whatif::analysis
