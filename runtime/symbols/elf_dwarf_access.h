// libdwarf's object-access interface implemented over libelf: hands libdwarf the DWARF sections,
// decompressing SHF_COMPRESSED and .zdebug sections with zlib, and can neutralise a malformed
// .debug_info unit so libdwarf steps past it. Profiler thread or tools; never signal handlers.
#pragma once
#include <libdwarf/libdwarf.h>
#include <libelf.h>

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"

namespace whatif::symbols {

class ElfDwarfAccess {
 public:
  static Result<std::unique_ptr<ElfDwarfAccess>> open(const std::string& path);
  ~ElfDwarfAccess();
  ElfDwarfAccess(const ElfDwarfAccess&) = delete;
  ElfDwarfAccess& operator=(const ElfDwarfAccess&) = delete;

  /// For dwarf_object_init_b; valid while this object lives.
  Dwarf_Obj_Access_Interface* interface() { return &interface_; }

  /// Rewrites the .debug_info unit at `offset` as an empty DWARF 4 unit of the same length, so a
  /// fresh libdwarf instance skips it. False when the unit's length field is unusable (then the
  /// units after it cannot be found). Call before dwarf_object_init_b, never while one is open.
  bool neutralize_info_unit(uint64_t offset);
  /// Offsets passed to a successful neutralize_info_unit.
  const std::set<uint64_t>& neutralized() const { return neutralized_; }
  /// Problems found in section headers before libdwarf saw them; cleared by the call.
  std::vector<std::string> take_notes() { return std::move(notes_); }

 private:
  struct Section {
    Elf_Scn* scn = nullptr;
    std::string name;        // as libdwarf should see it (.zdebug_x is reported as .debug_x)
    uint64_t type = 0, addr = 0, size = 0, link = 0, info = 0, entsize = 0;
    int compression = 0;     // 0 none, 1 SHF_COMPRESSED, 2 .zdebug (GNU)
    uint64_t data_offset = 0;  // start of the zlib stream in the raw data
    std::vector<uint8_t> owned;  // decompressed or patched bytes
    bool loaded = false;
    uint8_t* data = nullptr;
  };
  ElfDwarfAccess() = default;
  int load(Section& section);
  /// Shrinks .debug_rnglists/.debug_loclists to their well-formed leading units: libdwarf
  /// 20210528 double-frees or reads wild offsets on some malformed list headers.
  void trim_list_section(Section& section);

  static int get_section_info(void* obj, Dwarf_Half index, Dwarf_Obj_Access_Section* out, int* error);
  static Dwarf_Endianness get_byte_order(void* obj);
  static Dwarf_Small get_length_size(void* obj);
  static Dwarf_Small get_pointer_size(void* obj);
  static Dwarf_Unsigned get_section_count(void* obj);
  static int load_section(void* obj, Dwarf_Half index, Dwarf_Small** data, int* error);
  static int relocate_a_section(void* obj, Dwarf_Half index, Dwarf_Debug dbg, int* error);

  /// What libdwarf gets as the object pointer. dwarf_finish() reads its first byte and, for 'E',
  /// 'F', 'M' or 'P', runs libdwarf's own ELF/Mach-O/PE destructor on it: so start with 'w'.
  struct Handle {
    char tag = 'w';
    ElfDwarfAccess* self = nullptr;
  };
  static ElfDwarfAccess* from(void* obj) { return static_cast<Handle*>(obj)->self; }

  Handle handle_;
  std::string path_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
  bool big_endian_ = false;
  bool is_64_ = true;
  std::vector<Section> sections_;
  std::set<uint64_t> neutralized_;
  std::vector<std::string> notes_;
  Dwarf_Obj_Access_Methods methods_{};
  Dwarf_Obj_Access_Interface interface_{};
};

}  // namespace whatif::symbols
