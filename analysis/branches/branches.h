// Reading software branch records (`branches` and `branch_stats`, written by `whatif run --lbr`)
// from a profile: per object, the last cumulative record wins. Offline, any thread.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace whatif::analysis {

struct BranchEdge {
  uint64_t from = 0;  ///< ELF virtual address of the branch
  uint64_t to = 0;    ///< ELF virtual address of its target
  uint64_t count = 0;
};

/// A run of code that executed straight through: from a taken branch's target to the next taken
/// branch (both inclusive of the instructions there).
struct BranchRange {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t count = 0;
};

/// A path: the taken branches of one loop iteration, from a backward branch's target `start` to the
/// next backward branch (the last of `branches`), `count` times.
struct BranchPath {
  uint64_t count = 0;
  uint64_t start = 0;
  std::vector<BranchEdge> branches;  ///< in order; their counts are 0
};

struct ObjectBranches {
  std::string path;
  std::string build_id;
  std::vector<BranchEdge> edges;
  std::vector<BranchRange> ranges;
  std::vector<BranchPath> paths;  ///< the hottest first (absent in older profiles: empty)
  uint64_t taken() const;  ///< sum of edge counts
};

struct BranchStats {
  uint64_t depth = 0, every = 0;
  uint64_t bursts = 0, completed = 0, taken = 0, breakpoints = 0, static_branches = 0, dynamic_branches = 0;
  uint64_t flow_resolved = 0, decoded_blocks = 0;
  uint64_t lookahead_settled = 0, breakpoint_moves = 0, registers = 0;
  double breakpoints_per_taken = 0;
  std::map<std::string, uint64_t> ended;  ///< bursts ended early, by reason
};

struct BranchProfile {
  std::vector<ObjectBranches> objects;  ///< in the order first seen
  std::optional<BranchStats> stats;     ///< the last branch_stats record
  /// The object whose path ends with `suffix` (a whole component), or nullptr.
  const ObjectBranches* object(std::string_view suffix) const;
};

/// Reads the branch records of profile text (other records are skipped; a line that is not JSON
/// is an error naming its line number).
Result<BranchProfile> parse_branches(std::string_view text, const std::string& name);
Result<BranchProfile> read_branches(const std::string& path);

}  // namespace whatif::analysis
