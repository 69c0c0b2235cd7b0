// Registration of the launcher's subcommands. Each cmd_*.cpp defines one register_* function that
// adds its subcommand and sets Commands::run to the action taken when that subcommand is chosen.
#pragma once
#include <functional>

namespace CLI { class App; }

namespace whatif::cli {

struct Commands {
  std::function<int()> run = [] { return 0; };
};

void register_commands(CLI::App& app, Commands& commands);
void register_run(CLI::App& app, Commands& commands);
void register_lines(CLI::App& app, Commands& commands);
void register_report(CLI::App& app, Commands& commands);
void register_view(CLI::App& app, Commands& commands);
void register_export(CLI::App& app, Commands& commands);

}  // namespace whatif::cli
