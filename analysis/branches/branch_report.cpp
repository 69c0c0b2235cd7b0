// The branch report (see branch_report.h). Offline.
#include "analysis/branches/branch_report.h"

#include <fmt/format.h>

#include <algorithm>

#include "analysis/branches/flow.h"
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

constexpr std::size_t kEdgesPerFunction = 10;
constexpr std::size_t kPathsPerFunction = 5;

std::string where(symbols::SymbolMap* map, uint64_t address) { return source_location(map, address); }

/// The line alone when `location` is in `file` ("47"), else the whole location.
std::string short_where(const std::string& location, const std::string& file) {
  if (!file.empty() && location.size() > file.size() + 1 && location.compare(0, file.size(), file) == 0 && location[file.size()] == ':') {
    return location.substr(file.size() + 1);
  }
  return location;
}

std::string percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? std::string("-") : fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

void function_text(std::string& text, const ObjectBranches& object, const FunctionFlow& flow, symbols::SymbolMap* symbols, uint64_t total) {
  std::string home = where(symbols, flow.start);
  std::string file = home.rfind(':') != std::string::npos && home.rfind("0x", 0) != 0 ? home.substr(0, home.rfind(':')) : "";
  text += fmt::format("\n  {} ({}): {} taken branches, {} of the object's\n", flow.name, home, flow.taken, percent(flow.taken, total));
  uint64_t edge_total = 0;
  for (const FlowEdge& edge : flow.edges) edge_total += edge.count;
  text += fmt::format("    {:>8} {:>6} {:>6}  {:<12} {:<28} {}\n", "count", "share", "taken", "edge", "from", "to");
  for (std::size_t i = 0; i < flow.edges.size() && i < kEdgesPerFunction; ++i) {
    const FlowEdge& edge = flow.edges[i];
    double rate = edge.kind == FlowEdge::Kind::kFallThrough ? -1 : taken_rate(object, edge.from);
    text += fmt::format("    {:>8} {:>6} {:>6}  {:<12} {:<28} {}\n", edge.count, percent(edge.count, edge_total),
                        rate < 0 ? std::string("-") : fmt::format("{:.0f}%", 100 * rate), flow_edge_kind_name(edge.kind),
                        fmt::format("{} 0x{:x}", where(symbols, edge.from), edge.from), fmt::format("{} 0x{:x}", where(symbols, edge.to), edge.to));
  }
  if (flow.paths.empty()) return;
  text += fmt::format("    hottest paths (from one backward branch to the next: {} recorded){}\n", flow.path_total,
                      file.empty() ? "" : fmt::format(", lines of {}", file));
  for (std::size_t i = 0; i < flow.paths.size() && i < kPathsPerFunction; ++i) {
    const BranchPath& path = flow.paths[i];
    std::string steps = short_where(where(symbols, path.start), file);
    for (const BranchEdge& branch : path.branches) {
      steps += fmt::format("  {}->{}", short_where(where(symbols, branch.from), file), short_where(where(symbols, branch.to), file));
    }
    text += fmt::format("    {:>8} {:>6}  {}\n", path.count, percent(path.count, flow.path_total), steps);
  }
}

}  // namespace

std::string source_location(symbols::SymbolMap* map, uint64_t address) {
  if (map != nullptr) {
    if (auto info = map->lookup(address); info && info->frames.front().line > 0) {
      std::string file(info->frames.front().file);
      auto slash = file.rfind('/');
      return fmt::format("{}:{}", slash == std::string::npos ? file : file.substr(slash + 1), info->frames.front().line);
    }
  }
  return fmt::format("0x{:x}", address);
}

std::string branch_report_text(const BranchProfile& profile, int top) {
  std::string text;
  for (const ObjectBranches& object : profile.objects) {
    auto map = symbols::SymbolMap::for_file(object.path);
    symbols::SymbolMap* symbols = map ? map->get() : nullptr;
    uint64_t total = object.taken();
    text += fmt::format("{} ({} taken branches recorded)\n", object.path, total);
    auto object_code = code::ElfCode::read(object.path);
    if (!object_code) {
      text += fmt::format("  {}: edges by address only\n", object_code.error());
      std::vector<BranchEdge> edges = object.edges;
      std::sort(edges.begin(), edges.end(), [](const BranchEdge& a, const BranchEdge& b) { return a.count > b.count; });
      if (top > 0 && edges.size() > static_cast<std::size_t>(top)) edges.resize(static_cast<std::size_t>(top));
      for (const BranchEdge& edge : edges) text += fmt::format("    {:>8}  0x{:x} -> 0x{:x}\n", edge.count, edge.from, edge.to);
      continue;
    }
    for (const FunctionFlow& flow : function_flows(object, *object_code, top > 0 ? static_cast<std::size_t>(top) : 0)) {
      function_text(text, object, flow, symbols, total);
    }
    text += "\n";
  }
  if (profile.stats) {
    const BranchStats& s = *profile.stats;
    text += fmt::format(
        "tracer: {} bursts ({} complete) of depth {}, {} taken branches, {} breakpoint stops ({:.2f} per taken branch; "
        "{} breakpoints moved, {} debug registers), {} resolved by decoding, {} by data flow, {} at stops, {} by which "
        "breakpoint fired\n",
        s.bursts, s.completed, s.depth, s.taken, s.breakpoints, s.breakpoints_per_taken, s.breakpoint_moves, s.registers,
        s.static_branches, s.flow_resolved, s.dynamic_branches, s.lookahead_settled);
    std::string ended;
    for (const auto& [reason, count] : s.ended) {
      if (count > 0) ended += fmt::format("{}{} {}", ended.empty() ? "" : ", ", reason, count);
    }
    if (!ended.empty()) text += "bursts ended early: " + ended + "\n";
  }
  return text;
}

}  // namespace whatif::analysis
