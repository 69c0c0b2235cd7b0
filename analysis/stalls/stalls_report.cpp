// Text and record renderings of the stall analysis (see stalls_report.h). Offline, one thread.
#include "analysis/stalls/stalls_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "whatif/profile_format.h"

namespace whatif::stalls {
namespace {

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string letters(const InstructionResult& row) {
  std::string out;
  for (const Culprit& c : row.culprits) out += cause_letter(c.cause);
  return out;
}

}  // namespace

std::string render_procedures(const std::vector<ProcedureSamples>& rows) {
  double total = 0;
  for (const auto& row : rows) total += row.samples;
  std::string out = fmt::format("Total samples = {:.0f} (per-instruction samples of in-scope objects)\n\n", total);
  out += fmt::format("{:>10} {:>7} {:>7}  {:<40} {}\n", "samples", "%", "cum%", "procedure", "object");
  double cumulative = 0;
  for (const auto& row : rows) {
    cumulative += row.samples;
    out += fmt::format("{:>10.0f} {:>6.2f}% {:>6.2f}%  {:<40} {}\n", row.samples, total > 0 ? 100 * row.samples / total : 0,
                       total > 0 ? 100 * cumulative / total : 0, row.name, row.object);
  }
  return out;
}

std::string render_summary(const ProcedureResult& p) {
  const Summary& s = p.summary;
  double total = s.total_cycles > 0 ? s.total_cycles : 1;
  auto pct = [&](double cycles) { return 100.0 * cycles / total; };
  std::string out = fmt::format("*** {} ({}): {:.0f} samples\n", p.name, base_name(p.object), s.samples);
  out += fmt::format("*** Best-case {:.2f} CPI, actual {:.2f} CPI (frequencies from {}; {:.0f}% of samples high, "
                     "{:.0f}% medium, {:.0f}% low confidence{})\n***\n",
                     s.best_case_cpi, s.actual_cpi, s.from_branch_records ? "branch records" : "samples (DCPI heuristic)",
                     100 * s.high_share, 100 * s.medium_share, 100 * s.low_share,
                     s.missing_edges ? "; an indirect jump leaves the CFG incomplete" : "");
  if (s.clock_mhz > 0) {
    out += fmt::format("*** Executions at {:.0f} MHz ({})\n***\n", s.clock_mhz,
                       s.clock_measured ? "measured after the run"
                                        : "nominal: the profile has no `clock` record, so counts may be short by the boost");
  }
  std::map<Cause, CauseRange> by;
  for (const CauseRange& c : s.causes) by[c.cause] = c;
  for (Cause cause : {Cause::icache, Cause::dcache, Cause::dtlb, Cause::store_buffer, Cause::mispredict, Cause::long_latency}) {
    CauseRange c = by.count(cause) ? by[cause] : CauseRange{cause};
    out += fmt::format("*** {:<30} {:>6.1f}% to {:>5.1f}%\n", cause_name(cause), pct(c.low), pct(c.high));
  }
  CauseRange unexplained = by.count(Cause::unexplained) ? by[Cause::unexplained] : CauseRange{Cause::unexplained};
  out += fmt::format("***\n*** {:<30} {:>6.1f}%\n", "Unexplained stall", pct(unexplained.high));
  out += fmt::format("*** {:<30} {:>6.1f}%\n", "Unexplained gain", pct(s.unexplained_gain));
  out += fmt::format("*** {}\n*** {:<30} {:>6.1f}%\n***\n", std::string(40, '-'), "Subtotal dynamic", pct(s.dynamic_stall));
  for (Cause cause : {Cause::static_load, Cause::static_unit, Cause::dependency}) {
    CauseRange c = by.count(cause) ? by[cause] : CauseRange{cause};
    out += fmt::format("*** {:<30} {:>6.1f}%\n", cause_name(cause), pct(c.high));
  }
  out += fmt::format("*** {}\n*** {:<30} {:>6.1f}%\n", std::string(40, '-'), "Subtotal static", pct(s.static_stall));
  out += fmt::format("*** {}\n", std::string(40, '-'));
  out += fmt::format("*** {:<30} {:>6.1f}%\n", "Total stall", pct(s.static_stall + s.dynamic_stall));
  out += fmt::format("*** {:<30} {:>6.1f}%\n", "Execution", pct(s.execution));
  double tallied = s.static_stall + s.dynamic_stall + s.execution + s.unexplained_gain;
  out += fmt::format("*** {:<30} {:>6.1f}%\n", "Net sampling error", 100 - pct(tallied));
  return out;
}

std::string render_annotate(const ProcedureResult& p) {
  std::string out = render_summary(p) + "\n";
  out += "Bubbles: i I-cache, d D-cache, t DTLB, p branch mispredict, u long-latency unit, w store buffer, "
         "? unexplained; static: l load latency, f divider, r dependency. Samples are skid-corrected ("
         "\"charged\"): each is moved to the instruction before the one it named, block heads keep theirs.\n\n";
  out += fmt::format("{:>12}  {:<44} {:>8} {:>8} {:>12} {:>4} {:>7} {:>6}  {}\n", "address", "instruction", "samples",
                     "charged", "executions", "conf", "CPI", "best", "culprits");
  std::string last_source;
  for (const InstructionResult& row : p.instructions) {
    if (!row.source.empty() && row.source != last_source) {
      out += fmt::format("  {}\n", row.source);
      last_source = row.source;
    }
    if (row.block_head) out += "\n";
    if (row.static_stall >= 0.5) {
      out += fmt::format("{:>14}{} {:.1f}cy static{}\n", "", std::string(1, cause_letter(row.static_cause)), row.static_stall,
                         row.static_culprit ? fmt::format(" (waits for {:x})", row.static_culprit) : "");
    }
    if (!row.culprits.empty()) {
      std::string blamed;
      for (const Culprit& c : row.culprits) {
        if (c.instruction) blamed += fmt::format(" {}:{:x}", cause_letter(c.cause), c.instruction);
      }
      // A culprit bound above the stall: the frequency is only an upper bound, and with fewer
      // executions the same samples are a longer stall (the D-cache rule, docs/stalls.md).
      double most = 0;
      for (const Culprit& c : row.culprits) most = std::max(most, c.high);
      std::string beyond = most > std::max(0.0, row.dynamic_stall) + 0.05
                               ? fmt::format(" (up to {:.1f}cy: F is an upper bound)", most) : "";
      out += fmt::format("{:>14}{} ... {:.1f}cy dynamic{}{}\n", "", letters(row), row.dynamic_stall, beyond, blamed);
    }
    std::string executions = row.executions >= 0 ? fmt::format("{:.3g}", row.executions) : fmt::format("F={:.3g}", row.frequency);
    out += fmt::format("{:>12x}  {:<44} {:>8.0f} {:>8.0f} {:>12} {:>4} {:>7.2f} {:>6.2f}  {}\n", row.address,
                       row.text.substr(0, 44), row.samples, row.charged, executions,
                       std::string(confidence_name(row.confidence)).substr(0, 4), row.cpi, row.best_case, letters(row));
  }
  return out;
}

std::vector<StatsRow> stats(const std::vector<std::vector<ProcedureSamples>>& runs) {
  std::map<std::string, std::vector<double>> by;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    for (const auto& row : runs[r]) {
      auto& values = by[row.name];
      values.resize(runs.size(), 0);
      values[r] += row.samples;
    }
  }
  double grand = 0;
  for (auto& [name, values] : by) {
    values.resize(runs.size(), 0);
    for (double v : values) grand += v;
  }
  std::vector<StatsRow> out;
  for (const auto& [name, values] : by) {
    StatsRow row;
    row.procedure = name;
    row.runs = values.size();
    for (double v : values) row.sum += v;
    row.mean = row.runs ? row.sum / static_cast<double>(row.runs) : 0;
    double squares = 0;
    for (double v : values) squares += (v - row.mean) * (v - row.mean);
    row.stddev = row.runs > 1 ? std::sqrt(squares / static_cast<double>(row.runs - 1)) : 0;
    row.min = *std::min_element(values.begin(), values.end());
    row.max = *std::max_element(values.begin(), values.end());
    row.range_percent = row.sum > 0 ? 100 * (row.max - row.min) / row.sum : 0;
    row.sum_percent = grand > 0 ? 100 * row.sum / grand : 0;
    out.push_back(row);
  }
  std::sort(out.begin(), out.end(), [](const StatsRow& a, const StatsRow& b) {
    return a.range_percent != b.range_percent ? a.range_percent > b.range_percent : a.procedure < b.procedure;
  });
  return out;
}

std::string render_stats(const std::vector<StatsRow>& rows, const std::vector<double>& run_totals) {
  std::string out = "Number of samples per run:";
  double total = 0;
  for (std::size_t i = 0; i < run_totals.size(); ++i) {
    out += fmt::format(" set {} = {:.0f}", i + 1, run_totals[i]);
    total += run_totals[i];
  }
  out += fmt::format("  TOTAL {:.0f}\n\nStatistics of the samples of each procedure over {} run(s), by range %\n\n", total,
                     run_totals.size());
  out += fmt::format("{:>8} {:>12} {:>7} {:>3} {:>12} {:>10} {:>10} {:>10}  {}\n", "range%", "sum", "sum%", "N", "mean",
                     "std-dev", "min", "max", "procedure");
  for (const StatsRow& r : rows) {
    out += fmt::format("{:>7.2f}% {:>12.0f} {:>6.2f}% {:>3} {:>12.2f} {:>10.2f} {:>10.0f} {:>10.0f}  {}\n", r.range_percent,
                       r.sum, r.sum_percent, r.runs, r.mean, r.stddev, r.min, r.max, r.procedure);
  }
  return out;
}

std::string stalls_record(const ProcedureResult& p, const Model& model) {
  using nlohmann::json;
  const Summary& s = p.summary;
  json causes = json::object();
  for (const CauseRange& c : s.causes) causes[cause_name(c.cause)] = {c.low, c.high, is_dynamic(c.cause) ? "dynamic" : "static"};
  json summary = {{"best_case_cpi", s.best_case_cpi}, {"actual_cpi", s.actual_cpi}, {"total_cycles", s.total_cycles},
                  {"causes", causes}, {"dynamic_stall", s.dynamic_stall}, {"static_stall", s.static_stall},
                  {"execution", s.execution}, {"unexplained_gain", s.unexplained_gain},
                  {"frequencies_from", s.from_branch_records ? "branch records" : "samples"},
                  {"clock_mhz", s.clock_mhz}, {"clock_measured", s.clock_measured},
                  {"confidence_shares", {{"high", s.high_share}, {"medium", s.medium_share}, {"low", s.low_share}}}};
  json rows = json::array();
  for (const InstructionResult& r : p.instructions) {
    json culprits = json::array();
    for (const Culprit& c : r.culprits) culprits.push_back({{"cause", cause_name(c.cause)}, {"letter", std::string(1, cause_letter(c.cause))},
                                                            {"instruction", c.instruction}, {"low", c.low}, {"high", c.high}});
    rows.push_back({{"address", r.address}, {"text", r.text}, {"samples", r.samples}, {"charged", r.charged},
                    {"frequency", r.frequency}, {"executions", r.executions}, {"confidence", confidence_name(r.confidence)},
                    {"cpi", r.cpi}, {"best_case", r.best_case}, {"static_stall", r.static_stall},
                    {"static_cause", r.static_stall > 0 ? cause_name(r.static_cause) : ""},
                    {"dynamic_stall", r.dynamic_stall}, {"culprits", culprits}, {"source", r.source},
                    {"block_head", r.block_head}});
  }
  json record = {{"type", format::record::stalls::kName}, {"procedure", p.name}, {"object", p.object},
                 {"build_id", p.build_id}, {"samples", s.samples}, {"summary", summary}, {"instructions", rows},
                 {"cpu", model.cpu}};
  return record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace whatif::stalls
