// Integration tests: the per-instruction samples (`instructions` records) a run leaves, the stall
// analysis the launcher appends (`stalls` records), and the reports built from them
// (docs/stalls.md). Runs in the gtest process through the harness; each program is a child process.
#include <gtest/gtest.h>

#include <numeric>
#include <string>

#include "harness.h"

namespace itest {
namespace {

double instruction_samples(const Profile& profile, const std::string& suffix) {
  double total = 0;
  for (const auto& record : whatif::analysis::merged_instructions(profile)) {
    if (record.path.size() >= suffix.size() && record.path.compare(record.path.size() - suffix.size(), suffix.size(), suffix) == 0) {
      for (const auto& [address, count] : record.counts) total += count;
    }
  }
  return total;
}

Exit launcher(const Strings& arguments, const std::string& dir) {
  Strings argv = {kLauncher};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  return Child(argv, {}, dir).wait();
}

TEST_F(Integration, InstructionSamplesCoverTheHotLineAndFeedTheStallReports) {
  std::string out = path("spin.jsonl");
  Exit e = whatif(out, {"--end-to-end"}, {program("spin"), "800"});
  ASSERT_EQ(e.status, 0) << e;
  Profile profile = load_profile(out);
  check_well_formed(profile);
  ASSERT_FALSE(profile.instructions.empty()) << "no instructions record";
  double in_spin = instruction_samples(profile, "/spin");
  double line = samples_for(profile, marker_spec("spin.c", "spin"));
  ASSERT_GT(line, 50) << "too few samples to judge";
  // The spin line's code is inline in main: its samples' IPs are in the program itself.
  EXPECT_GE(in_spin, 0.8 * line) << "the per-instruction samples miss the hot line's samples";
  for (const auto& record : profile.instructions) EXPECT_FALSE(record.build_id.empty()) << record.path;
  EXPECT_GE(count_records(profile, "stalls"), 1u) << "the launcher appends the stall analysis after the run";
  EXPECT_EQ(count_records(profile, "clock"), 1u) << "the launcher measures the clock the analysis converts periods with";

  Exit procedures = launcher({"report", "--procedures", out}, dir_);
  ASSERT_EQ(procedures.status, 0) << procedures;
  EXPECT_NE(procedures.out.find("main"), std::string::npos) << procedures.out;
  Exit annotate = launcher({"report", "--annotate", "main", out}, dir_);
  ASSERT_EQ(annotate.status, 0) << annotate;
  EXPECT_NE(annotate.out.find("Best-case"), std::string::npos) << annotate.out;
  EXPECT_NE(annotate.out.find("spin.c:" + std::to_string(marker_line("spin.c", "spin"))), std::string::npos)
      << "the listing names the hot source line\n" << annotate.out;
  Exit missing = launcher({"report", "--annotate", "no_such_function", out}, dir_);
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.err.find("--procedures"), std::string::npos) << missing.err;
  Exit stats = launcher({"stats", out, out}, dir_);
  ASSERT_EQ(stats.status, 0) << stats;
  EXPECT_NE(stats.out.find("main"), std::string::npos) << stats.out;
}

TEST_F(Integration, NoInstructionsKeepsNoHistogramAndTheReportSaysHowToGetOne) {
  std::string out = path("plain.jsonl");
  Exit e = whatif(out, {"--end-to-end", "--no-instructions"}, {program("spin"), "300"});
  ASSERT_EQ(e.status, 0) << e;
  Profile profile = load_profile(out);
  EXPECT_EQ(count_records(profile, "instructions"), 0u);
  EXPECT_EQ(count_records(profile, "stalls"), 0u);
  EXPECT_EQ(count_records(profile, "clock"), 0u) << "no per-instruction samples: nothing to convert";
  Exit report = launcher({"report", "--procedures", out}, dir_);
  EXPECT_NE(report.status, 0);
  EXPECT_NE(report.err.find("--no-instructions"), std::string::npos) << report.err;
}

}  // namespace
}  // namespace itest
