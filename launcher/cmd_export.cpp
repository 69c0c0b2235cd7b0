// `whatif export --bolt|--autofdo PROFILE`: writes a profile's software branch records (`whatif run
// --lbr`) in an optimiser's input format on stdout. Launcher process, single-threaded.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fmt/format.h>

#include "analysis/branches/autofdo_export.h"
#include "analysis/branches/bolt_export.h"
#include "analysis/branches/branches.h"
#include "analysis/branches/flow.h"
#include "analysis/code/elf_code.h"
#include "commands.h"

namespace whatif::cli {
namespace {

struct ExportArgs {
  std::string profile;
  bool bolt = false;
  bool autofdo = false;
  std::string object;  // path suffix; empty: the first object with branches (the program)
};

int run_export(const ExportArgs& args) {
  if (args.bolt == args.autofdo) {
    fmt::print(stderr, "whatif export: choose one format: --bolt (llvm-bolt fdata) or --autofdo (create_gcov --profiler=text)\n");
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
  if (args.autofdo) {
    std::string text = analysis::autofdo_text(*object);
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  auto symbols = analysis::read_function_symbols(object->path);
  if (!symbols) {
    fmt::print(stderr, "whatif export: {}: the object's symbols name the fdata's functions\n", symbols.error());
    return 1;
  }
  // The fall-throughs need the object's code (its blocks); without it the taken branches still go.
  std::vector<analysis::BranchEdge> fall_throughs;
  if (auto object_code = code::ElfCode::read(object->path)) {
    fall_throughs = analysis::fall_throughs(analysis::function_flows(*object, *object_code));
  } else {
    fmt::print(stderr, "whatif export: {}: fall-through edges left out (taken branches only)\n", object_code.error());
  }
  uint64_t skipped = 0;
  std::string text = analysis::bolt_fdata(*object, *symbols, &skipped, fall_throughs);
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (skipped > 0) fmt::print(stderr, "whatif export: {} edges outside any function symbol of {} left out\n", skipped, object->path);
  return 0;
}

}  // namespace

void register_export(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* command = app.add_subcommand("export", "Write a profile's branch records (whatif run --lbr) for an optimiser");
  command->add_flag("--bolt", args->bolt, "llvm-bolt's branch fdata (llvm-bolt BINARY -data=FILE)");
  command->add_flag("--autofdo", args->autofdo,
                    "AutoFDO's text samples (create_gcov --binary=BINARY --profile=FILE --profiler=text --gcov=OUT)");
  command->add_option("--object", args->object, "The object to export, by path suffix (default: the program)");
  command->add_option("profile", args->profile, "The profile (whatif run --lbr)")->required();
  command->callback([&commands, args] { commands.run = [args] { return run_export(*args); }; });
}

}  // namespace whatif::cli
