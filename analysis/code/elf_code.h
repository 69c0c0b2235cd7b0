// An object's code as the offline analyses read it from the ELF file: function symbols (name, start,
// size) and the bytes at a virtual address; the stall analysis and the branch flow share it.
// Offline (the launcher), one thread.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace whatif::code {

struct Function {
  std::string name;
  uint64_t start = 0;  ///< ELF virtual address
  uint64_t size = 0;
};

class ElfCode {
 public:
  /// Reads `path`'s function symbols (.symtab, else .dynsym) and its executable sections. Fails
  /// with a message naming the file when it cannot be read or is no ELF file.
  static Result<ElfCode> read(const std::string& path);
  /// The function containing `address`, or nullptr.
  const Function* function_at(uint64_t address) const;
  /// The function named `name` (exact, or the first whose name starts with `name` followed by '('
  /// or '.': C++ and clone suffixes), or nullptr.
  const Function* function_named(const std::string& name) const;
  /// The code bytes of [address, address + size), or empty when they are not in an executable section.
  std::vector<uint8_t> bytes(uint64_t address, uint64_t size) const;
  const std::string& build_id() const { return build_id_; }

 private:
  struct Section {
    uint64_t address = 0;
    std::vector<uint8_t> data;
  };
  std::vector<Function> functions_;  // sorted by start
  std::vector<Section> sections_;
  std::string build_id_;
};

}  // namespace whatif::code
