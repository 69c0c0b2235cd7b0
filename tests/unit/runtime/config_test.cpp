// Unit tests of runtime option parsing (runtime/config): the environment the launcher sets.
#include "config/config.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace whatif::config {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : {"WHATIF_FIXED_LINE", "WHATIF_FIXED_SPEEDUP", "WHATIF_PROGRESS_POINTS", "WHATIF_FORMAT",
                             "WHATIF_BINARY_SCOPE", "WHATIF_SAMPLING_PERIOD_NS", "WHATIF_COMMAND"}) {
      unsetenv(name);
    }
  }
};

TEST_F(ConfigTest, LineSpecsParseFileAndLine) {
  auto spec = parse_line_spec("src/a:b.c:42");
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->file, "src/a:b.c");
  EXPECT_EQ(spec->line, 42u);
  EXPECT_FALSE(parse_line_spec("main.c"));
  EXPECT_FALSE(parse_line_spec("main.c:"));
  EXPECT_FALSE(parse_line_spec("main.c:0"));
  EXPECT_FALSE(parse_line_spec(":12"));
}

TEST_F(ConfigTest, ReadsTheLaunchersEnvironment) {
  setenv("WHATIF_FIXED_LINE", "main.c:10", 1);
  setenv("WHATIF_FIXED_SPEEDUP", "35", 1);
  setenv("WHATIF_PROGRESS_POINTS", "a.c:1;b.c:2", 1);
  setenv("WHATIF_FORMAT", "coz", 1);
  setenv("WHATIF_BINARY_SCOPE", "MAIN;%libfoo%", 1);
  setenv("WHATIF_COMMAND", "./app\x1f--flag", 1);
  Config config = Config::from_environment();
  ASSERT_TRUE(config.fixed_line);
  EXPECT_EQ(config.fixed_line->text(), "main.c:10");
  EXPECT_EQ(config.fixed_speedup_percent, 35);
  ASSERT_EQ(config.breakpoint_points.size(), 2u);
  EXPECT_EQ(config.breakpoint_points[1].text(), "b.c:2");
  EXPECT_TRUE(config.coz_format);
  EXPECT_EQ(config.binary_scope, (std::vector<std::string>{"MAIN", "%libfoo%"}));
  EXPECT_EQ(config.command, (std::vector<std::string>{"./app", "--flag"}));
  EXPECT_TRUE(config.errors.empty());
}

TEST_F(ConfigTest, MalformedOptionsAreReportedNotIgnored) {
  setenv("WHATIF_FIXED_SPEEDUP", "150", 1);
  setenv("WHATIF_SAMPLING_PERIOD_NS", "10", 1);
  setenv("WHATIF_FIXED_LINE", "nonsense", 1);
  Config config = Config::from_environment();
  EXPECT_FALSE(config.fixed_speedup_percent);
  EXPECT_EQ(config.sampling_period_ns, 1000000u);
  EXPECT_EQ(config.errors.size(), 3u);
}

TEST_F(ConfigTest, OptionsJsonReplacesBytesThatAreNotUtf8) {
  // A file name with byte 0xff: a strict dump throws during start-up and ends in std::terminate.
  setenv("WHATIF_FIXED_LINE", "caf\xff.c:12", 1);
  Config config = Config::from_environment();
  ASSERT_TRUE(config.fixed_line);
  std::string json;
  EXPECT_NO_THROW(json = config.options_json());
  EXPECT_NE(json.find("caf\xef\xbf\xbd.c:12"), std::string::npos) << json;  // U+FFFD
}

}  // namespace
}  // namespace whatif::config
