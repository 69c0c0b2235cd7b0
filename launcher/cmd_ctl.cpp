// `whatif ctl PID reload CONFIG`: changes the functions and events a program run with --counters
// counts, while it runs. Resolves CONFIG's events, writes the new configuration where the runtime
// looks (os::counters_reload_path) and sends the reload signal; the program's profiler thread swaps
// both. Launcher process, one thread.
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "analysis/counters/function_config.h"
#include "commands.h"
#include "os/os.h"

namespace whatif::cli {
namespace {

struct CtlOptions {
  int pid = 0;
  std::string action;
  std::string config;
};

int run_ctl(const CtlOptions& options) {
  auto config = counters::read_function_config(options.config);
  if (!config) {
    std::fprintf(stderr, "whatif ctl: %s\n", config.error().c_str());
    return 2;
  }
  std::vector<CounterEventOption> events;
  if (std::string error = resolve_counter_events(*config, options.config, events); !error.empty()) {
    std::fprintf(stderr, "whatif ctl: %s\n", error.c_str());
    return 2;
  }
  if (::kill(options.pid, 0) != 0) {
    std::fprintf(stderr, "whatif ctl: process %d: %s: give the pid of a program run with `whatif run --counters`\n",
                 options.pid, std::strerror(errno));
    return 2;
  }
  std::string path = os::counters_reload_path(options.pid);
  std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    for (const std::string& function : config->functions) out << "function " << function << '\n';
    for (const CounterEventOption& event : events) {
      out << "event " << (event.set < 0 ? std::string("*") : std::to_string(event.set)) << ' '
          << encode_counter_event(event) << '\n';
    }
    out << "cycle " << config->cycle << '\n';
    if (!out) {
      std::fprintf(stderr, "whatif ctl: cannot write %s: check /tmp is writable\n", temporary.c_str());
      return 2;
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);  // the runtime never reads half a list
  if (error) {
    std::fprintf(stderr, "whatif ctl: cannot write %s: %s\n", path.c_str(), error.message().c_str());
    return 2;
  }
  if (::kill(options.pid, os::reload_signal()) != 0) {
    std::fprintf(stderr, "whatif ctl: cannot signal process %d: %s\n", options.pid, std::strerror(errno));
    return 2;
  }
  return 0;
}

}  // namespace

void register_ctl(CLI::App& app, Commands& commands) {
  auto options = std::make_shared<CtlOptions>();
  CLI::App* command = app.add_subcommand(
      "ctl", "Control a running program: `whatif ctl PID reload CONFIG` changes the functions and events --counters counts "
             "(the program must run with --counters; signal SIGRTMIN+5)");
  command->add_option("pid", options->pid, "The profiled program's process id")->required();
  command->add_option("action", options->action, "reload")->required()->check(CLI::IsMember({"reload"}));
  command->add_option("config", options->config, "The --counters configuration to switch to")->required();
  command->callback([&commands, options] { commands.run = [options] { return run_ctl(*options); }; });
}

}  // namespace whatif::cli
