// Integration tests: programs as users bring them (issue #10): their own command-line options, a
// launcher killed or interrupted, short-lived threads under -p, no debug info, Rust.
// Runs in the gtest process through the harness (harness.h); each program is a child process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"

namespace itest {
namespace {

/// What print_args prints for `arguments`.
std::string printed(const Strings& arguments) {
  std::string out;
  for (std::size_t i = 0; i < arguments.size(); ++i) out += "[" + std::to_string(i + 1) + "]=" + arguments[i] + "\n";
  return out;
}

std::size_t count_lines_with(const std::string& text, const std::string& needle) {
  std::istringstream lines(text);
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line);) count += line.find(needle) != std::string::npos;
  return count;
}

/// A profile location names a source line when it ends in :NUMBER; otherwise it is a function.
bool is_line(const std::string& location) { return std::regex_search(location, std::regex(":[0-9]+$")); }

// ---- the program's argv ----------------------------------------------------------------------------

class RepeatableOptionBeforeSeparator : public Integration, public ::testing::WithParamInterface<const char*> {};

TEST_P(RepeatableOptionBeforeSeparator, ProgramGetsExactlyItsArguments) {
  // Bug: CLI11's vector options are greedy, so the last one before --- took the program's own
  // options (`-p 11311` became a progress point) and the rest came out reordered.
  const Strings arguments = {"-t", "2", "-p", "11311", "-o", "out.txt", "-b", "bin", "-s", "src", "-u", "root",
                             "--",  "---", "--end-to-end", "two words", "", "-q"};
  Strings command = {program("print_args")};
  command.insert(command.end(), arguments.begin(), arguments.end());
  Exit e = whatif(path("p.jsonl"), {"--end-to-end", GetParam(), "print_args.c:6"}, command);
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_EQ(e.out, printed(arguments)) << e;
}

INSTANTIATE_TEST_SUITE_P(Options, RepeatableOptionBeforeSeparator,
                         ::testing::Values("-p", "-b", "-s", "--sampled-progress", "--progress", "--binary-scope"),
                         [](const auto& info) {
                           std::string name;
                           for (const char* c = info.param; *c; ++c) name += std::isalnum(*c) ? *c : '_';
                           return "option" + name;
                         });

TEST_F(Integration, PlainDoubleDashSeparatesToo) {
  const Strings arguments = {"-p", "1", "---", "-s"};
  Strings argv = {kLauncher, "run", "-q", "-o", path("p.jsonl"), "--end-to-end", "-s", "%", "--", program("print_args")};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  Exit e = Child(argv, {}, dir_, {"LD_PRELOAD"}).wait();
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_EQ(e.out, printed(arguments)) << e;
}

TEST_F(Integration, SeparatorAfterTheProgramBelongsToTheProgram) {
  // `whatif run PROGRAM a -- b`: the program came first, so its `--` is one of its arguments.
  Strings argv = {kLauncher, "run", "-q", "-o", path("p.jsonl"), "--end-to-end", program("print_args"), "a", "--", "-p", "b"};
  Exit e = Child(argv, {}, dir_, {"LD_PRELOAD"}).wait();
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_EQ(e.out, printed({"a", "--", "-p", "b"})) << e;
}

// ---- the program does not outlive the launcher, and stops cleanly -----------------------------------

/// The profiled program's pid, from the profile's header.
pid_t program_pid(const std::string& profile) {
  auto running = whatif::analysis::read_profile(profile);  // still being written: a cut last line is ignored
  if (!running || running->headers.empty()) return -1;
  return static_cast<pid_t>(running->headers.front().pid);
}

TEST_F(Integration, KilledLauncherTakesTheProgramWithIt) {
  // Bug: `kill -9` on `whatif run` left the program running as an orphan, still inserting delays.
  // As a subreaper this test adopts the orphan, so it can wait for it and see how it ended.
  ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  std::string out = path("p.jsonl");
  Child launcher = start_whatif(out, {"--experiment-length", "20"}, {program("two_threads"), "30000"});
  ASSERT_GE(wait_for_experiments(out, 1, std::chrono::seconds(20)), 1);
  pid_t pid = program_pid(out);
  ASSERT_GT(pid, 0);
  ASSERT_NE(pid, launcher.pid());
  ASSERT_EQ(::kill(launcher.pid(), SIGKILL), 0);
  Exit e = launcher.wait(std::chrono::seconds(10));
  EXPECT_EQ(e.status, 128 + SIGKILL) << e;
  int status = 0;
  pid_t done = 0;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
       done == 0 && std::chrono::steady_clock::now() < deadline;) {
    done = waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (done != pid) {
    ::kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the program (pid " << pid << ") was still running 10 s after its launcher was killed";
  }
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  Profile p = load_profile(out, /*allow_truncated=*/true);
  check_well_formed(p);
  EXPECT_GE(p.experiments.size(), 1u) << "completed experiments are kept";
}

struct Interruption {
  const char* name;
  int signal;
  bool to_group;  ///< the terminal's Ctrl-C: the whole foreground group, launcher and program
};

class Interrupted : public Integration, public ::testing::WithParamInterface<Interruption> {};

TEST_P(Interrupted, ServerStopsCleanlyKeepingEveryCompletedExperiment) {
  const Interruption& how = GetParam();
  std::string out = path("p.jsonl");
  Child launcher = start_whatif(out, {"--experiment-length", "20"}, {program("two_threads"), "30000"});
  long before = wait_for_experiments(out, 3, std::chrono::seconds(20));
  ASSERT_GE(before, 3);
  pid_t pid = program_pid(out);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(how.to_group ? -launcher.pid() : pid, how.signal), 0);  // the harness gave it its own group
  Exit e = launcher.wait(std::chrono::seconds(20));
  EXPECT_EQ(e.status, 128 + how.signal) << e;
  EXPECT_NE(e.err.find("profile: "), std::string::npos) << "the launcher finished the profile: " << e;
  Profile p = load_profile(out, /*allow_truncated=*/false);  // the launcher appended after any cut
  check_well_formed(p);
  EXPECT_GE(static_cast<long>(p.experiments.size()), before);
  bool warned = false;
  for (const std::string& w : p.warnings) warned = warned || w.find("terminated") != std::string::npos;
  EXPECT_TRUE(warned) << "no warning that the program was terminated";
}

INSTANTIATE_TEST_SUITE_P(Signals, Interrupted,
                         // SIGINT to the program and SIGTERM to the launcher: signals_test.cpp.
                         ::testing::Values(Interruption{"CtrlC", SIGINT, true}, Interruption{"SigtermToProgram", SIGTERM, false}),
                         [](const auto& info) { return std::string(info.param.name); });

// ---- -p and threads that already exited -----------------------------------------------------------

TEST_F(Integration, ExitedThreadsAreNotReportedUnderBreakpointProgress) {
  // Bug: a thread that exited before the profiler opened its breakpoint counter (ESRCH) printed
  // "cannot set a hardware breakpoint ...: No such process".
  std::string out = path("p.jsonl");
  std::string spec = marker_spec("short_threads.c", "step");
  Exit e = whatif(out, {"--experiment-length", "20", "-p", spec}, {program("short_threads"), "20000"},
                  {{"WHATIF_LOG", "warning"}});  // the runtime's own warnings on stderr, as with --format coz
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_EQ(e.err.find("No such process"), std::string::npos) << e;
  EXPECT_EQ(e.err.find("cannot set a hardware breakpoint"), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  double visits = 0;
  for (const Experiment& experiment : p.experiments) {
    if (const PointObservation* observed = point(experiment, spec)) visits += observed->delta;
  }
  EXPECT_GT(visits, 0) << "the breakpoint progress point still counts on the main thread";
}

// ---- programs without debug info ------------------------------------------------------------------

struct Stripped {
  const char* program;
  const char* function_pattern;  ///< what every profiled function's name must match
};

class NoDebugInfo : public Integration, public ::testing::WithParamInterface<Stripped> {};

TEST_P(NoDebugInfo, RunsKeepsItsExitStatusAndIsProfiledByFunction) {
  // Bug: `whatif run --- ./stripped` exited 2 without running the program.
  const Stripped& s = GetParam();
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program(s.program), "1500", "7"});
  ASSERT_EQ(e.status, 7) << "the program's exit status is whatif's: " << e;
  EXPECT_EQ(e.out, "done\n") << e;
  // Said once, clearly: one stderr line and one warning record.
  EXPECT_EQ(count_lines_with(e.err, "no debug info"), 1u) << e;
  EXPECT_NE(e.err.find(s.program), std::string::npos) << "the message names the object: " << e;
  EXPECT_NE(e.err.find("functions"), std::string::npos) << "the message says what is profiled instead: " << e;
  EXPECT_NE(e.err.find("-g"), std::string::npos) << "the message says how to get lines: " << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  std::size_t warnings = 0;
  for (const std::string& w : p.warnings) warnings += w.find("no debug info") != std::string::npos;
  EXPECT_EQ(warnings, 1u);
  ASSERT_GE(p.experiments.size(), 3u);
  const std::regex function(s.function_pattern);
  for (const Experiment& experiment : p.experiments) {
    EXPECT_FALSE(is_line(experiment.selected)) << experiment.selected;
    EXPECT_TRUE(std::regex_match(experiment.selected, function)) << experiment.selected;
  }
  ASSERT_FALSE(p.sample_counts.empty());
  std::string top;
  double most = 0;
  for (const auto& [location, samples] : p.sample_counts) {
    EXPECT_FALSE(is_line(location)) << location;
    if (samples > most) most = samples, top = location;
  }
  EXPECT_TRUE(std::regex_match(top, function)) << top;
  if (std::string(s.program) == "stripped_symtab") {
    EXPECT_EQ(top, "stripped_heavy") << "three times the work of stripped_light";
    EXPECT_GT(samples_for(p, "stripped_light"), 0);
  } else {
    // stripped_bare is stripped_symtab's code linked with -s: same addresses, no names.
    Exit nm = Child({"/usr/bin/nm", program("stripped_symtab")}, {}, dir_).wait();
    ASSERT_EQ(nm.status, 0) << nm;
    std::smatch heavy;
    ASSERT_TRUE(std::regex_search(nm.out, heavy, std::regex("0*([0-9a-f]+) T stripped_heavy"))) << nm;
    EXPECT_EQ(top, "stripped_bare+0x" + heavy[1].str()) << "three times the work of stripped_light";
  }
  // The report names functions too.
  Exit report = Child({kLauncher, "report", out}, {}, dir_).wait();
  ASSERT_EQ(report.status, 0) << report;
  EXPECT_NE(report.out.find(top), std::string::npos) << report;
}

INSTANTIATE_TEST_SUITE_P(Binaries, NoDebugInfo,
                         ::testing::Values(Stripped{"stripped_symtab", "stripped_heavy|stripped_light|worker|main"},
                                           Stripped{"stripped_bare", R"(stripped_bare\+0x[0-9a-f]+)"}),
                         [](const auto& info) { return std::string(info.param.program); });

// ---- Rust ------------------------------------------------------------------------------------------

TEST_F(Integration, RustProgramsLinesAreItsOwnNotTheStandardLibrarys) {
  const std::string rust = ITEST_RUST_PROGRAM;
  if (rust.empty()) GTEST_SKIP() << "rustc was not found when the build was configured: install it (Debian's rustc, "
                                    "scripts/install-deps.sh) and reconfigure";
  // Bug: the top line was /rustc/<hash>/library/core/src/num/uint_macros.rs, an inlined wrapping_mul,
  // not the line of src/main.rs that called it.
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "30"}, {rust, "2500"});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("rounds="), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  ASSERT_GE(p.experiments.size(), 3u) << e;
  double visits = 0;
  for (const Experiment& experiment : p.experiments) {
    EXPECT_EQ(experiment.selected.find("/rustc/"), std::string::npos) << experiment.selected;
    EXPECT_NE(experiment.selected.find("src/main.rs:"), std::string::npos) << experiment.selected;
    if (const PointObservation* observed = point(experiment, "round")) visits += observed->delta;
  }
  EXPECT_GT(visits, 0) << "the Coz ABI progress point declared in Rust";
  ASSERT_FALSE(p.sample_counts.empty());
  std::string top;
  double most = 0;
  for (const auto& [location, samples] : p.sample_counts) {
    EXPECT_EQ(location.find("/rustc/"), std::string::npos) << location;
    if (samples > most) most = samples, top = location;
  }
  // The multiply's latency lands on it or on the loop's inlined `<` (core's cmp.rs) right after it.
  EXPECT_TRUE(same_line(top, marker_spec("rust_work/src/main.rs", "rust-hot")) ||
              same_line(top, marker_spec("rust_work/src/main.rs", "rust-loop")))
      << "the top line should be mix()'s, in src/main.rs, not " << top;
}

}  // namespace
}  // namespace itest
