// Integration test of DWARF unwinding: a program whose hot line calls glibc's memset (a leaf with
// no frame) runs under `whatif run`, and that line must get its share of the samples. Runs in the
// test process; the program is a child process.
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

}  // namespace
}  // namespace itest
