// `whatif report PROFILE...`: ranks source lines by their predicted effect on the program, from one
// or several profiles (whatif, Coz text or Coz JSON Lines), as a table, JSON or CSV on stdout.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>

#include "analysis/branches/branch_report.h"
#include "analysis/causal/analysis.h"
#include "analysis/causal/report_output.h"
#include "commands.h"

namespace whatif::cli {

namespace {

struct ReportArgs {
  std::vector<std::string> profiles;
  int top = 0;
  std::string point;
  std::string format = "text";
  int bootstrap = 500;
  std::uint32_t seed = 1;
  bool no_phase_correction = false;
  bool branches = false;
};

int run_branch_report(const ReportArgs& args) {
  for (const std::string& path : args.profiles) {
    auto branches = analysis::read_branches(path);
    if (!branches) {
      fmt::print(stderr, "whatif report: {}\n", branches.error());
      return 1;
    }
    if (branches->objects.empty()) {
      fmt::print(stderr, "whatif report --branches: {} has no branch records: profile with `whatif run --lbr`\n", path);
      return 1;
    }
    std::string text = analysis::branch_report_text(*branches, args.top > 0 ? args.top : 20);
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  return 0;
}

int run_report(const ReportArgs& args) {
  if (args.branches) return run_branch_report(args);
  std::vector<analysis::Profile> profiles;
  for (const std::string& path : args.profiles) {
    auto profile = analysis::read_profile(path);
    if (!profile) {
      fmt::print(stderr, "whatif report: {}\n", profile.error());
      return 1;
    }
    profiles.push_back(std::move(*profile));
  }
  analysis::Options options;
  options.bootstrap = args.bootstrap;
  options.seed = args.seed;
  options.phase_correction = !args.no_phase_correction;
  analysis::OutputOptions output;
  output.top = args.top;
  if (!args.point.empty()) {
    options.point = args.point;
    output.point = args.point;
  }
  analysis::Report report = analysis::analyse(profiles, options);
  if (output.point) {
    bool known = false;
    for (const auto& point : report.points) known |= point.name == *output.point;
    if (!known) {
      std::string names;
      for (const auto& point : report.points) names += (names.empty() ? "" : ", ") + point.name;
      fmt::print(stderr, "whatif report: --point {}: no such progress point in the profile(s); known: {}\n",
                 *output.point, names.empty() ? "none" : names);
      return 1;
    }
  }
  std::string text;
  if (args.format == "json") text = analysis::render_json(report, profiles, output);
  else if (args.format == "csv") text = analysis::render_csv(report, output);
  else text = analysis::render_text(report, profiles, output);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace

void register_report(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* report = app.add_subcommand(
      "report", "Rank lines by predicted program speedup (impact), with 95% CIs, from one or more profiles");
  report->add_option("profiles", args->profiles, "Profiles to combine: whatif (.jsonl), Coz text or Coz JSON Lines")
      ->required()
      ->check(CLI::ExistingFile);
  report->add_option("--top", args->top, "Show only the N highest-impact lines")->check(CLI::NonNegativeNumber);
  report->add_option("--point", args->point, "Rank by, and show only, this progress point");
  report->add_option("--format", args->format, "Output format")
      ->check(CLI::IsMember({"text", "json", "csv"}))
      ->capture_default_str();
  report->add_option("--bootstrap", args->bootstrap, "Bootstrap replicates for the 95% CIs (0: none)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  report->add_option("--seed", args->seed, "Bootstrap seed (results are deterministic for a seed)")
      ->capture_default_str();
  report->add_flag("--no-phase-correction", args->no_phase_correction,
                   "Do not scale predictions by the share of the run the line was active (Coz eq. 8)");
  report->add_flag("--branches", args->branches,
                   "Report the software branch records (whatif run --lbr): hottest edges per object with source lines "
                   "and taken rates (--top N, default 20)");
  report->callback([&commands, args] { commands.run = [args] { return run_report(*args); }; });
}

}  // namespace whatif::cli
