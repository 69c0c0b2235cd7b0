// Function bounds from ELF symbol tables (see function_bounds.h). Profiler thread or tools.
#include "symbols/function_bounds.h"


#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "symbols/elf_file.h"

namespace whatif::symbols {

Result<FunctionExtent> function_bounds(const std::string& path, uint64_t file_address) {
  auto file = OpenElf::open(path);
  if (!file) return Error{file.error()};
  Elf* elf = (*file)->elf();
  struct Symbol {
    std::string name;
    AddressRange range;
  };
  std::vector<Symbol> functions;
  for (Elf64_Word wanted : {SHT_SYMTAB, SHT_DYNSYM}) {
    for (Elf_Scn* section = elf_nextscn(elf, nullptr); section != nullptr; section = elf_nextscn(elf, section)) {
      GElf_Shdr header;
      if (!gelf_getshdr(section, &header) || header.sh_type != wanted || header.sh_entsize == 0) continue;
      Elf_Data* data = elf_getdata(section, nullptr);
      if (data == nullptr) continue;
      std::size_t count = header.sh_size / header.sh_entsize;
      for (std::size_t i = 0; i < count; ++i) {
        GElf_Sym symbol;
        if (!gelf_getsym(data, static_cast<int>(i), &symbol)) continue;
        if (GELF_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_size == 0 || symbol.st_shndx == SHN_UNDEF) continue;
        const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
        functions.push_back({name != nullptr ? name : "", {symbol.st_value, symbol.st_value + symbol.st_size}});
      }
    }
    const Symbol* found = nullptr;
    for (const Symbol& function : functions) {
      if (file_address >= function.range.begin && file_address < function.range.end) found = &function;
    }
    if (found == nullptr) {
      functions.clear();
      continue;  // .dynsym next
    }
    FunctionExtent extent{found->range, {}};
    const std::string cold = found->name + ".cold";
    for (const Symbol& function : functions) {
      if (!found->name.empty() && function.name.compare(0, cold.size(), cold) == 0) extent.fragments.push_back(function.range);
    }
    return extent;
  }
  return Error{fmt::format("{} has no function symbol around 0x{:x}", path, file_address)};
}

}  // namespace whatif::symbols
