// Reads function symbols and executable sections with libelf (see elf_code.h). Offline.
#include "analysis/code/elf_code.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "symbols/elf_file.h"

namespace whatif::code {

Result<ElfCode> ElfCode::read(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{"libelf is too old for this ELF version"};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{"cannot read " + path + ": " + std::strerror(errno)};
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  ElfCode code;
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr) elf_end(elf);
    ::close(fd);
    return Error{path + " is not an ELF file"};
  }
  std::vector<Function> dynamic;
  bool have_symtab = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn != nullptr; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr header;
    if (gelf_getshdr(scn, &header) == nullptr) continue;
    if (header.sh_type == SHT_PROGBITS && (header.sh_flags & SHF_EXECINSTR) != 0) {
      Elf_Data* data = elf_getdata(scn, nullptr);
      if (data != nullptr && data->d_buf != nullptr) {
        const auto* begin = static_cast<const uint8_t*>(data->d_buf);
        code.sections_.push_back({header.sh_addr, std::vector<uint8_t>(begin, begin + data->d_size)});
      }
    }
    if (header.sh_type != SHT_SYMTAB && header.sh_type != SHT_DYNSYM) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || header.sh_entsize == 0) continue;
    std::vector<Function>& out = header.sh_type == SHT_SYMTAB ? code.functions_ : dynamic;
    have_symtab = have_symtab || header.sh_type == SHT_SYMTAB;
    for (std::size_t i = 0; i < header.sh_size / header.sh_entsize; ++i) {
      GElf_Sym symbol;
      if (gelf_getsym(data, static_cast<int>(i), &symbol) == nullptr) continue;
      if (GELF_ST_TYPE(symbol.st_info) != STT_FUNC || symbol.st_value == 0 || symbol.st_size == 0) continue;
      const char* name = elf_strptr(elf, header.sh_link, symbol.st_name);
      out.push_back({name != nullptr ? name : "", symbol.st_value, symbol.st_size});
    }
  }
  if (!have_symtab) code.functions_ = std::move(dynamic);
  elf_end(elf);
  ::close(fd);
  std::sort(code.functions_.begin(), code.functions_.end(),
            [](const Function& a, const Function& b) { return a.start < b.start || (a.start == b.start && a.name < b.name); });
  code.functions_.erase(std::unique(code.functions_.begin(), code.functions_.end(),
                                    [](const Function& a, const Function& b) { return a.start == b.start; }),
                        code.functions_.end());
  if (auto facts = symbols::read_elf_facts(path)) code.build_id_ = facts->build_id;
  return code;
}

const Function* ElfCode::function_at(uint64_t address) const {
  auto it = std::upper_bound(functions_.begin(), functions_.end(), address,
                             [](uint64_t a, const Function& f) { return a < f.start; });
  if (it == functions_.begin()) return nullptr;
  --it;
  return address < it->start + it->size ? &*it : nullptr;
}

const Function* ElfCode::function_named(const std::string& name) const {
  for (const Function& f : functions_) {
    if (f.name == name) return &f;
  }
  for (const Function& f : functions_) {
    if (f.name.size() > name.size() && f.name.compare(0, name.size(), name) == 0 &&
        (f.name[name.size()] == '.' || f.name[name.size()] == '(')) {
      return &f;
    }
  }
  return nullptr;
}

std::vector<uint8_t> ElfCode::bytes(uint64_t address, uint64_t size) const {
  for (const Section& section : sections_) {
    if (address >= section.address && address + size <= section.address + section.data.size()) {
      auto begin = section.data.begin() + static_cast<std::ptrdiff_t>(address - section.address);
      return {begin, begin + static_cast<std::ptrdiff_t>(size)};
    }
  }
  return {};
}

}  // namespace whatif::code
