// `whatif report --branches`: per object and per function (the most taken branches first), the
// function's hottest edges (taken and fall-through) and hottest paths with source lines and taken
// rates, then the tracer's statistics. Offline, any thread.
#pragma once
#include <cstdint>
#include <string>

#include "analysis/branches/branches.h"

namespace whatif::symbols {
class SymbolMap;
}

namespace whatif::analysis {

/// FILE:LINE (file name only) of `address` in the object `map` describes, or 0xADDRESS (no map, no line).
std::string source_location(symbols::SymbolMap* map, uint64_t address);

/// How often the branch at `address` was taken when it executed, from the edges and the
/// fall-through ranges passing it: taken / (taken + not taken), or -1 when it never executed.
double taken_rate(const ObjectBranches& object, uint64_t address);

/// The text report: per object, the `top` functions with the most taken branches (0: all), each
/// with its hottest edges as FILE:LINE -> FILE:LINE with counts, shares of the function's edges
/// and taken rates, and its hottest paths as the source lines of their branches. Objects' DWARF and
/// code are read from their paths; an object that cannot be read is reported by address.
std::string branch_report_text(const BranchProfile& profile, int top);

}  // namespace whatif::analysis
