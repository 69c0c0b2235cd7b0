// Unit tests of experiment allocation: which line and speedup the next experiment gets, from
// made-up samples and experiment rates. Test thread only.
#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <set>

#include "experiment/allocation.h"

namespace whatif::experiment {
namespace {

constexpr double kNs = 1e8;  // a 100 ms experiment

/// Baselines at 1000 visits per experiment with ±1% noise, then `experiments` at speedups
/// 0.25/0.5/0.75 on each line, where line i's effect is slopes[i] × speedup.
void teach(Allocator& allocator, const std::vector<double>& slopes, int experiments) {
  for (int i = 0; i < 10; ++i) allocator.on_result(0, 0, 1000 + (i % 2 == 0 ? 10 : -10), kNs);
  for (int k = 0; k < experiments; ++k) {
    double speedup = 0.25 * (1 + k % 3);
    for (std::size_t line = 0; line < slopes.size(); ++line) {
      allocator.on_result(static_cast<int32_t>(line), speedup, static_cast<uint64_t>(1000 * (1 + slopes[line] * speedup)), kNs);
    }
  }
}

void sample_all(Allocator& allocator, int lines, int rounds) {
  for (int r = 0; r < rounds; ++r) {
    for (int line = 0; line < lines; ++line) allocator.on_sample(line, 1);
  }
}

TEST(Allocator, InProportionToSamplesKeepsTheSampledLine) {
  Allocator allocator(false);
  sample_all(allocator, 3, 50);
  teach(allocator, {0.5, 0.0, 0.0}, 6);
  std::mt19937_64 random(1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(allocator.choose_line(2, random), 2);
}

TEST(Allocator, EstimatesEachLinesSlopeAgainstTheBaselines) {
  Allocator allocator(true);
  teach(allocator, {0.6, 0.0, -0.2}, 6);
  EXPECT_NEAR(allocator.slope(0), 0.6, 0.01);
  EXPECT_NEAR(allocator.slope(1), 0.0, 0.01);
  EXPECT_NEAR(allocator.slope(2), -0.2, 0.01);
  EXPECT_LT(allocator.slope_error(0), 0.05) << "six experiments with 1% noise";
  EXPECT_DOUBLE_EQ(allocator.slope_error(7), kPriorSlopeSd) << "a line never measured";
}

TEST(Allocator, SpendsExperimentsWhereTheTopOfTheRankingIsUnsettled) {
  // Line 5 is sampled most (and would get most experiments in proportion to samples), but it is
  // known to do nothing. Lines 0-2 are clearly the top three; lines 3 and 4 compete for third
  // place with line 2 once their estimates are close: they get the experiments.
  Allocator allocator(true);
  for (int r = 0; r < 200; ++r) {
    for (int line = 0; line < 5; ++line) allocator.on_sample(line, 1);
    for (int k = 0; k < 8; ++k) allocator.on_sample(5, 1);
  }
  teach(allocator, {0.9, 0.7, 0.30, 0.29, 0.05, 0.0}, 3);
  std::mt19937_64 random(7);
  std::map<int32_t, int> chosen;
  for (int i = 0; i < 2000; ++i) ++chosen[allocator.choose_line(5, random)];
  EXPECT_LT(chosen[5], 2000 * (kExploreProbability + 0.05)) << "the known-flat line only when explored";
  EXPECT_GT(chosen[2] + chosen[3], 2000 * 0.6) << "the two lines whose order is in doubt";
  EXPECT_EQ(chosen[0] + chosen[1], 0) << "settled at the top";
}

TEST(Allocator, OrdersTheTopLinesAmongThemselvesToo) {
  // Three lines only: all are "the top three", but lines 1 and 2 overlap (0.31 vs 0.30 from few
  // experiments) while line 0 is far ahead: the order of 1 and 2 gets the experiments.
  Allocator allocator(true);
  for (int r = 0; r < 100; ++r) {
    sample_all(allocator, 3, 1);
    for (int k = 0; k < 8; ++k) allocator.on_sample(0, 1);  // line 0 is sampled the most
  }
  teach(allocator, {0.9, 0.31, 0.30}, 3);
  std::mt19937_64 random(9);
  std::map<int32_t, int> chosen;
  for (int i = 0; i < 1000; ++i) ++chosen[allocator.choose_line(0, random)];
  EXPECT_GT(chosen[1] + chosen[2], 1000 * (1 - kExploreProbability - 0.05));
}

TEST(Allocator, ATopLineShortOfSpeedupsComesFirst) {
  Allocator allocator(true);
  sample_all(allocator, 5, 100);
  teach(allocator, {0.5, 0.4, 0.3, 0.0}, 3);
  allocator.on_result(4, 0.9, 2000, kNs);  // line 4 looks like the best, from one speedup
  std::mt19937_64 random(5);
  int to_line_4 = 0;
  for (int i = 0; i < 1000; ++i) to_line_4 += allocator.choose_line(0, random) == 4 ? 1 : 0;
  EXPECT_GT(to_line_4, 1000 * (1 - kExploreProbability - 0.05));
}

TEST(Allocator, OnlyLinesRunningNowAreChosen) {
  // Line 0 had a large effect but has not been sampled for a while (another phase): an experiment on
  // it now would insert no delay and measure nothing.
  Allocator allocator(true);
  sample_all(allocator, 1, 100);
  teach(allocator, {0.8}, 6);
  for (uint64_t i = 0; i < 2 * kRecentSamples; ++i) allocator.on_sample(1, 1);
  std::mt19937_64 random(3);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(allocator.choose_line(1, random), 1);
}

TEST(Allocator, ALineGetsDistinctSpeedupsFirst) {
  Allocator allocator(true);
  sample_all(allocator, 1, 10);
  for (int i = 0; i < 10; ++i) allocator.on_result(0, 0, 1000, kNs);
  std::mt19937_64 random(11);
  std::set<double> seen;
  for (int k = 0; k < kWantedSpeedups; ++k) {
    double speedup = allocator.choose_nonzero_speedup(0, random);
    EXPECT_GT(speedup, 0);
    EXPECT_LE(speedup, 1);
    EXPECT_TRUE(seen.insert(speedup).second) << "speedup " << speedup << " repeated before " << kWantedSpeedups << " distinct";
    allocator.on_result(0, speedup, 1000, kNs);
  }
}

TEST(Allocator, AnExperimentWithoutVisitsTeachesNothing) {
  Allocator allocator(true);
  allocator.on_result(0, 0, 1000, kNs);
  allocator.on_result(0, 0.5, 0, kNs);
  EXPECT_DOUBLE_EQ(allocator.slope_error(0), kPriorSlopeSd);
}

}  // namespace
}  // namespace whatif::experiment
