// Unit tests of the Attributor over a real SymbolMap of this test process, with the plugin fixture
// (tests/fixtures/symbols/fx_lib.c, -O0) dlopen'd in scope: IPs, callchains, the address cache
// across refresh(), and --fixed-line/--sampled-point matching. Test thread only.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "experiment/attribution.h"
#include "fixture_support.h"

namespace whatif::experiment {
namespace {

using symbols::testing::fixture_bin;
using symbols::testing::fixture_src;
using symbols::testing::marker_line;

/// The dlopen'd plugin, closed (and unloaded: RTLD_LOCAL, no other user) at the end of the test.
struct Plugin {
  Plugin() : handle(::dlopen(fixture_bin("libfx_plugin.so").c_str(), RTLD_NOW | RTLD_LOCAL)) {}
  ~Plugin() {
    if (handle != nullptr) ::dlclose(handle);
  }
  uintptr_t scale() const { return reinterpret_cast<uintptr_t>(::dlsym(handle, "fx_lib_scale")); }
  void* handle;
};

bool plugin_known(const symbols::SymbolMap& map) {
  for (const auto& object : map.objects()) {
    if (object.path.find("libfx_plugin") != std::string::npos) return true;
  }
  return false;
}

std::unique_ptr<symbols::SymbolMap> map_with_plugin(bool plugin_in_scope = true) {
  symbols::Scope scope;
  scope.binary_patterns = {"MAIN"};  // the plugin sits beside the tests: OWN would take it in
  if (plugin_in_scope) scope.binary_patterns = {"MAIN", "libfx_plugin%"};
  auto map = symbols::SymbolMap::for_current_process(scope);
  EXPECT_TRUE(map.ok()) << map.error();
  return map.ok() ? std::move(*map) : nullptr;
}

/// The line (in scope or not) an address's innermost frame says, or 0.
uint32_t line_at(symbols::SymbolMap& map, uint64_t address) {
  auto info = map.lookup(address);
  return info ? info->frames[0].line : 0;
}

const uint32_t kBody = marker_line(fixture_src("fx_lib.c"), "fx_lib_body");
const uint32_t kScale = marker_line(fixture_src("fx_lib.c"), "fx_lib_scale");
const uint64_t kLibcAddress = reinterpret_cast<uintptr_t>(::dlsym(RTLD_DEFAULT, "getpid"));
const uint64_t kLibcAddress2 = reinterpret_cast<uintptr_t>(::dlsym(RTLD_DEFAULT, "write"));

TEST(Attribution, AnIpInAnInScopeLineGoesToThatLine) {
  Plugin plugin;
  ASSERT_NE(plugin.handle, nullptr) << ::dlerror();
  auto map = map_with_plugin();
  ASSERT_NE(map, nullptr);
  auto ranges = map->ranges_for("fx_lib.c", kBody, /*in_scope_only=*/true);
  ASSERT_FALSE(ranges.empty());
  config::Config config;
  Attributor attributor(config);
  attributor.set_symbols(map.get());

  os::RawSample sample;
  sample.ip = ranges.front().begin;
  int32_t id = attributor.attribute_sample(sample);
  ASSERT_GE(id, 0);
  const Line& line = attributor.line(id);
  EXPECT_EQ(line.number, kBody);
  EXPECT_TRUE(line.name.ends_with("/fx_lib.c:" + std::to_string(kBody))) << line.name;
  EXPECT_EQ(attributor.lines().size(), 1u);
  sample.callchain[0] = sample.ip;
  sample.callchain_length = 1;
  EXPECT_EQ(attributor.attribute_sample(sample), id) << "callchain[0] is the IP itself, not a return address";
  sample.ip = sample.callchain[0] = kLibcAddress;
  EXPECT_EQ(attributor.attribute_sample(sample), -1) << "libc is out of scope";
  EXPECT_EQ(attributor.attribute(0, false), -1);
}

TEST(Attribution, AnOutOfScopeObjectYieldsNoLine) {
  Plugin plugin;
  ASSERT_NE(plugin.handle, nullptr) << ::dlerror();
  uint64_t scale = plugin.scale();
  config::Config config;
  auto in_scope = map_with_plugin();
  ASSERT_NE(in_scope, nullptr);
  Attributor control(config);
  control.set_symbols(in_scope.get());
  ASSERT_GE(control.attribute(scale, false), 0) << "the plugin's code has lines";

  auto map = map_with_plugin(/*plugin_in_scope=*/false);
  ASSERT_NE(map, nullptr);
  Attributor attributor(config);
  attributor.set_symbols(map.get());
  EXPECT_EQ(attributor.attribute(scale, false), -1);
  EXPECT_TRUE(attributor.lines().empty());
}

TEST(Attribution, ACallchainGoesToItsFirstInScopeFrameAReturnAddressMinusOne) {
  Plugin plugin;
  ASSERT_NE(plugin.handle, nullptr) << ::dlerror();
  auto map = map_with_plugin();
  ASSERT_NE(map, nullptr);
  // A return address just past the body line's code: the call it returns from is in the body
  // line, though the address itself is the next line's.
  uint64_t after_body = 0;
  for (const symbols::AddressRange& range : map->ranges_for("fx_lib.c", kBody, true)) {
    if (line_at(*map, range.end) != kBody && line_at(*map, range.end) != 0) after_body = range.end;
  }
  ASSERT_NE(after_body, 0u);
  config::Config config;
  Attributor attributor(config);
  attributor.set_symbols(map.get());

  os::RawSample sample;
  sample.ip = kLibcAddress;
  sample.callchain[0] = kLibcAddress;
  sample.callchain[1] = kLibcAddress2;
  sample.callchain[2] = after_body;
  sample.callchain_length = 3;
  int32_t id = attributor.attribute_sample(sample);
  ASSERT_GE(id, 0);
  EXPECT_EQ(attributor.line(id).number, kBody);
  int32_t next = attributor.attribute(after_body, false);
  ASSERT_GE(next, 0);
  EXPECT_NE(attributor.line(next).number, kBody) << "as an IP it is another line";

  // The body's first byte as a return address: the call would end just before it, in the prologue.
  uint64_t body_begin = map->ranges_for("fx_lib.c", kBody, true).front().begin;
  ASSERT_NE(line_at(*map, body_begin - 1), kBody);
  sample.callchain[2] = body_begin;
  id = attributor.attribute_sample(sample);
  ASSERT_GE(id, 0);
  EXPECT_EQ(attributor.line(id).number, line_at(*map, body_begin - 1));
}

TEST(Attribution, RefreshForgetsAddressesCachedBeforeTheirLibraryWasKnown) {
  auto map = map_with_plugin();
  ASSERT_NE(map, nullptr);
  ASSERT_FALSE(plugin_known(*map)) << "the plugin must load after the map is built";
  config::Config config;
  Attributor attributor(config);
  attributor.set_symbols(map.get());
  EXPECT_FALSE(attributor.refresh()) << "nothing loaded since";

  Plugin plugin;
  ASSERT_NE(plugin.handle, nullptr) << ::dlerror();
  uint64_t scale = plugin.scale();
  ASSERT_NE(scale, 0u);
  EXPECT_EQ(attributor.attribute(scale, false), -1) << "unknown object: cached as no line";
  EXPECT_TRUE(attributor.refresh());
  int32_t id = attributor.attribute(scale, false);
  ASSERT_GE(id, 0) << "the cached miss must not outlive the refresh";
  EXPECT_EQ(attributor.line(id).number, kScale);
}

TEST(Attribution, FixedLineAndSampledPointsMatchWholeTrailingPathComponents) {
  Plugin plugin;
  ASSERT_NE(plugin.handle, nullptr) << ::dlerror();
  auto map = map_with_plugin();
  ASSERT_NE(map, nullptr);
  uint64_t body = map->ranges_for("fx_lib.c", kBody, true).front().begin;
  uint64_t scale = plugin.scale();

  config::Config config;
  config.fixed_line = config::LineSpec{"symbols/fx_lib.c", kBody};
  config.sampled_points = {{"x_lib.c", kBody}, {"fx_lib.c", kBody}, {"fx_lib.c", kScale}};
  Attributor attributor(config);
  attributor.set_symbols(map.get());
  Line body_line = attributor.line(attributor.attribute(body, false));  // a copy: lines_ grows
  EXPECT_TRUE(body_line.fixed_match);
  EXPECT_EQ(body_line.sampled_point, 1) << "\"x_lib.c\" is not a whole component of .../fx_lib.c";
  Line scale_line = attributor.line(attributor.attribute(scale, false));
  EXPECT_FALSE(scale_line.fixed_match) << "another line number";
  EXPECT_EQ(scale_line.sampled_point, 2);

  config::Config partial;
  partial.fixed_line = config::LineSpec{"ib.c", kBody};
  Attributor other(partial);
  other.set_symbols(map.get());
  EXPECT_FALSE(other.line(other.attribute(body, false)).fixed_match);

  EXPECT_EQ(canonical_line_name(*map, {"fx_lib.c", kBody}), body_line.name) << "named the way samples name it";
  EXPECT_EQ(canonical_line_name(*map, {"no_such_file.c", 3}), "no_such_file.c:3");
}

TEST(Attribution, LineMatchesUsesTheSymbolLayersPathRule) {
  symbols::SourceLine line{"/src/app/main.c", 5, ""};
  EXPECT_TRUE(line_matches(line, {"main.c", 5}));
  EXPECT_TRUE(line_matches(line, {"app/main.c", 5}));
  EXPECT_TRUE(line_matches(line, {"/src/app/main.c", 5}));
  EXPECT_FALSE(line_matches(line, {"main.c", 6}));
  EXPECT_FALSE(line_matches(line, {"pp/main.c", 5}));
  EXPECT_FALSE(line_matches(line, {"", 5})) << "an empty file names nothing";
  symbols::SourceLine dir_line{"/src/app/", 5, ""};
  EXPECT_FALSE(line_matches(dir_line, {"", 5}));
}

}  // namespace
}  // namespace whatif::experiment

namespace whatif::experiment {
namespace {

TEST(Attribution, WhatifsOwnCodeAndTrapAddressesGoToNoLine) {
  // Samples in libwhatif.so (its shims and handlers) or at a -p breakpoint's address (the trap's
  // cost lands on the trapping instruction) are whatif's own time: 146 of 261 memcached
  // experiments went to the progress point's line before.
  Plugin plugin;
  ASSERT_NE(plugin.handle, nullptr) << ::dlerror();
  auto map = map_with_plugin();
  ASSERT_NE(map, nullptr);
  auto body = map->ranges_for("fx_lib.c", kBody, /*in_scope_only=*/true);
  auto scale = map->ranges_for("fx_lib.c", kScale, /*in_scope_only=*/true);
  ASSERT_FALSE(body.empty());
  ASSERT_FALSE(scale.empty());
  config::Config config;
  Attributor attributor(config);
  attributor.set_symbols(map.get());
  os::RawSample trapped;
  trapped.ip = body.front().begin;
  os::RawSample other;
  other.ip = scale.front().begin;
  ASSERT_GE(attributor.attribute_sample(trapped), 0);
  ASSERT_GE(attributor.attribute_sample(other), 0);

  attributor.set_own_time({}, {trapped.ip});
  EXPECT_EQ(attributor.attribute_sample(trapped), -1) << "a sample at a -p trap address";
  EXPECT_GE(attributor.attribute_sample(other), 0) << "only the trapping instruction is excluded";
  EXPECT_EQ(attributor.own_samples(), 1u);

  const symbols::LoadedObject* plugin_object = map->object_at(other.ip);
  ASSERT_NE(plugin_object, nullptr);
  attributor.set_own_time(plugin_object->executable_ranges, {});
  EXPECT_EQ(attributor.attribute_sample(other), -1) << "a sample in whatif's own object";
  other.callchain[0] = other.ip;
  other.callchain[1] = trapped.ip + 1;  // a return address into an in-scope line
  other.callchain_length = 2;
  EXPECT_EQ(attributor.attribute_sample(other), -1) << "not rescued through the callchain";
  EXPECT_EQ(attributor.own_samples(), 3u);
}

}  // namespace
}  // namespace whatif::experiment
