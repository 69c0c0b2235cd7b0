// Unit tests of `--counters CONFIG`'s parser: what a user writes (functions, events, comments) and
// the errors a typo gets, with the line named.
#include <gtest/gtest.h>

#include "analysis/counters/function_config.h"

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

}  // namespace
}  // namespace whatif::counters
