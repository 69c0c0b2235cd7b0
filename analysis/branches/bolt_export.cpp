// llvm-bolt fdata export (see bolt_export.h). Offline.
#include "analysis/branches/bolt_export.h"

#include <elf.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>

namespace whatif::analysis {

Result<std::vector<FunctionSymbol>> read_function_symbols(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return Error{fmt::format("cannot read {}", path)};
  std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(Elf64_Ehdr) || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0 || bytes[EI_CLASS] != ELFCLASS64) {
    return Error{fmt::format("{} is not a 64-bit ELF file", path)};
  }
  Elf64_Ehdr header;
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shoff + uint64_t{header.e_shnum} * sizeof(Elf64_Shdr) > bytes.size()) {
    return Error{fmt::format("{}: malformed section headers", path)};
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  std::memcpy(sections.data(), bytes.data() + header.e_shoff, sections.size() * sizeof(Elf64_Shdr));
  std::vector<FunctionSymbol> symbols;
  std::map<std::string, int> local_counts;
  for (uint32_t type : {uint32_t{SHT_SYMTAB}, uint32_t{SHT_DYNSYM}}) {
    for (const Elf64_Shdr& section : sections) {
      if (section.sh_type != type || section.sh_link >= sections.size()) continue;
      const Elf64_Shdr& strings = sections[section.sh_link];
      if (section.sh_offset + section.sh_size > bytes.size() || strings.sh_offset + strings.sh_size > bytes.size()) continue;
      for (uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= section.sh_size; offset += sizeof(Elf64_Sym)) {
        Elf64_Sym symbol;
        std::memcpy(&symbol, bytes.data() + section.sh_offset + offset, sizeof(symbol));
        if (ELF64_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_value == 0 || symbol.st_size == 0 ||
            symbol.st_name >= strings.sh_size) {
          continue;
        }
        std::string name(bytes.data() + strings.sh_offset + symbol.st_name);
        if (ELF64_ST_BIND(symbol.st_info) == STB_LOCAL) name += "/" + std::to_string(++local_counts[name]);
        symbols.push_back({std::move(name), symbol.st_value, symbol.st_size});
      }
    }
    if (!symbols.empty()) break;  // .symtab found: .dynsym adds nothing
  }
  std::sort(symbols.begin(), symbols.end(), [](const FunctionSymbol& a, const FunctionSymbol& b) { return a.address < b.address; });
  return symbols;
}

namespace {
const FunctionSymbol* containing(const std::vector<FunctionSymbol>& symbols, uint64_t address) {
  auto after = std::upper_bound(symbols.begin(), symbols.end(), address,
                                [](uint64_t value, const FunctionSymbol& symbol) { return value < symbol.address; });
  if (after == symbols.begin()) return nullptr;
  const FunctionSymbol& symbol = *std::prev(after);
  return address < symbol.address + symbol.size ? &symbol : nullptr;
}
}  // namespace

std::string bolt_fdata(const ObjectBranches& object, const std::vector<FunctionSymbol>& symbols, uint64_t* skipped,
                       const std::vector<BranchEdge>& fall_throughs) {
  std::string text;
  uint64_t left_out = 0;
  std::vector<BranchEdge> edges = object.edges;
  edges.insert(edges.end(), fall_throughs.begin(), fall_throughs.end());
  for (const BranchEdge& edge : edges) {
    const FunctionSymbol* from = containing(symbols, edge.from);
    const FunctionSymbol* to = containing(symbols, edge.to);
    if (from == nullptr || to == nullptr) {
      ++left_out;
      continue;
    }
    text += fmt::format("1 {} {:x} 1 {} {:x} 0 {}\n", from->name, edge.from - from->address, to->name, edge.to - to->address, edge.count);
  }
  if (skipped != nullptr) *skipped = left_out;
  return text;
}

}  // namespace whatif::analysis
