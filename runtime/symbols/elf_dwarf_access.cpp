// libdwarf object access over libelf, with zlib decompression and malformed-unit neutralisation.
// Runs on the profiler thread or in single-threaded tools; never in signal handlers.
#include "symbols/elf_dwarf_access.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>

namespace whatif::symbols {
namespace {

constexpr uint64_t kMaxDecompressed = uint64_t{1} << 34;  // 16 GiB: larger sizes are corrupt headers

uint64_t read_be64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

Result<std::unique_ptr<ElfDwarfAccess>> ElfDwarfAccess::open(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{"libelf is too old for this ELF version"};
  std::unique_ptr<ElfDwarfAccess> access(new ElfDwarfAccess());
  access->path_ = path;
  access->fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (access->fd_ < 0) return Error{fmt::format("cannot open {}: {}", path, std::strerror(errno))};
  access->elf_ = elf_begin(access->fd_, ELF_C_READ_MMAP, nullptr);
  GElf_Ehdr ehdr;
  if (!access->elf_ || elf_kind(access->elf_) != ELF_K_ELF || !gelf_getehdr(access->elf_, &ehdr)) {
    return Error{fmt::format("{} is not an ELF file", path)};
  }
  access->big_endian_ = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
  access->is_64_ = ehdr.e_ident[EI_CLASS] == ELFCLASS64;
  std::size_t count = 0, shstrndx = 0;
  if (elf_getshdrnum(access->elf_, &count) != 0 || elf_getshdrstrndx(access->elf_, &shstrndx) != 0) {
    return Error{fmt::format("{} has unreadable section headers", path)};
  }
  access->sections_.resize(count);
  for (std::size_t i = 1; i < count; ++i) {
    Section& s = access->sections_[i];
    s.scn = elf_getscn(access->elf_, i);
    GElf_Shdr shdr;
    if (!s.scn || !gelf_getshdr(s.scn, &shdr)) continue;
    const char* name = elf_strptr(access->elf_, shstrndx, shdr.sh_name);
    s.name = name ? name : "";
    s.type = shdr.sh_type;
    s.addr = shdr.sh_addr;
    s.size = shdr.sh_type == SHT_NOBITS ? 0 : shdr.sh_size;
    s.link = shdr.sh_link;
    s.info = shdr.sh_info;
    s.entsize = shdr.sh_entsize;
    // A linked file's DWARF is already resolved; relocation sections kept by `ld --emit-relocs`
    // (.rela.debug_info, ... for BOLT) would make libdwarf ask to apply them, and it then reads
    // no compilation unit at all. Only relocatable objects (.o) need them.
    if ((shdr.sh_type == SHT_RELA || shdr.sh_type == SHT_REL) && ehdr.e_type != ET_REL) {
      s.name.clear();
      s.type = SHT_NULL;
      s.size = 0;
      continue;
    }
    if (shdr.sh_type == SHT_NOBITS || shdr.sh_size == 0) continue;
    if (shdr.sh_flags & SHF_COMPRESSED) {
      GElf_Chdr chdr;
      if (gelf_getchdr(s.scn, &chdr) && chdr.ch_type == ELFCOMPRESS_ZLIB && chdr.ch_size < kMaxDecompressed) {
        s.compression = 1;
        s.size = chdr.ch_size;
        s.data_offset = access->is_64_ ? sizeof(Elf64_Chdr) : sizeof(Elf32_Chdr);
      } else {
        s.size = 0;  // an unknown compression (zstd): libdwarf sees an empty section
      }
    } else if (s.name.rfind(".zdebug_", 0) == 0) {
      Elf_Data* raw = elf_rawdata(s.scn, nullptr);
      const auto* bytes = raw ? static_cast<const uint8_t*>(raw->d_buf) : nullptr;
      if (bytes && raw->d_size >= 12 && std::memcmp(bytes, "ZLIB", 4) == 0 && read_be64(bytes + 4) < kMaxDecompressed) {
        s.compression = 2;
        s.size = read_be64(bytes + 4);
        s.data_offset = 12;
        s.name = ".debug_" + s.name.substr(8);
      } else {
        s.size = 0;
      }
    }
  }
  for (auto& section : access->sections_) {
    if (section.name == ".debug_rnglists" || section.name == ".debug_loclists") access->trim_list_section(section);
  }
  auto& m = access->methods_;
  m.get_section_info = &ElfDwarfAccess::get_section_info;
  m.get_byte_order = &ElfDwarfAccess::get_byte_order;
  m.get_length_size = &ElfDwarfAccess::get_length_size;
  m.get_pointer_size = &ElfDwarfAccess::get_pointer_size;
  m.get_section_count = &ElfDwarfAccess::get_section_count;
  m.load_section = &ElfDwarfAccess::load_section;
  m.relocate_a_section = &ElfDwarfAccess::relocate_a_section;
  access->handle_.self = access.get();
  access->interface_.object = &access->handle_;
  access->interface_.methods = &access->methods_;
  return access;
}

ElfDwarfAccess::~ElfDwarfAccess() {
  if (elf_) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
}

int ElfDwarfAccess::load(Section& s) {
  if (s.loaded) return s.data ? DW_DLV_OK : DW_DLV_NO_ENTRY;
  s.loaded = true;
  if (!s.scn || s.size == 0) return DW_DLV_NO_ENTRY;
  Elf_Data* raw = elf_rawdata(s.scn, nullptr);
  if (!raw || !raw->d_buf) return DW_DLV_ERROR;
  auto* bytes = static_cast<uint8_t*>(raw->d_buf);
  if (s.compression == 0) {
    if (raw->d_size < s.size) return DW_DLV_ERROR;
    s.data = bytes;
    return DW_DLV_OK;
  }
  if (raw->d_size < s.data_offset) return DW_DLV_ERROR;
  s.owned.resize(s.size);
  uLongf out_size = static_cast<uLongf>(s.size);
  int z = ::uncompress(s.owned.data(), &out_size, bytes + s.data_offset, static_cast<uLong>(raw->d_size - s.data_offset));
  if (z != Z_OK || out_size != s.size) {
    s.owned.clear();
    return DW_DLV_ERROR;
  }
  s.data = s.owned.data();
  return DW_DLV_OK;
}

void ElfDwarfAccess::trim_list_section(Section& s) {
  if (s.size == 0) return;
  if (load(s) != DW_DLV_OK) {
    notes_.push_back(fmt::format("unreadable {} in {} ignored", s.name, path_));
    s.size = 0;
    return;
  }
  auto read = [&](uint64_t at, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) {
      uint64_t byte = s.data[at + static_cast<uint64_t>(i)];
      v |= big_endian_ ? byte << (8 * (bytes - 1 - i)) : byte << (8 * i);
    }
    return v;
  };
  uint64_t at = 0;
  while (at < s.size) {
    // Unit header: length, version 5, address size, segment selector size, offset count, offsets.
    bool ok = false;
    uint64_t end = 0;
    if (s.size - at >= 4) {
      uint64_t length = read(at, 4), header = 4, offset_size = 4;
      if (length == 0xffffffff && s.size - at >= 12) {
        length = read(at + 4, 8);
        header = 12;
        offset_size = 8;
      }
      if (length < 0xfffffff0 || header == 12) {
        uint64_t body = at + header;
        if (length >= 8 && length <= s.size - body) {
          end = body + length;
          uint64_t count = read(body + 4, 4);
          uint64_t table = length - 8;  // bytes after the fixed header fields
          ok = read(body, 2) == 5 && (s.data[body + 2] == 4 || s.data[body + 2] == 8) && s.data[body + 3] == 0 &&
               count <= table / offset_size;
          for (uint64_t i = 0; ok && i < count; ++i) ok = read(body + 8 + i * offset_size, static_cast<int>(offset_size)) < table;
        }
      }
    }
    if (!ok) {
      notes_.push_back(fmt::format("malformed {} unit at offset {:#x} in {} ignored, with the lists after it", s.name,
                                   at, path_));
      s.size = at;
      return;
    }
    at = end;
  }
}

bool ElfDwarfAccess::neutralize_info_unit(uint64_t offset) {
  for (auto& s : sections_) {
    if (s.name != ".debug_info") continue;
    if (load(s) != DW_DLV_OK) return false;
    if (s.owned.empty()) {
      s.owned.assign(s.data, s.data + s.size);
      s.data = s.owned.data();
    }
    auto read32 = [&](uint64_t at) {
      uint32_t v;
      std::memcpy(&v, s.data + at, 4);
      return big_endian_ ? __builtin_bswap32(v) : v;
    };
    if (offset + 4 > s.size) return false;
    uint64_t length = read32(offset), header = 4;
    if (length == 0xffffffff) {
      if (offset + 12 > s.size) return false;
      uint64_t v;
      std::memcpy(&v, s.data + offset + 4, 8);
      length = big_endian_ ? __builtin_bswap64(v) : v;
      header = 12;
    }
    uint64_t abbrev_size = header == 12 ? 8 : 4;
    if (length < 2 + abbrev_size + 1 || length > s.size - offset - header) return false;
    // An empty DWARF 4 unit: version 4, abbreviation offset 0, address size, then null DIEs.
    uint8_t* unit = s.data + offset + header;
    std::memset(unit, 0, length);
    unit[big_endian_ ? 1 : 0] = 4;
    unit[2 + abbrev_size] = is_64_ ? 8 : 4;
    neutralized_.insert(offset);
    return true;
  }
  return false;
}

int ElfDwarfAccess::get_section_info(void* obj, Dwarf_Half index, Dwarf_Obj_Access_Section* out, int*) {
  auto* self = from(obj);
  if (index >= self->sections_.size()) return DW_DLV_NO_ENTRY;
  const Section& s = self->sections_[index];
  out->addr = s.addr;
  out->type = s.type;
  out->size = s.size;
  out->name = s.name.c_str();
  out->link = s.link;
  out->info = s.info;
  out->entrysize = s.entsize;
  return DW_DLV_OK;
}

Dwarf_Endianness ElfDwarfAccess::get_byte_order(void* obj) {
  return from(obj)->big_endian_ ? DW_OBJECT_MSB : DW_OBJECT_LSB;
}

Dwarf_Small ElfDwarfAccess::get_length_size(void*) { return 4; }

Dwarf_Small ElfDwarfAccess::get_pointer_size(void* obj) { return from(obj)->is_64_ ? 8 : 4; }

Dwarf_Unsigned ElfDwarfAccess::get_section_count(void* obj) { return from(obj)->sections_.size(); }

int ElfDwarfAccess::load_section(void* obj, Dwarf_Half index, Dwarf_Small** data, int* error) {
  auto* self = from(obj);
  if (index >= self->sections_.size()) return DW_DLV_NO_ENTRY;
  int res = self->load(self->sections_[index]);
  if (res == DW_DLV_OK) *data = self->sections_[index].data;
  if (res == DW_DLV_ERROR && error) *error = DW_DLE_MDE;
  return res;
}

int ElfDwarfAccess::relocate_a_section(void*, Dwarf_Half, Dwarf_Debug, int*) {
  return DW_DLV_NO_ENTRY;  // executables and shared objects carry no relocations for DWARF
}

}  // namespace whatif::symbols
