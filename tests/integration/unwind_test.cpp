// Integration test of DWARF unwinding: a program whose hot line calls glibc's memset (a leaf with
// no frame) runs under `whatif run`, and that line must get its share of the samples. Runs in the
// test process; the program is a child process.
#include <fstream>

#include "harness.h"

namespace itest {
namespace {

using Unwind = Integration;

TEST_F(Unwind, TimeInMemsetGoesToTheCallingLine) {
  // ~55% of the time is in memset called from one line, built without frame pointers; a
  // frame-pointer callchain skips that line (2 of 545 samples before DWARF unwinding).
  std::string out = path("memset.jsonl");
  Exit r = whatif(out, {"--experiment-length", "20"}, {program("memset_line"), "1500"});
  ASSERT_EQ(r.status, 0) << r;
  ASSERT_NE(r.out.find("rounds="), std::string::npos) << r;
  Profile profile = load_profile(out);
  for (const std::string& warning : profile.warnings) EXPECT_EQ(warning.find("libunwind"), std::string::npos) << warning;
  double total = 0;
  for (const auto& [line, count] : profile.sample_counts) total += count;
  double in_memset = samples_for(profile, marker_spec("memset_line.c", "memset"));
  double in_loop = samples_for(profile, marker_spec("memset_line.c", "loop"));
  ASSERT_GT(total, 300) << "a 1.5 s run at 1 ms";
  EXPECT_GE(in_memset / total, 0.40) << in_memset << " of " << total << " samples in the memset line";
  EXPECT_GE(in_loop / total, 0.25) << in_loop << " of " << total << " samples in the loop line";
  EXPECT_LE(in_memset / total, 0.75) << in_memset << " of " << total;
}

TEST_F(Integration, ALineInAHeaderWhoseFunctionOpensTheUnitIsTheHeadersLine) {
  // Bug: with Debian 12's libdwarf, a GCC DWARF 5 unit whose first function comes from a header
  // gave that function's rows file 0, the .c file: all of header_first.h's samples went to
  // header_first.c at the same line number, and `-p header_first.h:LINE` matched no code.
  const std::string header_line = marker_spec("header_first.h", "header-work");
  const std::string same_number_in_c = "header_first.c:" + std::to_string(marker_line("header_first.h", "header-work"));
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20", "-p", header_line}, {program("header_first"), "800"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GT(samples_for(p, header_line), 100) << e;
  EXPECT_EQ(samples_for(p, same_number_in_c), 0) << "the header's samples went to the .c file";
  long visits = 0;
  for (const Experiment& x : p.experiments) {
    if (const PointObservation* o = point(x, header_line)) visits += static_cast<long>(o->delta);
  }
  EXPECT_GT(visits, 0) << "-p on the header's line counted nothing: " << e;
}

TEST_F(Integration, SamplesDoNotLockOntoACycleOfWholePeriods) {
  // Bug: with a fixed 1-ms period, a thread whose work repeats every millisecond of its CPU time
  // was sampled at the same point of its cycle every time, in whichever half the first sample's
  // phase picked (the suite's spin lock: 1% to 36% of the samples in a line with half the time).
  // Each period is now drawn at random around the mean.
  std::string out = path("strobe.jsonl");
  Exit r = whatif(out, {"--experiment-length", "20"}, {program("strobe"), "1500"});
  ASSERT_EQ(r.status, 0) << r;
  Profile profile = load_profile(out);
  double first = samples_for(profile, marker_spec("strobe.c", "first"));
  double second = samples_for(profile, marker_spec("strobe.c", "second"));
  ASSERT_GT(first + second, 300) << "a 1.5 s run at 1 ms";
  EXPECT_GT(first / (first + second), 0.38) << first << " against " << second << " samples";
  EXPECT_LT(first / (first + second), 0.62) << first << " against " << second << " samples";
}

// Share of the samples that went to each of syscall_line.c's two lines.
struct SyscallShares {
  double total = 0, read = 0, loop = 0;
};

class Syscalls : public Integration {
 protected:
  SyscallShares shares_of_run(const std::string& name, Strings options) {
    std::string out = path(name);
    options.insert(options.end(), {"--experiment-length", "20"});
    Exit r = whatif(out, options, {program("syscall_line"), "1500"});
    EXPECT_EQ(r.status, 0) << r;
    profile_ = load_profile(out);
    SyscallShares shares;
    for (const auto& [line, count] : profile_.sample_counts) shares.total += count;
    shares.read = samples_for(profile_, marker_spec("syscall_line.c", "read"));
    shares.loop = samples_for(profile_, marker_spec("syscall_line.c", "loop"));
    return shares;
  }
  Profile profile_;
};

TEST_F(Syscalls, TimeInSystemCallsGoesToTheCallingLine) {
  // ~55% of the CPU time is spent in the kernel, in read(2) calls made by one line. Samples taken
  // in user mode only saw the few instructions around the call (about 4% of the line's share).
  SyscallShares shares = shares_of_run("syscall.jsonl", {});
  ASSERT_GT(shares.total, 300) << "a 1.5 s run at 1 ms";
  EXPECT_GE(shares.read / shares.total, 0.40) << shares.read << " of " << shares.total << " samples in the read line";
  EXPECT_LE(shares.read / shares.total, 0.75) << shares.read << " of " << shares.total;
  EXPECT_GE(shares.loop / shares.total, 0.25) << shares.loop << " of " << shares.total << " samples in the loop line";
}

TEST_F(Syscalls, TimeInPageFaultsGoesToTheFaultingLine) {
  // Bug: kernel-mode samples outside system calls were all dropped as the profiler's own, page
  // faults with them: a line that first-touches fresh memory (40% of a program's time in the
  // kernel's fault path) got 3.7% predicted for 35%, and here ~15% of the samples for ~55%. A fault
  // is now told by the kernel callchain's entry stub (asm_exc_page_fault, from /proc/kallsyms).
  std::string out = path("faults.jsonl");
  Exit r = whatif(out, {"--experiment-length", "20"}, {program("fault_line"), "1500"});
  ASSERT_EQ(r.status, 0) << r;
  Profile p = load_profile(out);
  double total = 0;
  for (const auto& [line, count] : p.sample_counts) total += count;
  double touch = samples_for(p, marker_spec("fault_line.c", "touch"));
  double loop = samples_for(p, marker_spec("fault_line.c", "loop"));
  for (const std::string& warning : p.warnings) EXPECT_EQ(warning.find("page faults"), std::string::npos) << warning;
  ASSERT_GT(total, 300) << "a 1.5 s run at 1 ms";
  EXPECT_GE(touch / total, 0.40) << touch << " of " << total << " samples in the touching line";
  EXPECT_LE(touch / total, 0.75) << touch << " of " << total;
  EXPECT_GE(loop / total, 0.25) << loop << " of " << total << " samples in the loop line";
}

TEST_F(Syscalls, WithoutTheKernelsSymbolsPageFaultTimeIsLeftOutAndSaidSo) {
  // The other path, as where kptr_restrict hides kallsyms' addresses: whatif says once that page
  // faults are not sampled, the touching line keeps only its user-mode share, and system calls
  // still count.
  std::string hidden = path("kallsyms");
  {
    std::ofstream file(hidden);
    file << "0000000000000000 T asm_exc_page_fault\n0000000000000000 T asm_int80_emulation\n";
  }
  std::string out = path("faults_hidden.jsonl");
  Exit r = whatif(out, {"--experiment-length", "20"}, {program("fault_line"), "1500"}, {{"WHATIF_KALLSYMS", hidden}});
  ASSERT_EQ(r.status, 0) << r;
  EXPECT_NE(r.err.find("page faults is not sampled"), std::string::npos) << r;
  Profile p = load_profile(out);
  double total = 0;
  for (const auto& [line, count] : p.sample_counts) total += count;
  double touch = samples_for(p, marker_spec("fault_line.c", "touch"));
  ASSERT_GT(total, 100);
  EXPECT_LT(touch / total, 0.40) << touch << " of " << total << " samples in the touching line";
  std::string reads = path("syscall_hidden.jsonl");
  r = whatif(reads, {"--experiment-length", "20"}, {program("syscall_line"), "1500"}, {{"WHATIF_KALLSYMS", hidden}});
  ASSERT_EQ(r.status, 0) << r;
  p = load_profile(reads);
  total = 0;
  for (const auto& [line, count] : p.sample_counts) total += count;
  double read = samples_for(p, marker_spec("syscall_line.c", "read"));
  EXPECT_GE(read / total, 0.40) << read << " of " << total << ": system calls are told apart without kallsyms";
}

TEST_F(Syscalls, UserOnlySamplingLeavesSystemCallTimeOut) {
  // The other path, as on a machine where perf_event_paranoid forbids kernel samples: the header
  // says so, and the reading line keeps only its user-mode share.
  SyscallShares shares = shares_of_run("syscall_user.jsonl", {"--sampler", "user"});
  ASSERT_FALSE(profile_.headers.empty());
  EXPECT_EQ(profile_.headers.at(0).sampler, "perf_event_user");
  ASSERT_GT(shares.total, 100);
  EXPECT_LT(shares.read / shares.total, 0.40) << shares.read << " of " << shares.total;
}

TEST_F(Syscalls, TheProfilersOwnKernelTimeIsNotTheProgramsLines) {
  // Bug: kernel-mode samples outside system calls (the samplers' timer interrupts, the sample
  // signals' delivery, perf's work at every context switch) were charged to the interrupted line.
  // In a strictly serial ping-pong only one thread runs at a time, so at most one sample a
  // millisecond is possible; whatif recorded up to 1.6 a millisecond, 1.28 of them in one line.
  // --sampler perf: this is about perf_event's kernel-mode samples. By default the adaptive sampler
  // moves these threads (thousands of switches a second) to the CPU-time timer, whose ticks come at
  // 4-ms scheduler ticks weighted by the periods they stand for, so a 50-ms experiment's count
  // straddles its edges (1.2-1.5 a millisecond, with the runtime of 4a2452a too).
  std::string out = path("pingpong.jsonl");
  Exit e = whatif(out, {"--experiment-length", "50", "--sampler", "perf", "--fixed-line",
                        marker_spec("futex_pingpong.c", "ping"), "--fixed-speedup", "50"},
                  {program("futex_pingpong"), "1500"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  ASSERT_GE(p.experiments.size(), 4u);
  ASSERT_FALSE(p.headers.empty());
  ASSERT_EQ(p.headers.at(0).sampler, "perf_event") << "kernel-mode sampling is on here (root)";
  // Over the run, at most one a millisecond (0.59-0.96 here, loaded or not). One experiment may
  // stray: CI's loaded run once counted 62 in 51.3 ms, its neighbours not (the task clock's timer,
  // stopped and restarted at each preemption, strays from its period by itself); the bug's 1.6 a
  // millisecond stays out of reach of either bound.
  double samples = 0, ms = 0;
  for (const Experiment& x : p.experiments) {
    double x_ms = x.duration_ns / 1e6;
    samples += x.total_samples;
    ms += x_ms;
    EXPECT_LE(x.total_samples, 1.4 * x_ms + 3) << "one thread at a time runs: " << x.total_samples << " samples in " << x_ms << " ms";
  }
  EXPECT_LE(samples, 1.1 * ms) << "one thread at a time runs: " << samples << " samples in " << ms << " ms";
}

}  // namespace
}  // namespace itest
