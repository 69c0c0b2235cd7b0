// `whatif lines OBJECT [FILE:LINE | ADDRESS]`: inspects what the symbol layer sees in one ELF file:
// a DWARF summary, the address ranges of a source line, or the line (and inline sites) of an address.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "symbols/symbol_map.h"

namespace whatif::cli {
namespace {

struct LinesOptions {
  std::string object;
  std::string where;
  std::vector<std::string> debug_dirs;
};

std::string join_ints(const std::vector<int>& values) {
  std::string out;
  for (int v : values) out += (out.empty() ? "" : ", ") + std::to_string(v);
  return out.empty() ? "none" : out;
}

int print_summary(symbols::SymbolMap& map) {
  const auto& object = map.objects().front();
  auto summary = map.summarize(object);
  auto warnings = map.take_warnings();
  for (const auto& w : summary.warnings) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  fmt::print("object:            {}\n", object.path);
  fmt::print("build-id:          {}\n", object.build_id.empty() ? "none" : object.build_id);
  fmt::print("debug file:        {} ({})\n", summary.debug_file, symbols::to_string(summary.debug_source));
  fmt::print("compilation units: {}\n", summary.compilation_units);
  fmt::print("source files:      {}\n", summary.files);
  fmt::print("line rows:         {}\n", summary.line_rows);
  fmt::print("DWARF versions:    {}\n", join_ints(summary.dwarf_versions));
  fmt::print("warnings:          {}\n", warnings.size());
  for (const auto& w : warnings) fmt::print("  {}\n", w);
  return 0;
}

int print_ranges(symbols::SymbolMap& map, const std::string& object, std::string_view file, uint32_t line) {
  auto ranges = map.ranges_for(file, line);
  if (ranges.empty()) {
    fmt::print(stderr,
               "whatif: error: no code for {}:{} in {}: the line may hold no statement or was optimised away, "
               "or the file name does not match (give trailing path components, e.g. src/main.c)\n",
               file, line, object);
    return 1;
  }
  uintptr_t bytes = 0;
  for (const auto& r : ranges) bytes += r.end - r.begin;
  fmt::print("{}:{}: {} range{}, {} bytes\n", file, line, ranges.size(), ranges.size() == 1 ? "" : "s", bytes);
  for (const auto& r : ranges) {
    auto info = map.lookup(r.begin);
    std::string_view function = info && !info->frames.empty() ? info->frames.front().function : "";
    fmt::print("  {:#x}-{:#x}  {}\n", r.begin, r.end, function);
  }
  return 0;
}

int print_address(symbols::SymbolMap& map, const std::string& object, uintptr_t address) {
  auto info = map.lookup(address);
  if (!info) {
    fmt::print(stderr, "whatif: error: no line table covers address {:#x} in {} (addresses are file addresses, "
                       "as printed by nm or objdump)\n", address, object);
    return 1;
  }
  const auto& inner = info->frames.front();
  fmt::print("{:#x}  {}:{}  {}\n", address, inner.file, inner.line, inner.function.empty() ? "??" : inner.function);
  for (std::size_t i = 1; i < info->frames.size(); ++i) {
    const auto& site = info->frames[i];
    fmt::print("  inlined at {}:{}  in {}\n", site.file.empty() ? "??" : site.file, site.line,
               site.function.empty() ? "??" : site.function);
  }
  return 0;
}

int run_lines(const LinesOptions& options) {
  symbols::Scope scope;
  scope.binary_patterns = {"%"};
  symbols::DebugSearch search;
  search.extra_dirs = options.debug_dirs;
  auto map = symbols::SymbolMap::for_file(options.object, scope, search);
  if (!map.ok()) {
    fmt::print(stderr, "whatif: error: {}\n", map.error());
    return 1;
  }
  if (!(*map)->objects().front().has_debug_info) {
    for (const auto& warning : (*map)->take_warnings()) fmt::print(stderr, "whatif: error: {}\n", warning);
    return 1;
  }
  const std::string& where = options.where;
  if (where.empty()) return print_summary(**map);
  auto colon = where.rfind(':');
  if (colon != std::string::npos) {
    uint32_t line = 0;
    const char* begin = where.data() + colon + 1;
    const char* end = where.data() + where.size();
    auto [ptr, ec] = std::from_chars(begin, end, line);
    if (colon == 0 || ec != std::errc() || ptr != end || line == 0) {
      fmt::print(stderr, "whatif: error: '{}' is not FILE:LINE (e.g. main.c:42)\n", where);
      return 2;
    }
    return print_ranges(**map, options.object, std::string_view(where).substr(0, colon), line);
  }
  std::string_view digits(where);
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
  uintptr_t address = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), address, 16);
  if (digits.empty() || ec != std::errc() || ptr != digits.data() + digits.size()) {
    fmt::print(stderr, "whatif: error: '{}' is neither FILE:LINE nor a hex ADDRESS (e.g. main.c:42 or 0x401136)\n",
               where);
    return 2;
  }
  return print_address(**map, options.object, address);
}

}  // namespace

void register_lines(CLI::App& app, Commands& commands) {
  auto options = std::make_shared<LinesOptions>();
  auto* cmd = app.add_subcommand("lines", "Show the DWARF line information whatif sees in an ELF file");
  cmd->add_option("object", options->object, "Executable or shared library")->required();
  cmd->add_option("where", options->where,
                  "FILE:LINE to list its address ranges, or a hex ADDRESS to show its line and inline call sites");
  cmd->add_option("--debug-dir", options->debug_dirs,
                  "Extra directory searched for separate debug files (like /usr/lib/debug); repeatable");
  cmd->footer("Without FILE:LINE or ADDRESS, prints a summary: compilation units, files, line rows,\n"
              "DWARF versions, the debug file used and any warnings. Addresses are file addresses.");
  cmd->callback([&commands, options] { commands.run = [options] { return run_lines(*options); }; });
}

}  // namespace whatif::cli
