// Function bounds from ELF symbol tables (see function_bounds.h). Profiler thread or tools.
#include "symbols/function_bounds.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace whatif::symbols {

Result<FunctionExtent> function_bounds(const std::string& path, uint64_t file_address) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{"libelf is too old for this ELF version"};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", path, std::strerror(errno))};
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  struct Closer {
    int fd;
    Elf* elf;
    ~Closer() {
      if (elf) elf_end(elf);
      ::close(fd);
    }
  } closer{fd, elf};
  if (!elf || elf_kind(elf) != ELF_K_ELF) return Error{fmt::format("{} is not an ELF file", path)};
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
