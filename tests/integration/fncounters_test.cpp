// Integration tests of `whatif run --counters` (ScALPEL's function-level counters) on a known-answer
// program built with -finstrument-functions: exact call counts per thread, recursion counted once per
// outermost call, exclusive time without the selected callee's, unselected functions absent, and
// events forced unavailable reported while time is still counted; the process's counter intervals
// (utilisation, CPI where a PMU exists); event sets cycled by call count; how events are read (rdpmc
// or read(2)); `whatif export --pprof` read back by `go tool pprof`.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
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
  Exit e = whatif(out, {"--counters", config}, {program("fncounters")});
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
  Exit e = whatif(out, {"--counters", config}, {program("fncounters")}, {{"WHATIF_UNAVAILABLE_EVENTS", "page-faults"}});
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

/// Runs `fncounters`-built `build` in its reload mode under `--counters first`, reloads `second`
/// at its pause, waits for the runtime's `swapped` warning, lets it finish; `profile` gets the result.
void run_with_reload(const std::string& dir, const std::string& build, const std::string& first,
                     const std::string& second, const std::string& swapped, Profile& profile,
                     const Environment& ctl_env = {}, const Environment& run_env = {}) {
  std::filesystem::remove(dir + "/pid");
  std::filesystem::remove(dir + "/go");
  std::string out = dir + "/" + build + ".jsonl";
  Child child({kLauncher, "run", "--counters", first, "-o", out, "---", program(build), "reload", dir}, run_env, dir);
  ASSERT_TRUE(eventually([&] { return !read_file(dir + "/pid").empty(); })) << "the program never reached its pause";
  std::string pid = read_file(dir + "/pid");
  pid.erase(pid.find_last_not_of("\n") + 1);
  Child ctl({kLauncher, "ctl", pid, "reload", second}, ctl_env, dir);
  Exit c = ctl.wait();
  ASSERT_EQ(c.status, 0) << c;
  EXPECT_TRUE(eventually([&] { return read_file(out).find(swapped) != std::string::npos; })) << read_file(out);
  EXPECT_FALSE(std::filesystem::exists("/tmp/whatif-counters-reload." + pid))
      << "the runtime consumes the list `whatif ctl` left for it";
  std::ofstream(dir + "/go") << "go\n";
  Exit e = child.wait();
  ASSERT_EQ(e.status, 0) << e;
  profile = load_profile(out);
}

TEST_F(Integration, CountersReloadSwapsTheSelectedFunctionsWhileRunning) {
  Profile profile;
  run_with_reload(dir_, "fncounters", write_config(path("first.conf"), "function leaf\n"),
                  write_config(path("second.conf"), "function parent\n"), "--counters reload: now counting 1 of the 1",
                  profile);
  std::map<std::string, uint64_t> calls;
  for (const Counters& record : profile.function_counters) calls[record.function] += record.calls;
  EXPECT_EQ(calls["leaf"], 5u) << "leaf counted before the reload only";
  EXPECT_EQ(calls["parent"], 4u) << "parent counted after the reload";
}

/// The named event of `record`, or an empty one (name "") when the record has none.
Counters::Event event_of(const Counters& record, const std::string& name) {
  for (const Counters::Event& event : record.events) {
    if (event.name == name) return event;
  }
  return {};
}

TEST_F(Integration, CountersReloadSwapsTheEventsToo) {
  // Before the reload page-faults counts; the reload names task-clock and instructions, the latter
  // forced unavailable (as it is on a machine without a PMU): it is said once, and task-clock counts
  // in every call after the reload, with the thread CPU time's magnitude (leaf spins 2 ms).
  Profile profile;
  std::string second = write_config(path("second.conf"), "function leaf\nfunction parent\nevents task-clock,instructions\n");
  run_with_reload(dir_, "fncounters", write_config(path("first.conf"), "function leaf\nfunction parent\nevents page-faults\n"),
                  second, "with events: task-clock, instructions", profile,
                  {{"WHATIF_UNAVAILABLE_EVENTS", "instructions"}});
  std::map<std::string, Counters> merged;
  for (const Counters& record : profile.function_counters) {
    ASSERT_EQ(merged.count(record.function), 0u) << "one thread only";
    merged[record.function] = record;
  }
  const Counters& leaf = merged["leaf"];
  const Counters& parent = merged["parent"];
  EXPECT_EQ(leaf.calls, 14u) << "5 before the reload, 5 + 4 in parent after";
  EXPECT_EQ(parent.calls, 4u);
  Counters::Event faults = event_of(leaf, "page-faults");
  Counters::Event clock = event_of(leaf, "task-clock");
  Counters::Event instructions = event_of(leaf, "instructions");
  ASSERT_EQ(faults.name, "page-faults") << "the events before the reload keep their counts";
  ASSERT_EQ(clock.name, "task-clock") << "the reload's events are counted";
  ASSERT_EQ(instructions.name, "instructions");
  EXPECT_EQ(faults.measured, 5) << "page-faults counted in the calls before the reload only";
  EXPECT_EQ(clock.measured, 9) << "task-clock counted in the calls after it";
  EXPECT_GE(clock.inclusive / clock.measured, 1.9e6) << "task-clock ns per leaf call";
  EXPECT_LT(clock.inclusive / clock.measured, 50e6);
  EXPECT_EQ(instructions.inclusive, 0);
  Counters::Event parent_clock = event_of(parent, "task-clock");
  EXPECT_EQ(parent_clock.measured, 4);
  EXPECT_GE(parent_clock.inclusive / 4, 4.9e6);
  EXPECT_GE(parent_clock.inclusive - parent_clock.exclusive, 4 * 1.9e6) << "leaf's task-clock is excluded";
  std::size_t said = 0;
  for (const std::string& warning : profile.warnings) {
    if (warning.find("event instructions not available on this machine") != std::string::npos) ++said;
  }
  EXPECT_EQ(said, 1u);

  std::string out = dir_ + "/fncounters.jsonl";
  Child report({kLauncher, "report", "--counters", out}, {}, dir_);
  Exit r = report.wait();
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("task-clock incl/call"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("task-clock in leaf: counted in 9 of 14 calls"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("page-faults in leaf: counted in 5 of 14 calls"), std::string::npos) << r.out;
}

TEST_F(Integration, CtlNamesAProcessThatDoesNotExist) {
  std::string config = write_config(path("c.conf"), "function leaf\n");
  Child ctl({kLauncher, "ctl", "999999999", "reload", config}, {}, dir_);
  Exit c = ctl.wait();
  EXPECT_EQ(c.status, 2) << c;
  EXPECT_NE(c.err.find("process 999999999"), std::string::npos) << c;
}

/// The profile's `counter_interval` records.
std::vector<nlohmann::json> intervals_of(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(read_file(path));
  std::string line;
  while (std::getline(lines, line)) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.value("type", "") == "counter_interval") out.push_back(record);
  }
  return out;
}

TEST_F(Integration, CounterIntervalsGiveUtilisationAndSayWhyCpiIsMissing) {
  // Both paths: this machine's own (a PMU counts instructions and cycles, or their absence is said),
  // and the absent-PMU path forced on any machine.
  for (bool forced : {false, true}) {
    SCOPED_TRACE(forced ? "forced unavailable" : "this machine");
    std::string config = write_config(path("counters.conf"), "function parent\ninterval 20\n");
    std::string out = path(forced ? "forced.jsonl" : "profile.jsonl");
    Environment env;
    if (forced) env.emplace_back("WHATIF_UNAVAILABLE_EVENTS", "instructions,cycles");
    Exit e = whatif(out, {"--counters", config}, {program("fncounters")}, env);
    ASSERT_EQ(e.status, 0) << e;
    auto intervals = intervals_of(out);
    ASSERT_GE(intervals.size(), 2u) << read_file(out);
    double task_clock = 0, instructions = 0;
    for (const auto& interval : intervals) {
      ASSERT_TRUE(interval["values"].contains("task-clock")) << interval.dump();
      task_clock += interval["values"]["task-clock"][0].get<double>();
      EXPECT_GT(interval["interval_ns"].get<double>(), 0);
      if (interval["values"].contains("instructions")) instructions += interval["values"]["instructions"][0].get<double>();
      for (const char* name : {"instructions", "cycles"}) {
        bool counted = interval["values"].contains(name), missing = interval["unavailable"].contains(name);
        EXPECT_NE(counted, missing) << name << " is either counted or said to be missing: " << interval.dump();
        if (forced) {
          EXPECT_EQ(interval["unavailable"].value(name, ""), "forced by WHATIF_UNAVAILABLE_EVENTS");
        } else if (missing) {
          EXPECT_NE(interval["unavailable"][name].get<std::string>().find("no hardware PMU"), std::string::npos);
        }
      }
    }
    // The program spins 93 ms of thread CPU time (main 50 + 3 + 0.5 ms, worker 25 + 14 ms).
    EXPECT_GE(task_clock, 90e6) << "the process's task-clock over the intervals";
    if (!forced && !intervals.back()["unavailable"].contains("instructions")) {
      EXPECT_GT(instructions, 1e6);
    }
  }
}

TEST_F(Integration, CountersCycleEventSetsByCallCount) {
  std::string config = write_config(path("counters.conf"),
                                    "function parent\nfunction leaf\nfunction recurse\n"
                                    "eventset page-faults\neventset context-switches\ncycle 1\n");
  std::string out = path("profile.jsonl");
  Exit e = whatif(out, {"--counters", config}, {program("fncounters")});
  ASSERT_EQ(e.status, 0) << e;
  Profile profile = load_profile(out);
  std::map<std::string, double> measured;
  uint64_t calls = 0;
  for (const Counters& record : profile.function_counters) {
    ASSERT_EQ(record.events.size(), 2u);
    double sum = 0;
    for (const auto& event : record.events) {
      EXPECT_GE(event.measured, 0) << event.name << ": a cycled event says in how many calls it counted";
      measured[event.name] += event.measured;
      sum += event.measured;
    }
    EXPECT_EQ(sum, static_cast<double>(record.calls)) << record.function << ": each call counts one set, exactly";
    calls += record.calls;
  }
  EXPECT_EQ(calls, 40u);
  // Switching every outermost call: each set counts about half of them (nested leaf calls follow
  // their parent's set).
  EXPECT_GE(measured["page-faults"], 10);
  EXPECT_GE(measured["context-switches"], 10);
  Child report({kLauncher, "report", "--counters", out}, {}, dir_);
  Exit r = report.wait();
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("(event sets cycle by call count"), std::string::npos) << r.out;
}

TEST_F(Integration, CountersSayHowEventsAreReadRdpmcOrReadAndWhy) {
  std::string config = write_config(path("counters.conf"), "function leaf\nevents page-faults\n");
  for (bool off : {false, true}) {
    SCOPED_TRACE(off ? "WHATIF_RDPMC=off" : "default");
    std::string out = path(off ? "off.jsonl" : "profile.jsonl");
    Environment env;
    if (off) env.emplace_back("WHATIF_RDPMC", "off");
    Exit e = whatif(out, {"--counters", config}, {program("fncounters")}, env);
    ASSERT_EQ(e.status, 0) << e;
    Profile profile = load_profile(out);
    std::string said;
    for (const std::string& warning : profile.warnings) {
      if (warning.find("counter reads:") != std::string::npos) said += warning;
    }
    // A software event has no hardware counter: read(2) on every machine, and the reason says which.
    EXPECT_NE(said.find("rdpmc for none; read(2) for page-faults ("), std::string::npos) << said;
    if (off) {
      EXPECT_NE(said.find("disabled by WHATIF_RDPMC=off"), std::string::npos) << said;
    } else {
      EXPECT_NE(said.find("cap_user_rdpmc 0"), std::string::npos) << said;
    }
    uint64_t calls = 0;
    for (const Counters& record : profile.function_counters) calls += record.calls;
    EXPECT_EQ(calls, 22u) << "counted either way";
  }
}

TEST_F(Integration, ExportPprofCarriesCountersThatGoToolPprofReads) {
  std::string config = write_config(path("counters.conf"), "function parent\nfunction leaf\nevents page-faults\n");
  std::string out = path("profile.jsonl");
  Exit e = whatif(out, {"--counters", config}, {program("fncounters")});
  ASSERT_EQ(e.status, 0) << e;
  std::string pprof = path("profile.pb.gz");
  Child exporter({kLauncher, "export", "--pprof", "-o", pprof, out}, {}, dir_);
  Exit x = exporter.wait();
  ASSERT_EQ(x.status, 0) << x;
  std::string bytes = read_file(pprof);
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f) << "gzip, as pprof writes its profiles";
  std::string go;
  for (const char* candidate : {"/usr/local/go/bin/go", "/usr/bin/go"}) {
    if (access(candidate, X_OK) == 0) go = candidate;
  }
  if (go.empty()) GTEST_SKIP() << "go not installed: the encoding is covered by the Pprof unit tests";
  // pprof's own reader: calls per function (flat), summed over both threads: parent 15, leaf 22.
  Child top({go, "tool", "pprof", "-top", "-sample_index=calls", pprof}, {}, dir_);
  Exit t = top.wait();
  ASSERT_EQ(t.status, 0) << t;
  EXPECT_NE(t.out.find("Type: calls"), std::string::npos) << t.out;
  std::istringstream rows(t.out);
  std::string row;
  std::map<std::string, long> flat;
  while (std::getline(rows, row)) {
    std::istringstream cells(row);
    std::string first, name, cell;
    cells >> first;
    while (cells >> cell) name = cell;
    if (name == "parent" || name == "leaf") flat[name] = std::atol(first.c_str());
  }
  EXPECT_EQ(flat["parent"], 15) << t.out;
  EXPECT_EQ(flat["leaf"], 22) << t.out;
  Child types({go, "tool", "pprof", "-raw", pprof}, {}, dir_);
  Exit r = types.wait();
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.out.find("cpu_exclusive/nanoseconds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("page-faults_inclusive/count"), std::string::npos) << r.out;
}

TEST_F(Integration, CountersPatchTheEntriesOfAPatchableBuild) {
  // The same known-answer program built with -fpatchable-function-entry=5 instead of
  // -finstrument-functions: the selected functions' entry NOPs are patched at start-up; the counts
  // must be those of the instrumented build.
  for (const char* build : {"fncounters_patchable", "fncounters_patchable_cet"}) {
  SCOPED_TRACE(build);  // the second puts the NOPs after an endbr64 (-fcf-protection)
  std::string config = write_config(path("counters.conf"), "function parent\nfunction leaf\nfunction recurse\n");
  std::string out = path(std::string(build) + ".jsonl");
  Exit e = whatif(out, {"--counters", config}, {program(build)});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("done"), std::string::npos) << "the patched program ran to its end: " << e;
  Profile profile = load_profile(out);
  auto threads = by_thread(profile);
  ASSERT_EQ(threads.size(), 2u) << e;
  long main_tid = profile.headers.at(0).pid;
  auto& main_thread = threads[main_tid];
  long worker_tid = threads.begin()->first == main_tid ? threads.rbegin()->first : threads.begin()->first;
  auto& worker = threads[worker_tid];
  EXPECT_EQ(main_thread["parent"].calls, 10u);
  EXPECT_EQ(main_thread["leaf"].calls, 10u);
  EXPECT_EQ(main_thread["recurse"].calls, 3u) << "recursion counted once per outermost call";
  EXPECT_EQ(worker["parent"].calls, 5u);
  EXPECT_EQ(worker["leaf"].calls, 12u);
  for (auto* functions : {&main_thread, &worker}) {
    const Counters& parent = (*functions)["parent"];
    double calls = static_cast<double>(parent.calls);
    EXPECT_GE(parent.inclusive_ns / calls, 4.9e6);
    EXPECT_GE(parent.exclusive_ns / calls, 2.9e6);
    EXPECT_LT(parent.exclusive_ns / calls, parent.inclusive_ns / calls - 1.9e6) << "the callee's time is excluded";
  }
  EXPECT_GE(main_thread["recurse"].inclusive_ns / 3.0, 0.9e6);
  }
}

TEST_F(Integration, CountersPatchAnEntrySelectedOnlyByAReload) {
  // parent is selected by the reload alone: its entry is patched while the program runs. After the
  // reload the set is rebuilt: a patched entry after an endbr64 must still be found.
  for (const char* build : {"fncounters_patchable", "fncounters_patchable_cet"}) {
    SCOPED_TRACE(build);
    Profile profile;
    run_with_reload(dir_, build, write_config(path("first.conf"), "function leaf\n"),
                    write_config(path("second.conf"), "function leaf\nfunction parent\n"),
                    "--counters reload: now counting 2 of the 2", profile);
    std::map<std::string, uint64_t> calls;
    for (const Counters& record : profile.function_counters) calls[record.function] += record.calls;
    EXPECT_EQ(calls["leaf"], 14u) << "patched at start-up: counted before and after the reload (5 + 5 + 4 in parent)";
    EXPECT_EQ(calls["parent"], 4u) << "patched by the reload: every call after it";
    for (const std::string& warning : profile.warnings) EXPECT_EQ(warning.find("is not patched"), std::string::npos) << warning;
  }
}

TEST_F(Integration, CountersSayAnEntryTheStartUpFallbackCannotPatchAtAReload) {
  // The fallback of programs where the live scheme's stub address is taken (non-PIE programs), forced:
  // entries selected at start-up are patched whole while the program has one thread; one selected
  // only by a reload cannot be, and the profile says why.
  for (const char* build : {"fncounters_patchable", "fncounters_patchable_cet"}) {
    SCOPED_TRACE(build);
    Profile profile;
    run_with_reload(dir_, build, write_config(path("first.conf"), "function leaf\n"),
                    write_config(path("second.conf"), "function leaf\nfunction parent\n"),
                    "--counters reload: now counting 2 of the 2", profile, {},
                    {{"WHATIF_COUNTERS_LIVE_PATCH", "off"}});
    std::map<std::string, uint64_t> calls;
    for (const Counters& record : profile.function_counters) calls[record.function] += record.calls;
    EXPECT_EQ(calls["leaf"], 14u) << "patched at start-up: counted before and after the reload (5 + 5 + 4 in parent)";
    EXPECT_EQ(calls["parent"], 0u) << "its entry could not be patched";
    bool said = false;
    for (const std::string& warning : profile.warnings) {
      said = said || (warning.find("entry of parent is not patched (live patching is off") != std::string::npos &&
                      warning.find("only at start-up") != std::string::npos);
    }
    EXPECT_TRUE(said);
  }
}

/// Reloads `config` into process `pid` and waits until the profile at `out` says `swapped`.
void reload_and_wait(const std::string& dir, const std::string& pid, const std::string& config,
                     const std::string& out, const std::string& swapped) {
  Child ctl({kLauncher, "ctl", pid, "reload", config}, {}, dir);
  Exit c = ctl.wait();
  ASSERT_EQ(c.status, 0) << c;
  EXPECT_TRUE(eventually([&] { return read_file(out).find(swapped) != std::string::npos; })) << read_file(out);
}

TEST_F(Integration, CountersPatchAndUnpatchEntriesWhileAThreadRunsThem) {
  // A hammer thread calls hot() without pause while one reload selects hot and parent (their entries
  // are patched under it) and another drops them (their NOPs come back under it). The program must
  // never crash, and the calls the main thread makes between the two reloads are counted exactly.
  for (const char* build : {"fncounters_live", "fncounters_live_cet"}) {
    SCOPED_TRACE(build);
    for (const char* name : {"pid", "ready2", "go1", "go2"}) std::filesystem::remove(path(name));
    std::string out = path(std::string(build) + ".jsonl");
    std::string first = write_config(path("first.conf"), "function leaf\n");
    std::string second = write_config(path("second.conf"), "function leaf\nfunction parent\nfunction hot\n");
    std::string third = write_config(path("third.conf"), "function leaf\n");
    Child child({kLauncher, "run", "--counters", first, "-o", out, "---", program(build), dir_}, {}, dir_);
    ASSERT_TRUE(eventually([&] { return !read_file(path("pid")).empty(); })) << "the program never reached its pause";
    std::string pid = read_file(path("pid"));
    pid.erase(pid.find_last_not_of("\n") + 1);
    reload_and_wait(dir_, pid, second, out, "--counters reload: now counting 3 of the 3");
    std::ofstream(path("go1")) << "go\n";
    ASSERT_TRUE(eventually([&] { return !read_file(path("ready2")).empty(); })) << "the program never reached its second pause";
    reload_and_wait(dir_, pid, third, out, "--counters reload: now counting 1 of the 1");
    std::ofstream(path("go2")) << "go\n";
    Exit e = child.wait();
    ASSERT_EQ(e.status, 0) << e;
    EXPECT_NE(e.out.find("selected: hot entry e8 parent entry e8"), std::string::npos) << "patched by the first reload: " << e;
    EXPECT_NE(e.out.find("dropped: hot entry 90 parent entry 90"), std::string::npos) << "NOPs back after the second: " << e;
    EXPECT_NE(e.out.find("hammer made"), std::string::npos) << e;
    Profile profile = load_profile(out);
    long main_tid = profile.headers.at(0).pid;
    auto threads = by_thread(profile);
    auto& main_thread = threads[main_tid];
    EXPECT_EQ(main_thread["hot"].calls, 1000u) << "the calls between the reloads, not the 500 after";
    EXPECT_EQ(main_thread["parent"].calls, 4u);
    EXPECT_EQ(main_thread["leaf"].calls, 17u) << "selected throughout: 5 + 5 + 4 + 3";
    EXPECT_GE(main_thread["parent"].inclusive_ns / 4, 4.9e6);
    uint64_t hammered = 0;
    for (auto& [tid, functions] : threads) {
      if (tid != main_tid && functions.count("hot")) hammered += functions["hot"].calls;
    }
    EXPECT_GT(hammered, 0u) << "the hammer's calls were counted while hot was selected";
  }
}

TEST_F(Integration, CountersFollowAnExceptionThroughAPatchedFunction) {
  // selected(), outer() and relay() are patched; exceptions thrown below selected() are caught in
  // outer() and in main(), and relay() catches and rethrows them (`throw;`). The program must run to
  // its end, and every call count as one call with its time.
  std::string config = write_config(path("throw.conf"), "function selected\nfunction outer\nfunction relay\n");
  std::string out = path("throw.jsonl");
  Exit e = whatif(out, {"--counters", config}, {program("fncounters_throw")});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("caught 10 in outer, 1 in main, 2 relayed"), std::string::npos) << e;
  Profile profile = load_profile(out);
  std::map<std::string, Counters> functions;
  for (const Counters& record : profile.function_counters) functions[record.function] = record;
  EXPECT_EQ(functions["selected"].calls, 25u) << "12 returns and 13 exits by exception";
  EXPECT_EQ(functions["outer"].calls, 2u);
  EXPECT_EQ(functions["relay"].calls, 4u) << "2 returns and 2 exits by a rethrow";
  EXPECT_GE(functions["selected"].inclusive_ns / 25, 0.9e6) << "each call's 1 ms, thrown or not";
  EXPECT_GE(functions["outer"].inclusive_ns - functions["outer"].exclusive_ns, 20 * 0.9e6) << "selected's time excluded";
  EXPECT_GE(functions["relay"].inclusive_ns / 4, 0.9e6) << "relay's calls hold selected's";
}

TEST_F(Integration, CountersLetPthreadExitUnwindThroughAPatchedFunction) {
  // quit() is patched and calls pthread_exit: glibc unwinds the thread to run the cleanup handler its
  // body pushed, which it cannot find past a hijacked return address.
  std::string config = write_config(path("pexit.conf"), "function quit\n");
  Exit e = whatif(path("pexit.jsonl"), {"--counters", config}, {program("fncounters_pexit")});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("cleanup ran\njoined"), std::string::npos) << e;
}

}  // namespace
}  // namespace itest
