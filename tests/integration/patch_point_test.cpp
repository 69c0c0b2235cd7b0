// Integration tests: -p FILE:LINE counted by a code patch on a hot line of a real program (and by
// the hardware breakpoint it falls back to): every visit counted, the program's output unchanged,
// and the profile saying which mechanism counted each point.
#include "harness.h"

namespace itest {
namespace {

/// The total visits of `spec` over all experiments.
long counted_visits(const Profile& profile, const std::string& spec) {
  long counted = 0;
  for (const Experiment& x : profile.experiments) {
    const PointObservation* visit = point(x, spec);
    EXPECT_NE(visit, nullptr) << "no point " << spec << " in experiment " << x.id;
    if (visit != nullptr) counted += static_cast<long>(visit->delta);
  }
  return counted;
}

class PatchPoint : public Integration {
 protected:
  /// Runs patch_point natively and under `whatif run --end-to-end -p hot` (one experiment); checks the output is the
  /// same and every visit counted; returns the profile's text.
  std::string run_and_compare(const std::string& visits_per_thread, const Environment& env) {
    std::string spec = marker_spec("patch_point.c", "hot");
    Exit native = Child({program("patch_point"), visits_per_thread}, {}, dir_).wait();
    EXPECT_EQ(native.status, 0) << native;
    std::string out = path("p.jsonl");
    // One experiment from start-up (a fixed line starts it without waiting for samples) to exit.
    Exit e = whatif(out, {"--end-to-end", "--fixed-line", spec, "--fixed-speedup", "0", "-p", spec},
                    {program("patch_point"), visits_per_thread}, env);
    EXPECT_EQ(e.status, 0) << e;
    EXPECT_EQ(e.out, native.out) << "the patched program printed something else";
    Profile p = load_profile(out);
    check_well_formed(p);
    long printed = 0;
    EXPECT_EQ(std::sscanf(e.out.c_str(), "visits=%ld", &printed), 1) << e;
    EXPECT_GT(printed, 0);
    EXPECT_EQ(counted_visits(p, spec), printed) << "the point at " << spec << " must count every visit";
    return read_file(out);
  }
};

TEST_F(PatchPoint, HotLineIsPatchedAndCountsEveryVisit) {
  std::string profile = run_and_compare("2000000", {});
  EXPECT_NE(profile.find(R"("mechanism":"patch")"), std::string::npos) << "the point should be patched:\n" << profile;
  EXPECT_EQ(profile.find("hardware breakpoint"), std::string::npos) << "no breakpoint warning for a patched point";
}

TEST_F(PatchPoint, BreakpointWhenPatchingIsOffCountsTheSame) {
  // A trap per visit: fewer visits keep this quick.
  std::string profile = run_and_compare("5000", {{"WHATIF_PROGRESS_PATCH", "off"}});
  EXPECT_NE(profile.find(R"("mechanism":"breakpoint")"), std::string::npos) << profile;
  EXPECT_NE(profile.find("WHATIF_PROGRESS_PATCH=off"), std::string::npos) << "the record should say why";
}

TEST_F(PatchPoint, APointIsAbsentFromExperimentsBeforeItsFirstVisit) {
  // Bug: a -p point was in every experiment from the start, so those of a busy phase before its
  // first visit (memcached's set phase, -p on its get path: 20 of 40 experiments) said zero visits
  // at random speedups, where a COZ_PROGRESS point is absent until its first visit. late_point
  // computes 400 ms without progress, then visits `item` 3000 times.
  std::string spec = marker_spec("late_point.c", "item");
  std::string out = path("late.jsonl");
  Exit e = whatif(out, {"--experiment-length", "50", "-p", spec}, {program("late_point"), "400", "3000"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  int before = 0, with_point = 0;
  bool visited = false;
  for (const Experiment& x : p.experiments) {
    const PointObservation* o = point(x, spec);
    if (o == nullptr) {
      EXPECT_FALSE(visited) << "experiment " << x.id << " lost the point after its first visit";
      ++before;
      continue;
    }
    ++with_point;
    EXPECT_TRUE(visited || o->delta > 0) << "experiment " << x.id << ": zero visits before the point's first";
    visited = visited || o->delta > 0;
  }
  EXPECT_GE(before, 2) << "the 400-ms phase without progress held experiments without the point";
  EXPECT_GE(with_point, 3) << e;
}

}  // namespace
}  // namespace itest
