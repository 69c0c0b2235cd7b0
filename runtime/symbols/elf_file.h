// ELF facts the symbol layer needs from a file on disk (build-id, .gnu_debuglink, executable
// segments, presence of DWARF) and the search for a separate debug file. Profiler thread or tools.
#pragma once
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "symbols/symbol_map.h"

namespace whatif::symbols {

struct ElfFacts {
  std::string build_id;                          ///< hex, empty when absent
  std::string debuglink;                         ///< .gnu_debuglink file name, empty when absent
  uint32_t debuglink_crc = 0;
  bool has_dwarf = false;                        ///< non-empty .debug_info and .debug_line
  bool is_pie_or_shared = false;                 ///< ET_DYN
  bool is_relocatable = false;                   ///< ET_REL (.o): DWARF addresses are unrelocated
  std::vector<AddressRange> executable_segments; ///< file virtual addresses of PT_LOAD with PF_X
};

/// An ELF file open with libelf (read through mmap); closes it when destroyed.
class OpenElf {
 public:
  /// Opens `path`; fails with "cannot open PATH: reason" or "PATH is not an ELF file".
  static Result<std::unique_ptr<OpenElf>> open(const std::string& path);
  OpenElf(const OpenElf&) = delete;
  OpenElf& operator=(const OpenElf&) = delete;
  ~OpenElf();
  Elf* elf() const { return elf_; }

 private:
  OpenElf(int fd, Elf* elf) : fd_(fd), elf_(elf) {}
  int fd_;
  Elf* elf_;
};

/// Reads an ELF file's headers and notes; fails with a message naming the path.
Result<ElfFacts> read_elf_facts(const std::string& path);

struct DebugFile {
  std::string path;
  DebugSource source = DebugSource::kNone;
};

/// Finds where the DWARF for `object` lives: the object itself, then build-id files under each
/// search dir (DIR/.build-id/xx/rest.debug), then .gnu_debuglink (object dir, its .debug/, each
/// search dir + object dir, each search dir). A debuglink candidate must match the recorded CRC.
/// Returns source kNone when nothing is found; `notes` gets reasons for rejected candidates.
DebugFile find_debug_file(const std::string& object, const ElfFacts& facts, const DebugSearch& search,
                          std::vector<std::string>* notes);

/// Hex of a GNU build-id note found in memory (PT_NOTE of a loaded object); empty when absent.
std::string build_id_from_notes(const uint8_t* notes, std::size_t size);

}  // namespace whatif::symbols
