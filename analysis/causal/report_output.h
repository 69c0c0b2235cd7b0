// Renders an analysis Report as an aligned terminal table, JSON (documented in docs/report.md, parsed
// by the benchmark harness) or CSV (one row per line and progress point).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/causal/analysis.h"

namespace whatif::analysis {

struct OutputOptions {
  int top = 0;  ///< lines to show; 0 for all
  std::optional<std::string> point;  ///< show only this progress point
};

nlohmann::json report_json(const Report& report, const std::vector<Profile>& profiles, const OutputOptions& output);
std::string render_json(const Report& report, const std::vector<Profile>& profiles, const OutputOptions& output);
std::string render_csv(const Report& report, const OutputOptions& output);
std::string render_text(const Report& report, const std::vector<Profile>& profiles, const OutputOptions& output);

}  // namespace whatif::analysis
