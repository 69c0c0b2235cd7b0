// Round trip of the profile writer (runtime/profile) through the launcher's reader
// (analysis/): the writer, the readers and the format definition agree.
#include "profile/profile_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analysis/profile/profile.h"
#include "whatif/profile_format.h"

namespace whatif::profile {
namespace {

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(getpid()))).string();
}

ExperimentRecord sample_experiment() {
  ExperimentRecord e;
  e.id = 3;
  e.selected = "/src/app.c:42";
  e.speedup = 0.25;
  e.duration_ns = 100000000;
  e.delay_ns = 5000000;
  e.selected_samples = 40;
  e.total_samples = 180;
  e.line_samples_total = 400;
  e.elapsed_ns = 2000000000;
  e.points = {{"jobs", false, 120, 0, 0, 0}, {"request", true, 50, 48, 3.5, 2, 2.75}};
  return e;
}

TEST(ProfileWriter, CountersRecordsRoundTripAndTheLastOneWins) {
  std::string path = temp_path("whatif-writer-counters");
  {
    ProfileWriter writer;
    ASSERT_TRUE(writer.open(path, Format::kWhatif).ok());
    Header header;
    header.command = {"./app"};
    header.pid = 77;
    header.options_json = "{}";
    writer.header(header);
    CountersRecord record;
    record.tid = 78;
    record.function = "ns::step(int)";
    record.calls = 2;
    record.inclusive_ns = 500;
    record.exclusive_ns = 300;
    record.events = {{"page-faults", 4, 1}};
    writer.counters(record, 1000);
    record.calls = 5;  // cumulative: a later record of the same thread and function replaces it
    record.inclusive_ns = 1500;
    writer.counters(record, 2000);
    record.tid = 79;
    record.calls = 1;
    writer.counters(record, 2000);
  }
  auto profile = analysis::read_profile(path);
  ASSERT_TRUE(profile) << profile.error();
  ASSERT_EQ(profile->function_counters.size(), 2u);
  const auto& first = profile->function_counters[0];
  EXPECT_EQ(first.tid, 78);
  EXPECT_EQ(first.function, "ns::step(int)");
  EXPECT_EQ(first.calls, 5u);
  EXPECT_DOUBLE_EQ(first.inclusive_ns, 1500);
  EXPECT_DOUBLE_EQ(first.exclusive_ns, 300);
  ASSERT_EQ(first.events.size(), 1u);
  EXPECT_EQ(first.events[0].name, "page-faults");
  EXPECT_DOUBLE_EQ(first.events[0].inclusive, 4);
  EXPECT_DOUBLE_EQ(first.events[0].exclusive, 1);
  EXPECT_EQ(profile->function_counters[1].tid, 79);
  std::filesystem::remove(path);
}

TEST(ProfileWriter, CycledEventsCarryTheCallsTheyCountedInAndIntervalsTheirScaling) {
  std::string path = temp_path("whatif-writer-cycled");
  {
    ProfileWriter writer;
    ASSERT_TRUE(writer.open(path, Format::kWhatif).ok());
    Header header;
    header.command = {"./app"};
    header.options_json = "{}";
    writer.header(header);
    CountersRecord record;
    record.tid = 5;
    record.function = "f";
    record.calls = 10;
    record.events = {{"cycles", 400, 300, 4}, {"page-faults", 2, 1, -1}};
    writer.counters(record, 1000);
    CounterIntervalRecord interval;
    interval.interval_ns = 100000000;
    interval.values = {{"task-clock", 150000000, 1}, {"cycles", 2e8, 0.5}};
    interval.unavailable = {{"instructions", "this machine has no hardware PMU for it"}};
    writer.counter_interval(interval, 300000000);
  }
  auto profile = analysis::read_profile(path);
  ASSERT_TRUE(profile) << profile.error();
  ASSERT_EQ(profile->function_counters.size(), 1u);
  const auto& events = profile->function_counters[0].events;
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].name, "cycles");
  EXPECT_DOUBLE_EQ(events[0].measured, 4) << "a cycled event: counted in 4 of the 10 calls";
  EXPECT_DOUBLE_EQ(events[1].measured, -1) << "counted in every call: the pair format older readers know";
  // The interval record, by the format's field names.
  std::ifstream in(path);
  std::string line, found;
  while (std::getline(in, line)) {
    if (line.find(format::record::counter_interval::kName) != std::string::npos) found = line;
  }
  auto record = nlohmann::json::parse(found);
  namespace f = format::record::counter_interval;
  EXPECT_EQ(record[f::elapsed_ns], 300000000u);
  EXPECT_EQ(record[f::interval_ns], 100000000u);
  EXPECT_DOUBLE_EQ(record[f::values]["cycles"][1].get<double>(), 0.5);
  EXPECT_EQ(record[f::unavailable]["instructions"], "this machine has no hardware PMU for it");
  std::filesystem::remove(path);
}

TEST(ProfileWriter, WhatifFormatRoundTripsThroughTheReader) {
  std::string path = temp_path("whatif-writer");
  {
    ProfileWriter writer;
    ASSERT_TRUE(writer.open(path, Format::kWhatif).ok());
    Header header;
    header.command = {"./app", "--fast"};
    header.sampling_period_ns = 1000000;
    header.sampler = "perf_event";
    header.options_json = "{}";
    writer.header(header);
    writer.experiment(sample_experiment());
    writer.samples({{"/src/app.c:42", 400}}, 2000000000);
    writer.warning("something to know");
    writer.runtime(2100000000, 1, 0);
  }
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  auto header = nlohmann::json::parse(first);
  EXPECT_EQ(header["format"], format::kProfileFormat);
  EXPECT_EQ(header["version"], format::kProfileVersion);

  auto profile = analysis::read_profile(path);
  ASSERT_TRUE(profile.ok()) << profile.error();
  ASSERT_EQ(profile->experiments.size(), 1u);
  const analysis::Experiment& e = profile->experiments[0];
  EXPECT_EQ(e.selected, "/src/app.c:42");
  EXPECT_DOUBLE_EQ(e.speedup, 0.25);
  EXPECT_DOUBLE_EQ(e.effective_duration_ns, 95000000);
  EXPECT_DOUBLE_EQ(e.selected_samples, 40);
  ASSERT_EQ(e.points.size(), 2u);
  EXPECT_EQ(e.points[1].kind, analysis::PointKind::latency);
  EXPECT_DOUBLE_EQ(e.points[1].in_flight_avg, 2.75) << "the reader takes the in-flight count over effective time";
  EXPECT_EQ(profile->sample_counts.at("/src/app.c:42"), 400);
  EXPECT_EQ(profile->warnings, std::vector<std::string>{"something to know"});
  std::filesystem::remove(path);
}

TEST(ProfileWriter, CozFormatRoundTripsThroughTheCozReader) {
  std::string path = temp_path("whatif-writer-coz");
  {
    ProfileWriter writer;
    ASSERT_TRUE(writer.open(path, Format::kCoz).ok());
    Header header;
    header.start_realtime_ns = 123;
    writer.header(header);
    writer.experiment(sample_experiment());
    // Coz's format has no field to say an experiment was set aside, and its readers would average
    // it in: it is not written at all.
    ExperimentRecord aside = sample_experiment();
    aside.set_aside = true;
    aside.speedup = 0.5;
    writer.experiment(aside);
    writer.samples({{"/src/app.c:42", 400}}, 0);
    writer.runtime(2100000000, 1, 0);
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "startup\ttime=123");
  std::getline(in, line);
  EXPECT_EQ(line, "experiment\tselected=/src/app.c:42\tspeedup=0.250000\tduration=95000000\tselected-samples=40");
  std::getline(in, line);
  EXPECT_EQ(line, "throughput-point\tname=jobs\tdelta=120");
  std::getline(in, line);
  EXPECT_EQ(line, "latency-point\tname=request\tarrivals=50\tdepartures=48\tdifference=2");

  auto profile = analysis::read_profile(path);
  ASSERT_TRUE(profile.ok()) << profile.error();
  EXPECT_EQ(profile->format, analysis::ProfileFormat::coz_text);
  ASSERT_EQ(profile->experiments.size(), 1u);
  EXPECT_DOUBLE_EQ(profile->experiments[0].effective_duration_ns, 95000000);
  std::filesystem::remove(path);
}

TEST(ProfileWriter, UnwritablePathIsAClearError) {
  ProfileWriter writer;
  auto result = writer.open("/nonexistent-dir/profile.jsonl", Format::kWhatif);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.error().find("/nonexistent-dir/profile.jsonl"), std::string::npos);
}

}  // namespace
}  // namespace whatif::profile
