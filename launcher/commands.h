// Registration of the launcher's subcommands. Each cmd_*.cpp defines one register_* function that
// adds its subcommand and sets Commands::run to the action taken when that subcommand is chosen.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "run_options.h"

namespace CLI { class App; }
namespace whatif::counters { struct FunctionConfig; }

namespace whatif::cli {

struct Commands {
  std::function<int()> run = [] { return 0; };
  /// For `whatif run`: the program's argv as typed after the first `---`/`--`, which main() keeps
  /// away from CLI11 (a repeatable option before the separator would otherwise take its arguments).
  std::vector<std::string> program;
  bool program_given = false;
  std::string separator;  ///< as typed; part of the program's argv when the program came before it
};

/// Resolves a --counters configuration's events with libpfm4 and places them in event sets
/// (`whatif run --counters` and `whatif ctl PID reload`). Returns an error naming `file`, or "".
std::string resolve_counter_events(const counters::FunctionConfig& config, const std::string& file,
                                   std::vector<CounterEventOption>& events);

void register_commands(CLI::App& app, Commands& commands);
void register_run(CLI::App& app, Commands& commands);
void register_lines(CLI::App& app, Commands& commands);
void register_report(CLI::App& app, Commands& commands);
void register_view(CLI::App& app, Commands& commands);
void register_stats(CLI::App& app, Commands& commands);
void register_stat(CLI::App& app, Commands& commands);
void register_export(CLI::App& app, Commands& commands);
void register_ctl(CLI::App& app, Commands& commands);

}  // namespace whatif::cli
