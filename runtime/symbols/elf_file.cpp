// ELF header, note and section reading with libelf, and the separate-debug-file search.
// Runs on the profiler thread or in single-threaded tools; never in signal handlers.
#include "symbols/elf_file.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include "whatif/environment.h"

namespace whatif::symbols {
namespace {

constexpr uint32_t kNoteGnuBuildId = 3;  // NT_GNU_BUILD_ID

std::string to_hex(const uint8_t* bytes, std::size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[bytes[i] >> 4]);
    out.push_back(kDigits[bytes[i] & 0xf]);
  }
  return out;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dir_of(const std::string& path) {
  auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string join(const std::string& dir, const std::string& name) {
  if (dir.empty()) return name;
  if (dir.back() == '/') return dir + name;
  return dir + "/" + name;
}

/// CRC-32 (the .gnu_debuglink checksum) of a whole file, or nullopt-like false on I/O failure.
bool file_crc32(const std::string& path, uint32_t* crc) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = false;
  if (::fstat(fd, &st) == 0) {
    if (st.st_size == 0) {
      *crc = 0;
      ok = true;
    } else {
      void* data = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
      if (data != MAP_FAILED) {
        uLong value = ::crc32(0L, Z_NULL, 0);
        const auto* bytes = static_cast<const Bytef*>(data);
        std::size_t left = static_cast<std::size_t>(st.st_size);
        while (left > 0) {  // crc32 takes a uInt length
          uInt chunk = left > (1u << 30) ? (1u << 30) : static_cast<uInt>(left);
          value = ::crc32(value, bytes, chunk);
          bytes += chunk;
          left -= chunk;
        }
        *crc = static_cast<uint32_t>(value);
        ::munmap(data, static_cast<std::size_t>(st.st_size));
        ok = true;
      }
    }
  }
  ::close(fd);
  return ok;
}

}  // namespace

std::string_view to_string(DebugSource source) {
  switch (source) {
    case DebugSource::kNone: return "none";
    case DebugSource::kEmbedded: return "embedded";
    case DebugSource::kBuildId: return "build-id";
    case DebugSource::kDebugLink: return "debuglink";
  }
  return "none";
}

std::vector<std::string> DebugSearch::dirs() const {
  std::vector<std::string> out = extra_dirs;
  if (const char* env = std::getenv(environment::kDebugDirs)) {
    std::string_view rest(env);
    while (!rest.empty()) {
      auto colon = rest.find(':');
      auto part = rest.substr(0, colon);
      if (!part.empty()) out.emplace_back(part);
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  }
  if (!system_dir.empty()) out.push_back(system_dir);
  return out;
}

std::string build_id_from_notes(const uint8_t* notes, std::size_t size) {
  std::size_t offset = 0;
  auto align4 = [](std::size_t v) { return (v + 3) & ~std::size_t{3}; };
  while (offset + 12 <= size) {
    uint32_t namesz, descsz, type;
    std::memcpy(&namesz, notes + offset, 4);
    std::memcpy(&descsz, notes + offset + 4, 4);
    std::memcpy(&type, notes + offset + 8, 4);
    std::size_t name_at = offset + 12;
    std::size_t desc_at = name_at + align4(namesz);
    std::size_t next = desc_at + align4(descsz);
    if (next > size || desc_at > size) break;
    if (type == kNoteGnuBuildId && namesz == 4 && std::memcmp(notes + name_at, "GNU", 4) == 0) {
      return to_hex(notes + desc_at, descsz);
    }
    offset = next;
  }
  return {};
}

Result<std::unique_ptr<OpenElf>> OpenElf::open(const std::string& path) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{"libelf is too old for this ELF version"};
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error{fmt::format("cannot open {}: {}", path, std::strerror(errno))};
  std::unique_ptr<OpenElf> file(new OpenElf(fd, elf_begin(fd, ELF_C_READ_MMAP, nullptr)));
  if (file->elf_ == nullptr || elf_kind(file->elf_) != ELF_K_ELF) return Error{fmt::format("{} is not an ELF file", path)};
  return file;
}

OpenElf::~OpenElf() {
  if (elf_ != nullptr) elf_end(elf_);
  ::close(fd_);
}

Result<ElfFacts> read_elf_facts(const std::string& path) {
  auto file = OpenElf::open(path);
  if (!file) return Error{file.error()};
  Elf* elf = (*file)->elf();
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf, &ehdr)) return Error{fmt::format("{} is not an ELF file", path)};
  ElfFacts facts;
  facts.is_pie_or_shared = ehdr.e_type == ET_DYN;
  facts.is_relocatable = ehdr.e_type == ET_REL;

  std::size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) == 0) {
    for (std::size_t i = 0; i < phnum; ++i) {
      GElf_Phdr phdr;
      if (!gelf_getphdr(elf, static_cast<int>(i), &phdr)) continue;
      if (phdr.p_type == PT_LOAD && (phdr.p_flags & PF_X) && phdr.p_memsz > 0) {
        facts.executable_segments.push_back({phdr.p_vaddr, phdr.p_vaddr + phdr.p_memsz});
      } else if (phdr.p_type == PT_NOTE && facts.build_id.empty() && phdr.p_filesz > 0) {
        Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(phdr.p_offset), phdr.p_filesz, ELF_T_NHDR);
        if (data && data->d_buf) {
          facts.build_id = build_id_from_notes(static_cast<const uint8_t*>(data->d_buf), data->d_size);
        }
      }
    }
  }

  std::size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf, &shstrndx) != 0) return facts;
  bool has_info = false, has_line = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr)) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (!name) continue;
    std::string_view section(name);
    bool present = shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0;
    if (section == ".debug_info" || section == ".zdebug_info") has_info |= present;
    if (section == ".debug_line" || section == ".zdebug_line") has_line |= present;
    if (section == ".note.gnu.build-id" && facts.build_id.empty() && present) {
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (data && data->d_buf) facts.build_id = build_id_from_notes(static_cast<const uint8_t*>(data->d_buf), data->d_size);
    }
    if (section == ".gnu_debuglink" && present) {
      Elf_Data* data = elf_rawdata(scn, nullptr);
      if (data && data->d_buf && data->d_size >= 8) {
        const char* bytes = static_cast<const char*>(data->d_buf);
        std::size_t len = strnlen(bytes, data->d_size);
        std::size_t crc_at = (len + 1 + 3) & ~std::size_t{3};
        if (len > 0 && crc_at + 4 <= data->d_size) {
          facts.debuglink.assign(bytes, len);
          uint32_t crc;
          std::memcpy(&crc, bytes + crc_at, 4);
          bool file_big_endian = ehdr.e_ident[EI_DATA] == ELFDATA2MSB;
          if (file_big_endian != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)) crc = __builtin_bswap32(crc);
          facts.debuglink_crc = crc;
        }
      }
    }
  }
  facts.has_dwarf = has_info && has_line;
  return facts;
}

DebugFile find_debug_file(const std::string& object, const ElfFacts& facts, const DebugSearch& search,
                          std::vector<std::string>* notes) {
  if (facts.has_dwarf) return {object, DebugSource::kEmbedded};
  const std::vector<std::string> dirs = search.dirs();
  auto usable = [&](const std::string& candidate) {
    if (!file_exists(candidate)) return false;
    auto candidate_facts = read_elf_facts(candidate);
    if (!candidate_facts.ok()) {
      if (notes) notes->push_back(fmt::format("ignoring debug file {}: {}", candidate, candidate_facts.error()));
      return false;
    }
    if (!candidate_facts->has_dwarf) {
      if (notes) notes->push_back(fmt::format("ignoring debug file {}: it has no DWARF line tables", candidate));
      return false;
    }
    if (!facts.build_id.empty() && !candidate_facts->build_id.empty() && candidate_facts->build_id != facts.build_id) {
      if (notes) notes->push_back(fmt::format("ignoring debug file {}: its build-id differs from {}'s", candidate, object));
      return false;
    }
    return true;
  };
  if (facts.build_id.size() > 2) {
    for (const auto& dir : dirs) {
      std::string candidate = join(dir, ".build-id/" + facts.build_id.substr(0, 2) + "/" + facts.build_id.substr(2) + ".debug");
      if (usable(candidate)) return {candidate, DebugSource::kBuildId};
    }
  }
  if (!facts.debuglink.empty()) {
    const std::string object_dir = dir_of(object);
    std::vector<std::string> candidates = {join(object_dir, facts.debuglink),
                                           join(object_dir, ".debug/" + facts.debuglink)};
    for (const auto& dir : dirs) {
      if (!object_dir.empty() && object_dir[0] == '/') candidates.push_back(join(dir + object_dir, facts.debuglink));
      candidates.push_back(join(dir, facts.debuglink));
    }
    for (const auto& candidate : candidates) {
      if (candidate == object || !file_exists(candidate)) continue;
      uint32_t crc = 0;
      if (!file_crc32(candidate, &crc) || crc != facts.debuglink_crc) {
        if (notes) notes->push_back(fmt::format("ignoring debug file {}: its CRC does not match {}'s .gnu_debuglink", candidate, object));
        continue;
      }
      if (usable(candidate)) return {candidate, DebugSource::kDebugLink};
    }
  }
  return {};
}

}  // namespace whatif::symbols
