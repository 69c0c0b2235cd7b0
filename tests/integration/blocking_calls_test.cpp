// Integration tests: the blocking calls' fast paths. A lock is tried before the blocking protocol,
// and a descriptor's kind (pipe or Unix socket: woken by a thread) is remembered across calls; both
// must keep what a program and the delays see. Runs in the gtest process through the harness
// (harness.h); each program is a child process.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "harness.h"

namespace itest {
namespace {

TEST_F(Integration, EveryMutexAndRwlockKindKeepsItsAnswersWhenTheRuntimeTriesTheLockFirst) {
  // The lock shims try a lock before they block on it (an uncontended lock settles nothing), so the
  // attempt's answers must be the lock's: EDEADLK, EPERM, recursion, EOWNERDEAD, and a held lock
  // still waits for its release.
  Exit e = whatif(path("p.jsonl"), {"--experiment-length", "20"}, {program("lock_kinds")});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("lock kinds ok"), std::string::npos) << e;
}

TEST_F(Integration, AProgramAloneTakesNoStreamLocksAsNatively) {
  // glibc's putc and getc lock a FILE only once the process has a second thread, and whatif's own
  // threads made every single-threaded program's putc and getc take the lock: a putc loop ran 2.8
  // times slower and its line looked that much costlier (predicted +44% for a true +25%). Alone,
  // the program's putc and getc must not wait for a lock it marked held, as natively (an alarm ends
  // it with status 3); once it has a thread, a putc must wait for the stream another thread holds.
  Exit e = whatif(path("p.jsonl"), {"--experiment-length", "20"}, {program("stdio_locks")});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("stdio locks ok"), std::string::npos) << e;
}

TEST_F(Integration, TimeInAStdioCallIsTheCallingLines) {
  // The stdio shims run putc's inline body themselves, and samples in libwhatif.so were whatif's
  // own time: 70% of a putc loop's samples were dropped as whatif's, and its line lost its putc time
  // (predicted +14% for a true +28%). The shims' bodies are the program's library calls.
  Exit e = whatif(path("p.jsonl"), {"--experiment-length", "20"}, {program("stdio_locks"), "loop", "2000"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(path("p.jsonl"));
  check_well_formed(p);
  double total = 0, own = 0;
  std::istringstream lines(read_file(path("p.jsonl")));
  for (std::string line; std::getline(lines, line);) {
    auto record = nlohmann::json::parse(line, nullptr, false);
    if (!record.is_object() || record.value("type", "") != "experiment") continue;
    total += record.value("total_samples", 0.0);
    own += record.value("own_samples", 0.0);
  }
  ASSERT_GT(total, 200) << "the program was barely sampled";
  EXPECT_LT(own, 0.1 * total) << "samples in the stdio shims were taken for whatif's own time";
  EXPECT_GT(samples_for(p, marker_spec("stdio_locks.c", "putc")), 100) << "the putc line was barely sampled";
}

class WokenThroughADescriptor : public Integration, public ::testing::WithParamInterface<const char*> {};

TEST_P(WokenThroughADescriptor, IsCreditedNotDelayed) {
  // A consumer that waits for a pipe or an eventfd the producer (the sped-up line) writes to is
  // woken by a thread of the program: credited up to the global clock, it pauses for none of the
  // producer's delays. The kind of descriptor is remembered across waits (no fstat each time), so
  // this checks the remembered answer is used, not just the first. Bug: a wait in poll(2) or
  // epoll_wait(2), as every event loop waits, always paid what accrued (as for a client's request
  // on a TCP socket): the consumer slept 1.00-1.01 times the delay inserted (0.00-0.01 now), and
  // an eventfd was no descriptor of the program's threads even to read(2).
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "50", "--fixed-line", marker_spec("pipe_wake.c", "produce"), "--fixed-speedup", "50"},
                  {program("pipe_wake"), "3000", GetParam()}, {{"WHATIF_CONTENTION", "off"}});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  const auto [paused, delay, recorded] = paused_and_delay(p);
  ASSERT_GE(p.experiments.size(), 3u);
  ASSERT_GT(delay, 0) << "the producer's samples inserted no delay";
  EXPECT_LT(paused, 0.2 * delay) << "the consumer paid delays its waker had already executed";
}

TEST_F(Integration, WaitsWithAClockAreCreditedWhenTheirThreadEndsThem) {
  // Bug: pthread_mutex_clocklock, pthread_rwlock_clockrdlock/clockwrlock (std::timed_mutex's and
  // std::shared_timed_mutex's waits) and pthread_clockjoin_np were not interposed: main, waiting in
  // them for the worker that runs the line, paid the worker's delays when it woke (paused 1.2 times
  // the delay inserted) and the line, the whole critical path, was predicted at +4% for ~49%. The
  // program exits 0 only once every wait returned as natively and it printed "clock waits ok".
  Profile p = run_half_speedup_of("clock_waits", "produce", "600");
  const auto [paused, delay, recorded] = paused_and_delay(p);
  ASSERT_GE(p.experiments.size(), 3u);
  ASSERT_GT(delay, 0) << "the worker's samples inserted no delay";
  EXPECT_LT(paused, 0.2 * delay) << "main paid delays the worker that ended its wait had already executed";
}

// tcp: a loopback TCP connection between two threads. Bug: every TCP socket was taken for a
// client's, so the consumer paid the producer's delays (a request/reply over loopback TCP between
// two threads was predicted at -4 to +6% for 22% and 36%).
// nonblock: reads of a non-blocking descriptor skip the blocking protocol (they cannot wait), so a
// descriptor made blocking again by fcntl(F_SETFL) must be looked up afresh: remembered as
// non-blocking, its blocking read was no wait at all, and the consumer paid the producer's delays.
// readv: readv(2) and writev(2) were not interposed; the consumer paid the producer's delays.
// stdio, getc: glibc's FILE functions read and write through its internal __read and __write, past
// the read and write shims; the consumer, waiting in fgets or in getc_unlocked's __uflow, paid the
// producer's delays (a stdio pipeline's producer line was predicted at -1% for +29%).
INSTANTIATE_TEST_SUITE_P(Waits, WokenThroughADescriptor,
                         ::testing::Values("read", "poll", "epoll", "eventfd", "tcp", "nonblock", "readv", "stdio", "getc"));

}  // namespace
}  // namespace itest
