// Integration tests: Runs of the two-thread example and the options that shape experiments: line and speedup
// choice, seeds, samplers, end-to-end, --append, the runtime record.
// Runs in the gtest process through the harness (harness.h); each program is a child process.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace itest {
namespace {

TEST_F(Integration, TwoThreadsExperimentsAndSamplesForBothLines) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program("two_threads"), "3000"});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("rounds="), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_EQ(p.headers.at(0).sampler, "perf_event");
  EXPECT_EQ(p.headers.at(0).command, Strings({program("two_threads"), "3000"}));
  EXPECT_EQ(p.headers.at(0).experiment_length_ns, 20000000);

  std::string fa = marker_spec("two_threads.c", "fa"), fb = marker_spec("two_threads.c", "fb");
  auto experiments = p.experiments;
  ASSERT_GE(experiments.size(), 4u);
  std::set<std::string> selected;
  bool visits = false;
  for (const Experiment& x : experiments) {
    selected.insert(x.selected);
    const PointObservation* round = point(x, "round");
    ASSERT_NE(round, nullptr) << "experiment " << x.id;
    EXPECT_EQ(round->kind, PointKind::throughput);
    visits = visits || round->delta > 0;
  }
  EXPECT_TRUE(visits) << "no experiment saw the per-round progress point";
  auto chose = [&](const std::string& spec) {
    for (const auto& s : selected) {
      if (same_line(s, spec)) return true;
    }
    return false;
  };
  EXPECT_TRUE(chose(fa)) << "no experiment on fa (" << fa << ")";
  EXPECT_TRUE(chose(fb)) << "no experiment on fb (" << fb << ")";
  EXPECT_GT(samples_for(p, fa), 0) << "no samples in fa";
  EXPECT_GT(samples_for(p, fb), 0) << "no samples in fb";
  auto runtimes = p.runtimes;
  ASSERT_EQ(runtimes.size(), 1u);
  EXPECT_EQ(runtimes[0].experiments, static_cast<double>(experiments.size()));
  EXPECT_FALSE(p.sources.empty()) << "the launcher embeds source snippets";
}

TEST_F(Integration, TwoThreadsFixedLineAndSeedReproduceTheSpeedupSequence) {
  std::string fa = marker_spec("two_threads.c", "fa");
  auto run = [&](const std::string& name, const std::string& seed) {
    std::string out = path(name);
    Exit e = whatif(out, {"--experiment-length", "20", "--fixed-line", fa, "--seed", seed},
                    {program("two_threads"), "2000"});
    EXPECT_EQ(e.status, 0) << e;
    Profile p = load_profile(out);
    check_well_formed(p);
    EXPECT_EQ(p.headers.at(0).fixed_line, fa);
    EXPECT_EQ(p.headers.at(0).seed, std::stoll(seed));
    std::vector<double> speedups;
    bool sampled = false;
    for (const Experiment& x : p.experiments) {
      EXPECT_TRUE(same_line(x.selected, fa)) << "--fixed-line " << fa << " but selected " << x.selected;
      sampled = sampled || x.selected_samples > 0;
      speedups.push_back(x.speedup);
    }
    EXPECT_GE(speedups.size(), 3u);
    EXPECT_TRUE(sampled) << "no experiment counted samples in the fixed line";
    return speedups;
  };
  std::vector<double> first = run("a.jsonl", "7"), second = run("b.jsonl", "7"), other = run("c.jsonl", "8");
  std::size_t common = std::min(first.size(), second.size());
  ASSERT_GE(common, 3u);
  for (std::size_t i = 0; i < common; ++i) EXPECT_EQ(first[i], second[i]) << "experiment " << i << " with --seed 7";
  // A seed fixes the whole sequence, and 7 and 8 differ from the first experiment on: the three
  // experiments every run must have tell them apart. (The check used to need eight, which a 2 s run
  // never has, since experiments double in length until they see enough visits: it never ran.)
  std::size_t common_other = std::min(first.size(), other.size());
  ASSERT_GE(common_other, 3u) << "too few experiments to compare --seed 7 with --seed 8";
  EXPECT_NE(std::vector<double>(first.begin(), first.begin() + common_other),
            std::vector<double>(other.begin(), other.begin() + common_other))
      << "--seed 7 and --seed 8 chose the same speedups";
}

TEST_F(Integration, TwoThreadsFixedSpeedup) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20", "--fixed-speedup", "40"}, {program("two_threads"), "2000"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_DOUBLE_EQ(p.headers.at(0).fixed_speedup, 0.4);
  auto experiments = p.experiments;
  ASSERT_GE(experiments.size(), 3u);
  // The run carries its own baseline: pairs of one speedup-0 and one 40% experiment.
  bool delayed = false;
  int baselines = 0, sped = 0;
  for (const Experiment& x : experiments) {
    EXPECT_TRUE(std::abs(x.speedup - 0.4) < 1e-9 || x.speedup == 0) << "experiment " << x.id << ": " << x.speedup;
    if (x.speedup == 0) {
      ++baselines;
      EXPECT_EQ(x.delay_ns, 0) << "a baseline inserted delay, experiment " << x.id;
    } else {
      ++sped;
      delayed = delayed || x.delay_ns > 0;
    }
  }
  EXPECT_LE(std::abs(baselines - sped), 1) << baselines << " baselines, " << sped << " at 40%";
  EXPECT_TRUE(delayed) << "a 40% speedup inserted no delay in any experiment";
}

TEST_F(Integration, AFixedSpeedupRunEndsWithItsAnswerAndTheReportLeadsWithIt) {
  // Bug: a --fixed-line --fixed-speedup run ended without its answer, and `whatif report` led with
  // the impact (the mean over 0..s: half the prediction), flagged "not enough evidence".
  // Where the answer is written, not its accuracy: a ping-pong's rate follows the machine's load
  // (-1.9% [-20.9, +17.2] beside a CI build here, for 37.5% on a quiet machine).
  std::string out = path("fixed.jsonl");
  Exit e = whatif(out, {"--fixed-line", marker_spec("futex_pingpong.c", "ping"), "--fixed-speedup", "50"},
                  {program("futex_pingpong"), "1500"});
  ASSERT_EQ(e.status, 0) << e;
  std::size_t at = e.err.find("ran 50% faster, the program would speed up by ");
  ASSERT_NE(at, std::string::npos) << e;
  double said = std::stod(e.err.substr(at + std::strlen("ran 50% faster, the program would speed up by "))) / 100;
  EXPECT_NE(e.err.find("95% CI"), std::string::npos) << e;
  Exit report = Child({kLauncher, "report", out}, {}, dir_).wait();
  ASSERT_EQ(report.status, 0) << report;
  EXPECT_NE(report.out.find("at 50%"), std::string::npos) << report.out;
  char answer[32];
  std::snprintf(answer, sizeof(answer), "%+.1f%%", said * 100);
  EXPECT_NE(report.out.find(answer), std::string::npos) << "run said " << answer << "\n" << report.out;
  EXPECT_EQ(report.out.find("not enough evidence"), std::string::npos) << report.out;
}

TEST_F(Integration, AnIdlePauseBetweenLoadsLeavesTheExperimentLengthAlone) {
  // Bug: between two loads each experiment saw no visit and doubled the next length, so the second
  // load began with an experiment several times longer than the first load's, at one speedup. The
  // idle experiments are now left out by the readers and teach the runtime nothing. --fixed-line:
  // its experiments start without waiting for a sample, as those of a server whose background
  // threads are sampled now and then.
  std::string out = path("loads.jsonl");
  Exit e = whatif(out, {"--fixed-line", marker_spec("two_loads.c", "work")}, {program("two_loads"), "800", "1500"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GE(p.idle, 3) << "a 1.5-s pause holds several idle experiments";
  std::vector<double> first, second;  // durations of experiments in each load
  for (const Experiment& x : p.experiments) {
    (x.elapsed_ns < p.experiments.front().elapsed_ns + 1.2e9 ? first : second).push_back(x.duration_ns);
  }
  ASSERT_GE(first.size(), 3u);
  ASSERT_FALSE(second.empty());
  std::sort(first.begin(), first.end());
  const double usual = first[first.size() / 2];
  for (double duration : second) {
    EXPECT_LT(duration, 2.5 * usual) << "an experiment of the second load took " << duration / 1e6 << " ms, the first load's "
                                     << usual / 1e6 << " ms";
  }
}

TEST_F(Integration, TimerSamplerProducesExperimentsAndSamples) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20", "--sampler", "timer"}, {program("two_threads"), "2000"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_EQ(p.headers.at(0).sampler, "timer");
  EXPECT_GE(p.experiments.size(), 3u);
  EXPECT_GT(samples_for(p, marker_spec("two_threads.c", "fa")), 0);
  EXPECT_GT(samples_for(p, marker_spec("two_threads.c", "fb")), 0);
}

/// The number after `key=` in a program's output, or -1.
double printed(const std::string& out, const std::string& key) {
  std::size_t at = out.find(key + "=");
  return at == std::string::npos ? -1 : std::stod(out.substr(at + key.size() + 1));
}

/// The end-of-run warning naming the threads the adaptive sampler moved to the timer, or "".
std::string timer_summary(const Profile& p) {
  for (const std::string& w : p.warnings) {
    if (w.find("sampled with the CPU-time timer") != std::string::npos) return w;
  }
  return {};
}

/// Whether the summary's list of thread ids holds `tid`.
bool names_thread(const std::string& summary, long tid) {
  std::size_t open = summary.find("(tid"), close = summary.find(')', open);
  if (open == std::string::npos || close == std::string::npos) return false;
  std::string list = summary.substr(open, close - open) + ",";
  return list.find(" " + std::to_string(tid) + ",") != std::string::npos;
}

TEST_F(Integration, AThreadThatBlocksThousandsOfTimesASecondIsSampledByTheTimerOnItsOwnLine) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program("switchy"), "1500"});
  ASSERT_EQ(e.status, 0) << e;
  long server = static_cast<long>(printed(e.out, "server_tid")), steady = static_cast<long>(printed(e.out, "steady_tid"));
  double request_ms = printed(e.out, "request_cpu_ms");
  ASSERT_GT(server, 0) << e;
  ASSERT_GT(steady, 0) << e;
  ASSERT_GT(request_ms, 50) << "the server thread barely ran: " << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_EQ(p.headers.at(0).sampler, "perf_event") << "every thread starts on perf_event";
  std::string summary = timer_summary(p);
  ASSERT_FALSE(summary.empty()) << "no thread moved to the timer sampler: " << e;
  EXPECT_TRUE(names_thread(summary, server)) << summary << "\nserver thread " << server;
  EXPECT_FALSE(names_thread(summary, steady)) << "a thread that never blocks kept perf_event: " << summary;
  // The server's samples still land on its line: about one per ms of the CPU time it spent there.
  double samples = samples_for(p, marker_spec("switchy.c", "request"));
  EXPECT_GT(samples, 0.5 * request_ms) << samples << " samples for " << request_ms << " ms of CPU time on the line";
  EXPECT_LT(samples, 1.5 * request_ms) << samples << " samples for " << request_ms << " ms of CPU time on the line";
  EXPECT_GT(samples_for(p, marker_spec("switchy.c", "steady")), 0);
  EXPECT_GE(p.experiments.size(), 3u);
}

TEST_F(Integration, AForkedChildsThreadThatBlocksThousandsOfTimesASecondMovesToTheTimerToo) {
  // A pre-fork server's worker: the request/response pair runs in a forked child. Its forwarder
  // never ran the switch rule, so the child's server thread paid perf_event's cost at each of its
  // thousands of context switches a second, and the end-of-run warning named no thread.
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program("switchy"), "1500", "fork"});
  ASSERT_EQ(e.status, 0) << e;
  long server = static_cast<long>(printed(e.out, "server_tid")), steady = static_cast<long>(printed(e.out, "steady_tid"));
  ASSERT_GT(server, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  std::string summary = timer_summary(p);
  ASSERT_FALSE(summary.empty()) << "no thread of the child moved to the timer sampler: " << e;
  EXPECT_TRUE(names_thread(summary, server)) << summary << "\nthe child's server thread " << server;
  EXPECT_FALSE(names_thread(summary, steady)) << "a child's thread that never blocks kept perf_event: " << summary;
  EXPECT_GT(samples_for(p, marker_spec("switchy.c", "request")), 0) << "the child's samples reach the profile";
}

TEST_F(Integration, WhetherAThreadBlockingAFewThousandTimesASecondMovesDependsOnWhatSwitchesCostHere) {
  // The server thread does ~100 us of work per request and blocks after each (the client's 250 take
  // longer): 6,000-8,000 switches per second of its CPU time (each switch's perf events add to that
  // CPU time), as memcached's workers. Where a sampling event's switch costs 20 us
  // (this nested VM, two events a thread: 28% of its CPU time at that rate) it moves to the timer;
  // where it costs next to nothing it keeps perf_event's precision. Before the cost was measured, a
  // fixed 10,000 kept it on perf_event everywhere.
  for (const char* cost : {"20000", "1"}) {
    SCOPED_TRACE(std::string("WHATIF_SWITCH_COST_NS=") + cost);
    std::string out = path(std::string("p") + cost + ".jsonl");
    Exit e = whatif(out, {"--experiment-length", "20"}, {program("switchy"), "1200", "-", "100", "250"},
                    {{"WHATIF_SWITCH_COST_NS", cost}});
    ASSERT_EQ(e.status, 0) << e;
    long server = static_cast<long>(printed(e.out, "server_tid"));
    ASSERT_GT(server, 0) << e;
    Profile p = load_profile(out);
    check_well_formed(p);
    std::string summary = timer_summary(p);
    if (std::string(cost) == "1") {
      EXPECT_FALSE(names_thread(summary, server)) << "cheap switches moved the server: " << summary;
    } else {
      EXPECT_TRUE(names_thread(summary, server)) << "dear switches left the server on perf_event: " << e;
      EXPECT_NE(summary.find(" us at every context switch here"), std::string::npos) << summary;
    }
    EXPECT_GT(samples_for(p, marker_spec("switchy.c", "request")), 0);
  }
}

TEST_F(Integration, SamplerPerfKeepsEveryThreadOnPerfEvent) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20", "--sampler", "perf"}, {program("switchy"), "600"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_EQ(timer_summary(p), "") << "--sampler perf moved a thread to the timer";
  EXPECT_GT(samples_for(p, marker_spec("switchy.c", "request")), 0);
}

TEST_F(Integration, EndToEndRecordsOneExperimentForTheWholeRun) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--end-to-end"}, {program("two_threads"), "600"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_EQ(p.headers.at(0).end_to_end, true);
  auto experiments = p.experiments;
  ASSERT_EQ(experiments.size(), 1u);
  const PointObservation* end_to_end = point(experiments[0], "end-to-end");
  ASSERT_NE(end_to_end, nullptr) << "no end-to-end point";
  EXPECT_EQ(end_to_end->delta, 1);
  EXPECT_GT(experiments[0].duration_ns, 0.4e9) << "the experiment should span the run";
}

TEST_F(Integration, AppendKeepsEveryRunsExperiments) {
  std::string out = path("p.jsonl");
  Exit first = whatif(out, {"--experiment-length", "20"}, {program("two_threads"), "700"});
  ASSERT_EQ(first.status, 0) << first;
  std::size_t first_experiments = load_profile(out).experiments.size();
  Exit second = whatif(out, {"--experiment-length", "20", "--append"}, {program("two_threads"), "700"});
  ASSERT_EQ(second.status, 0) << second;
  Profile p = load_profile(out);
  EXPECT_EQ(p.headers.size(), 2u) << "one header per run";
  EXPECT_EQ(p.runtimes.size(), 2u);
  EXPECT_GT(p.experiments.size(), first_experiments);
  EXPECT_EQ(p.command, p.headers.at(0).command) << "the second run's header does not extend the command";
  // Without --append the file starts over.
  Exit third = whatif(out, {"--experiment-length", "20"}, {program("two_threads"), "300"});
  ASSERT_EQ(third.status, 0) << third;
  EXPECT_EQ(load_profile(out).headers.size(), 1u);
}

TEST_F(Integration, RuntimeRecordHasTheStatusMainReturned) {
  // Bug: a return from main reaches exit() inside glibc (no PLT call), so the exit shim never sees
  // the status and the atexit hook writes "exit_status": -1 for the most common way to end.
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program("two_threads"), "300", "5"});
  ASSERT_EQ(e.status, 5) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  auto runtimes = p.runtimes;
  ASSERT_EQ(runtimes.size(), 1u);
  EXPECT_EQ(runtimes[0].exit_status, 5) << "main returned 5";
}

}  // namespace
}  // namespace itest
