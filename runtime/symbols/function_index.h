// Function bounds for an object without DWARF line tables: ELF symbols (.symtab, else .dynsym), and
// .eh_frame FDEs for code no symbol covers, named OBJECT+0xOFFSET. File addresses only (the
// SymbolMap applies load biases). Built on the profiler thread or in tools; never in signal handlers.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "symbols/interner.h"
#include "symbols/symbol_map.h"

namespace whatif::symbols {

struct FunctionBounds {
  uint64_t begin = 0;  ///< file virtual address
  uint64_t end = 0;
  std::string_view name;  ///< demangled symbol, or OBJECT+0xOFFSET (interned)
};

class FunctionIndex {
 public:
  /// Reads `object`'s symbol tables and .eh_frame. Fails when the file is unreadable or names no
  /// function at all (no function symbol and no FDE).
  static Result<std::unique_ptr<FunctionIndex>> open(const std::string& object, Interner* interner);

  /// The function containing a file address, or nullptr.
  const FunctionBounds* find(uint64_t address) const;
  /// Every function's bounds, sorted by address.
  const std::vector<FunctionBounds>& functions() const { return functions_; }
  /// Where the names came from, for the user: ".symtab", ".dynsym", ".eh_frame" or a combination.
  const std::string& sources() const { return sources_; }

 private:
  std::vector<FunctionBounds> functions_;
  std::string sources_;
};

/// A symbol as users read it: C++ and Rust legacy names demangled, Rust's `::h<hash>` dropped.
std::string demangle_symbol(const char* name);

}  // namespace whatif::symbols
