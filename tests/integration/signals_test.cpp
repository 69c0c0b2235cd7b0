// Integration tests: Signals: the program's own handlers and masks, and profiles cut short by SIGINT, SIGKILL and
// SIGTERM (to the program or to the launcher).
// Runs in the gtest process through the harness (harness.h); each program is a child process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/utsname.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "harness.h"

namespace itest {
namespace {

/// A run under one of the samplers the signal tests take: `auto` (perf_event, one event a thread
/// that signals by SIGTRAP where the kernel can), `async` (auto with WHATIF_SAMPLE_TRAP=off: a
/// user-mode event that signals by O_ASYNC and a kernel-mode one), `timer`.
class SamplerRuns : public Integration, public ::testing::WithParamInterface<const char*> {
 protected:
  Exit run_under_sampler(const std::string& out, const Strings& command) {
    std::string sampler = GetParam();
    Environment env;
    if (sampler == "async") {
      sampler = "auto";
      env.emplace_back("WHATIF_SAMPLE_TRAP", "off");
    }
    return whatif(out, {"--experiment-length", "20", "--sampler", sampler}, command, env);
  }
};

std::string first_line(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

class Signals : public SamplerRuns {};

TEST_P(Signals, ProgramsOwnProfAndAlarmHandlersStillFire) {
  std::string out = path("p.jsonl");
  Exit e = run_under_sampler(out, {program("signals"), "1200"});
  ASSERT_EQ(e.status, 0) << e;  // the program checks its handler counts
  EXPECT_NE(e.out.find("prof="), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GE(p.experiments.size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Samplers, Signals, ::testing::Values("auto", "async", "timer"),
                         [](const auto& info) { return std::string(info.param); });

class Masked : public SamplerRuns {};

TEST_P(Masked, ThreadsBlockingAllSignalsAreStillSampledAtThePeriod) {
  // sigfillset blocks SIGTRAP too: the trapping samplers' signal must get through as the O_ASYNC one does.
  std::string out = path("p.jsonl");
  Exit e = run_under_sampler(out, {program("masked"), "1200"});
  ASSERT_EQ(e.status, 0) << e;
  long cpu_ms = 0;
  auto at = e.out.find("worker_cpu_ms=");
  ASSERT_NE(at, std::string::npos) << e;
  cpu_ms = std::atol(e.out.c_str() + at + 14);
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GE(p.experiments.size(), 2u);
  double samples = samples_for(p, marker_spec("masked.c", "masked-work"));
  double period_ms = p.headers.at(0).sampling_period_ns / 1e6;
  EXPECT_GT(samples, 0);
  // Each sample stands for one period of CPU time: virtual speedups size their delays on that.
  // Both samplers: CPU-time timers expire at most once per scheduler tick (4 ms at HZ=250), so the
  // timer sampler must weight each sample by its si_overruns, or it counts a fraction of the periods
  // and virtual speedups come out several times too small.
  EXPECT_GE(samples, 0.5 * cpu_ms / period_ms)
      << GetParam() << " sampler: " << samples << " samples for " << cpu_ms << " ms of worker CPU time at a "
      << period_ms << " ms period";
  EXPECT_LE(samples, 1.5 * cpu_ms / period_ms + 10);
}

INSTANTIATE_TEST_SUITE_P(Samplers, Masked, ::testing::Values("auto", "async", "timer"),
                         [](const auto& info) { return std::string(info.param); });

class OwnTrap : public SamplerRuns {};

TEST_P(OwnTrap, TheProgramsSigtrapHandlerSeesItsOwnTrapsOnly) {
  // The trapping samplers share SIGTRAP with the program: its handler, set after the runtime's and
  // reported back by sigaction, gets each of its int3s and none of the samples, and its reads of
  // /dev/zero (sampled in the kernel) are never cut short.
  std::string out = path("p.jsonl");
  Exit e = run_under_sampler(out, {program("own_trap"), "handler", "800"});
  ASSERT_EQ(e.status, 0) << e;  // the program checks its handler's counts and its reads
  EXPECT_NE(e.out.find("traps "), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GE(p.experiments.size(), 2u);
  EXPECT_GT(samples_for(p, marker_spec("own_trap.c", "trap-handler-work")), 100) << "sampling went on beside the program's traps";
  EXPECT_GT(samples_for(p, marker_spec("own_trap.c", "trap-read")), 20) << "the reads' kernel time, charged to their line";
  const bool trapping = first_line(out).find("\"sample_trap\":true") != std::string::npos;
  if (std::string(GetParam()) == "async") {
    EXPECT_FALSE(trapping) << first_line(out);
  } else if (std::string(GetParam()) == "auto") {
    struct utsname names {};
    int major = 0, minor = 0;
    const bool known = uname(&names) == 0 && std::sscanf(names.release, "%d.%d", &major, &minor) == 2;
    if (known && (major > 5 || (major == 5 && minor >= 13))) {
      EXPECT_TRUE(trapping) << "Linux " << names.release << " signals samples by SIGTRAP: " << first_line(out);
    }
  }
}

TEST_P(OwnTrap, AnInt3WithoutAHandlerStillEndsTheProgramBySigtrap) {
  // SIGTRAP's default action is the program's: the runtime's handler passes a trap that is not a
  // sample on, and the process dies by it, as natively, with its profile kept.
  std::string out = path("p.jsonl");
  Exit e = run_under_sampler(out, {program("own_trap"), "default", "400"});
  EXPECT_EQ(e.status, 128 + SIGTRAP) << e;
  EXPECT_NE(e.out.find("trapping now"), std::string::npos) << e;
  EXPECT_EQ(e.out.find("survived"), std::string::npos) << e;
  Profile p = load_profile(out, /*allow_truncated=*/true);
  check_well_formed(p);
  EXPECT_GE(p.experiments.size(), 2u) << "the experiments completed before the trap are kept";
}

TEST_P(OwnTrap, ResettingSigtrapInAnExitHandlerDoesNotEndTheProgram) {
  // Bug: the runtime stopped keeping SIGTRAP's handler once the profile was finished (exit() runs
  // the program's exit handlers after that), yet threads go on sampling until they end: a handler
  // that put SIGTRAP back to its default action died of the next sample (status 133).
  std::string out = path("p.jsonl");
  Exit e = run_under_sampler(out, {program("own_trap"), "atexit", "300"});
  EXPECT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("exit handler done"), std::string::npos) << e;
}

INSTANTIATE_TEST_SUITE_P(Samplers, OwnTrap, ::testing::Values("auto", "async", "timer"),
                         [](const auto& info) { return std::string(info.param); });

class Killed : public Integration, public ::testing::WithParamInterface<int> {};

TEST_P(Killed, ProfileKeepsEveryCompletedExperiment) {
  int sig = GetParam();
  std::string out = path("p.jsonl");
  Child child = start_preloaded(out, {program("two_threads"), "20000"});
  long before = wait_for_experiments(out, 3, std::chrono::seconds(20));
  ASSERT_GE(before, 3) << "the program did not complete 3 experiments";
  ASSERT_EQ(::kill(child.pid(), sig), 0);
  Exit e = child.wait();
  EXPECT_EQ(e.status, 128 + sig) << e;
  Profile p = load_profile(out, /*allow_truncated=*/true);
  check_well_formed(p);
  EXPECT_GE(static_cast<long>(p.experiments.size()), before);
  EXPECT_TRUE(p.runtimes.empty()) << "a killed program cannot have finished its profile";
}

INSTANTIATE_TEST_SUITE_P(Signals, Killed, ::testing::Values(SIGINT, SIGKILL),
                         [](const auto& info) { return std::string(info.param == SIGINT ? "SIGINT" : "SIGKILL"); });

TEST_F(Integration, SigintToTheProgramUnderTheLauncher) {
  std::string out = path("p.jsonl");
  Child launcher = start_whatif(out, {"--experiment-length", "20"}, {program("two_threads"), "20000"});
  long before = wait_for_experiments(out, 3, std::chrono::seconds(20));
  ASSERT_GE(before, 3);
  auto running = whatif::analysis::read_profile(out);  // still being written: a cut last line is ignored
  ASSERT_TRUE(running) << running.error();
  ASSERT_FALSE(running->headers.empty());
  pid_t pid = static_cast<pid_t>(running->headers.front().pid);
  ASSERT_NE(pid, launcher.pid()) << "the header names the program, not the launcher";
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  Exit e = launcher.wait();
  EXPECT_EQ(e.status, 128 + SIGINT) << e;
  Profile p = load_profile(out, /*allow_truncated=*/false);  // the launcher appended after any cut
  EXPECT_GE(static_cast<long>(p.experiments.size()), before);
  bool warned = false;
  for (const std::string& w : p.warnings) warned = warned || w.find("terminated") != std::string::npos;
  EXPECT_TRUE(warned) << "no warning that the program was terminated";
}

TEST_F(Integration, SigtermToTheLauncherReachesTheProgram) {
  std::string out = path("p.jsonl");
  Child launcher = start_whatif(out, {"--experiment-length", "20"}, {program("two_threads"), "20000"});
  ASSERT_GE(wait_for_experiments(out, 2, std::chrono::seconds(20)), 2);
  ASSERT_EQ(::kill(launcher.pid(), SIGTERM), 0);
  Exit e = launcher.wait(std::chrono::seconds(20));
  EXPECT_EQ(e.status, 128 + SIGTERM) << e;
  Profile p = load_profile(out);
  EXPECT_GE(p.experiments.size(), 2u);
}

}  // namespace
}  // namespace itest
