// Helpers for the symbol-layer tests: fixture paths, "LINE:name" markers in fixture sources, and
// symbol addresses read from a fixture's ELF symbol table with libelf. Test thread only.
#pragma once
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

namespace whatif::symbols::testing {

inline std::string fixture_src(const std::string& name) { return std::string(WHATIF_FIXTURE_SRC) + "/" + name; }
inline std::string fixture_bin(const std::string& name) { return std::string(WHATIF_FIXTURE_BIN) + "/" + name; }

/// 1-based number of the line of `source` containing "LINE:<name>" followed by a non-name char.
inline uint32_t marker_line(const std::string& source, const std::string& name) {
  std::ifstream in(source);
  std::string text;
  const std::string tag = "LINE:" + name;
  for (uint32_t number = 1; std::getline(in, text); ++number) {
    auto at = text.find(tag);
    if (at == std::string::npos) continue;
    auto after = at + tag.size();
    if (after == text.size() || !(std::isalnum(static_cast<unsigned char>(text[after])) || text[after] == '_')) {
      return number;
    }
  }
  throw std::runtime_error("marker " + name + " not found in " + source);
}

/// st_value of a symbol in an ELF file's .symtab (or .dynsym); 0 when absent.
inline uint64_t symbol_address(const std::string& path, const std::string& symbol) {
  elf_version(EV_CURRENT);
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return 0;
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  uint64_t found = 0;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn && !found; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || (shdr.sh_type != SHT_SYMTAB && shdr.sh_type != SHT_DYNSYM)) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    std::size_t count = shdr.sh_entsize ? shdr.sh_size / shdr.sh_entsize : 0;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (name && symbol == name && sym.st_value != 0) {
        found = sym.st_value;
        break;
      }
    }
  }
  elf_end(elf);
  ::close(fd);
  return found;
}

/// Whether `path` ends with "/<name>" (or equals it).
inline bool ends_with_file(std::string_view path, std::string_view name) {
  return path == name || (path.size() > name.size() && path.substr(path.size() - name.size()) == name &&
                          path[path.size() - name.size() - 1] == '/');
}

}  // namespace whatif::symbols::testing
