// Per-function control flow from branch records (see flow.h). Offline.
#include "analysis/branches/flow.h"

#include <algorithm>
#include <map>
#include <set>

#include "x86/decoder.h"

namespace whatif::analysis {
namespace {

struct Decoded {
  uint64_t address = 0;
  uint8_t length = 0;
  x86::Transfer transfer = x86::Transfer::kNone;
  uint64_t target = 0;
};

/// The function's instructions, decoded linearly (stops at bytes that do not decode).
std::vector<Decoded> decode_function(const code::ElfCode& object_code, const code::Function& function, const x86::Decoder& decoder) {
  std::vector<Decoded> out;
  std::vector<uint8_t> bytes = object_code.bytes(function.start, function.size);
  for (uint64_t offset = 0; offset < bytes.size();) {
    std::size_t available = std::min<std::size_t>(15, bytes.size() - offset);
    x86::Instruction instruction = decoder.decode(bytes.data() + offset, available, function.start + offset);
    if (instruction.length == 0) break;
    out.push_back({function.start + offset, instruction.length, instruction.transfer, instruction.target});
    offset += instruction.length;
  }
  return out;
}

bool ends_flow(x86::Transfer transfer) {
  return transfer == x86::Transfer::kJump || transfer == x86::Transfer::kIndirectJump || transfer == x86::Transfer::kReturn ||
         transfer == x86::Transfer::kOther;
}

FunctionFlow flow_of(const ObjectBranches& object, const code::Function& function, const std::vector<Decoded>& instructions) {
  FunctionFlow flow;
  flow.name = function.name;
  flow.start = function.start;
  flow.size = function.size;
  auto inside = [&](uint64_t address) { return address >= function.start && address < function.start + function.size; };
  std::vector<const BranchRange*> ranges;
  for (const BranchRange& range : object.ranges) {
    if (inside(range.start)) ranges.push_back(&range);
  }
  // Leaders: the entry, every instruction after a transfer, direct targets, and every address the
  // records say execution arrived at.
  std::set<uint64_t> leaders{function.start};
  for (const Decoded& instruction : instructions) {
    if (instruction.transfer == x86::Transfer::kNone) continue;
    leaders.insert(instruction.address + instruction.length);
    if ((instruction.transfer == x86::Transfer::kJump || instruction.transfer == x86::Transfer::kConditional) && inside(instruction.target)) {
      leaders.insert(instruction.target);
    }
  }
  for (const BranchEdge& edge : object.edges) {
    if (inside(edge.to)) leaders.insert(edge.to);
  }
  for (const BranchRange* range : ranges) leaders.insert(range->start);
  std::vector<x86::Transfer> ends;  // per block: its last instruction's transfer
  for (const Decoded& instruction : instructions) {
    if (flow.blocks.empty() || leaders.count(instruction.address) > 0) {
      flow.blocks.push_back({instruction.address, instruction.address, 0});
      ends.push_back(instruction.transfer);
    }
    flow.blocks.back().last = instruction.address;
    ends.back() = instruction.transfer;
  }
  // A block ran once for every straight run passing its start; a fall-through edge once for every
  // run passing from one block into the next.
  for (std::size_t i = 0; i < flow.blocks.size(); ++i) {
    FlowBlock& block = flow.blocks[i];
    uint64_t through = 0;
    for (const BranchRange* range : ranges) {
      if (range->start <= block.start && block.start <= range->end) block.count += range->count;
      if (i + 1 < flow.blocks.size() && range->start <= block.start && flow.blocks[i + 1].start <= range->end) through += range->count;
    }
    if (through > 0 && !ends_flow(ends[i])) flow.edges.push_back({block.last, flow.blocks[i + 1].start, through, FlowEdge::Kind::kFallThrough});
  }
  for (const BranchEdge& edge : object.edges) {
    if (!inside(edge.from)) continue;
    flow.taken += edge.count;
    flow.edges.push_back({edge.from, edge.to, edge.count, inside(edge.to) ? FlowEdge::Kind::kTaken : FlowEdge::Kind::kLeaves});
  }
  std::stable_sort(flow.edges.begin(), flow.edges.end(), [](const FlowEdge& a, const FlowEdge& b) { return a.count > b.count; });
  for (const BranchPath& path : object.paths) {
    if (!inside(path.start)) continue;
    flow.paths.push_back(path);
    flow.path_total += path.count;
  }
  std::stable_sort(flow.paths.begin(), flow.paths.end(), [](const BranchPath& a, const BranchPath& b) { return a.count > b.count; });
  return flow;
}

}  // namespace

const char* flow_edge_kind_name(FlowEdge::Kind kind) {
  switch (kind) {
    case FlowEdge::Kind::kTaken: return "taken";
    case FlowEdge::Kind::kFallThrough: return "fall-through";
    case FlowEdge::Kind::kLeaves: return "leaves";
  }
  return "?";
}

std::vector<FunctionFlow> function_flows(const ObjectBranches& object, const code::ElfCode& object_code, std::size_t top) {
  std::map<uint64_t, const code::Function*> functions;  // by start: each once
  for (const BranchEdge& edge : object.edges) {
    if (const code::Function* function = object_code.function_at(edge.from)) functions.emplace(function->start, function);
  }
  x86::Decoder decoder;
  std::vector<FunctionFlow> flows;
  for (const auto& [start, function] : functions) flows.push_back(flow_of(object, *function, decode_function(object_code, *function, decoder)));
  std::stable_sort(flows.begin(), flows.end(), [](const FunctionFlow& a, const FunctionFlow& b) { return a.taken > b.taken; });
  if (top > 0 && flows.size() > top) flows.resize(top);
  return flows;
}

std::vector<BranchEdge> fall_throughs(const std::vector<FunctionFlow>& flows) {
  std::vector<BranchEdge> out;
  for (const FunctionFlow& flow : flows) {
    for (const FlowEdge& edge : flow.edges) {
      if (edge.kind == FlowEdge::Kind::kFallThrough) out.push_back({edge.from, edge.to, edge.count});
    }
  }
  std::sort(out.begin(), out.end(), [](const BranchEdge& a, const BranchEdge& b) { return a.from < b.from || (a.from == b.from && a.to < b.to); });
  return out;
}

}  // namespace whatif::analysis
