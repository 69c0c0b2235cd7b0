// The `whatif` command line: one entry point that dispatches to subcommands (lines, run, report,
// view, ...). Runs as an ordinary single-threaded tool; each subcommand lives in its own cmd_*.cpp.
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "commands.h"
#include "run_options.h"

int main(int argc, char** argv) {
  CLI::App app{"whatif: a causal profiler for native Linux programs.\n"
               "Predicts how much faster your program gets if a line runs faster."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("whatif ") + WHATIF_VERSION);
  whatif::cli::Commands commands;
  whatif::cli::register_commands(app, commands);
  // `whatif run|stat [options] --- PROGRAM ARGS`: the first `---` (Coz's separator) or `--` ends
  // whatif's options, and CLI11 never sees what follows: its greedy repeatable options (-p, -b, -s,
  // -e) would take the program's arguments.
  std::vector<std::string> typed(argv + 1, argv + argc);
  if (!typed.empty() && (typed.front() == "run" || typed.front() == "stat")) {
    whatif::cli::SplitCommandLine split = whatif::cli::split_at_separator(typed);
    typed = std::move(split.own);
    commands.program = std::move(split.program);
    commands.program_given = split.separated;
    commands.separator = std::move(split.separator);
  }
  std::vector<std::string> arguments(typed.rbegin(), typed.rend());  // CLI11 takes them reversed
  try {
    app.parse(arguments);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  }
  return commands.run();
}
