// Exports of branch records for optimisers: llvm-bolt's branch fdata (`whatif export --bolt`).
// Offline, any thread.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/branches/branches.h"
#include "base/result.h"

namespace whatif::analysis {

/// A function symbol of an ELF file: [address, address + size), ELF virtual addresses. A local
/// (static) function is named as llvm-bolt names it: NAME/N, N counting same-named locals in
/// symbol-table order from 1.
struct FunctionSymbol {
  std::string name;
  uint64_t address = 0;
  uint64_t size = 0;
};

/// The sized STT_FUNC symbols of the ELF file at `path` (.symtab, else .dynsym), sorted by address.
Result<std::vector<FunctionSymbol>> read_function_symbols(const std::string& path);

/// llvm-bolt's fdata text for one object's edges: one line per taken branch,
/// `1 FROM_FUNCTION FROM_OFFSET 1 TO_FUNCTION TO_OFFSET 0 COUNT` (offsets in hex, no mispredictions
/// known), with functions from `symbols`; then one line per fall-through edge of `fall_throughs`
/// (flow.h: from a block's last instruction to the next block), as perf2bolt writes the
/// fall-throughs of its LBR traces, so BOLT knows the not-taken side of each branch too. Edges
/// outside any function are left out and counted in `skipped`.
std::string bolt_fdata(const ObjectBranches& object, const std::vector<FunctionSymbol>& symbols, uint64_t* skipped = nullptr,
                       const std::vector<BranchEdge>& fall_throughs = {});

}  // namespace whatif::analysis
