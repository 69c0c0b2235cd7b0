// Unit tests of runtime option parsing (runtime/config): the environment the launcher sets, and the
// round trip of the launcher's encoding (launcher/run_options.cpp) through this parsing.
#include "config/config.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "run_options.h"
#include "whatif/environment.h"

namespace whatif::config {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  void TearDown() override {
    for (const char* name : environment::kLauncherVariables) unsetenv(name);
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

TEST_F(ConfigTest, AFirstSamplingPeriodForTestsIsWithinOnePeriod) {
  setenv("WHATIF_FIRST_PERIOD_NS", "5000", 1);
  EXPECT_EQ(Config::from_environment().first_period_ns, 5000u);
  setenv("WHATIF_FIRST_PERIOD_NS", "2000000", 1);  // longer than the 1-ms period
  Config config = Config::from_environment();
  EXPECT_EQ(config.first_period_ns, 0u) << "random, as without it";
  EXPECT_EQ(config.errors.size(), 1u);
  unsetenv("WHATIF_FIRST_PERIOD_NS");
}

TEST_F(ConfigTest, AGivenSwitchCostReplacesTheMeasurementWhenItIsInRange) {
  EXPECT_EQ(Config::from_environment().switch_cost_ns, 0u) << "measured by default";
  setenv("WHATIF_SWITCH_COST_NS", "20000", 1);
  EXPECT_EQ(Config::from_environment().switch_cost_ns, 20000u);
  for (const char* wrong : {"0", "2000000", "dear"}) {
    setenv("WHATIF_SWITCH_COST_NS", wrong, 1);
    Config config = Config::from_environment();
    EXPECT_EQ(config.switch_cost_ns, 0u) << wrong;
    ASSERT_EQ(config.errors.size(), 1u) << wrong;
    EXPECT_NE(config.errors[0].find("WHATIF_SWITCH_COST_NS"), std::string::npos) << config.errors[0];
  }
  unsetenv("WHATIF_SWITCH_COST_NS");
}

TEST_F(ConfigTest, SamplingPeriodsAreRandomUnlessTurnedOffAndTheProfileSaysWhich) {
  EXPECT_TRUE(Config::from_environment().period_jitter);
  EXPECT_NE(Config::from_environment().options_json().find("\"period_jitter\":true"), std::string::npos);
  setenv("WHATIF_PERIOD_JITTER", "off", 1);
  Config config = Config::from_environment();
  EXPECT_FALSE(config.period_jitter);
  EXPECT_NE(config.options_json().find("\"period_jitter\":false"), std::string::npos) << config.options_json();
  unsetenv("WHATIF_PERIOD_JITTER");
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

/// Sets what the launcher would set for `options`, as its child does before exec.
Config through_the_environment(const cli::RunOptions& options) {
  for (const auto& [name, value] : cli::runtime_environment(options, "/tmp/out.jsonl")) setenv(name.c_str(), value.c_str(), 1);
  return Config::from_environment();
}

TEST_F(ConfigTest, EveryOptionTheLauncherEncodesReachesTheRuntime) {
  cli::RunOptions options;
  options.binary_scope = {"MAIN", "%libfoo%", "!%libbar%"};
  options.source_scope = {"%src/%"};
  options.progress_points = {"a.c:1", "dir/b.c:2"};
  options.sampled_points = {"c.c:3"};
  options.end_to_end = true;
  options.fixed_line = "main.c:10";
  options.fixed_speedup = 35;
  options.sampling_period_ms = 2.01;     // 2009999.99... ns in double arithmetic
  options.experiment_length_ms = 4.1;
  options.seed = 42;
  options.format = "coz";
  options.sampler = "timer";
  options.follow_children = true;
  options.no_instructions = true;
  options.command = {"./app", "--name", "two words", "", "last"};
  Config config = through_the_environment(options);
  EXPECT_TRUE(config.errors.empty()) << config.errors.front();
  EXPECT_EQ(config.output, "/tmp/out.jsonl");
  EXPECT_TRUE(config.coz_format);
  EXPECT_EQ(config.binary_scope, options.binary_scope);
  EXPECT_EQ(config.source_scope, options.source_scope);
  ASSERT_EQ(config.breakpoint_points.size(), 2u);
  EXPECT_EQ(config.breakpoint_points[0].text(), "a.c:1");
  EXPECT_EQ(config.breakpoint_points[1].text(), "dir/b.c:2");
  ASSERT_EQ(config.sampled_points.size(), 1u);
  EXPECT_EQ(config.sampled_points[0].text(), "c.c:3");
  EXPECT_TRUE(config.end_to_end);
  ASSERT_TRUE(config.fixed_line);
  EXPECT_EQ(config.fixed_line->text(), "main.c:10");
  EXPECT_EQ(config.fixed_speedup_percent, 35);
  EXPECT_EQ(config.sampling_period_ns, 2010000u) << "milliseconds are rounded to the nearest ns, not truncated";
  EXPECT_EQ(config.experiment_length_ns, 4100000u);
  EXPECT_TRUE(config.seed_given);
  EXPECT_EQ(config.seed, 42u);
  EXPECT_TRUE(config.force_timer_sampler);
  EXPECT_TRUE(config.follow_children);
  EXPECT_FALSE(config.instruction_counts) << "--no-instructions turns the per-instruction histogram off";
  EXPECT_EQ(config.command, options.command) << "the header's command must be the one the program ran with";
}

TEST_F(ConfigTest, TheLaunchersDefaultsAreTheRuntimesDefaults) {
  cli::RunOptions options;
  options.command = {"./app"};
  Config config = through_the_environment(options);
  Config defaults;
  EXPECT_TRUE(config.errors.empty());
  EXPECT_FALSE(config.coz_format);
  EXPECT_EQ(config.sampling_period_ns, defaults.sampling_period_ns);
  EXPECT_EQ(config.experiment_length_ns, defaults.experiment_length_ns);
  EXPECT_TRUE(config.binary_scope.empty());
  EXPECT_FALSE(config.end_to_end);
  EXPECT_FALSE(config.fixed_line);
  EXPECT_FALSE(config.fixed_speedup_percent);
  EXPECT_FALSE(config.seed_given);
  EXPECT_FALSE(config.force_timer_sampler);
  EXPECT_FALSE(config.perf_only_sampler) << "by default busy-switching threads may move to the timer";
  EXPECT_FALSE(config.follow_children);
  EXPECT_TRUE(config.instruction_counts) << "per-instruction counts are on by default";
}

TEST_F(ConfigTest, SamplerPerfKeepsPerfEventOnEveryThread) {
  cli::RunOptions options;
  options.command = {"./app"};
  options.sampler = "perf";
  Config config = through_the_environment(options);
  EXPECT_TRUE(config.errors.empty());
  EXPECT_TRUE(config.perf_only_sampler);
  EXPECT_FALSE(config.force_timer_sampler);
  EXPECT_FALSE(config.user_only_sampler);
}

TEST(LauncherCommandLine, FirstSeparatorHandsTheRestToTheProgramVerbatim) {
  using cli::split_at_separator;
  auto split = split_at_separator({"run", "-p", "a.c:3", "---", "./server", "-p", "11311", "--", "---", ""});
  EXPECT_EQ(split.own, (std::vector<std::string>{"run", "-p", "a.c:3"}));
  EXPECT_EQ(split.program, (std::vector<std::string>{"./server", "-p", "11311", "--", "---", ""}));
  EXPECT_TRUE(split.separated);
  EXPECT_EQ(split.separator, "---");
  auto plain = split_at_separator({"run", "-b", "MAIN", "--", "./app"});
  EXPECT_EQ(plain.own, (std::vector<std::string>{"run", "-b", "MAIN"}));
  EXPECT_EQ(plain.program, (std::vector<std::string>{"./app"}));
  EXPECT_EQ(plain.separator, "--");
  auto none = split_at_separator({"run", "./app", "x"});
  EXPECT_FALSE(none.separated);
  EXPECT_EQ(none.own, (std::vector<std::string>{"run", "./app", "x"}));
  EXPECT_TRUE(none.program.empty());
}

TEST_F(ConfigTest, CounterFunctionsAndEventsReachTheRuntime) {
  cli::RunOptions options;
  options.command = {"./app"};
  options.counter_functions = {"compute", "ns::f(int, char)"};
  cli::CounterEventOption faults{"page-faults", {}, false};
  faults.encoding.type = 1;
  faults.encoding.config = 2;
  faults.encoding.exclude_kernel = false;
  cli::CounterEventOption cpu{"INST_RETIRED:ANY_P:u=1,x", {}, true};  // commas stay in the name
  cpu.encoding.type = 4;
  cpu.encoding.config = 0x5300c0;
  cpu.encoding.config1 = 7;
  options.counter_events = {faults, cpu};
  Config config = through_the_environment(options);
  EXPECT_TRUE(config.errors.empty()) << config.errors.front();
  EXPECT_EQ(config.counter_functions, options.counter_functions);
  ASSERT_EQ(config.counter_events.size(), 2u);
  EXPECT_EQ(config.counter_events[0].name, "page-faults");
  EXPECT_EQ(config.counter_events[0].encoding.type, 1u);
  EXPECT_EQ(config.counter_events[0].encoding.config, 2u);
  EXPECT_FALSE(config.counter_events[0].encoding.exclude_kernel);
  EXPECT_FALSE(config.counter_events[0].forced_unavailable);
  EXPECT_EQ(config.counter_events[1].name, "INST_RETIRED:ANY_P:u=1,x");
  EXPECT_EQ(config.counter_events[1].encoding.config, 0x5300c0u);
  EXPECT_EQ(config.counter_events[1].encoding.config1, 7u);
  EXPECT_TRUE(config.counter_events[1].encoding.exclude_kernel);
  EXPECT_TRUE(config.counter_events[1].forced_unavailable);
  unsetenv("WHATIF_COUNTER_FUNCTIONS");
  unsetenv("WHATIF_COUNTER_EVENTS");
}

TEST_F(ConfigTest, MalformedCounterEventIsReported) {
  setenv("WHATIF_COUNTER_EVENTS", "1,2,x,0,1,0,page-faults", 1);
  Config config = Config::from_environment();
  EXPECT_TRUE(config.counter_events.empty());
  ASSERT_EQ(config.errors.size(), 1u);
  EXPECT_NE(config.errors[0].find("malformed event encoding"), std::string::npos) << config.errors[0];
  unsetenv("WHATIF_COUNTER_EVENTS");
}

}  // namespace
}  // namespace whatif::config

namespace whatif::config {
namespace {

TEST_F(ConfigTest, CounterSetsCycleAndIntervalEventsReachTheRuntime) {
  cli::RunOptions options;
  options.counter_functions = {"f"};
  os::EventEncoding software{1, 2, 0, 0, false, true};
  os::EventEncoding hardware{0, 1, 0, 0, true, true};
  options.counter_events = {{"page-faults", software, false, -1}, {"cycles", hardware, false, 0},
                            {"instructions", hardware, true, 1}};
  options.counter_cycle = 3;
  options.counter_interval_ms = 250;
  options.interval_events = {{"task-clock", software, false, -1}, {"cycles", hardware, true, -1}};
  Config config = through_the_environment(options);
  EXPECT_TRUE(config.errors.empty()) << config.errors.front();
  ASSERT_EQ(config.counter_events.size(), 3u);
  EXPECT_EQ(config.counter_events[0].set, -1) << "counted in every call";
  EXPECT_EQ(config.counter_events[1].set, 0);
  EXPECT_EQ(config.counter_events[2].set, 1);
  EXPECT_TRUE(config.counter_events[2].forced_unavailable);
  EXPECT_EQ(config.counter_cycle, 3u);
  EXPECT_EQ(config.counter_interval_ns, 250000000u);
  ASSERT_EQ(config.interval_events.size(), 2u);
  EXPECT_EQ(config.interval_events[0].name, "task-clock");
  EXPECT_TRUE(config.interval_events[1].forced_unavailable);
  EXPECT_TRUE(config.rdpmc);
}

TEST_F(ConfigTest, WithoutCycledSetsEveryEventCountsInEveryCall) {
  cli::RunOptions options;
  options.counter_functions = {"f"};
  options.counter_events = {{"page-faults", os::EventEncoding{1, 2, 0, 0, false, true}, false, -1}};
  Config config = through_the_environment(options);
  ASSERT_EQ(config.counter_events.size(), 1u);
  EXPECT_EQ(config.counter_events[0].set, -1);
  EXPECT_EQ(getenv("WHATIF_COUNTER_SETS"), nullptr) << "no sets to cycle: nothing to say";
}

TEST_F(ConfigTest, RdpmcOffIsTheUsersSwitch) {
  setenv("WHATIF_RDPMC", "off", 1);
  EXPECT_FALSE(Config::from_environment().rdpmc);
  unsetenv("WHATIF_RDPMC");
  EXPECT_TRUE(Config::from_environment().rdpmc);
}

}  // namespace
}  // namespace whatif::config
