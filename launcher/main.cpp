// The `whatif` command line: one entry point that dispatches to subcommands (lines, run, report,
// view). Runs as an ordinary single-threaded tool; each subcommand lives in its own cmd_*.cpp.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"whatif: a causal profiler for native Linux programs.\n"
               "Predicts how much faster your program gets if a line runs faster."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("whatif ") + WHATIF_VERSION);
  whatif::cli::Commands commands;
  whatif::cli::register_commands(app, commands);
  // Coz's separator `---` ends whatif's options; CLI11 knows `--`.
  std::vector<std::string> arguments;
  for (int i = argc - 1; i >= 1; --i) arguments.push_back(std::string(argv[i]) == "---" ? "--" : argv[i]);
  try {
    app.parse(arguments);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return commands.run();
}
