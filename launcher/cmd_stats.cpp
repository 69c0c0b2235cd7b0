// `whatif stats PROFILE...` (DCPI's dcpistats): how each procedure's samples vary across runs: range
// %, sum, mean, standard deviation, min and max, from the per-instruction samples. Launcher process.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>

#include "analysis/stalls/stalls_report.h"
#include "commands.h"

namespace whatif::cli {

void register_stats(CLI::App& app, Commands& commands) {
  auto profiles = std::make_shared<std::vector<std::string>>();
  CLI::App* stats = app.add_subcommand("stats", "Variation of each procedure's samples across runs (like dcpistats)");
  stats->add_option("profiles", *profiles, "Profiles of runs of the same program (one run each)")->required()->check(CLI::ExistingFile);
  stats->callback([&commands, profiles] {
    commands.run = [profiles] {
      std::vector<std::vector<stalls::ProcedureSamples>> runs;
      std::vector<double> totals;
      for (const std::string& path : *profiles) {
        auto profile = analysis::read_profile(path);
        if (!profile) {
          fmt::print(stderr, "whatif stats: {}\n", profile.error());
          return 1;
        }
        if (profile->instructions.empty()) {
          fmt::print(stderr, "whatif stats: {}: no per-instruction samples (`instructions` records): profile it again "
                             "with this whatif, without --no-instructions\n", path);
          return 1;
        }
        std::vector<std::string> notes;
        runs.push_back(stalls::procedures(*profile, &notes));
        for (const std::string& note : notes) fmt::print(stderr, "whatif stats: {}: {}\n", path, note);
        double total = 0;
        for (const auto& row : runs.back()) total += row.samples;
        totals.push_back(total);
      }
      std::string text = stalls::render_stats(stalls::stats(runs), totals);
      std::fwrite(text.data(), 1, text.size(), stdout);
      return 0;
    };
  });
}

}  // namespace whatif::cli
