// The branch report (see branch_report.h). Offline.
#include "analysis/branches/branch_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "symbols/symbol_map.h"

namespace whatif::analysis {

double taken_rate(const ObjectBranches& object, uint64_t address) {
  uint64_t taken = 0, passed = 0;
  for (const BranchEdge& edge : object.edges) {
    if (edge.from == address) taken += edge.count;
  }
  // A fall-through range [start, end] ran every instruction from start to the branch at end: a
  // branch strictly inside it executed without being taken.
  for (const BranchRange& range : object.ranges) {
    if (range.start <= address && address < range.end) passed += range.count;
  }
  return taken + passed == 0 ? -1.0 : static_cast<double>(taken) / static_cast<double>(taken + passed);
}

namespace {
std::string where(symbols::SymbolMap* map, uint64_t address, std::string* function) {
  if (map != nullptr) {
    if (auto info = map->lookup(address)) {
      const symbols::SourceLine& line = info->frames.front();
      if (function != nullptr) *function = std::string(info->frames.back().function);
      std::string file(line.file);
      auto slash = file.rfind('/');
      return fmt::format("{}:{}", slash == std::string::npos ? file : file.substr(slash + 1), line.line);
    }
  }
  return fmt::format("0x{:x}", address);
}
}  // namespace

std::string branch_report_text(const BranchProfile& profile, int top) {
  std::string text;
  for (const ObjectBranches& object : profile.objects) {
    auto map = symbols::SymbolMap::for_file(object.path);
    symbols::SymbolMap* symbols = map ? map->get() : nullptr;
    std::vector<BranchEdge> edges = object.edges;
    std::sort(edges.begin(), edges.end(), [](const BranchEdge& a, const BranchEdge& b) { return a.count > b.count; });
    if (top > 0 && edges.size() > static_cast<std::size_t>(top)) edges.resize(static_cast<std::size_t>(top));
    uint64_t total = object.taken();
    text += fmt::format("{} ({} taken branches recorded)\n", object.path, total);
    text += fmt::format("  {:>8} {:>6} {:>6}  {:<28} {:<24} {}\n", "count", "share", "taken", "function", "from", "to");
    for (const BranchEdge& edge : edges) {
      std::string function;
      std::string from = where(symbols, edge.from, &function);
      std::string to = where(symbols, edge.to, nullptr);
      double rate = taken_rate(object, edge.from);
      text += fmt::format("  {:>8} {:>5.1f}% {:>6} {:<28} {:<24} {}\n", edge.count,
                          total == 0 ? 0.0 : 100.0 * static_cast<double>(edge.count) / static_cast<double>(total),
                          rate < 0 ? std::string("-") : fmt::format("{:.0f}%", 100 * rate), function.empty() ? "?" : function,
                          fmt::format("{} 0x{:x}", from, edge.from), fmt::format("{} 0x{:x}", to, edge.to));
    }
  }
  if (profile.stats) {
    const BranchStats& s = *profile.stats;
    text += fmt::format(
        "tracer: {} bursts ({} complete) of depth {}, {} taken branches, {} breakpoints ({:.2f} per taken branch), "
        "{} resolved by decoding, {} by data flow, {} at stops\n",
        s.bursts, s.completed, s.depth, s.taken, s.breakpoints, s.breakpoints_per_taken, s.static_branches, s.flow_resolved,
        s.dynamic_branches);
    std::string ended;
    for (const auto& [reason, count] : s.ended) {
      if (count > 0) ended += fmt::format("{}{} {}", ended.empty() ? "" : ", ", reason, count);
    }
    if (!ended.empty()) text += "bursts ended early: " + ended + "\n";
  }
  return text;
}

}  // namespace whatif::analysis
