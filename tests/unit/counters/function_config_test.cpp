// Unit tests of `--counters CONFIG`'s parser: what a user writes (functions, events, comments) and
// the errors a typo gets, with the line named.
#include <gtest/gtest.h>

#include "analysis/counters/function_config.h"
#include "analysis/profile/profile.h"

namespace whatif::counters {
namespace {

TEST(FunctionConfig, ReadsFunctionsAndEventsInOrderWithoutDuplicates) {
  auto config = parse_function_config(
      "# ScALPEL-style selection\n"
      "function compute\n"
      "  function   ns::Solver::step(int)   # C++ names keep their spaces and parameters\n"
      "\n"
      "events task-clock, page-faults\n"
      "events page-faults,INST_RETIRED:ANY_P\n"
      "function compute\n",
      "c.conf");
  ASSERT_TRUE(config) << config.error();
  EXPECT_EQ(config->functions, (std::vector<std::string>{"compute", "ns::Solver::step(int)"}));
  EXPECT_EQ(config->events, (std::vector<std::string>{"task-clock", "page-faults", "INST_RETIRED:ANY_P"}));
}

TEST(FunctionConfig, EventsAreOptional) {
  auto config = parse_function_config("function f\n", "c.conf");
  ASSERT_TRUE(config) << config.error();
  EXPECT_TRUE(config->events.empty());
}

TEST(FunctionConfig, UnknownKeywordNamesTheLine) {
  auto config = parse_function_config("function f\nfunctoin g\n", "c.conf");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().find("--counters c.conf:2: unknown keyword 'functoin'"), std::string::npos) << config.error();
}

TEST(FunctionConfig, EmptyValuesAndNoFunctionAreErrors) {
  auto no_name = parse_function_config("function   # nothing\n", "c.conf");
  ASSERT_FALSE(no_name);
  EXPECT_NE(no_name.error().find("c.conf:1: `function` needs a name"), std::string::npos) << no_name.error();
  auto no_events = parse_function_config("function f\nevents ,\n", "c.conf");
  ASSERT_FALSE(no_events);
  EXPECT_NE(no_events.error().find("c.conf:2: `events` needs names"), std::string::npos) << no_events.error();
  auto nothing = parse_function_config("events page-faults\n", "c.conf");
  ASSERT_FALSE(nothing);
  EXPECT_NE(nothing.error().find("names no function"), std::string::npos) << nothing.error();
}

TEST(FunctionConfig, MissingFileSaysSo) {
  auto config = read_function_config("/nonexistent/whatif-counters.conf");
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().find("cannot read the file"), std::string::npos) << config.error();
}

TEST(FunctionConfig, EventSetsCycleAndIntervalAreRead) {
  auto config = parse_function_config(
      "function f\n"
      "eventset cycles,instructions\n"
      "eventset cache-misses, branch-misses  # a second set\n"
      "cycle 5\ncounters 2\ninterval 0\n",
      "c.conf");
  ASSERT_TRUE(config) << config.error();
  ASSERT_EQ(config->event_sets.size(), 2u);
  EXPECT_EQ(config->event_sets[1], (std::vector<std::string>{"cache-misses", "branch-misses"}));
  EXPECT_EQ(config->cycle, 5u);
  EXPECT_EQ(config->counters, 2u);
  EXPECT_EQ(config->interval_ms, 0u) << "interval 0 turns the interval records off";
}

TEST(FunctionConfig, BadNumbersNameTheKeywordAndTheRange) {
  auto zero = parse_function_config("function f\ncycle 0\n", "c.conf");
  ASSERT_FALSE(zero);
  EXPECT_NE(zero.error().find("c.conf:2: `cycle` needs a whole number from 1 to"), std::string::npos) << zero.error();
  auto text = parse_function_config("function f\ninterval soon\n", "c.conf");
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().find("`interval` needs a whole number from 0 to 60000"), std::string::npos) << text.error();
  auto empty = parse_function_config("function f\neventset\n", "c.conf");
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().find("`eventset` needs names"), std::string::npos) << empty.error();
}

bool is_hardware(const std::string& name) { return name != "page-faults" && name != "context-switches"; }

TEST(FunctionConfig, HardwareEventsBeyondTheCountersAreSplitIntoCycledSets) {
  FunctionConfig config;
  config.events = {"cycles", "page-faults", "instructions", "cache-misses", "branch-misses", "context-switches", "LLC-load-misses"};
  config.counters = 2;
  auto placed = place_events(config, is_hardware);
  std::vector<std::pair<std::string, int>> got;
  for (const auto& event : placed) got.emplace_back(event.name, event.set);
  EXPECT_EQ(got, (std::vector<std::pair<std::string, int>>{{"page-faults", -1}, {"context-switches", -1},
                                                           {"cycles", 0}, {"instructions", 0}, {"cache-misses", 1},
                                                           {"branch-misses", 1}, {"LLC-load-misses", 2}}))
      << "software events need no counter: every call counts them";
}

TEST(FunctionConfig, EventsThatFitTheCountersAreNotCycled) {
  FunctionConfig config;
  config.events = {"cycles", "instructions", "page-faults"};
  for (const auto& event : place_events(config, is_hardware)) EXPECT_EQ(event.set, -1) << event.name;
}

TEST(FunctionConfig, ExplicitSetsComeFirstThenTheSplitOnes) {
  FunctionConfig config;
  config.event_sets = {{"page-faults"}, {"context-switches"}};
  config.events = {"cycles"};
  auto placed = place_events(config, is_hardware);
  ASSERT_EQ(placed.size(), 3u);
  EXPECT_EQ(placed[0].name, "page-faults");
  EXPECT_EQ(placed[0].set, 0) << "an explicit set cycles even with software events";
  EXPECT_EQ(placed[1].set, 1);
  EXPECT_EQ(placed[2].name, "cycles");
  EXPECT_EQ(placed[2].set, 2);
}

TEST(FunctionConfig, TheReportScalesCycledEventsToEveryCallAndSaysSo) {
  auto profile = analysis::parse_profile(
      R"({"type":"header","format":"whatif-profile","version":1,"command":["./p"],"pid":9})" "\n"
      R"({"type":"counters","tid":9,"function":"f","calls":10,"inclusive_ns":1000,"exclusive_ns":1000,"events":{"page-faults":[40,20,4],"context-switches":[6,6]},"elapsed_ns":1})" "\n",
      "p.jsonl");
  ASSERT_TRUE(profile) << profile.error();
  std::string text = render_function_counters(*profile);
  EXPECT_NE(text.find("10.0*"), std::string::npos) << "40 in 4 of 10 calls: 10 per call\n" << text;
  EXPECT_NE(text.find("5.0*"), std::string::npos) << text;
  EXPECT_NE(text.find("0.6 "), std::string::npos) << "an event of every call is not scaled\n" << text;
  EXPECT_NE(text.find("* page-faults in f: counted in 4 of 10 calls"), std::string::npos) << text;
}

}  // namespace
}  // namespace whatif::counters
