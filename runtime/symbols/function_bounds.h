// The bounds of the function holding an address, from an ELF file's symbol tables (.symtab, then
// .dynsym): what the code patcher decodes to find branch targets. Profiler thread or tools.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "symbols/symbol_map.h"

namespace whatif::symbols {

/// A function's code: its body and the parts GCC split off it (`NAME.cold`, `NAME.cold.N`), which
/// jump back into the body. File addresses.
struct FunctionExtent {
  AddressRange body;
  std::vector<AddressRange> fragments;
};

/// The [begin, end) file addresses of the sized STT_FUNC symbol in `path` that contains
/// `file_address`, and its split-off parts. Fails with a message naming the path when the file
/// has no such symbol.
Result<FunctionExtent> function_bounds(const std::string& path, uint64_t file_address);

}  // namespace whatif::symbols
