// Integration tests: Threads: thousands of them, threads started before main, detached threads busy at exit,
// pthread_detach out of the samples' reach, C11 threads.
// Runs in the gtest process through the harness (harness.h); each program is a child process.
#include <gtest/gtest.h>

#include <string>

#include "harness.h"

namespace itest {
namespace {

class ManyThreads : public Integration, public ::testing::WithParamInterface<const char*> {};

TEST_P(ManyThreads, ThousandsOfThreadsRunAndAreProfiled) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program("many_threads"), GetParam(), "1200"});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("threads=1200 ok"), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GT(samples_for(p, marker_spec("many_threads.c", "many-work")), 0);
  EXPECT_EQ(p.runtimes.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Creation, ManyThreads, ::testing::Values("waves", "all"),
                         [](const auto& info) { return std::string(info.param); });

TEST_F(Integration, ThreadsAndProgressPointsFromAStaticConstructor) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program("static_ctor")},
                  {{"ITEST_CTOR_MS", "900"}, {"ITEST_MAIN_MS", "700"}});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  long in_constructor = 0, early = 0;
  for (const Experiment& x : p.experiments) {
    const PointObservation *a = point(x, "in-constructor"), *b = point(x, "early-thread");
    if (a != nullptr) in_constructor += static_cast<long>(a->delta);
    if (b != nullptr) early += static_cast<long>(b->delta);
  }
  EXPECT_GT(in_constructor, 0) << "the progress point visited in a static constructor was not counted";
  EXPECT_GT(early, 0) << "threads created before main were not counted";
  EXPECT_GT(samples_for(p, marker_spec("static_ctor.cpp", "ctor-work")), 0);
  EXPECT_GT(samples_for(p, marker_spec("static_ctor.cpp", "early-work")), 0) << "threads started before main are not sampled";
}

TEST_F(Integration, C11ThreadsAreSampledAndTheirWaitsCredited) {
  // Bug: glibc starts C11 threads (thrd_create) and blocks in mtx_lock/cnd_wait/thrd_join through
  // its internal pthread functions, past every shim. A producer started with thrd_create was never
  // sampled: a 2.3-s run of two such busy workers gave 10 samples, all of main, and one experiment.
  // Here the producer's line must be sampled and sped up, and main, woken from cnd_wait by the
  // producer, credited: it pauses for none of the producer's delays. The C11 calls keep their own
  // answers (the program checks them, and exits 0 only once all held and it printed "c11 ok").
  Profile p = run_half_speedup_of("c11_threads", "produce", "3000");
  EXPECT_GT(samples_for(p, marker_spec("c11_threads.c", "produce")), 100) << "the thrd_create'd producer was not sampled";
  const auto [paused, delay, recorded] = paused_and_delay(p);
  ASSERT_GE(p.experiments.size(), 3u);
  ASSERT_GT(delay, 0) << "the producer's samples inserted no delay";
  EXPECT_LT(paused, 0.2 * delay) << "main, woken from cnd_wait by the producer, paid the producer's delays";
}

TEST_F(Integration, MainReturnsWhileDetachedThreadsAreBusy) {
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    std::string out = path("p" + std::to_string(run) + ".jsonl");
    Exit e = whatif(out, {"--experiment-length", "20"}, {program("detached"), "300"});
    ASSERT_EQ(e.status, 0) << e;
    Profile p = load_profile(out);
    check_well_formed(p);
    EXPECT_EQ(p.runtimes.size(), 1u);
  }
}

TEST_F(Integration, PthreadDetachRunsWithTheSampleSignalBlocked) {
  // Bug: glibc 2.36's pthread_detach reads the thread's descriptor after marking it detached, and a
  // thread that exits in between frees it. A sample's pause between the two (a delay of up to a
  // millisecond) made that race likely: a program detaching each thread it created crashed in 1 run
  // of ~15. A probe preloaded after the runtime sees the mask the real call runs with.
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program("detach"), "300"}, {{"LD_PRELOAD", ITEST_DETACH_PROBE}});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("detached=300"), std::string::npos) << e;
  EXPECT_NE(e.err.find("detach-probe: calls=300 blocked=300"), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_FALSE(p.experiments.empty());
}

}  // namespace
}  // namespace itest
