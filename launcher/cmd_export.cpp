// `whatif export --bolt PROFILE`: writes a profile's software branch records (`whatif run --lbr`) in
// an optimiser's input format on stdout. Launcher process, single-threaded.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>

#include "analysis/branches/bolt_export.h"
#include "analysis/branches/branches.h"
#include "commands.h"

namespace whatif::cli {
namespace {

struct ExportArgs {
  std::string profile;
  bool bolt = false;
  std::string object;  // path suffix; empty: the first object with branches (the program)
};

int run_export(const ExportArgs& args) {
  if (!args.bolt) {
    fmt::print(stderr, "whatif export: choose a format: --bolt (llvm-bolt fdata)\n");
    return 2;
  }
  auto branches = analysis::read_branches(args.profile);
  if (!branches) {
    fmt::print(stderr, "whatif export: {}\n", branches.error());
    return 1;
  }
  if (branches->objects.empty()) {
    fmt::print(stderr, "whatif export: {} has no branch records: profile with `whatif run --lbr`\n", args.profile);
    return 1;
  }
  const analysis::ObjectBranches* object = args.object.empty() ? &branches->objects.front() : branches->object(args.object);
  if (object == nullptr) {
    fmt::print(stderr, "whatif export: --object {}: no branch records for such an object in {}; objects:", args.object, args.profile);
    for (const auto& known : branches->objects) fmt::print(stderr, " {}", known.path);
    fmt::print(stderr, "\n");
    return 1;
  }
  auto symbols = analysis::read_function_symbols(object->path);
  if (!symbols) {
    fmt::print(stderr, "whatif export: {}: the object's symbols name the fdata's functions\n", symbols.error());
    return 1;
  }
  uint64_t skipped = 0;
  std::string text = analysis::bolt_fdata(*object, *symbols, &skipped);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (skipped > 0) fmt::print(stderr, "whatif export: {} edges outside any function symbol of {} left out\n", skipped, object->path);
  return 0;
}

}  // namespace

void register_export(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* command = app.add_subcommand("export", "Write a profile's branch records (whatif run --lbr) for an optimiser");
  command->add_flag("--bolt", args->bolt, "llvm-bolt's branch fdata (llvm-bolt BINARY -data=FILE)");
  command->add_option("--object", args->object, "The object to export, by path suffix (default: the program)");
  command->add_option("profile", args->profile, "The profile (whatif run --lbr)")->required();
  command->callback([&commands, args] { commands.run = [args] { return run_export(*args); }; });
}

}  // namespace whatif::cli
