// The `branch_flow` record: one function's blocks (with source lines and counts), its edges and
// hottest paths as block sequences, appended to the profile by `whatif run --lbr` after the run so
// the viewer draws hot paths beside the source without decoding code. Offline, launcher thread.
#pragma once
#include <string>

#include "analysis/branches/flow.h"
#include "symbols/symbol_map.h"

namespace whatif::analysis {

/// The record as one JSON line: object, function, location (FILE:LINE of the entry), taken,
/// blocks [[start, last, count, "FILE:LINE"]], edges [[from_block, to_block (-1: leaves the
/// function), count, kind]], paths [[count, block, block, ...]]. `symbols` may be null (no lines).
std::string branch_flow_record(const FunctionFlow& flow, const std::string& object, symbols::SymbolMap* symbols);

/// The blocks a path runs through, by index in `flow.blocks`: the straight runs from its start to
/// its first branch, and from each branch's target to the next branch.
std::vector<int> path_blocks(const FunctionFlow& flow, const BranchPath& path);

}  // namespace whatif::analysis
