// The tracer's code map (lookups, rseq sections) and the profiler's aggregation of bursts into
// taken-edge and fall-through-range counts (runtime/lbr).
#include <gtest/gtest.h>

#include "lbr/aggregator.h"
#include "lbr/code_map.h"

namespace whatif::lbr {
namespace {

TEST(LbrCodeMap, FindsRangesAndMergesOverlaps) {
  CodeMap map = build_code_map({{0x3000, 0x4000}, {0x1000, 0x2000}, {0x1800, 0x2800}}, {{0x1100, 0x1120}});
  ASSERT_EQ(map.code_count, 2u);
  EXPECT_EQ(map.code[0].begin, 0x1000u);
  EXPECT_EQ(map.code[0].end, 0x2800u);
  EXPECT_NE(map.code_at(0x1000), nullptr);
  EXPECT_NE(map.code_at(0x27ff), nullptr);
  EXPECT_EQ(map.code_at(0x2800), nullptr);
  EXPECT_EQ(map.code_at(0x500), nullptr);
  EXPECT_EQ(map.code_at(0x3fff)->begin, 0x3000u);
  EXPECT_TRUE(map.in_rseq(0x1100));
  EXPECT_TRUE(map.in_rseq(0x111f));
  EXPECT_FALSE(map.in_rseq(0x1120));
}

TEST(LbrCodeMap, PublishedMapIsCurrent) {
  publish_code_map(build_code_map({{0x10, 0x20}}, {}));
  ASSERT_NE(current_code_map(), nullptr);
  EXPECT_NE(current_code_map()->code_at(0x15), nullptr);
}

TEST(LbrAggregation, EdgesCountEachTakenBranchAndRangesTheRunsBetween) {
  Aggregator aggregator;
  // A loop: 0x100 -> 0x80 (back edge), then the body runs 0x80..0x100 again.
  Edge burst[] = {{0x100, 0x80}, {0x100, 0x80}, {0x100, 0x80}, {0x90, 0x200}};
  aggregator.add_burst(burst, 4);
  Edge other[] = {{0x100, 0x80}};
  aggregator.add_burst(other, 1);
  EXPECT_EQ(aggregator.edge_count(0x100, 0x80), 4u);
  EXPECT_EQ(aggregator.edge_count(0x90, 0x200), 1u);
  EXPECT_EQ(aggregator.edge_count(0x80, 0x100), 0u);
  EXPECT_EQ(aggregator.range_count(0x80, 0x100), 2u);  // between the back edges
  EXPECT_EQ(aggregator.range_count(0x80, 0x90), 1u);   // the last iteration leaves at 0x90
  EXPECT_EQ(aggregator.range_count(0x200, 0x200), 0u);  // nothing after a burst's last branch
}

TEST(LbrAggregation, PathsRunFromOneBackwardBranchToTheNext) {
  Aggregator aggregator;
  // A loop headed at 0x80 whose body branches at 0x88 (to 0x98: the odd arm) or jumps at 0x90 over
  // it; the back edge is at 0xa0. The burst starts mid-iteration: that partial path is not counted.
  Edge burst[] = {{0x90, 0x9c}, {0xa0, 0x80},                  // (partial) ... back
                  {0x88, 0x98}, {0xa0, 0x80},                  // odd
                  {0x88, 0x98}, {0xa0, 0x80},                  // odd
                  {0x90, 0x9c}, {0xa0, 0x80},                  // even
                  {0x88, 0x98}};                               // (partial) no back edge yet
  aggregator.add_burst(burst, 9);
  EXPECT_EQ(aggregator.path_count({0x80, 0x88, 0x98, 0xa0, 0x80}), 2u);
  EXPECT_EQ(aggregator.path_count({0x80, 0x90, 0x9c, 0xa0, 0x80}), 1u);
  EXPECT_EQ(aggregator.path_count({0x9c, 0xa0, 0x80}), 0u);
  // Two back edges in a row: a path of one branch (the body took no forward branch).
  Edge tight[] = {{0xa0, 0x80}, {0xa0, 0x80}};
  aggregator.add_burst(tight, 2);
  EXPECT_EQ(aggregator.path_count({0x80, 0xa0, 0x80}), 1u);
}

}  // namespace
}  // namespace whatif::lbr
