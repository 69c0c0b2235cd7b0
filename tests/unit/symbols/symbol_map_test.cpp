// SymbolMap::for_file on the fixture binaries: every DWARF/compiler/PIE variant, separate debug
// files, inline frames, scopes over frames, error messages and malformed units. Test thread only.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>

#include "fixture_support.h"
#include "symbols/dwarf_index.h"
#include "symbols/function_index.h"
#include "symbols/symbol_map.h"

namespace whatif::symbols {
namespace {

using testing::ends_with_file;
using testing::fixture_bin;
using testing::fixture_src;
using testing::marker_line;
using testing::symbol_address;

bool has_warning(const std::vector<std::string>& warnings, std::string_view part) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

DebugSearch fixture_search() {
  DebugSearch search;
  search.extra_dirs = {fixture_bin("debugroot")};
  return search;
}

struct Variant {
  const char* binary;
  bool optimized;
  int dwarf_version;
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.binary; }

class ProgramVariant : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    path_ = fixture_bin(GetParam().binary);
    if (!std::filesystem::exists(path_)) GTEST_SKIP() << path_ << " was not built (no clang?)";
    auto map = SymbolMap::for_file(path_, Scope{}, fixture_search());
    ASSERT_TRUE(map.ok()) << map.error();
    map_ = std::move(map.value());
  }
  std::string path_;
  std::unique_ptr<SymbolMap> map_;
};

TEST_P(ProgramVariant, FunctionEntriesMapToTheirLines) {
  struct Expect {
    const char* symbol;
    const char* file;
    const char* first_marker;
    const char* last_marker;
  };
  for (const Expect& e : {Expect{"fx_compute", "fx_main.c", "fx_compute", "fx_compute_body"},
                          Expect{"fx_util_twice", "fx_util.c", "fx_util_twice", "fx_util_body"},
                          Expect{"main", "fx_main.c", "main", "main_calls_header"}}) {
    SCOPED_TRACE(e.symbol);
    uint64_t address = symbol_address(path_, e.symbol);
    ASSERT_NE(address, 0u);
    auto info = map_->lookup(address);
    ASSERT_TRUE(info.has_value());
    ASSERT_FALSE(info->frames.empty());
    const SourceLine& inner = info->frames.front();
    EXPECT_TRUE(ends_with_file(inner.file, e.file)) << inner.file;
    uint32_t first = marker_line(fixture_src(e.file), e.first_marker);
    uint32_t last = marker_line(fixture_src(e.file), e.last_marker);
    if (GetParam().optimized) {
      EXPECT_GE(inner.line, first);
      EXPECT_LE(inner.line, last + 1);
      EXPECT_EQ(info->frames.back().function, e.symbol);
    } else {
      EXPECT_EQ(inner.line, first);
      EXPECT_EQ(inner.function, e.symbol);
      // The function's own line maps back to ranges covering its entry.
      auto ranges = map_->ranges_for(e.file, first);
      EXPECT_TRUE(std::any_of(ranges.begin(), ranges.end(),
                              [&](const AddressRange& r) { return address >= r.begin && address < r.end; }));
    }
    EXPECT_TRUE(ends_with_file(info->object, GetParam().binary));
  }
}

TEST_P(ProgramVariant, LinesMapBackToRangesThatLookUpToThem) {
  struct Expect {
    const char* file;
    const char* marker;
    const char* function;
  };
  for (const Expect& e : {Expect{"fx_util.c", "fx_util_body", "fx_util_twice"},
                          Expect{"fx_main.c", "main_calls_util", "main"},
                          Expect{"fx_main.c", "fx_compute_body", nullptr}}) {
    SCOPED_TRACE(e.marker);
    uint32_t line = marker_line(fixture_src(e.file), e.marker);
    auto ranges = map_->ranges_for(e.file, line);
    if (GetParam().optimized && e.function == nullptr) continue;  // the loop may be folded away
    ASSERT_FALSE(ranges.empty());
    for (const auto& r : ranges) {
      ASSERT_LT(r.begin, r.end);
      auto info = map_->lookup(r.begin);
      ASSERT_TRUE(info.has_value());
      EXPECT_EQ(info->frames.front().line, line);
      EXPECT_TRUE(ends_with_file(info->frames.front().file, e.file));
      if (e.function) {
        EXPECT_EQ(info->frames.back().function, e.function);
      }
    }
  }
  // A longer trailing path matches too, a partial component does not.
  uint32_t body = marker_line(fixture_src("fx_util.c"), "fx_util_body");
  EXPECT_FALSE(map_->ranges_for("symbols/fx_util.c", body).empty());
  EXPECT_TRUE(map_->ranges_for("x_util.c", body).empty());
}

TEST_P(ProgramVariant, AlwaysInlineHeaderKeepsTheCallSite) {
  uint32_t body = marker_line(fixture_src("fx_header.h"), "header_body");
  uint32_t call = marker_line(fixture_src("fx_main.c"), "main_calls_header");
  auto ranges = map_->ranges_for("fx_header.h", body);
  ASSERT_FALSE(ranges.empty());
  auto info = map_->lookup(ranges.front().begin);
  ASSERT_TRUE(info.has_value());
  ASSERT_GE(info->frames.size(), 2u);
  EXPECT_EQ(info->frames[0].line, body);
  EXPECT_EQ(info->frames[0].function, "fx_header_cube");
  EXPECT_TRUE(ends_with_file(info->frames[1].file, "fx_main.c"));
  EXPECT_EQ(info->frames[1].line, call);
  EXPECT_EQ(info->frames[1].function, "main");
}

TEST_P(ProgramVariant, SummaryCountsUnitsAndVersions) {
  const auto& object = map_->objects().at(0);
  EXPECT_TRUE(object.is_main);
  EXPECT_TRUE(object.in_scope);
  EXPECT_TRUE(object.has_debug_info);
  EXPECT_FALSE(object.build_id.empty());
  auto summary = map_->summarize(object);
  EXPECT_EQ(summary.compilation_units, 2u);
  EXPECT_GE(summary.files, 3u);
  EXPECT_GT(summary.line_rows, 10u);
  EXPECT_EQ(summary.dwarf_versions, std::vector<int>{GetParam().dwarf_version});
  EXPECT_TRUE(summary.warnings.empty()) << join(summary.warnings);
  auto files = map_->in_scope_files();
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(std::filesystem::path(f).filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"fx_header.h", "fx_main.c", "fx_util.c"}));
}

TEST(DwarfIndexRows, ALinesRangesReadOnlyTheUnitsThatNameItsFile) {
  // A Rust binary's first experiment came 0.6-1.0 s into its run: looking up the chosen line's
  // ranges read every unit's line rows and inline scopes, the standard library's included (most
  // of its DWARF). Only units whose line-table header names the file can hold its rows.
  const std::string path = fixture_bin("fx_gcc_dwarf5");
  Interner interner;
  std::vector<std::string> warnings;
  auto index = DwarfIndex::open(path, path, &interner, &warnings);
  ASSERT_TRUE(index.ok()) << index.error();
  ASSERT_GE(index.value()->unit_count(), 2u) << "fx_main.c and fx_util.c";
  std::vector<AddressRange> ranges;
  index.value()->ranges_for("fx_util.c", marker_line(fixture_src("fx_util.c"), "fx_util_body"), &ranges);
  EXPECT_FALSE(ranges.empty());
  EXPECT_EQ(index.value()->units_with_rows(), 1u) << "fx_main.c's unit does not name fx_util.c";
  std::vector<AddressRange> again;
  index.value()->ranges_for("fx_main.c", marker_line(fixture_src("fx_main.c"), "fx_compute_body"), &again);
  EXPECT_FALSE(again.empty());
  EXPECT_EQ(index.value()->units_with_rows(), 2u);
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, ProgramVariant,
    ::testing::Values(Variant{"fx_gcc_dwarf5", false, 5}, Variant{"fx_gcc_dwarf4", false, 4},
                      Variant{"fx_gcc_dwarf3", false, 3}, Variant{"fx_gcc_nopie", false, 5},
                      Variant{"fx_gcc_emit_relocs", false, 5},
                      Variant{"fx_gcc_gz", false, 5}, Variant{"fx_gcc_zdebug", false, 5},
                      Variant{"fx_gcc_o2", true, 5},
                      Variant{"fx_gcc_dwarf4_o2", true, 4}, Variant{"fx_gcc_o2_noaranges", true, 5},
                      Variant{"fx_gcc_dwarf4_o2_noaranges", true, 4}, Variant{"fx_clang_dwarf5", false, 5},
                      Variant{"fx_clang_dwarf4", false, 4}, Variant{"fx_clang_o2", true, 5},
                      Variant{"fx_buildid", false, 5}, Variant{"fx_debuglink", false, 4},
                      Variant{"fx_debuglink_sub", false, 5}),
    [](const ::testing::TestParamInfo<Variant>& info) { return std::string(info.param.binary); });

TEST(SymbolMapFile, NonPieUsesAbsoluteAddresses) {
  auto map = SymbolMap::for_file(fixture_bin("fx_gcc_nopie"));
  ASSERT_TRUE(map.ok()) << map.error();
  uint64_t address = symbol_address(fixture_bin("fx_gcc_nopie"), "fx_compute");
  EXPECT_GE(address, 0x400000u);
  ASSERT_TRUE(map.value()->lookup(address).has_value());
  EXPECT_FALSE(map.value()->lookup(address - 0x400000).has_value());
}

TEST(SymbolMapFile, SharedLibrary) {
  std::string path = fixture_bin("libfx_lib.so");
  auto map = SymbolMap::for_file(path);
  ASSERT_TRUE(map.ok()) << map.error();
  auto info = map.value()->lookup(symbol_address(path, "fx_lib_scale"));
  ASSERT_TRUE(info.has_value());
  EXPECT_TRUE(ends_with_file(info->frames[0].file, "fx_lib.c"));
  EXPECT_EQ(info->frames[0].line, marker_line(fixture_src("fx_lib.c"), "fx_lib_scale"));
}

// ---- separate debug files ----------------------------------------------------------------------

TEST(DebugFiles, BuildIdDirectoryFromOptionsOrEnvironment) {
  std::string path = fixture_bin("fx_buildid");
  auto without = SymbolMap::for_file(path);
  ASSERT_TRUE(without.ok()) << without.error();
  EXPECT_FALSE(without.value()->objects().at(0).has_debug_info);
  EXPECT_TRUE(has_warning(without.value()->take_warnings(),
                          "no debug info for " + path + ": rebuild with -g, or install its debug symbols"));

  auto with = SymbolMap::for_file(path, Scope{}, fixture_search());
  ASSERT_TRUE(with.ok()) << with.error();
  const auto& object = with.value()->objects().at(0);
  EXPECT_EQ(object.debug_source, DebugSource::kBuildId);
  EXPECT_NE(object.debug_file.find("/debugroot/.build-id/" + object.build_id.substr(0, 2) + "/"), std::string::npos);

  ::setenv("WHATIF_DEBUG_DIRS", ("/nonexistent:" + fixture_bin("debugroot")).c_str(), 1);
  auto from_env = SymbolMap::for_file(path);
  ::unsetenv("WHATIF_DEBUG_DIRS");
  ASSERT_TRUE(from_env.ok()) << from_env.error();
  EXPECT_EQ(from_env.value()->objects().at(0).debug_source, DebugSource::kBuildId);
}

TEST(DebugFiles, DebugLinkBesideAndInDotDebug) {
  auto beside = SymbolMap::for_file(fixture_bin("fx_debuglink"));
  ASSERT_TRUE(beside.ok()) << beside.error();
  EXPECT_EQ(beside.value()->objects()[0].debug_source, DebugSource::kDebugLink);
  EXPECT_EQ(beside.value()->objects()[0].debug_file, fixture_bin("fx_debuglink.debug"));
  auto sub = SymbolMap::for_file(fixture_bin("fx_debuglink_sub"));
  ASSERT_TRUE(sub.ok()) << sub.error();
  EXPECT_EQ(sub.value()->objects()[0].debug_file, fixture_bin(".debug/fx_debuglink_sub.debug"));
}

std::string make_temp_dir() {
  std::string templ = ::testing::TempDir() + "whatif-symbols-XXXXXX";
  char* made = ::mkdtemp(templ.data());
  return made ? std::string(made) : std::string();
}

TEST(DebugFiles, DebugLinkWithWrongCrcIsRejected) {
  std::string dir = make_temp_dir();
  ASSERT_FALSE(dir.empty());
  std::filesystem::copy_file(fixture_bin("fx_debuglink"), dir + "/fx_debuglink");
  std::filesystem::copy_file(fixture_bin("fx_debuglink.debug"), dir + "/fx_debuglink.debug");
  {
    std::ofstream out(dir + "/fx_debuglink.debug", std::ios::binary | std::ios::app);
    out << "changed";
  }
  DebugSearch search;
  search.system_dir = dir + "/none";
  auto map = SymbolMap::for_file(dir + "/fx_debuglink", Scope{}, search);
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_FALSE(map.value()->objects().at(0).has_debug_info);
  auto warnings = map.value()->take_warnings();
  EXPECT_TRUE(has_warning(warnings, "CRC does not match")) << join(warnings);
  std::filesystem::remove_all(dir);
}

// ---- inlining and scopes over frames -------------------------------------------------------

class InlineVariant : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    path_ = fixture_bin(GetParam());
    if (!std::filesystem::exists(path_)) GTEST_SKIP() << path_ << " was not built (no clang?)";
  }
  std::string path_;
};

TEST_P(InlineVariant, InlinedLineWithCallSiteChain) {
  auto map = SymbolMap::for_file(path_);
  ASSERT_TRUE(map.ok()) << map.error();
  uint32_t body = marker_line(fixture_src("fx_inline.c"), "square_body");
  uint32_t call = marker_line(fixture_src("fx_inline.c"), "square_call");
  auto ranges = map.value()->ranges_for("fx_inline.c", body);
  ASSERT_FALSE(ranges.empty());
  int checked = 0;
  for (const auto& r : ranges) {
    auto info = map.value()->lookup(r.begin);
    ASSERT_TRUE(info.has_value());
    ASSERT_GE(info->frames.size(), 2u);
    EXPECT_EQ(info->frames[0].line, body);
    EXPECT_EQ(info->frames[0].function, "fx_square");
    EXPECT_EQ(info->frames[1].line, call);
    EXPECT_TRUE(ends_with_file(info->frames[1].file, "fx_inline.c"));
    EXPECT_EQ(info->frames[1].function, "fx_sum_squares");
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST_P(InlineVariant, SystemHeaderFramesGoToTheCallingUserLine) {
  uint32_t body = marker_line(fixture_src("sys/fx_sys.h"), "sys_body");
  uint32_t call = marker_line(fixture_src("fx_inline.c"), "sys_call");
  Scope scope;
  auto plain = SymbolMap::for_file(path_, scope);
  ASSERT_TRUE(plain.ok()) << plain.error();
  auto ranges = plain.value()->ranges_for("sys/fx_sys.h", body);
  ASSERT_FALSE(ranges.empty());
  auto info = plain.value()->lookup(ranges.front().begin);
  ASSERT_TRUE(info.has_value());
  ASSERT_GE(info->frames.size(), 2u);
  const SourceLine* first = plain.value()->first_in_scope(*info);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->line, body);  // not a system prefix: the header line itself is in scope

  scope.system_prefixes.push_back(std::filesystem::canonical(fixture_src("sys")).string() + "/");
  auto system = SymbolMap::for_file(path_, scope);
  ASSERT_TRUE(system.ok()) << system.error();
  info = system.value()->lookup(ranges.front().begin);
  ASSERT_TRUE(info.has_value());
  first = system.value()->first_in_scope(*info);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->line, call);
  EXPECT_TRUE(ends_with_file(first->file, "fx_inline.c"));
  EXPECT_EQ(first->function, "fx_mixed");

  scope.source_patterns = {"!%/fx_inline.c"};  // excluding the caller too leaves nothing
  auto none = SymbolMap::for_file(path_, scope);
  ASSERT_TRUE(none.ok());
  info = none.value()->lookup(ranges.front().begin);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(none.value()->first_in_scope(*info), nullptr);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, InlineVariant, ::testing::Values("fx_inline_gcc", "fx_inline_gcc4", "fx_inline_clang"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

class CppVariant : public ::testing::TestWithParam<const char*> {};

TEST_P(CppVariant, InlinedStdLibraryCodeGoesToTheCallingUserLine) {
  std::string path = fixture_bin(GetParam());
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " was not built (no clang++?)";
  auto map = SymbolMap::for_file(path);
  ASSERT_TRUE(map.ok()) << map.error();
  uint32_t call = marker_line(fixture_src("fx_cpp.cpp"), "cpp_accumulate");
  uint64_t start = symbol_address(path, "_Z10fx_cpp_sumRKSt6vectorIlSaIlEE");
  ASSERT_NE(start, 0u);
  int in_std = 0;
  for (uint64_t address = start; address < start + 256; ++address) {
    auto info = map.value()->lookup(address);
    if (!info || info->frames.back().function != "fx_cpp_sum") continue;
    // Line 0 (compiler-generated code, e.g. clang's loop setup) belongs to no line at all.
    if (info->frames[0].file.rfind("/usr/include/c++/", 0) != 0 || info->frames[0].line == 0) continue;
    ++in_std;
    const SourceLine* first = map.value()->first_in_scope(*info);
    ASSERT_NE(first, nullptr);
    EXPECT_TRUE(ends_with_file(first->file, "fx_cpp.cpp")) << first->file;
    EXPECT_EQ(first->line, call);
  }
  EXPECT_GT(in_std, 0) << "no address of fx_cpp_sum maps into inlined std::accumulate";
}

TEST_P(CppVariant, MethodNamesAreQualified) {
  std::string path = fixture_bin(GetParam());
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " was not built (no clang++?)";
  auto map = SymbolMap::for_file(path);
  ASSERT_TRUE(map.ok()) << map.error();
  auto info = map.value()->lookup(symbol_address(path, "_ZN2fx7Counter3addEl"));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->frames.back().function, "fx::Counter::add");
  EXPECT_GE(info->frames[0].line, marker_line(fixture_src("fx_cpp.cpp"), "cpp_method"));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CppVariant, ::testing::Values("fx_cpp_gcc", "fx_cpp_clang"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

// ---- errors ----------------------------------------------------------------------------------

TEST(SymbolMapErrors, MissingFileAndNotElfFailNoDebugInfoWarns) {
  auto missing = SymbolMap::for_file(fixture_bin("does-not-exist"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().find("cannot open " + fixture_bin("does-not-exist")), std::string::npos);

  auto not_elf = SymbolMap::for_file(fixture_src("fx_main.c"));
  ASSERT_FALSE(not_elf.ok());
  EXPECT_NE(not_elf.error().find("is not an ELF file"), std::string::npos) << not_elf.error();

  auto nodebug = SymbolMap::for_file(fixture_bin("fx_nodebug"));
  ASSERT_TRUE(nodebug.ok()) << nodebug.error();
  const auto& object = nodebug.value()->objects().at(0);
  EXPECT_FALSE(object.has_debug_info);
  EXPECT_EQ(object.debug_source, DebugSource::kNone);
  EXPECT_TRUE(nodebug.value()->ranges_for("fx_main.c", 10).empty());
  EXPECT_EQ(nodebug.value()->take_warnings(),
            std::vector<std::string>{"no debug info for " + fixture_bin("fx_nodebug") +
                                     ": rebuild with -g, or install its debug symbols, to see lines; profiling its "
                                     "functions instead (named from its .symtab)"});
  // Without lines, an address maps to its function, from the symbol table.
  EXPECT_EQ(object.functions_from, ".symtab");
  uintptr_t compute = symbol_address(fixture_bin("fx_nodebug"), "fx_compute");
  auto info = nodebug.value()->lookup(compute + 1);
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->frames.size(), 1u);
  EXPECT_EQ(info->frames[0].file, "fx_compute");
  EXPECT_EQ(info->frames[0].function, "fx_compute");
  EXPECT_EQ(info->frames[0].line, 0u);
  EXPECT_EQ(info->function.begin, compute);
  EXPECT_GT(info->function.end, compute + 1);
  EXPECT_EQ(nodebug.value()->first_in_scope(*info), &info->frames[0]) << "the function is in scope";
}

TEST(SymbolMapErrors, FullyStrippedFunctionsAreNamedByObjectAndOffsetFromEhFrame) {
  // fx_stripped is fx_nodebug's code (same compiler, flags and layout) linked with -s.
  auto stripped = SymbolMap::for_file(fixture_bin("fx_stripped"));
  ASSERT_TRUE(stripped.ok()) << stripped.error();
  const auto& object = stripped.value()->objects().at(0);
  EXPECT_EQ(object.functions_from, ".eh_frame");
  EXPECT_TRUE(has_warning(stripped.value()->take_warnings(), "profiling its functions instead (named from its .eh_frame)"));
  uintptr_t compute = symbol_address(fixture_bin("fx_nodebug"), "fx_compute");
  auto info = stripped.value()->lookup(compute + 1);
  ASSERT_TRUE(info.has_value());
  ASSERT_EQ(info->frames.size(), 1u);
  EXPECT_EQ(info->frames[0].file, fmt::format("fx_stripped+{:#x}", compute));
  EXPECT_EQ(info->frames[0].line, 0u);
  EXPECT_EQ(info->function.begin, compute) << "the FDE starts where the function does";
  EXPECT_GT(info->function.end, compute + 1);
  EXPECT_FALSE(stripped.value()->lookup(0x10).has_value()) << "no function below the first";
}

TEST(Demangle, CppAndRustNamesAsUsersReadThem) {
  EXPECT_EQ(demangle_symbol("_ZN2fx7Counter3addEi"), "fx::Counter::add(int)");
  EXPECT_EQ(demangle_symbol("_ZN9rust_work3mix17h0123456789abcdefE"), "rust_work::mix");
  EXPECT_EQ(demangle_symbol("worker"), "worker");
}

TEST(SymbolMapErrors, EmptyScopesAreReported) {
  Scope scope;
  scope.binary_patterns = {"libnothing%"};
  auto map = SymbolMap::for_file(fixture_bin("fx_gcc_dwarf5"), scope);
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_TRUE(has_warning(map.value()->take_warnings(), "empty scope: no loaded object matches the binary scope"));
  EXPECT_TRUE(map.value()->take_warnings().empty());  // cleared by the call

  scope = Scope{};
  scope.source_patterns = {"nomatch%"};
  map = SymbolMap::for_file(fixture_bin("fx_gcc_dwarf5"), scope);
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_TRUE(map.value()->in_scope_files().empty());
  EXPECT_TRUE(has_warning(map.value()->take_warnings(), "empty scope: no source file"));
}

// ---- malformed DWARF ---------------------------------------------------------------------------

/// A copy of a fixture with bytes overwritten at `offset` within the named section.
class CorruptCopy {
 public:
  CorruptCopy(const std::string& fixture, const std::string& section) {
    dir_ = make_temp_dir();
    path_ = dir_ + "/" + std::filesystem::path(fixture).filename().string();
    std::ifstream in(fixture, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    elf_version(EV_CURRENT);
    int fd = ::open(fixture.c_str(), O_RDONLY);
    Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
    std::size_t shstrndx = 0;
    elf_getshdrstrndx(elf, &shstrndx);
    for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
      GElf_Shdr shdr;
      gelf_getshdr(scn, &shdr);
      if (section == elf_strptr(elf, shstrndx, shdr.sh_name)) section_offset_ = shdr.sh_offset;
    }
    elf_end(elf);
    ::close(fd);
  }
  ~CorruptCopy() { std::filesystem::remove_all(dir_); }

  /// Offset (within the section) of the n-th (0-based) 32-bit-DWARF unit.
  std::size_t unit_offset(int n) const {
    std::size_t at = 0;
    for (int i = 0; i < n; ++i) {
      uint32_t length;
      std::memcpy(&length, bytes_.data() + section_offset_ + at, 4);
      at += 4 + length;
    }
    return at;
  }
  void overwrite(std::size_t offset, std::initializer_list<uint8_t> values) {
    std::size_t at = section_offset_ + offset;
    for (uint8_t v : values) bytes_.at(at++) = static_cast<char>(v);
  }
  const std::string& write() {
    std::ofstream out(path_, std::ios::binary);
    out.write(bytes_.data(), static_cast<std::streamsize>(bytes_.size()));
    return path_;
  }
  bool found() const { return section_offset_ != 0; }

 private:
  std::string dir_, path_;
  std::vector<char> bytes_;
  std::size_t section_offset_ = 0;
};

/// Corrupts the first unit (fx_main.c) with `corrupt` and checks the second (fx_util.c) still works.
void expect_first_unit_skipped(const std::function<void(CorruptCopy&)>& corrupt) {
  CorruptCopy copy(fixture_bin("fx_gcc_dwarf5"), ".debug_info");
  ASSERT_TRUE(copy.found());
  corrupt(copy);
  const std::string& path = copy.write();
  auto map = SymbolMap::for_file(path);
  ASSERT_TRUE(map.ok()) << map.error();
  auto warnings = map.value()->take_warnings();
  EXPECT_TRUE(has_warning(warnings, "malformed DWARF unit at .debug_info offset 0x0 in " + path + " skipped: "))
      << join(warnings);
  EXPECT_FALSE(map.value()->lookup(symbol_address(path, "fx_compute")).has_value());
  auto info = map.value()->lookup(symbol_address(path, "fx_util_twice"));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->frames[0].line, marker_line(fixture_src("fx_util.c"), "fx_util_twice"));
  EXPECT_EQ(info->frames[0].function, "fx_util_twice");
  EXPECT_EQ(map.value()->summarize(map.value()->objects()[0]).compilation_units, 1u);
}

TEST(MalformedDwarf, BadUnitVersionIsSkippedAndLaterUnitsStillWork) {
  expect_first_unit_skipped([](CorruptCopy& copy) { copy.overwrite(4, {0xff, 0x00}); });
}

TEST(MalformedDwarf, BadAbbreviationOffsetIsSkippedAndLaterUnitsStillWork) {
  expect_first_unit_skipped([](CorruptCopy& copy) { copy.overwrite(8, {0xff, 0xff, 0xff, 0x0f}); });
}

TEST(MalformedDwarf, BadUnitDieIsSkippedAndLaterUnitsStillWork) {
  expect_first_unit_skipped([](CorruptCopy& copy) { copy.overwrite(12, {0x7e}); });  // DWARF 5 header: 12 bytes
}

TEST(MalformedDwarf, BadUnitLengthLosesOnlyTheUnitsFromThereOn) {
  CorruptCopy copy(fixture_bin("fx_gcc_dwarf5"), ".debug_info");
  ASSERT_TRUE(copy.found());
  std::size_t second = copy.unit_offset(1);
  copy.overwrite(second, {0xf0, 0xff, 0xff, 0x0f});  // a length past the section's end
  const std::string& path = copy.write();
  auto map = SymbolMap::for_file(path);
  ASSERT_TRUE(map.ok()) << map.error();
  auto warnings = map.value()->take_warnings();
  EXPECT_TRUE(has_warning(warnings, fmt::format("malformed DWARF unit at .debug_info offset {:#x} in {} skipped, "
                                                "with the units after it",
                                                second, path)))
      << join(warnings);
  auto info = map.value()->lookup(symbol_address(path, "fx_compute"));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->frames[0].line, marker_line(fixture_src("fx_main.c"), "fx_compute"));
  EXPECT_FALSE(map.value()->lookup(symbol_address(path, "fx_util_twice")).has_value());
}

TEST(MalformedDwarf, BadRangeListHeaderIsIgnoredNotFatal) {
  // libdwarf 20210528 reads wild offsets from a bad .debug_rnglists offset table: we trim it first.
  std::string fixture = fixture_bin("fx_clang_o2");
  if (!std::filesystem::exists(fixture)) GTEST_SKIP() << "no clang";
  CorruptCopy copy(fixture, ".debug_rnglists");
  ASSERT_TRUE(copy.found());
  copy.overwrite(12, {0xff, 0xff, 0xff, 0x7f});  // the first entry of the offset table
  const std::string& path = copy.write();
  auto map = SymbolMap::for_file(path);
  ASSERT_TRUE(map.ok()) << map.error();
  map.value()->summarize(map.value()->objects()[0]);
  map.value()->lookup(symbol_address(path, "fx_compute"));
  auto warnings = map.value()->take_warnings();
  EXPECT_TRUE(has_warning(warnings, "malformed .debug_rnglists unit at offset 0x0 in " + path)) << join(warnings);
}

TEST(MalformedDwarf, BadLineTableIsSkippedOnFirstUse) {
  CorruptCopy copy(fixture_bin("fx_gcc_dwarf5"), ".debug_line");
  ASSERT_TRUE(copy.found());
  copy.overwrite(4, {0xff, 0x00});  // first line table's version
  const std::string& path = copy.write();
  auto map = SymbolMap::for_file(path);
  ASSERT_TRUE(map.ok()) << map.error();
  EXPECT_TRUE(map.value()->take_warnings().empty());  // line tables are not read up front
  EXPECT_FALSE(map.value()->lookup(symbol_address(path, "fx_compute")).has_value());
  auto warnings = map.value()->take_warnings();
  EXPECT_TRUE(has_warning(warnings, "malformed line table of compilation unit")) << join(warnings);
  EXPECT_TRUE(has_warning(warnings, path)) << join(warnings);
  auto info = map.value()->lookup(symbol_address(path, "fx_util_twice"));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->frames[0].line, marker_line(fixture_src("fx_util.c"), "fx_util_twice"));
}

}  // namespace
}  // namespace whatif::symbols
