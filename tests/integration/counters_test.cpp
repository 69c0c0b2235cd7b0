// Integration tests of counters: `whatif stat` on a program with known per-thread work, with the
// software events this machine has, with events forced unavailable, and with interval rows.
#include <regex>
#include <set>

#include "harness.h"

namespace itest {
namespace {

/// The number before " ms  task-clock" in the process block, or -1.
double process_task_clock_ms(const std::string& text) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(R"(([0-9.]+) ms  task-clock)"))) return -1;
  return std::stod(match[1]);
}

/// A thread row's task-clock in ms, found by thread name, or -1.
double thread_task_clock_ms(const std::string& text, const std::string& name) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(name + R"( +([0-9.]+) ms)"))) return -1;
  return std::stod(match[1]);
}

TEST_F(Integration, StatCountsSoftwareEventsPerProcessAndThread) {
  std::string out = path("stat.txt");
  // Three workers spin 60 ms of CPU each, the main thread 60 ms more (recursion and work_b).
  Child child({kLauncher, "stat", "-e", "page-faults,context-switches", "-o", out, "---",
               program("counters_work"), "3", "60", "4"},
              {}, dir_);
  Exit e = child.wait();
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("done"), std::string::npos) << e;
  std::string text = read_file(out);
  EXPECT_GE(process_task_clock_ms(text), 0.95 * 240) << text;
  for (const char* worker : {"worker-1", "worker-2", "worker-3"}) {
    EXPECT_GT(thread_task_clock_ms(text, worker), 0) << worker << "\n" << text;
  }
  EXPECT_NE(text.find("page-faults"), std::string::npos) << text;
  EXPECT_NE(text.find("CPUs utilised"), std::string::npos) << text;
  // Instructions and cycles: counted where the machine has a PMU, named as absent where not.
  bool has_cpi = text.find("cycles per instruction") != std::string::npos;
  bool says_absent = text.find("instructions           not available on this machine") != std::string::npos;
  EXPECT_TRUE(has_cpi != says_absent) << text;
}

TEST_F(Integration, StatNamesEventsThatAreNotAvailable) {
  std::string out = path("stat.txt");
  Child child({kLauncher, "stat", "-e", "page-faults", "-o", out, "---", program("counters_work"), "1", "20", "2"},
              {{"WHATIF_UNAVAILABLE_EVENTS", "task-clock,page-faults"}}, dir_);
  Exit e = child.wait();
  ASSERT_EQ(e.status, 0) << e;
  std::string text = read_file(out);
  EXPECT_NE(text.find("task-clock             not available on this machine"), std::string::npos) << text;
  EXPECT_NE(text.find("page-faults            not available on this machine"), std::string::npos) << text;
  EXPECT_NE(text.find("forced by WHATIF_UNAVAILABLE_EVENTS"), std::string::npos) << text;
  EXPECT_NE(text.find("utilisation            not available"), std::string::npos) << text;
  EXPECT_EQ(process_task_clock_ms(text), -1) << text;
}

TEST_F(Integration, StatPrintsOneRowPerInterval) {
  std::string out = path("stat.txt");
  Child child({kLauncher, "stat", "-I", "20", "-o", out, "---", program("counters_work"), "2", "100", "2"}, {}, dir_);
  Exit e = child.wait();
  ASSERT_EQ(e.status, 0) << e;
  std::string text = read_file(out);
  const std::regex row(R"(\n +[0-9]+\.[0-9]{3} +[0-9.]+ +[0-9.]+ ms)");
  auto rows = std::distance(std::sregex_iterator(text.begin(), text.end(), row), std::sregex_iterator());
  EXPECT_GE(rows, 3) << text;
  EXPECT_NE(text.find("#    time(s)"), std::string::npos) << text;
  // Per-thread rows under each process row: the program's threads, each named by tid.
  const std::regex thread_row(R"(\n   +[0-9]+\.[0-9]{3} +[0-9.]+ +[0-9.]+ ms.*  tid ([0-9]+) )");
  std::set<std::string> tids;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), thread_row); it != std::sregex_iterator(); ++it) {
    tids.insert((*it)[1].str());
  }
  EXPECT_GE(tids.size(), 2u) << "the main thread and a worker, at least\n" << text;
}

TEST_F(Integration, StatReturnsTheProgramsExitStatusAndRejectsUnknownEvents) {
  Child bad({kLauncher, "stat", "-e", "no-such-event-xyz", "---", program("counters_work"), "0", "1", "1"}, {}, dir_);
  Exit e = bad.wait();
  EXPECT_EQ(e.status, 2) << e;
  EXPECT_NE(e.err.find("-e no-such-event-xyz: unknown event"), std::string::npos) << e;
}

TEST_F(Integration, StatSaysWhenTheProgramCannotRunAndCountsNothing) {
  Child missing({kLauncher, "stat", "---", path("no-such-program")}, {}, dir_);
  Exit e = missing.wait();
  EXPECT_EQ(e.status, 127) << e;
  EXPECT_NE(e.err.find("cannot run " + path("no-such-program") + ": No such file or directory"), std::string::npos) << e;
  EXPECT_EQ(e.err.find("Counter stats"), std::string::npos) << e;  // no table of the launcher's own fork
}

}  // namespace
}  // namespace itest
