// Building and publishing the tracer's code map, and reading rseq critical sections from loaded
// objects. Profiler thread only.
#include "lbr/code_map.h"

#include <elf.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>

#include "os/os.h"

namespace whatif::lbr {

extern std::atomic<const CodeMap*> g_code_map;

namespace {

uint32_t normalise(std::vector<CodeRange>& ranges, CodeRange* out, uint32_t max) {
  std::erase_if(ranges, [](const CodeRange& range) { return range.end <= range.begin; });
  std::sort(ranges.begin(), ranges.end(), [](const CodeRange& a, const CodeRange& b) { return a.begin < b.begin; });
  uint32_t count = 0;
  for (const CodeRange& range : ranges) {
    if (count > 0 && range.begin <= out[count - 1].end) {
      out[count - 1].end = std::max(out[count - 1].end, range.end);
      continue;
    }
    if (count == max) break;
    out[count++] = range;
  }
  return count;
}

}  // namespace

CodeMap build_code_map(std::vector<CodeRange> code, std::vector<CodeRange> rseq) {
  CodeMap map;
  map.code_count = normalise(code, map.code, CodeMap::kMaxCode);
  map.rseq_count = normalise(rseq, map.rseq, CodeMap::kMaxRseq);
  return map;
}

void publish_code_map(const CodeMap& map) {
  // Never freed, not even at exit: a thread still tracing while exit() runs static destructors
  // would read a freed map in its handler (it did: a SIGSEGV in CodeMap::code_at during exit).
  auto* copy = new CodeMap(map);
  copy->previous = g_code_map.load(std::memory_order_relaxed);  // keeps them all reachable
  g_code_map.store(copy, std::memory_order_release);  // pairs with current_code_map
}

std::vector<CodeRange> rseq_sections(const std::string& path, uint64_t bias) {
  std::vector<CodeRange> ranges;
  std::ifstream file(path, std::ios::binary);
  Elf64_Ehdr header{};
  if (!file.read(reinterpret_cast<char*>(&header), sizeof(header)) || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 ||
      header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shstrndx >= header.e_shnum) {
    return ranges;
  }
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  file.seekg(static_cast<std::streamoff>(header.e_shoff));
  if (!file.read(reinterpret_cast<char*>(sections.data()), static_cast<std::streamsize>(sections.size() * sizeof(Elf64_Shdr)))) {
    return ranges;
  }
  const Elf64_Shdr& names = sections[header.e_shstrndx];
  std::string table(names.sh_size, '\0');
  file.seekg(static_cast<std::streamoff>(names.sh_offset));
  if (!file.read(table.data(), static_cast<std::streamsize>(table.size()))) return ranges;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_name >= table.size() || std::strcmp(table.c_str() + section.sh_name, "__rseq_cs") != 0) continue;
    if ((section.sh_flags & SHF_ALLOC) == 0) continue;
    // struct rseq_cs { u32 version, flags; u64 start_ip, post_commit_offset, abort_ip; }, 32-byte
    // aligned. Read from memory: in a PIE the file holds unrelocated addresses.
    for (uint64_t offset = 0; offset + 32 <= section.sh_size; offset += 32) {
      uint64_t fields[3];
      if (!os::read_memory(section.sh_addr + bias + offset + 8, fields, sizeof(fields))) break;
      if (fields[0] != 0 && fields[1] != 0) ranges.push_back({fields[0], fields[0] + fields[1]});
    }
  }
  return ranges;
}

}  // namespace whatif::lbr
