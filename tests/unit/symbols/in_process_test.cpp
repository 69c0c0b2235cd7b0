// SymbolMap::for_current_process in this test process: the main executable's load bias (PIE),
// lookups of this file's code, and a dlopen'd library seen after refresh(). Test thread only.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "fixture_support.h"
#include "symbols/symbol_map.h"

extern "C" __attribute__((noinline, used)) int whatif_symbols_inproc_marker(int x) {  // LINE:inproc_marker
  return x * 7 + (x >> 2);  // LINE:inproc_body
}

namespace whatif::symbols {
namespace {

using testing::ends_with_file;
using testing::fixture_bin;
using testing::fixture_src;
using testing::marker_line;
using testing::symbol_address;

const std::string kThisFile = std::string(WHATIF_TEST_SOURCE_DIR) + "/in_process_test.cpp";

const LoadedObject* find_object(const SymbolMap& map, std::string_view part) {
  for (const auto& o : map.objects())
    if (o.path.find(part) != std::string::npos) return &o;
  return nullptr;
}

TEST(InProcess, MainExecutableBiasAndLookup) {
  auto map = SymbolMap::for_current_process(Scope{});
  ASSERT_TRUE(map.ok()) << map.error();
  const auto& objects = map.value()->objects();
  auto main = std::find_if(objects.begin(), objects.end(), [](const LoadedObject& o) { return o.is_main; });
  ASSERT_NE(main, objects.end());
  char exe[PATH_MAX] = {};
  ASSERT_GT(::readlink("/proc/self/exe", exe, sizeof(exe) - 1), 0);
  EXPECT_EQ(main->path, exe);
  EXPECT_TRUE(main->in_scope);
  EXPECT_TRUE(main->has_debug_info);
  EXPECT_EQ(std::count_if(objects.begin(), objects.end(), [](const LoadedObject& o) { return o.in_scope; }), 1);
  EXPECT_FALSE(std::any_of(objects.begin(), objects.end(),
                           [](const LoadedObject& o) { return o.path.find("linux-vdso") != std::string::npos; }));

  auto runtime = reinterpret_cast<uintptr_t>(&whatif_symbols_inproc_marker);
  uint64_t file_address = symbol_address(main->path, "whatif_symbols_inproc_marker");
  ASSERT_NE(file_address, 0u);
  EXPECT_EQ(main->bias, runtime - file_address);  // PIE: bias from dlpi_addr, not base - offset
  EXPECT_TRUE(std::any_of(main->executable_ranges.begin(), main->executable_ranges.end(),
                          [&](const AddressRange& r) { return runtime >= r.begin && runtime < r.end; }));

  ASSERT_NE(map.value()->object_at(runtime), nullptr);
  EXPECT_TRUE(map.value()->object_at(runtime)->is_main);
  EXPECT_EQ(map.value()->object_at(0), nullptr);
  auto libc_function = reinterpret_cast<uintptr_t>(&::getpid);
  ASSERT_NE(map.value()->object_at(libc_function), nullptr);
  EXPECT_FALSE(map.value()->object_at(libc_function)->in_scope);

  auto info = map.value()->lookup(runtime);
  ASSERT_TRUE(info.has_value());
  EXPECT_TRUE(ends_with_file(info->frames[0].file, "in_process_test.cpp")) << info->frames[0].file;
  EXPECT_GE(info->frames[0].line, marker_line(kThisFile, "inproc_marker"));
  EXPECT_LE(info->frames[0].line, marker_line(kThisFile, "inproc_body"));
  EXPECT_EQ(info->frames.back().function, "whatif_symbols_inproc_marker");
  EXPECT_EQ(info->object, main->path);
  EXPECT_NE(map.value()->first_in_scope(*info), nullptr);

  auto ranges = map.value()->ranges_for("unit/symbols/in_process_test.cpp", marker_line(kThisFile, "inproc_body"));
  ASSERT_FALSE(ranges.empty());
  EXPECT_TRUE(std::any_of(ranges.begin(), ranges.end(),
                          [&](const AddressRange& r) { return r.begin >= runtime && r.begin < runtime + 256; }));
}

TEST(InProcess, DlopenedLibraryAppearsAfterRefresh) {
  const std::string path = fixture_bin("libfx_plugin.so");
  Scope scope;
  scope.binary_patterns = {"MAIN", "libfx_plugin%"};
  auto map = SymbolMap::for_current_process(scope);
  ASSERT_TRUE(map.ok()) << map.error();
  ASSERT_EQ(find_object(*map.value(), "libfx_plugin"), nullptr);
  EXPECT_FALSE(map.value()->refresh());

  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  auto runtime = reinterpret_cast<uintptr_t>(::dlsym(handle, "fx_lib_scale"));
  ASSERT_NE(runtime, 0u);
  EXPECT_FALSE(map.value()->lookup(runtime).has_value());  // not known before refresh
  EXPECT_TRUE(map.value()->refresh());
  EXPECT_FALSE(map.value()->refresh());
  const LoadedObject* plugin = find_object(*map.value(), "libfx_plugin");
  ASSERT_NE(plugin, nullptr);
  EXPECT_TRUE(plugin->in_scope);
  EXPECT_TRUE(plugin->has_debug_info);
  EXPECT_FALSE(plugin->is_main);
  EXPECT_EQ(plugin->bias, runtime - symbol_address(path, "fx_lib_scale"));

  auto info = map.value()->lookup(runtime);
  ASSERT_TRUE(info.has_value());
  EXPECT_TRUE(ends_with_file(info->frames[0].file, "fx_lib.c"));
  EXPECT_EQ(info->frames[0].line, marker_line(fixture_src("fx_lib.c"), "fx_lib_scale"));
  EXPECT_EQ(info->frames[0].function, "fx_lib_scale");
  EXPECT_TRUE(ends_with_file(info->object, "libfx_plugin.so"));
  auto ranges = map.value()->ranges_for("fx_lib.c", marker_line(fixture_src("fx_lib.c"), "fx_lib_body"));
  ASSERT_FALSE(ranges.empty());
  EXPECT_GT(ranges.front().begin, runtime);  // runtime addresses, biased

  ASSERT_EQ(::dlclose(handle), 0);
  EXPECT_TRUE(map.value()->refresh());
  EXPECT_EQ(find_object(*map.value(), "libfx_plugin"), nullptr);
}

TEST(InProcess, RangesForCanStayInScope) {
  const std::string path = fixture_bin("libfx_plugin.so");
  Scope main_only;
  main_only.binary_patterns = {"MAIN"};  // the plugin is out of scope
  auto map = SymbolMap::for_current_process(main_only);
  ASSERT_TRUE(map.ok()) << map.error();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << ::dlerror();
  EXPECT_TRUE(map.value()->refresh());
  uint32_t body = marker_line(fixture_src("fx_lib.c"), "fx_lib_body");
  EXPECT_TRUE(map.value()->ranges_for("fx_lib.c", body, /*in_scope_only=*/true).empty());
  EXPECT_FALSE(map.value()->ranges_for("fx_lib.c", body).empty());  // falls back to other objects
  const LoadedObject* plugin = find_object(*map.value(), "libfx_plugin");
  ASSERT_NE(plugin, nullptr);
  EXPECT_FALSE(plugin->in_scope);
  auto info = map.value()->lookup(reinterpret_cast<uintptr_t>(::dlsym(handle, "fx_lib_scale")));
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(map.value()->first_in_scope(*info), nullptr);  // out-of-scope object
  ::dlclose(handle);
}

TEST(InProcess, NoDebugInfoWarningNamesTheObject) {
  Scope scope;
  scope.binary_patterns = {"%"};
  auto map = SymbolMap::for_current_process(scope);
  ASSERT_TRUE(map.ok()) << map.error();
  auto warnings = map.value()->take_warnings();
  int checked = 0;
  for (const auto& object : map.value()->objects()) {
    if (object.has_debug_info) continue;
    std::string expected = "no debug info for " + object.path + ": rebuild with -g, or install its debug symbols";
    EXPECT_TRUE(std::any_of(warnings.begin(), warnings.end(),
                            [&](const std::string& w) { return w.rfind(expected, 0) == 0; }))
        << expected;
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "every loaded object has debug symbols installed";
}

}  // namespace
}  // namespace whatif::symbols
