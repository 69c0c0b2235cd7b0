// One object's DWARF, opened with libdwarf: a compilation-unit index by address range built at
// open (from .debug_aranges, else unit DIE ranges), line tables and inline scopes parsed per unit
// on first use. File addresses only (the SymbolMap applies load biases). Profiler thread or tools.
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

class DwarfIndex {
 public:
  /// Opens `debug_file` (the DWARF for `object`) and indexes its units; malformed units are
  /// skipped with a warning appended to `warnings`. Fails only when the file cannot be read.
  static Result<std::unique_ptr<DwarfIndex>> open(const std::string& debug_file, const std::string& object,
                                                  Interner* interner, std::vector<std::string>* warnings);
  ~DwarfIndex();
  DwarfIndex(const DwarfIndex&) = delete;
  DwarfIndex& operator=(const DwarfIndex&) = delete;

  /// Frames (innermost first) for a file address; false when no line table covers it.
  bool lookup(uint64_t address, std::vector<SourceLine>* frames);
  /// Appends the file-address ranges of rows saying FILE:LINE (see path_matches). Reads the rows
  /// of the units whose line-table header names FILE only.
  void ranges_for(std::string_view file, uint32_t line, std::vector<AddressRange>* out);
  /// Distinct source files that own at least one line row (parses every unit).
  std::vector<std::string_view> files_with_code();
  /// Fills the counts, versions and warnings of `summary` (parses every unit).
  void summarize(DebugSummary* summary);

  std::size_t unit_count() const;
  /// How many units' line rows were read so far (each is read on first use).
  std::size_t units_with_rows() const;

 private:
  struct Impl;
  explicit DwarfIndex(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace whatif::symbols
