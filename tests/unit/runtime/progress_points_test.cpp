// Unit tests of the Coz-ABI counter registry (runtime/progress): stable counters per (type, name),
// usable from many threads, and latency pairing by name.
#include "progress/progress_points.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace whatif::progress {
namespace {

TEST(ProgressPoints, SameTypeAndNameGiveTheSameCounter) {
  CounterRegistry& registry = counters();
  CozCounter* first = registry.get(1, "unit-test-point");
  CozCounter* again = registry.get(1, "unit-test-point");
  CozCounter* begin = registry.get(2, "unit-test-point");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, again);
  EXPECT_NE(first, begin);
  EXPECT_EQ(registry.get(7, "bad type"), nullptr);
  EXPECT_EQ(registry.get(1, nullptr), nullptr);
}

TEST(ProgressPoints, ConcurrentRegistrationYieldsOneCounterPerName) {
  std::vector<std::thread> threads;
  std::vector<std::set<CozCounter*>> seen(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t, &seen] {
      for (int i = 0; i < 20; ++i) seen[t].insert(counters().get(1, ("concurrent-" + std::to_string(i)).c_str()));
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 1; t < 8; ++t) EXPECT_EQ(seen[t], seen[0]);
  EXPECT_EQ(seen[0].size(), 20u);
}

TEST(ProgressPoints, InsertedDelayIsWeightedByTheRequestsInFlightThen) {
  CozCounter* begin = counters().get(2, "unit-delayed");
  CozCounter* end = counters().get(3, "unit-delayed");
  ASSERT_NE(begin, nullptr);
  ASSERT_NE(end, nullptr);
  auto delayed = [] {
    for (const PointReading& reading : read_source_points()) {
      if (reading.name == "unit-delayed" && reading.latency) return reading.delayed_in_flight_ns;
    }
    return int64_t{-1};
  };
  begin->count = 5;
  end->count = 2;
  counters().on_delay_inserted(1000);  // three in flight
  EXPECT_EQ(delayed(), 3000);
  end->count = 5;
  counters().on_delay_inserted(1000);  // none in flight: no virtual time to take off
  EXPECT_EQ(delayed(), 3000);
  begin->count = 6;
  counters().on_delay_inserted(500);
  EXPECT_EQ(delayed(), 3500);
}

TEST(ProgressPoints, DelayWeightingVisitsOnlyTheLatencyBeginSlots) {
  // on_delay_inserted runs at every credit, in signal handlers too: it must not walk the whole
  // table of (mostly throughput) counters.
  auto registry = std::make_unique<CounterRegistry>();
  for (int i = 0; i < 300; ++i) registry->get(1, ("throughput-" + std::to_string(i)).c_str());
  CozCounter* begin = registry->get(2, "request");
  CozCounter* end = registry->get(3, "request");
  registry->get(3, "end-only");
  CozCounter* lone_begin = registry->get(2, "begin-only");
  EXPECT_EQ(registry->size(), 304u);
  EXPECT_EQ(registry->latency_size(), 2u);
  begin->count = 4;
  end->count = 1;
  lone_begin->count = 2;
  registry->on_delay_inserted(10);
  EXPECT_EQ(registry->slot(300).delayed_in_flight_ns.load(std::memory_order_relaxed), 30);
  EXPECT_EQ(registry->slot(303).delayed_in_flight_ns.load(std::memory_order_relaxed), 20);
  EXPECT_EQ(registry->slot(302).delayed_in_flight_ns.load(std::memory_order_relaxed), 0);  // END only
}

TEST(ProgressPoints, ReadingPairsBeginAndEndIntoLatencyPoints) {
  CozCounter* begin = counters().get(2, "unit-latency");
  CozCounter* end = counters().get(3, "unit-latency");
  CozCounter* throughput = counters().get(1, "unit-throughput");
  begin->count = 10;
  end->count = 7;
  throughput->count = 42;
  bool saw_latency = false, saw_throughput = false;
  for (const PointReading& reading : read_source_points()) {
    if (reading.name == "unit-latency") {
      saw_latency = true;
      EXPECT_TRUE(reading.latency);
      EXPECT_EQ(reading.visits, 10u);
      EXPECT_EQ(reading.departures, 7u);
    }
    if (reading.name == "unit-throughput") {
      saw_throughput = true;
      EXPECT_FALSE(reading.latency);
      EXPECT_EQ(reading.visits, 42u);
    }
  }
  EXPECT_TRUE(saw_latency);
  EXPECT_TRUE(saw_throughput);
}

}  // namespace
}  // namespace whatif::progress
