// Unit tests of runtime/experiment/latency: the requests-in-flight integral of latency points
// (trapezoids between readings) and the random gaps between its readings. Pure; no threads.
#include "experiment/latency.h"

#include <gtest/gtest.h>

namespace whatif::experiment {
namespace {

progress::PointReading latency(const std::string& name, uint64_t arrivals, uint64_t departures) {
  progress::PointReading reading;
  reading.name = name;
  reading.latency = true;
  reading.visits = arrivals;
  reading.departures = departures;
  return reading;
}

TEST(InFlightIntegral, AddsTrapezoidsFromTheResetsReading) {
  InFlightIntegral integral;
  integral.reset(1000, {latency("request", 2, 0)});  // 2 in flight
  integral.integrate(1010, {latency("request", 6, 2)});  // 4 in flight: (2 + 4) / 2 x 10
  integral.integrate(1030, {latency("request", 6, 6)});  // 0 in flight: (4 + 0) / 2 x 20
  ASSERT_NE(integral.find("request"), nullptr);
  EXPECT_DOUBLE_EQ(*integral.find("request"), 30 + 40);
  EXPECT_TRUE(integral.tracking());
}

TEST(InFlightIntegral, AReadingInStepWithTheProgramNoLongerStandsForItsWholeInterval) {
  // A burst of 4 arrives just before each reading and is served by the next: read only then, a
  // right-hand sum saw 4 in flight all the time where the time average is about 2.
  InFlightIntegral integral;
  integral.reset(0, {latency("request", 0, 0)});
  integral.integrate(6000, {latency("request", 4, 0)});
  integral.integrate(12000, {latency("request", 8, 4)});
  EXPECT_DOUBLE_EQ(*integral.find("request") / 12000, 3.0);  // (0 + 4) / 2 and (4 + 4) / 2, against 4
}

TEST(InFlightIntegral, APointFirstSeenMidwayStartsFromItsFirstReading) {
  InFlightIntegral integral;
  integral.reset(0, {});
  EXPECT_FALSE(integral.tracking());
  integral.integrate(10, {latency("late", 3, 0)});  // no earlier reading: 3 x 10
  EXPECT_DOUBLE_EQ(*integral.find("late"), 30);
  integral.integrate(10, {latency("late", 9, 0)});  // no time passed: nothing added
  EXPECT_DOUBLE_EQ(*integral.find("late"), 30);
  EXPECT_EQ(integral.find("other"), nullptr);
}

TEST(InFlightIntegral, ThroughputPointsAreNotIntegrated) {
  InFlightIntegral integral;
  progress::PointReading item;
  item.name = "item";
  item.visits = 7;
  integral.reset(0, {item});
  integral.integrate(5, {item});
  EXPECT_EQ(integral.find("item"), nullptr);
  EXPECT_FALSE(integral.tracking());
}

TEST(InFlightIntegral, GapsAreSpreadOverTheirRangeAndRepeatForASeed) {
  InFlightIntegral a(7), b(7);
  uint64_t low = UINT64_MAX, high = 0;
  for (int i = 0; i < 2000; ++i) {
    uint64_t gap = a.next_gap_ns();
    EXPECT_EQ(gap, b.next_gap_ns());
    low = std::min(low, gap);
    high = std::max(high, gap);
  }
  EXPECT_GE(low, InFlightIntegral::kMinGapNs);
  EXPECT_LE(high, InFlightIntegral::kMaxGapNs);
  const uint64_t range = InFlightIntegral::kMaxGapNs - InFlightIntegral::kMinGapNs;
  EXPECT_LT(low, InFlightIntegral::kMinGapNs + range / 20);
  EXPECT_GT(high, InFlightIntegral::kMaxGapNs - range / 20);
}

}  // namespace
}  // namespace whatif::experiment
