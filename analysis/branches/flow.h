// A function's control flow as the branch records saw it: its basic blocks (from decoding its code)
// with execution counts from the fall-through ranges, its taken and fall-through edges, and its
// hottest paths. Feeds `whatif report --branches`, the viewer's hot-path records (`branch_flow`)
// and the fall-through lines of `whatif export --bolt`. Offline, any thread.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/branches/branches.h"
#include "analysis/code/elf_code.h"

namespace whatif::analysis {

struct FlowBlock {
  uint64_t start = 0;  ///< ELF virtual address of its first instruction
  uint64_t last = 0;   ///< of its last instruction
  uint64_t count = 0;  ///< times it ran, from the fall-through ranges through it
};

struct FlowEdge {
  enum class Kind : uint8_t { kTaken, kFallThrough, kLeaves };
  uint64_t from = 0;  ///< the last instruction of the source block (a taken branch's address)
  uint64_t to = 0;    ///< the target's address (a block start when inside the function)
  uint64_t count = 0;
  Kind kind = Kind::kTaken;  ///< kLeaves: a taken branch whose target is outside the function
};

struct FunctionFlow {
  std::string name;
  uint64_t start = 0, size = 0;
  uint64_t taken = 0;              ///< taken branches recorded from inside the function
  std::vector<FlowBlock> blocks;   ///< by address
  std::vector<FlowEdge> edges;     ///< taken, fall-through and leaving edges with counts > 0, hottest first
  std::vector<BranchPath> paths;   ///< paths starting in the function, hottest first
  uint64_t path_total = 0;         ///< sum of those paths' counts
};

/// The flow of every function of `code` holding a recorded branch source, the most taken branches
/// first (`top` functions; 0: all).
std::vector<FunctionFlow> function_flows(const ObjectBranches& object, const code::ElfCode& object_code, std::size_t top = 0);

/// The fall-through edges of all `flows`, as BOLT's fdata wants them: from a block's last
/// instruction to the next block's start.
std::vector<BranchEdge> fall_throughs(const std::vector<FunctionFlow>& flows);

/// "name" for a flow edge kind: taken, fall-through, leaves.
const char* flow_edge_kind_name(FlowEdge::Kind kind);

}  // namespace whatif::analysis
