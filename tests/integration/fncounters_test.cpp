// Integration tests of `whatif run --counters` (ScALPEL's function-level counters) on a known-answer
// program built with -finstrument-functions: exact call counts per thread, recursion counted once per
// outermost call, exclusive time without the selected callee's, unselected functions absent, and
// events forced unavailable reported while time is still counted.
#include <fstream>
#include <map>
#include <thread>

#include "harness.h"

namespace itest {
namespace {

using Counters = whatif::analysis::FunctionCounters;

/// tid -> function -> record, and the main thread's tid (the process's pid).
std::map<long, std::map<std::string, Counters>> by_thread(const Profile& profile) {
  std::map<long, std::map<std::string, Counters>> out;
  for (const Counters& record : profile.function_counters) out[record.tid][record.function] = record;
  return out;
}

std::string write_config(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

TEST_F(Integration, CountersCountSelectedFunctionsPerThread) {
  std::string config = write_config(path("counters.conf"),
                                    "# known-answer functions\nfunction parent\nfunction leaf\nfunction recurse\n"
                                    "events page-faults,context-switches\n");
  std::string out = path("profile.jsonl");
  Child child({kLauncher, "run", "--counters", config, "-o", out, "---", program("fncounters")}, {}, dir_);
  Exit e = child.wait();
  ASSERT_EQ(e.status, 0) << e;
  Profile profile = load_profile(out);
  auto threads = by_thread(profile);
  ASSERT_EQ(threads.size(), 2u) << e;
  long main_tid = profile.headers.at(0).pid;
  ASSERT_TRUE(threads.count(main_tid)) << e;
  auto& main_thread = threads[main_tid];
  long worker_tid = threads.begin()->first == main_tid ? threads.rbegin()->first : threads.begin()->first;
  auto& worker = threads[worker_tid];

  // Calls, exactly; recursion (recurse(5), 6 activations) counted once per outermost call.
  EXPECT_EQ(main_thread["parent"].calls, 10u);
  EXPECT_EQ(main_thread["leaf"].calls, 10u);
  EXPECT_EQ(main_thread["recurse"].calls, 3u);
  EXPECT_EQ(worker["parent"].calls, 5u);
  EXPECT_EQ(worker["leaf"].calls, 12u);
  EXPECT_EQ(worker.count("recurse"), 0u);
  for (auto& [tid, functions] : threads) EXPECT_EQ(functions.count("unselected"), 0u) << tid;
  EXPECT_EQ(main_thread.size(), 3u);

  // Time is thread CPU time, which the program spins for: lower bounds are exact; the parent's
  // exclusive time leaves out its selected callee's (3 ms own, 2 ms in leaf).
  for (auto* functions : {&main_thread, &worker}) {
    const Counters& parent = (*functions)["parent"];
    const Counters& leaf = (*functions)["leaf"];
    double calls = static_cast<double>(parent.calls);
    EXPECT_GE(parent.inclusive_ns / calls, 4.9e6);
    EXPECT_GE(parent.exclusive_ns / calls, 2.9e6);
    EXPECT_GE(parent.inclusive_ns - parent.exclusive_ns, 1.9e6 * calls) << "the callee's time must be excluded";
    EXPECT_LT(parent.exclusive_ns / calls, parent.inclusive_ns / calls - 1.9e6);
    EXPECT_GE(leaf.inclusive_ns / static_cast<double>(leaf.calls), 1.9e6);
    EXPECT_DOUBLE_EQ(leaf.inclusive_ns, leaf.exclusive_ns) << "leaf calls no selected function";
    ASSERT_EQ(parent.events.size(), 2u);
    EXPECT_EQ(parent.events[0].name, "context-switches");
    EXPECT_EQ(parent.events[1].name, "page-faults");
  }
  EXPECT_GE(main_thread["recurse"].inclusive_ns / 3.0, 0.9e6);

  // The report's tables.
  Child report({kLauncher, "report", "--counters", out}, {}, dir_);
  Exit r = report.wait();
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("incl/call"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("page-faults excl/call"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(std::to_string(main_tid) + "/" + std::to_string(worker_tid)), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("unselected"), std::string::npos) << r.out;
}

TEST_F(Integration, CountersReportUnavailableEventsAndStillCountTime) {
  std::string config = write_config(path("counters.conf"), "function leaf\nevents page-faults\n");
  std::string out = path("profile.jsonl");
  Child child({kLauncher, "run", "--counters", config, "-o", out, "---", program("fncounters")},
              {{"WHATIF_UNAVAILABLE_EVENTS", "page-faults"}}, dir_);
  Exit e = child.wait();
  ASSERT_EQ(e.status, 0) << e;
  Profile profile = load_profile(out);
  std::size_t said = 0;
  for (const std::string& warning : profile.warnings) {
    if (warning.find("page-faults not available on this machine") != std::string::npos) ++said;
  }
  EXPECT_EQ(said, 1u) << "said once, not per thread";
  uint64_t calls = 0;
  for (const Counters& record : profile.function_counters) {
    calls += record.calls;
    EXPECT_GT(record.inclusive_ns, 0);
  }
  EXPECT_EQ(calls, 22u);
  Child report({kLauncher, "report", "--counters", out}, {}, dir_);
  Exit r = report.wait();
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("n/a"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("page-faults: not available on this machine"), std::string::npos) << r.out;
}

TEST_F(Integration, CountersRejectAMalformedConfiguration) {
  std::string config = write_config(path("counters.conf"), "function leaf\nfunctoin parent\n");
  Child child({kLauncher, "run", "--counters", config, "---", program("fncounters")}, {}, dir_);
  Exit e = child.wait();
  EXPECT_EQ(e.status, 2) << e;
  EXPECT_NE(e.err.find("counters.conf:2: unknown keyword 'functoin'"), std::string::npos) << e;
}

/// Waits until `predicate` holds, polling every 10 ms; false after `timeout`.
template <typename Predicate>
bool eventually(Predicate predicate, std::chrono::seconds timeout = std::chrono::seconds(30)) {
  auto end = std::chrono::steady_clock::now() + timeout;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

TEST_F(Integration, CountersReloadSwapsTheSelectedFunctionsWhileRunning) {
  std::string first = write_config(path("first.conf"), "function leaf\n");
  std::string second = write_config(path("second.conf"), "function parent\n");
  std::string out = path("profile.jsonl");
  Child child({kLauncher, "run", "--counters", first, "-o", out, "---", program("fncounters"), "reload", dir_}, {},
              dir_);
  ASSERT_TRUE(eventually([&] { return !read_file(path("pid")).empty(); })) << "the program never reached its pause";
  std::string pid = read_file(path("pid"));
  pid.erase(pid.find_last_not_of("\n") + 1);
  Child ctl({kLauncher, "ctl", pid, "reload", second}, {}, dir_);
  Exit c = ctl.wait();
  ASSERT_EQ(c.status, 0) << c;
  EXPECT_TRUE(eventually([&] { return read_file(out).find("--counters reload: now counting 1 of the 1") != std::string::npos; }))
      << read_file(out);
  std::ofstream(path("go")) << "go\n";
  Exit e = child.wait();
  ASSERT_EQ(e.status, 0) << e;
  Profile profile = load_profile(out);
  std::map<std::string, uint64_t> calls;
  for (const Counters& record : profile.function_counters) calls[record.function] += record.calls;
  EXPECT_EQ(calls["leaf"], 5u) << "leaf counted before the reload only";
  EXPECT_EQ(calls["parent"], 4u) << "parent counted after the reload";
}

TEST_F(Integration, CtlNamesAProcessThatDoesNotExist) {
  std::string config = write_config(path("c.conf"), "function leaf\n");
  Child ctl({kLauncher, "ctl", "999999999", "reload", config}, {}, dir_);
  Exit c = ctl.wait();
  EXPECT_EQ(c.status, 2) << c;
  EXPECT_NE(c.err.find("process 999999999"), std::string::npos) << c;
}

}  // namespace
}  // namespace itest
