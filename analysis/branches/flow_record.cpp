// The viewer's `branch_flow` record (see flow_record.h). Offline.
#include "analysis/branches/flow_record.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "whatif/profile_format.h"

namespace whatif::analysis {
namespace {

constexpr std::size_t kPaths = 8;

/// Index of the block starting at or containing `address`, or -1 outside the function.
int block_at(const FunctionFlow& flow, uint64_t address) {
  if (address < flow.start || address >= flow.start + flow.size || flow.blocks.empty()) return -1;
  auto after = std::upper_bound(flow.blocks.begin(), flow.blocks.end(), address,
                                [](uint64_t value, const FlowBlock& block) { return value < block.start; });
  if (after == flow.blocks.begin()) return -1;
  return static_cast<int>(std::prev(after) - flow.blocks.begin());
}

std::string location(symbols::SymbolMap* symbols, uint64_t address) {
  if (symbols != nullptr) {
    if (auto info = symbols->lookup(address); info && info->frames.front().line > 0) {
      return std::string(info->frames.front().file) + ":" + std::to_string(info->frames.front().line);
    }
  }
  return "";
}

}  // namespace

std::vector<int> path_blocks(const FunctionFlow& flow, const BranchPath& path) {
  std::vector<int> out;
  auto run = [&](uint64_t from, uint64_t to) {  // the straight run [from, to]
    int first = block_at(flow, from), last = block_at(flow, to);
    if (first < 0 || last < first) return;
    for (int i = first; i <= last; ++i) out.push_back(i);
  };
  uint64_t at = path.start;
  for (const BranchEdge& branch : path.branches) {
    run(at, branch.from);
    at = branch.to;
  }
  return out;
}

std::string branch_flow_record(const FunctionFlow& flow, const std::string& object, symbols::SymbolMap* symbols) {
  using nlohmann::json;
  namespace names = format::record::branch_flow;
  json blocks = json::array();
  for (const FlowBlock& block : flow.blocks) blocks.push_back({block.start, block.last, block.count, location(symbols, block.start)});
  json edges = json::array();
  for (const FlowEdge& edge : flow.edges) {
    int from = block_at(flow, edge.from);
    int to = edge.kind == FlowEdge::Kind::kLeaves ? -1 : block_at(flow, edge.to);
    if (from < 0) continue;
    edges.push_back({from, to, edge.count, flow_edge_kind_name(edge.kind)});
  }
  json paths = json::array();
  for (std::size_t i = 0; i < flow.paths.size() && i < kPaths; ++i) {
    json path = json::array({flow.paths[i].count});
    for (int block : path_blocks(flow, flow.paths[i])) path.push_back(block);
    paths.push_back(std::move(path));
  }
  json record = {{format::kTypeField, names::kName}, {names::object, object}, {names::function, flow.name},
                 {names::location, location(symbols, flow.start)}, {names::taken, flow.taken},
                 {names::blocks, blocks}, {names::edges, edges}, {names::paths, paths}};
  return record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace whatif::analysis
