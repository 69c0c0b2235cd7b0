// The `whatif` command line: one entry point that dispatches to subcommands (lines, run, report,
// view). Runs as an ordinary single-threaded tool; each subcommand lives in its own cmd_*.cpp.
#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"whatif: a causal profiler for native Linux programs.\n"
               "Predicts how much faster your program gets if a line runs faster."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("whatif ") + WHATIF_VERSION);
  whatif::cli::Commands commands;
  whatif::cli::register_commands(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return commands.run();
}
