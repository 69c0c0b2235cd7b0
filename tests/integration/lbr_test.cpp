// Integration tests: software branch records (`whatif run --lbr`) on a program with known control
// flow: the recorded edges and their ratios, and the paper's limits (threads that exit mid-burst,
// the program's own SIGTRAP handler, a handler that runs the traced code, rseq sections, exec, a
// kernel without perf sigtrap). Runs in the gtest process through the harness; each program is a child.
#include <gtest/gtest.h>

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
  EXPECT_GE(b.stats->static_branches + b.stats->flow_resolved + b.stats->dynamic_branches, b.stats->taken);
  EXPECT_EQ(b.stats->depth, 16u);
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

}  // namespace
}  // namespace itest
