// Function bounds of objects without debug info: ELF symbol tables with libelf, .eh_frame FDEs with
// libdwarf (over ElfDwarfAccess). Profiler thread or single-threaded tools; never signal handlers.
#include "symbols/function_index.h"


#include <cxxabi.h>
#include <fcntl.h>
#include <gelf.h>
#include <libdwarf/libdwarf.h>
#include <libelf.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "symbols/elf_file.h"
#include "symbols/elf_dwarf_access.h"

namespace whatif::symbols {
namespace {

struct Raw {
  uint64_t begin, end;
  std::string name;
  bool global;
};

/// STT_FUNC (and IFUNC) symbols with a size, defined in this object, from sections of `type`.
std::vector<Raw> read_symbols(Elf* elf, uint32_t type) {
  std::vector<Raw> out;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type || shdr.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    std::size_t count = shdr.sh_size / shdr.sh_entsize;
    for (std::size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym)) continue;
      int kind = GELF_ST_TYPE(sym.st_info);
      if ((kind != STT_FUNC && kind != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF || sym.st_value == 0 ||
          sym.st_size == 0) {
        continue;
      }
      const char* name = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (!name || !*name) continue;
      out.push_back({sym.st_value, sym.st_value + sym.st_size, demangle_symbol(name),
                     GELF_ST_BIND(sym.st_info) == STB_GLOBAL});
    }
  }
  return out;
}

/// [begin, end) of every FDE in .eh_frame; empty when there is none or libdwarf cannot read it.
std::vector<std::pair<uint64_t, uint64_t>> read_fdes(const std::string& path) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  auto access = ElfDwarfAccess::open(path);
  if (!access) return out;
  Dwarf_Debug dbg = nullptr;
  Dwarf_Error error = nullptr;
  if (dwarf_object_init_b((*access)->interface(), nullptr, nullptr, DW_GROUPNUMBER_ANY, &dbg, &error) != DW_DLV_OK) {
    if (error) dwarf_dealloc_error(nullptr, error);
    return out;
  }
  Dwarf_Cie* cies = nullptr;
  Dwarf_Fde* fdes = nullptr;
  Dwarf_Signed cie_count = 0, fde_count = 0;
  int res = dwarf_get_fde_list_eh(dbg, &cies, &cie_count, &fdes, &fde_count, &error);
  if (res == DW_DLV_OK) {
    for (Dwarf_Signed i = 0; i < fde_count; ++i) {
      Dwarf_Addr low = 0;
      Dwarf_Unsigned length = 0;
      if (dwarf_get_fde_range(fdes[i], &low, &length, nullptr, nullptr, nullptr, nullptr, nullptr, &error) ==
              DW_DLV_OK &&
          low != 0 && length > 0) {
        out.emplace_back(low, low + length);
      } else if (error) {
        dwarf_dealloc_error(dbg, error);
        error = nullptr;
      }
    }
    dwarf_fde_cie_list_dealloc(dbg, cies, cie_count, fdes, fde_count);
  } else if (res == DW_DLV_ERROR) {
    dwarf_dealloc_error(dbg, error);
  }
  dwarf_finish(dbg, &error);  // as DwarfIndex does: the access handle is not one of libdwarf's own objects
  return out;
}

/// The function of sorted [first, last) whose bounds hold `address`: the nearest start at or below it.
const FunctionBounds* find_in(std::vector<FunctionBounds>::const_iterator first,
                              std::vector<FunctionBounds>::const_iterator last, uint64_t address) {
  auto it = std::upper_bound(first, last, address, [](uint64_t a, const FunctionBounds& f) { return a < f.begin; });
  if (it == first || address >= std::prev(it)->end) return nullptr;
  return &*std::prev(it);
}

std::string_view basename(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string demangle_symbol(const char* name) {
  int status = 0;
  char* demangled = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || demangled == nullptr) return name;
  std::string out(demangled);
  std::free(demangled);
  // Rust's legacy mangling ends each path with a hash segment, `::h` and 16 hex digits.
  constexpr std::size_t kHash = 3 + 16;
  if (out.size() > kHash && out.compare(out.size() - kHash, 3, "::h") == 0 &&
      std::all_of(out.end() - 16, out.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); })) {
    out.resize(out.size() - kHash);
  }
  return out;
}

Result<std::unique_ptr<FunctionIndex>> FunctionIndex::open(const std::string& object, Interner* interner) {
  std::vector<Raw> symbols;
  const char* table = ".symtab";
  {
    auto file = OpenElf::open(object);
    if (!file) return Error{file.error()};
    symbols = read_symbols((*file)->elf(), SHT_SYMTAB);
    if (symbols.empty()) {
      symbols = read_symbols((*file)->elf(), SHT_DYNSYM);
      table = ".dynsym";
    }
  }
  auto index = std::unique_ptr<FunctionIndex>(new FunctionIndex());
  if (!symbols.empty()) index->sources_ = table;

  // One name per address: a global symbol before its local or weak aliases, then the shorter name.
  std::sort(symbols.begin(), symbols.end(), [](const Raw& a, const Raw& b) {
    if (a.begin != b.begin) return a.begin < b.begin;
    if (a.global != b.global) return a.global;
    return a.name.size() < b.name.size();
  });
  for (const Raw& raw : symbols) {
    if (!index->functions_.empty() && index->functions_.back().begin == raw.begin) continue;
    index->functions_.push_back({raw.begin, raw.end, interner->intern(raw.name)});
  }

  // Code no symbol covers (all of it, fully stripped): one function per FDE, named by its offset.
  std::vector<FunctionBounds> named = index->functions_;
  bool used_fdes = false;
  std::string object_name(basename(object));
  for (const auto& [begin, end] : read_fdes(object)) {
    if (find_in(named.begin(), named.end(), begin) != nullptr) continue;
    index->functions_.push_back({begin, end, interner->intern(fmt::format("{}+{:#x}", object_name, begin))});
    used_fdes = true;
  }
  if (used_fdes) {
    // With symbols, the FDE-only pieces are stubs (.plt) and start-up code: the names are the symbols'.
    if (index->sources_.empty()) index->sources_ = ".eh_frame";
    std::sort(index->functions_.begin(), index->functions_.end(),
              [](const FunctionBounds& a, const FunctionBounds& b) { return a.begin < b.begin; });
  }
  if (index->functions_.empty()) {
    return Error{fmt::format("{} has no function symbols (.symtab, .dynsym) and no .eh_frame", object)};
  }
  return index;
}

const FunctionBounds* FunctionIndex::find(uint64_t address) const {
  return find_in(functions_.begin(), functions_.end(), address);
}

}  // namespace whatif::symbols
