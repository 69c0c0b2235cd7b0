// `whatif export --bolt|--autofdo PROFILE`: writes a profile's software branch records (`whatif run
// --lbr`) in an optimiser's input format on stdout; `whatif export --pprof [-o FILE] PROFILE`: its
// function counters and line samples as a pprof profile. Launcher process, single-threaded.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>

#include "analysis/branches/autofdo_export.h"
#include "analysis/branches/bolt_export.h"
#include "analysis/branches/branch_report.h"
#include "analysis/branches/branches.h"
#include "analysis/branches/flow.h"
#include "analysis/code/elf_code.h"
#include "analysis/counters/pprof.h"
#include "analysis/profile/profile.h"
#include "commands.h"
#include "symbols/symbol_map.h"

namespace whatif::cli {
namespace {

struct ExportArgs {
  std::string profile;
  bool bolt = false;
  bool autofdo = false;
  bool pprof = false;
  std::string output;  // --pprof: the file (default: stdout, unless a terminal)
  std::string object;  // path suffix; empty: the first object with branches (the program)
};

int run_pprof(const ExportArgs& args) {
  auto profile = analysis::read_profile(args.profile);
  if (!profile) {
    fmt::print(stderr, "whatif export: {}\n", profile.error());
    return 1;
  }
  // Branch records (whatif run --lbr), when the profile has them: one sample per taken edge.
  std::vector<counters::PprofEdge> edges;
  if (auto branches = analysis::read_branches(args.profile)) {
    for (const analysis::ObjectBranches& object : branches->objects) {
      auto map = symbols::SymbolMap::for_file(object.path);
      symbols::SymbolMap* symbols = map ? map->get() : nullptr;
      for (const analysis::BranchEdge& edge : object.edges) {
        edges.push_back({object.path, edge.from, edge.to, analysis::source_location(symbols, edge.from),
                         analysis::source_location(symbols, edge.to), edge.count});
      }
    }
  }
  auto message = counters::pprof_profile(*profile, edges);
  if (!message) {
    fmt::print(stderr, "whatif export: {}\n", message.error());
    return 1;
  }
  auto compressed = counters::gzip(*message);
  if (!compressed) {
    fmt::print(stderr, "whatif export: --pprof: {}\n", compressed.error());
    return 1;
  }
  if (args.output.empty() && isatty(STDOUT_FILENO)) {
    fmt::print(stderr, "whatif export: --pprof writes a binary file: give -o FILE (e.g. -o profile.pb.gz) or redirect stdout\n");
    return 2;
  }
  FILE* out = args.output.empty() ? stdout : std::fopen(args.output.c_str(), "wb");
  if (out == nullptr) {
    fmt::print(stderr, "whatif export: -o {}: cannot write the file: {}\n", args.output, std::strerror(errno));
    return 1;
  }
  bool written = std::fwrite(compressed->data(), 1, compressed->size(), out) == compressed->size();
  if (out != stdout) written = std::fclose(out) == 0 && written;
  if (!written) {
    fmt::print(stderr, "whatif export: -o {}: write failed: {}\n", args.output.empty() ? "(stdout)" : args.output,
               std::strerror(errno));
    return 1;
  }
  if (!args.output.empty()) fmt::print(stderr, "whatif export: wrote {} (view with `go tool pprof -top {}`)\n", args.output, args.output);
  return 0;
}

int run_export(const ExportArgs& args) {
  if (int(args.bolt) + int(args.autofdo) + int(args.pprof) != 1) {
    fmt::print(stderr, "whatif export: choose one format: --bolt (llvm-bolt fdata), --autofdo (create_gcov "
                       "--profiler=text) or --pprof (pprof profile.proto)\n");
    return 2;
  }
  if (args.pprof) return run_pprof(args);
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
  CLI::App* command = app.add_subcommand(
      "export", "Write a profile's branch records (whatif run --lbr) for an optimiser, or its counters for pprof");
  command->add_flag("--bolt", args->bolt, "llvm-bolt's branch fdata (llvm-bolt BINARY -data=FILE)");
  command->add_flag("--pprof", args->pprof,
                    "pprof's profile.proto, gzipped: function counters (whatif run --counters) as sample types, "
                    "line samples, and taken-branch edges (whatif run --lbr) with the edge as labels");
  command->add_option("-o,--output", args->output, "--pprof: the file to write (default: stdout)");
  command->add_flag("--autofdo", args->autofdo,
                    "AutoFDO's text samples (create_gcov --binary=BINARY --profile=FILE --profiler=text --gcov=OUT)");
  command->add_option("--object", args->object, "The object to export, by path suffix (default: the program)");
  command->add_option("profile", args->profile, "The profile (whatif run --lbr)")->required();
  command->callback([&commands, args] { commands.run = [args] { return run_export(*args); }; });
}

}  // namespace whatif::cli
