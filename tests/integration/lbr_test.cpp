// Integration tests: software branch records (`whatif run --lbr`) on a program with known control
// flow: the recorded edges and their ratios, and the paper's limits (threads that exit mid-burst,
// the program's own SIGTRAP handler, a handler that runs the traced code, rseq sections, exec, a
// kernel without perf sigtrap). Runs in the gtest process through the harness; each program is a child.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "analysis/branches/branches.h"
#include "harness.h"

namespace itest {
namespace {
using whatif::analysis::BranchProfile;
using whatif::analysis::ObjectBranches;

/// The "addr NAME 0xADDRESS" lines lbr_loop prints.
std::map<std::string, uint64_t> addresses(const std::string& out) {
  std::map<std::string, uint64_t> result;
  std::istringstream lines(out);
  std::string word, name, hex;
  while (lines >> word) {
    if (word != "addr" || !(lines >> name >> hex)) continue;
    result[name] = std::stoull(hex, nullptr, 16);
  }
  return result;
}

uint64_t edge(const ObjectBranches& object, uint64_t from, uint64_t to) {
  for (const auto& e : object.edges) {
    if (e.from == from && e.to == to) return e.count;
  }
  return 0;
}

BranchProfile branches_of(const std::string& path) {
  auto branches = whatif::analysis::read_branches(path);
  EXPECT_TRUE(branches.ok()) << (branches.ok() ? "" : branches.error());
  return branches.ok() ? *branches : BranchProfile{};
}

class Lbr : public Integration {
 protected:
  Exit run(const std::string& mode, const Strings& extra = {}, const Environment& env = {}, long ms = 400) {
    Strings options = {"--lbr", "--lbr-every", "1", "--experiment-length", "20"};
    options.insert(options.end(), extra.begin(), extra.end());
    return whatif(path("p.jsonl"), options, {program("lbr_loop"), mode, std::to_string(ms)}, env);
  }
};

TEST_F(Lbr, RecordsTheLoopsEdgesInTheirKnownRatios) {
  Exit e = run("loop");
  ASSERT_EQ(e.status, 0) << e;
  auto at = addresses(e.out);
  ASSERT_EQ(at.count("mod"), 1u) << e;
  Profile p = load_profile(path("p.jsonl"));
  check_well_formed(p);
  BranchProfile b = branches_of(path("p.jsonl"));
  const ObjectBranches* object = b.object("lbr_loop");
  ASSERT_NE(object, nullptr) << "no branches record for the program";
  EXPECT_FALSE(object->build_id.empty());
  double odd = static_cast<double>(edge(*object, at["mod"], at["odd"]));
  double skip = static_cast<double>(edge(*object, at["skip"], at["next"]));
  double back = static_cast<double>(edge(*object, at["back"], at["top"]));
  ASSERT_GT(back, 100) << "too few back edges recorded";
  // Every iteration takes exactly one of mod->odd (3 in 4) and skip->next (1 in 4), then the back edge.
  EXPECT_NEAR(odd / back, 0.75, 0.08);
  EXPECT_NEAR(skip / back, 0.25, 0.08);
  // No edge leaves the loop's body from an address that is not a branch.
  for (const auto& e2 : object->edges) {
    if (e2.from > at["top"] && e2.from < at["end"]) {
      EXPECT_TRUE(e2.from == at["mod"] || e2.from == at["skip"] || e2.from == at["back"]) << std::hex << e2.from;
    }
  }
  // The straight run from the odd arm to the back edge, as a fall-through range.
  bool range_seen = false;
  for (const auto& r : object->ranges) range_seen = range_seen || (r.start == at["odd"] && r.end == at["back"] && r.count > 0);
  EXPECT_TRUE(range_seen);
  ASSERT_TRUE(b.stats.has_value());
  EXPECT_GT(b.stats->bursts, 0u);
  EXPECT_GT(b.stats->completed, 0u);
  EXPECT_GE(b.stats->taken, static_cast<uint64_t>(back));
  // Each recorded branch was settled by decoding, by data flow or at a breakpoint stop.
  EXPECT_GE(b.stats->static_branches + b.stats->flow_resolved + b.stats->dynamic_branches + b.stats->lookahead_settled,
            b.stats->taken);
  EXPECT_EQ(b.stats->depth, 16u);
}

/// The zeros counts chain mode prints: "zeros a A b B of 1000".
std::pair<double, double> zeros(const std::string& out) {
  auto at = out.find("zeros a ");
  if (at == std::string::npos) return {-1, -1};
  std::istringstream words(out.substr(at + 8));
  std::string b, of;
  double a = -1, bv = -1;
  words >> a >> b >> bv >> of;
  return {a / 1000, bv / 1000};
}

TEST_F(Lbr, SpareDebugRegistersSettleBranchesWithoutAStopOfTheirOwn) {
  // Two branches per iteration on bytes from memory: the one-register tracer stops at both; with
  // four, a stop ahead tells which way the branch before it went (paper §3.3), with the same edges.
  double per_taken[2] = {0, 0};
  int run_index = 0;
  for (const char* registers : {"1", "4"}) {
    Exit e = run("chain", {}, {{"WHATIF_LBR_REGISTERS", registers}}, 500);
    ASSERT_EQ(e.status, 0) << e;
    auto at = addresses(e.out);
    auto [zero_a, zero_b] = zeros(e.out);
    ASSERT_GT(zero_a, 0) << e;
    BranchProfile b = branches_of(path("p.jsonl"));
    const ObjectBranches* object = b.object("lbr_loop");
    ASSERT_NE(object, nullptr);
    double back = static_cast<double>(edge(*object, at["chain_back"], at["chain_top"]));
    ASSERT_GT(back, 100) << "registers " << registers;
    EXPECT_NEAR(edge(*object, at["chain_a"], at["chain_skip_a"]) / back, zero_a, 0.08) << "registers " << registers;
    EXPECT_NEAR(edge(*object, at["chain_b"], at["chain_skip_b"]) / back, zero_b, 0.08) << "registers " << registers;
    for (const auto& e2 : object->edges) {  // nothing recorded from an address that is not a branch
      if (e2.from > at["chain_top"] && e2.from < at["chain_back"]) {
        EXPECT_TRUE(e2.from == at["chain_a"] || e2.from == at["chain_b"]) << std::hex << e2.from;
      }
    }
    ASSERT_TRUE(b.stats.has_value());
    if (std::string(registers) == "1") {
      EXPECT_EQ(b.stats->lookahead_settled, 0u);
      EXPECT_EQ(b.stats->registers, 1u);
    } else {
      EXPECT_GT(b.stats->lookahead_settled, 0u) << "no branch was settled by which breakpoint fired";
      EXPECT_GE(b.stats->registers, 2u);
    }
    per_taken[run_index++] = b.stats->breakpoints_per_taken;
  }
  EXPECT_LT(per_taken[1], per_taken[0]) << "four registers stopped as often per taken branch as one";
}

TEST_F(Lbr, BoltFdataCarriesTheFallThroughsOfTheLoop) {
  Exit e = run("loop");
  ASSERT_EQ(e.status, 0) << e;
  auto at = addresses(e.out);
  Exit fdata = Child({kLauncher, "export", "--bolt", path("p.jsonl")}, {}, dir_).wait();
  ASSERT_EQ(fdata.status, 0) << fdata;
  // hot_loop starts 5 bytes before hot_top (xor eax,eax; mov rdi,rcx). Per iteration: mod -> odd
  // taken 3 in 4, else mod falls through to the add after it; the odd arm falls through to next.
  uint64_t start = at["top"] - 5;
  std::map<std::pair<uint64_t, uint64_t>, double> lines;
  std::istringstream text(fdata.out);
  for (std::string a, from_fn, from, b, to_fn, to, mispredicts, count; text >> a >> from_fn >> from >> b >> to_fn >> to >> mispredicts >> count;) {
    if (from_fn == "hot_loop" && to_fn == "hot_loop") lines[{std::stoull(from, nullptr, 16), std::stoull(to, nullptr, 16)}] += std::stod(count);
  }
  double back = lines[{at["back"] - start, at["top"] - start}];
  ASSERT_GT(back, 100) << fdata.out;
  double taken = lines[{at["mod"] - start, at["odd"] - start}];
  double fall = lines[{at["mod"] - start, at["mod"] + 2 - start}];  // jnz rel8 is 2 bytes
  EXPECT_NEAR(taken / back, 0.75, 0.08) << fdata.out;
  EXPECT_NEAR(fall / back, 0.25, 0.08) << fdata.out;
  // The odd arm (xor, 3 bytes) falls through into next, once per taken mod -> odd branch, except
  // after the last branch of a burst, whose fall-through the burst did not see end (as with a
  // hardware LBR stack's last entry). Where bursts end depends on the CPU's timing: on one machine
  // they ended anywhere (0.75 of the back edges); on an AMD EPYC VM nearly all ended at mod -> odd
  // (0.63), so the bound is per burst, not a ratio.
  double odd_arm = lines[{at["odd"] - start, at["next"] - start}];
  BranchProfile profile = branches_of(path("p.jsonl"));
  ASSERT_TRUE(profile.stats.has_value());
  EXPECT_LE(odd_arm, taken) << fdata.out;
  EXPECT_GE(odd_arm, taken - static_cast<double>(profile.stats->bursts)) << fdata.out;
  EXPECT_GT(odd_arm / back, 0.5) << fdata.out;
}

TEST_F(Lbr, ReportShowsEachFunctionsEdgesAndPathsWithSourceLines) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--lbr", "--lbr-every", "1", "--end-to-end"}, {program("afdo_work"), "400"});
  ASSERT_EQ(e.status, 0) << e;
  Exit report = Child({kLauncher, "report", "--branches", out}, {}, dir_).wait();
  ASSERT_EQ(report.status, 0) << report;
  int loop_line = 0;
  {
    std::istringstream lines(read_file(source("afdo_work.c")));
    std::string line;
    for (int number = 1; std::getline(lines, line); ++number) {
      if (line.find("if (i & 3)") != std::string::npos) loop_line = number;
    }
  }
  ASSERT_GT(loop_line, 0);
  EXPECT_NE(report.out.find("afdo_classify (afdo_work.c:"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("afdo_work.c:" + std::to_string(loop_line)), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("fall-through"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("hottest paths"), std::string::npos) << report.out;
  // The viewer's record for the function, with its blocks' lines and the source beside them.
  Profile p = load_profile(out);
  EXPECT_GE(count_records(p, "branch_flow"), 1u);
  std::string text = read_file(out);
  EXPECT_NE(text.find("\"function\":\"afdo_classify\""), std::string::npos);
  EXPECT_NE(text.find("if (i & 3)"), std::string::npos) << "no source record for the hot function's lines";
}

TEST_F(Lbr, DepthSetsTheBurstLength) {
  Exit e = run("loop", {"--lbr-depth", "4"}, {}, 200);
  ASSERT_EQ(e.status, 0) << e;
  BranchProfile b = branches_of(path("p.jsonl"));
  ASSERT_TRUE(b.stats.has_value());
  EXPECT_EQ(b.stats->depth, 4u);
  EXPECT_GT(b.stats->completed, 0u);
  EXPECT_LE(b.stats->taken, b.stats->bursts * 4);
}

TEST_F(Integration, WithoutLbrNoBranchRecordsAreWritten) {
  Exit e = whatif(path("p.jsonl"), {"--experiment-length", "20"}, {program("lbr_loop"), "loop", "150"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(path("p.jsonl"));
  EXPECT_EQ(count_records(p, "branches"), 0u);
  EXPECT_EQ(count_records(p, "branch_stats"), 0u);
}

TEST_F(Lbr, KernelWithoutSigtrapWarnsAndCausalProfilingGoesOn) {
  Exit e = run("loop", {}, {{"WHATIF_LBR_NO_SIGTRAP", "1"}}, 800);
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(path("p.jsonl"));
  check_well_formed(p);
  bool warned = false;
  for (const std::string& warning : p.warnings) warned = warned || (warning.find("--lbr") != std::string::npos && warning.find("5.13") != std::string::npos);
  EXPECT_TRUE(warned) << "no warning naming --lbr and Linux 5.13";
  EXPECT_GE(p.experiments.size(), 1u) << "causal profiling stopped";
  EXPECT_FALSE(p.sample_counts.empty()) << "no samples: causal profiling stopped";
  EXPECT_EQ(count_records(p, "branches"), 0u);
}

TEST_F(Lbr, ThreadsExitingMidBurstLeaveAValidProfile) {
  Exit e = run("threads", {}, {}, 400);
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(path("p.jsonl"));
  check_well_formed(p);
  BranchProfile b = branches_of(path("p.jsonl"));
  ASSERT_TRUE(b.stats.has_value());
  EXPECT_GT(b.stats->bursts, 0u);
  EXPECT_EQ(b.stats->ended.count("thread_exit"), 1u);
  auto at = addresses(e.out);
  const ObjectBranches* object = b.object("lbr_loop");
  ASSERT_NE(object, nullptr);
  EXPECT_GT(edge(*object, at["back"], at["top"]), 0u);
}

TEST_F(Lbr, TheProgramsSigtrapHandlerIsChainedNotReplaced) {
  Exit e = run("trap", {}, {}, 300);
  ASSERT_EQ(e.status, 0) << e;  // the program checks that its handler saw every int3 and nothing else
  EXPECT_NE(e.out.find("traps "), std::string::npos) << e;
  BranchProfile b = branches_of(path("p.jsonl"));
  ASSERT_TRUE(b.stats.has_value());
  EXPECT_GT(b.stats->completed, 0u) << "tracing stopped once the program took SIGTRAP";
}

TEST_F(Lbr, BreakpointsHitFromASignalHandlerDoNotConfuseTheTrace) {
  Exit e = run("signal", {}, {}, 400);
  ASSERT_EQ(e.status, 0) << e;  // every loop result, in main and in the handler, was right
  auto at = addresses(e.out);
  BranchProfile b = branches_of(path("p.jsonl"));
  const ObjectBranches* object = b.object("lbr_loop");
  ASSERT_NE(object, nullptr);
  double odd = static_cast<double>(edge(*object, at["mod"], at["odd"]));
  double back = static_cast<double>(edge(*object, at["back"], at["top"]));
  ASSERT_GT(back, 100);
  EXPECT_NEAR(odd / back, 0.75, 0.1);
}

TEST_F(Lbr, RseqCriticalSectionsAreNeverTraced) {
  Exit e = run("rseq", {}, {}, 300);
  ASSERT_EQ(e.status, 0) << e;
  auto at = addresses(e.out);
  BranchProfile b = branches_of(path("p.jsonl"));
  ASSERT_TRUE(b.stats.has_value());
  EXPECT_GT(b.stats->ended["rseq"], 0u) << "no burst ended at the rseq section";
  if (const ObjectBranches* object = b.object("lbr_loop")) {
    for (const auto& e2 : object->edges) {
      EXPECT_FALSE(e2.from >= at["rseq_begin"] && e2.from <= at["rseq_end"] && e2.to >= at["rseq_begin"] && e2.to <= at["rseq_end"])
          << "an edge inside the rseq section: " << std::hex << e2.from << " -> " << e2.to;
    }
  }
}

TEST_F(Lbr, ExecMidRunLeavesAValidProfile) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--lbr", "--lbr-every", "1", "--experiment-length", "20"}, {program("exec"), "true", "500"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_EQ(p.headers.size(), 1u);
}

/// The path of `name` found on PATH, or "".
std::string on_path(const std::string& name) {
  Exit found = Child({"/bin/sh", "-c", "command -v " + name}, {}, "/tmp").wait();
  if (found.status != 0) return "";
  std::string path = found.out;
  while (!path.empty() && (path.back() == '\n' || path.back() == ' ')) path.pop_back();
  return path;
}

TEST_F(Integration, AutoFdoExportFeedsCreateGcovAndGccUsesTheProfile) {
  std::string create_gcov = on_path("create_gcov"), dump_gcov = on_path("dump_gcov"), gcc = on_path("gcc"), python = on_path("python3");
  if (create_gcov.empty() || dump_gcov.empty()) GTEST_SKIP() << "create_gcov not installed (Debian's autofdo: scripts/install-deps.sh)";
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--lbr", "--lbr-every", "1", "--end-to-end"}, {program("afdo_work"), "400"});
  ASSERT_EQ(e.status, 0) << e;
  Exit text = Child({kLauncher, "export", "--autofdo", out}, {}, dir_).wait();
  ASSERT_EQ(text.status, 0) << text;
  // The three sections: ranges, addresses (none), branches; each a count and that many lines.
  std::istringstream lines(text.out);
  std::size_t ranges = 0, addresses = 9, branches = 0;
  std::string line;
  lines >> ranges;
  for (std::size_t i = 0; i < ranges; ++i) lines >> line;
  lines >> addresses;
  lines >> branches;
  ASSERT_GT(ranges, 0u) << text.out;
  EXPECT_EQ(addresses, 0u);
  ASSERT_GT(branches, 0u) << text.out;
  {
    std::ofstream file(path("afdo.txt"));
    file << text.out;
  }
  Exit created = Child({create_gcov, "--binary=" + program("afdo_work"), "--profile=" + path("afdo.txt"), "--profiler=text",
                        "--gcov=" + path("old.afdo"), "--gcov_version=2"},
                       {}, dir_)
                     .wait();
  ASSERT_EQ(created.status, 0) << created;
  Exit dumped = Child({dump_gcov, "--gcov_version=2", path("old.afdo")}, {}, dir_).wait();
  ASSERT_EQ(dumped.status, 0) << dumped;
  // create_gcov found the hot function through the binary's DWARF, with counts on its lines.
  EXPECT_NE(dumped.out.find("afdo_classify total:"), std::string::npos) << dumped.out;
  // GCC 12 reads the name table only after afdo_gcc12.py; then it annotates the function's blocks
  // with the profile's counts.
  Exit converted = Child({python, ITEST_AFDO_GCC12, path("old.afdo"), path("gcc.afdo")}, {}, dir_).wait();
  ASSERT_EQ(converted.status, 0) << converted;
  Exit compiled = Child({gcc, "-O1", "-gdwarf-4", "-I", ITEST_SOURCES_DIR, "-fauto-profile=" + path("gcc.afdo"),
                         "-fdump-tree-optimized-all=" + path("optimized.txt"), "-c", source("afdo_work.c"), "-o", path("afdo_work.o")},
                        {}, dir_)
                      .wait();
  ASSERT_EQ(compiled.status, 0) << compiled;
  std::string dump = read_file(path("optimized.txt"));
  auto function = dump.find("afdo_classify");
  ASSERT_NE(function, std::string::npos);
  EXPECT_NE(dump.find("(auto FDO)", function), std::string::npos) << "GCC did not use the profile's counts";
}

}  // namespace
}  // namespace itest
