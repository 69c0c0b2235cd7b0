// `whatif report --branches`: the hottest taken edges of each object with their functions, source
// lines and taken rates, and the tracer's statistics. Offline, any thread.
#pragma once
#include <cstdint>
#include <string>

#include "analysis/branches/branches.h"

namespace whatif::analysis {

/// How often the branch at `address` was taken when it executed, from the edges and the
/// fall-through ranges passing it: taken / (taken + not taken), or -1 when it never executed.
double taken_rate(const ObjectBranches& object, uint64_t address);

/// The text report: per object, the `top` hottest edges (0: all) as FUNCTION FILE:LINE -> FILE:LINE
/// with counts, shares and taken rates; then the statistics. Objects' DWARF is read from their paths.
std::string branch_report_text(const BranchProfile& profile, int top);

}  // namespace whatif::analysis
