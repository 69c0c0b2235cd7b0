// Unit tests of `whatif stat`'s offline side: what a user sees when an event resolves or not, when
// the kernel multiplexes, and how per-thread counts and CPI/utilisation come out.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <stdlib.h>

#include "analysis/counters/events.h"
#include "analysis/counters/stat.h"

namespace whatif::counters {
namespace {

TEST(EventNames, GenericAndSoftwareNamesResolveThroughLibpfm) {
  auto cycles = resolve_event("cycles");
  ASSERT_TRUE(cycles) << cycles.error();
  EXPECT_EQ(cycles->encoding.type, static_cast<uint32_t>(PERF_TYPE_HARDWARE));
  EXPECT_EQ(cycles->encoding.config, static_cast<uint64_t>(PERF_COUNT_HW_CPU_CYCLES));
  EXPECT_TRUE(cycles->encoding.exclude_kernel);  // user mode by default
  EXPECT_NE(cycles->canonical.find("CPU_CYCLES"), std::string::npos) << cycles->canonical;
  auto clock = resolve_event("task-clock");
  ASSERT_TRUE(clock) << clock.error();
  EXPECT_EQ(clock->encoding.type, static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(clock->encoding.config, static_cast<uint64_t>(PERF_COUNT_SW_TASK_CLOCK));
  auto with_kernel = resolve_event("instructions", true);
  ASSERT_TRUE(with_kernel);
  EXPECT_FALSE(with_kernel->encoding.exclude_kernel);
}

TEST(EventNames, PerfSoftwareNamesLibpfmLacksComeFromPerfsTable) {
  auto faults = resolve_event("alignment-faults");
  ASSERT_TRUE(faults) << faults.error();
  EXPECT_EQ(faults->encoding.type, static_cast<uint32_t>(PERF_TYPE_SOFTWARE));
  EXPECT_EQ(faults->encoding.config, static_cast<uint64_t>(PERF_COUNT_SW_ALIGNMENT_FAULTS));
  EXPECT_NE(faults->canonical.find("perf software event"), std::string::npos);
}

TEST(EventNames, AnUnknownNameIsAnErrorNamingTheFlagAndTheFix) {
  auto bogus = resolve_event("no-such-event-xyz");
  ASSERT_FALSE(bogus);
  EXPECT_NE(bogus.error().find("-e no-such-event-xyz"), std::string::npos) << bogus.error();
  EXPECT_NE(bogus.error().find("showevtinfo"), std::string::npos) << bogus.error();
}

TEST(EventNames, ListsSplitOnCommasAndRepeatedFlags) {
  auto names = split_event_list({"cycles,instructions", "page-faults", ",,"});
  ASSERT_EQ(names.size(), 3u);
  EXPECT_EQ(names[2], "page-faults");
}

TEST(EventNames, TheUnavailableSwitchNamesEventsOrAll) {
  setenv("WHATIF_UNAVAILABLE_EVENTS", "cycles,task-clock;page-faults", 1);
  auto forced = forced_unavailable_events();
  unsetenv("WHATIF_UNAVAILABLE_EVENTS");
  EXPECT_TRUE(is_forced_unavailable("task-clock", forced));
  EXPECT_TRUE(is_forced_unavailable("page-faults", forced));
  EXPECT_FALSE(is_forced_unavailable("instructions", forced));
  EXPECT_TRUE(is_forced_unavailable("anything", {"all"}));
}

TEST(EventNames, AbsentPmuReasonSaysWhatIsMissing) {
  std::string reason = open_failure_reason(-ENOENT);
  EXPECT_NE(reason.find("no hardware PMU"), std::string::npos) << reason;
  EXPECT_NE(open_failure_reason(-EACCES).find("perf_event_paranoid"), std::string::npos);
}

TEST(Scaling, MultiplexedCountsScaleByEnabledOverRunning) {
  Scaled half = scale({1000, 200, 100});
  EXPECT_DOUBLE_EQ(half.value, 2000);
  EXPECT_DOUBLE_EQ(half.fraction, 0.5);
  Scaled full = scale({1000, 200, 200});
  EXPECT_DOUBLE_EQ(full.value, 1000);
  EXPECT_DOUBLE_EQ(full.fraction, 1);
  EXPECT_DOUBLE_EQ(scale({5, 100, 0}).value, 0);  // never ran: no estimate
}

TEST(Scaling, AnIntervalScalesByItsOwnMultiplexing) {
  // Counted all the time in the first interval, a quarter of the second.
  Scaled delta = scale_delta({1000, 100, 100}, {1250, 200, 125});
  EXPECT_DOUBLE_EQ(delta.value, 1000);
  EXPECT_DOUBLE_EQ(delta.fraction, 0.25);
}

Counts thread_counts(uint32_t pid, uint32_t tid, std::vector<os::CounterReading> readings) {
  Counts counts;
  counts.pid = pid;
  counts.tid = tid;
  counts.readings = std::move(readings);
  return counts;
}

TEST(PerThread, WorkNoThreadRowHoldsIsShownAsUnattributed) {
  std::vector<os::CounterReading> totals = {{900, 3000, 3000}, {90, 3000, 3000}};
  auto rows = with_unattributed(10, totals, {thread_counts(10, 10, {{400, 1000, 1000}, {40, 1000, 1000}}),
                                             thread_counts(10, 11, {{300, 1000, 1000}, {30, 1000, 1000}})});
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[2].tid, 0u);
  EXPECT_EQ(rows[2].name, "(unattributed)");
  EXPECT_EQ(rows[2].readings[0].value, 200u);
  EXPECT_EQ(rows[2].readings[1].value, 20u);
  auto processes = per_process(rows);
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].readings[0].value, 900u);
}

TEST(PerThread, NoRemainderRowWhenTheThreadsHoldEverything) {
  std::vector<os::CounterReading> totals = {{700, 2000, 2000}};
  auto rows = with_unattributed(10, totals, {thread_counts(10, 10, {{400, 1000, 1000}}),
                                             thread_counts(10, 11, {{300, 1000, 1000}})});
  EXPECT_EQ(rows.size(), 2u);
}

TEST(PerThread, ThreadsOfAnotherProcessFormTheirOwnProcess) {
  auto processes = per_process({thread_counts(10, 10, {{40, 5, 5}}), thread_counts(20, 20, {{60, 5, 5}})});
  ASSERT_EQ(processes.size(), 2u);
  EXPECT_EQ(processes[0].readings[0].value, 40u);
  EXPECT_EQ(processes[1].pid, 20u);
  EXPECT_EQ(processes[1].readings[0].value, 60u);
}

TEST(Derived, CpiAndUtilisationNeedTheirEvents) {
  std::vector<EventColumn> columns = {{"task-clock", true, ""}, {"instructions", true, ""}, {"cycles", true, ""}};
  Derived all = derive(columns, {{500e6, 1}, {1000, 1}, {3400, 1}}, 1e9);
  ASSERT_TRUE(all.cpi);
  EXPECT_DOUBLE_EQ(*all.cpi, 3.4);
  ASSERT_TRUE(all.utilisation);
  EXPECT_DOUBLE_EQ(*all.utilisation, 0.5);
  columns[2].available = false;
  Derived no_cycles = derive(columns, {{500e6, 1}, {1000, 1}, {0, 1}}, 1e9);
  EXPECT_FALSE(no_cycles.cpi);
  EXPECT_TRUE(no_cycles.utilisation);
}

TEST(Render, AbsentEventsAndScalingAreShown) {
  StatTable table;
  table.command = {"./prog"};
  table.columns = {{"task-clock", true, ""}, {"instructions", false, "perf_event_open: ENOENT"},
                   {"page-faults", true, ""}};
  table.elapsed_ns = 1e9;
  Counts thread;
  thread.pid = thread.tid = 7;
  thread.readings = {{250000000, 1000000000, 1000000000}, {}, {40, 1000, 500}};
  table.threads = {thread};
  table.processes = per_process(table.threads);
  std::string text = render_stat(table);
  EXPECT_NE(text.find("not available on this machine (perf_event_open: ENOENT)"), std::string::npos) << text;
  EXPECT_NE(text.find("scaled: counted 50.0% of the time"), std::string::npos) << text;
  EXPECT_NE(text.find("250.000 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("0.250"), std::string::npos) << text;  // utilisation
  EXPECT_NE(text.find("80*"), std::string::npos) << text;     // scaled thread value marked
  std::string header = render_interval_header(table.columns);
  EXPECT_NE(header.find("# instructions: not available on this machine"), std::string::npos) << header;
  std::string row = render_interval_row(table.columns, 2e9, 1e9, {{5e8, 1}, {0, 1}, {10, 0.5}});
  EXPECT_NE(row.find("2.000"), std::string::npos) << row;
  EXPECT_NE(row.find("(50%)"), std::string::npos) << row;
  EXPECT_EQ(row.find("tid"), std::string::npos) << "the process row names no thread: " << row;
  // A thread's row: its own utilisation over the interval, named after the CPI column.
  std::string thread_row = render_interval_row(table.columns, 2e9, 1e9, {{2.5e8, 1}, {0, 1}, {4, 1}}, "tid 42 worker");
  EXPECT_NE(thread_row.find(" 0.250 "), std::string::npos) << thread_row;
  EXPECT_NE(thread_row.find("n/a  tid 42 worker\n"), std::string::npos) << thread_row;
}

TEST(Render, CountsHaveThousandsSeparators) {
  EXPECT_EQ(format_count(1234567), "1,234,567");
  EXPECT_EQ(format_count(12), "12");
}

}  // namespace
}  // namespace whatif::counters
