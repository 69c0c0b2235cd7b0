// `whatif report PROFILE...`: ranks source lines by their predicted effect on the program, from one
// or several profiles (whatif, Coz text or Coz JSON Lines), as a table, JSON or CSV on stdout.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>

#include "analysis/branches/branch_report.h"
#include "analysis/causal/analysis.h"
#include "analysis/causal/report_output.h"
#include "analysis/counters/function_config.h"
#include "analysis/stalls/stalls_report.h"
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
  bool procedures = false;        // dcpiprof
  std::string annotate;           // dcpicalc
  bool summary = false;           // Figure 4 for each procedure with >= 1% of the samples
  bool no_skid = false;
  bool branches = false;
  bool counters = false;          // --counters: the function counters' tables
};

/// --procedures, --annotate and --summary: the stall analysis of the (first) profile.
int run_stalls(const ReportArgs& args, const analysis::Profile& profile) {
  std::vector<std::string> notes;
  std::string text;
  if (profile.instructions.empty()) {
    fmt::print(stderr, "whatif report: {}: no per-instruction samples (`instructions` records): profile it again "
                       "with this whatif, without --no-instructions\n", profile.path);
    return 1;
  }
  if (!args.annotate.empty()) {
    auto result = stalls::analyse_function(profile, args.annotate, !args.no_skid);
    if (!result) {
      fmt::print(stderr, "whatif report: {}\n", result.error());
      return 1;
    }
    text = stalls::render_annotate(*result);
  } else if (args.summary) {
    for (const auto& procedure : stalls::analyse_profile(profile, 0.01, &notes, !args.no_skid)) {
      text += stalls::render_summary(procedure) + "\n";
    }
  } else {
    text = stalls::render_procedures(stalls::procedures(profile, &notes));
  }
  for (const std::string& note : notes) fmt::print(stderr, "whatif report: {}\n", note);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

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
    std::string text = analysis::branch_report_text(*branches, args.top > 0 ? args.top : 10);
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
  if (args.procedures || args.summary || !args.annotate.empty()) return run_stalls(args, profiles.front());
  if (args.counters) {
    const analysis::Profile& profile = profiles.front();
    if (profile.function_counters.empty()) {
      fmt::print(stderr, "whatif report: --counters: {} has no `counters` records: run the program with "
                         "`whatif run --counters CONFIG`, built with -finstrument-functions\n", profile.path);
      return 1;
    }
    std::string text = counters::render_function_counters(profile);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
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
  report->add_flag("--procedures", args->procedures,
                   "Samples per procedure (dcpiprof), from the per-instruction samples");
  report->add_option("--annotate", args->annotate,
                     "Annotated disassembly of FUNCTION (dcpicalc): frequency, CPI, stall bubbles, culprits, source lines");
  report->add_flag("--summary", args->summary,
                   "Where each procedure's cycles go (best-case vs actual CPI, stall causes), for those with >= 1% of samples");
  report->add_flag("--counters", args->counters,
                   "Function counters (`whatif run --counters`): per function and per thread, calls and time and "
                   "events per call");
  report->add_flag("--no-skid", args->no_skid, "Keep samples on the instruction they name (no skid correction)");
  report->add_flag("--branches", args->branches,
                   "Report the software branch records (whatif run --lbr): per function, the hottest edges (taken and "
                   "fall-through) and paths with source lines and taken rates (--top N functions, default 10)");
  report->callback([&commands, args] { commands.run = [args] { return run_report(*args); }; });
}

}  // namespace whatif::cli
