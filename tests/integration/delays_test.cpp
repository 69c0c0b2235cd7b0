// Integration tests: Blocking and delays: synchronisation-heavy programs with delays really inserted, the end of
// experiments, lock hand-offs and cancelled blocking calls.
// Runs in the gtest process through the harness (harness.h); each program is a child process.
#include <gtest/gtest.h>

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "harness.h"

namespace itest {
namespace {

/// The delay one of an experiment's selected samples calls for: s x period x the periods of CPU
/// time it stood for (its sample_scale).
double one_sample_ns(const Experiment& x, double period) { return x.speedup * period * x.sample_scale; }

/// The delay an experiment's selected samples call for.
double called_for_ns(const Experiment& x, double period) { return x.selected_samples * one_sample_ns(x, period); }

/// Over a profile's experiments: the delay inserted, what the selected line's samples call for,
/// and one such sample's delay per experiment (a sample at an experiment's edge can have its delay
/// counted on one side of the edge and itself on the other).
struct DelayTotals {
  double inserted = 0;
  double owed = 0;
  double one_sample_each = 0;
};

DelayTotals delay_totals(const Profile& profile) {
  DelayTotals totals;
  double period = profile.headers.at(0).sampling_period_ns;
  for (const Experiment& x : profile.experiments) {
    totals.inserted += x.delay_ns;
    totals.owed += called_for_ns(x, period);
    totals.one_sample_each += one_sample_ns(x, period);
  }
  return totals;
}

/// Inserted delay over what the selected line's samples call for: 1.00 when every sample's delay
/// is counted exactly once.
double delay_ratio(const Profile& profile) {
  DelayTotals totals = delay_totals(profile);
  return totals.owed > 0 ? totals.inserted / totals.owed : 0;
}

TEST_F(Integration, OutsideCpuLoadScalesEachSelectedSampleToTheWallTimeItTook) {
  // Bug: under outside load a thread's 1 ms of CPU takes 2 ms or more of wall time, and a real
  // speedup of the line gives that wall time back; delays sized in CPU time predicted half (callee
  // B: 14-18% for a 29% effect under a load of 6). A busy process shares CPU 0 with the program.
  cpu_set_t saved, cpu0;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  CPU_ZERO(&cpu0);
  CPU_SET(0, &cpu0);
  pid_t hog = fork();
  ASSERT_GE(hog, 0);
  if (hog == 0) {
    sched_setaffinity(0, sizeof(cpu0), &cpu0);
    for (unsigned long spin = 0;; ++spin) __asm__ volatile("" : "+r"(spin));
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(cpu0), &cpu0), 0);
  const Strings options = {"--experiment-length", "50", "--fixed-line", marker_spec("spin.c", "spin"),
                           "--fixed-speedup", "50"};
  Exit scaled = whatif(path("scaled.jsonl"), options, {program("spin"), "1500"});
  Exit plain = whatif(path("plain.jsonl"), options, {program("spin"), "1500"}, {{"WHATIF_CONTENTION", "off"}});
  sched_setaffinity(0, sizeof(saved), &saved);
  kill(hog, SIGKILL);
  waitpid(hog, nullptr, 0);
  ASSERT_EQ(scaled.status, 0) << scaled;
  ASSERT_EQ(plain.status, 0) << plain;

  Profile with = load_profile(path("scaled.jsonl"));
  Profile without = load_profile(path("plain.jsonl"));
  EXPECT_GT(delay_ratio(with), 1.4) << "a thread with half a CPU or less: each sample stands for 2 ms or more";
  // Without scaling, what was inserted is what the samples call for, give or take a sample at each
  // experiment's edges (CI: 4 samples' delay over 8 experiments of 23-25 samples, 2%; scaled by the
  // wall time under the hog it is 40% or more).
  DelayTotals plain_totals = delay_totals(without);
  EXPECT_NEAR(plain_totals.inserted, plain_totals.owed, plain_totals.one_sample_each)
      << "WHATIF_CONTENTION=off sizes delays in CPU time";
  bool warned = false;
  for (const std::string& w : with.warnings) warned = warned || w.find("waiting for a CPU") != std::string::npos;
  EXPECT_TRUE(warned) << "the run says the machine was busy";
  EXPECT_NE(scaled.err.find("waiting for a CPU"), std::string::npos) << scaled;
}

/// 0 for a baseline, 1 for an experiment at `speedup`, -1 for any other.
int experiment_kind(const Experiment& x, double speedup) {
  return x.speedup == 0 ? 0 : (std::abs(x.speedup - speedup) < 1e-9 ? 1 : -1);
}

/// The program speedup the experiments predict for their line at `speedup` against their own
/// baselines, measured by point `name`: 1 - (baseline period / sped period) per visit, with each
/// experiment's effective time (its duration less the delay inserted). 0 without both kinds.
double predicted_time_saved(const Profile& profile, const std::string& name, double speedup) {
  double visits[2] = {0, 0}, time[2] = {0, 0};
  for (const Experiment& x : profile.experiments) {
    int kind = experiment_kind(x, speedup);
    const PointObservation* o = point(x, name);
    if (kind < 0 || o == nullptr) continue;
    visits[kind] += o->delta;
    time[kind] += x.duration_ns - x.delay_ns;
  }
  if (visits[0] <= 0 || visits[1] <= 0 || time[0] <= 0 || time[1] <= 0) return 0;
  return 1 - (visits[0] / time[0]) / (visits[1] / time[1]);
}

/// As predicted_time_saved, from the median experiment of each kind instead of their sums: one
/// window in which this VM stood still does not decide it.
double median_time_saved(const Profile& profile, const std::string& name, double speedup) {
  std::vector<double> rates[2];
  for (const Experiment& x : profile.experiments) {
    int kind = experiment_kind(x, speedup);
    const PointObservation* o = point(x, name);
    if (kind < 0 || o == nullptr || x.duration_ns <= x.delay_ns) continue;
    rates[kind].push_back(o->delta / (x.duration_ns - x.delay_ns));
  }
  auto median = [](std::vector<double>& v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 == 1 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  if (rates[0].empty() || rates[1].empty()) return 0;
  double base = median(rates[0]), sped = median(rates[1]);
  return sped > 0 ? 1 - base / sped : 0;
}

/// crowd.c with `per_cpu` busy threads per usable CPU under `--fixed-line crowd-work --fixed-speedup
/// 50`: the share of time the run's experiments predict saved.
class CrowdedCpus : public Integration {
 protected:
  double time_saved_at_half_speed(int per_cpu) {
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof(cpus), &cpus) != 0) ADD_FAILURE() << "sched_getaffinity";
    std::string out = path("crowd" + std::to_string(per_cpu) + ".jsonl");
    Exit e = whatif(out, {"--fixed-line", marker_spec("crowd.c", "crowd-work"), "--fixed-speedup", "50"},
                    {program("crowd"), "5000", std::to_string(per_cpu * CPU_COUNT(&cpus))});
    EXPECT_EQ(e.status, 0) << e;
    EXPECT_NE(e.out.find("crowd ok"), std::string::npos) << e;
    Profile p = load_profile(out);
    EXPECT_GE(p.experiments.size(), 6u);
    return predicted_time_saved(p, "item", 0.5);
  }
  double spawn_rounds_at_half_speed(const std::string& mode, const std::string& marker);
};

TEST_F(CrowdedCpus, ThreadsThatOutnumberTheCpusGetTheirLinesSpeedupPredicted) {
  // Bug: twice as many busy threads as CPUs, all running one line: speeding it by 50% really
  // halves the run, but a thread that paused by sleeping handed its CPU to a sibling, so a pause
  // cost the program nothing and a sample stood for a CPU's time, not the wall time it took:
  // 62-63% predicted on a quiet machine, 19-22% beside a load of 10. A paused thread now spins,
  // keeping its share, and a sample stands for its wall time (2 CPU-ms per ms here): 49-52%.
  double predicted = time_saved_at_half_speed(2);
  EXPECT_GT(predicted, 0.40) << "the line is all of the work: a 50% speedup saves half the time";
  EXPECT_LT(predicted, 0.60) << "the line is all of the work: a 50% speedup saves half the time";
}

TEST_F(CrowdedCpus, FourThreadsPerCpuGetTheirLineSpeedupPredicted) {
  // Bug: with four busy threads per CPU a spinning pause pays a debt of d in about d of wall time.
  // Threads entered the measured part owing the warm-up's delay and paid it there, every drain ran
  // its 10-ms limit at the unsped rate, and pauses spun for their wall length, which ran whole on
  // the CPU when shorter than a slice: 33-43% predicted for 49.5%. Now 39-47% beside other load
  // (a sped experiment's effective time is a third of its length here, which triples any error).
  double predicted = time_saved_at_half_speed(4);
  EXPECT_GT(predicted, 0.35) << "the line is all of the work: a 50% speedup saves half the time";
  EXPECT_LT(predicted, 0.65) << "the line is all of the work: a 50% speedup saves half the time";
}

TEST_F(CrowdedCpus, ASerialLineBetweenAPoolsBurstsIsNotScaledByTheirWaits) {
  // Bug: a pool of twice as many workers as CPUs runs six tasks a round, then main runs a serial
  // line alone while the workers sleep. The program counted as oversubscribed, and each sample of
  // the serial line was scaled by main's wall time per CPU time over the last windows, waits for a
  // CPU during the tasks included: 1.38 and 1.47 times the delay its line time stands for, +21.9%
  // predicted for +15.7% (the Rust book's pool: +30% for +18%). A sample now stands for the wall
  // time its own period took.
  std::string out = path("pool_serial.jsonl");
  Exit e = whatif(out, {"--fixed-line", marker_spec("pool_serial.c", "pool-serial"), "--fixed-speedup", "50"},
                  {program("pool_serial"), "1400"});
  ASSERT_EQ(e.status, 0) << e;
  std::smatch match;
  ASSERT_TRUE(std::regex_search(e.out, match, std::regex("serial share ([0-9.]+)"))) << e;
  const double share = std::stod(match[1].str());
  Profile p = load_profile(out);
  ASSERT_GE(p.experiments.size(), 6u);
  ASSERT_FALSE(p.headers.empty());
  const double period = p.headers.at(0).sampling_period_ns;
  double delay = 0, line_time = 0;
  for (const Experiment& x : p.experiments) {
    if (x.speedup == 0) continue;
    delay += x.delay_ns;
    line_time += called_for_ns(x, period);
  }
  ASSERT_GT(line_time, 0) << "the serial line was sampled in its experiments";
  EXPECT_LT(delay / line_time, 1.3) << "main runs its serial line alone: a sample stands for its own period";
  double predicted = predicted_time_saved(p, "round", 0.5);
  EXPECT_NEAR(predicted, 0.5 * share, 0.045) << "the serial line's share of the run is " << share;
}

/// spawn_rounds in `mode` (fork or thread): the program's speedup at 50% for its `marker` line.
double CrowdedCpus::spawn_rounds_at_half_speed(const std::string& mode, const std::string& marker) {
  std::string out = path("spawn_rounds_" + mode + "_" + marker + ".jsonl");
  Exit e = whatif(out, {"--fixed-line", marker_spec("spawn_rounds.c", marker), "--fixed-speedup", "50"},
                  {program("spawn_rounds"), "700", mode});
  EXPECT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("spawn_rounds ok"), std::string::npos) << e;
  EXPECT_EQ(e.err.find("other processes kept"), std::string::npos) << "the workers are the program's: " << e;
  Profile p = load_profile(out);
  EXPECT_GE(p.experiments.size(), 6u);
  return predicted_time_saved(p, "round", 0.5);
}

TEST_F(CrowdedCpus, AForkingParentsLineIsPredictedAsAThreadCreatorsIs) {
  // Bug: each round the parent forks a child per CPU and runs its own line beside them, then reaps
  // them. The same rounds with threads came out right (spawnjoin: 24% for 22%), with processes at
  // 0% (for 20% natively): each process counted its runnable threads on its own, so the burst of
  // one more process than CPUs was never seen and no child's wait for a CPU absorbed its debt;
  // the children paid all of it after their work, with the parent waiting. And the parent's waits
  // for a CPU behind its own children were taken for other processes' load (samples scaled by 1.4).
  // On two CPUs main's 0.7 of 2.7 units of work saves ~17% of a round at 50% natively.
  double predicted = spawn_rounds_at_half_speed("fork", "spawn-main");
  EXPECT_GT(predicted, 0.06) << "main's line is on the rounds' critical path";
  EXPECT_LT(predicted, 0.35) << "the line is 0.7 of 2.7 units of the rounds' work";
}

TEST_F(Integration, APipelineSpedUpIntoItsCpuBoundIsPredictedWithinIt) {
  // Bug: three stages on two CPUs, bound by the middle one (2 ms an item, 700 us either side). At
  // 50% its items need 1.2 ms of the two CPUs, so at most 40% comes true; but the stages paused for
  // it slept, their CPUs went to the stage that would have waited for them, and the experiments
  // counted time nobody lost: 48-55% predicted. An experiment now counts no more delay than leaves
  // its effective time above the program's CPU work over its CPUs.
  cpu_set_t saved, two;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0);
  if (CPU_COUNT(&saved) < 2) GTEST_SKIP() << "needs two usable CPUs";
  CPU_ZERO(&two);
  for (int cpu = 0, kept = 0; cpu < CPU_SETSIZE && kept < 2; ++cpu) {
    if (CPU_ISSET(cpu, &saved) && ++kept > 0) CPU_SET(cpu, &two);
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(two), &two), 0);  // the program inherits it
  std::string out = path("cpu_pipeline.jsonl");
  Exit e = whatif(out, {"--fixed-line", marker_spec("cpu_pipeline.c", "pipe-middle"), "--fixed-speedup", "50"},
                  {program("cpu_pipeline"), "500"});
  sched_setaffinity(0, sizeof(saved), &saved);
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("cpu_pipeline ok"), std::string::npos) << e;
  Profile p = load_profile(out);
  ASSERT_GE(p.experiments.size(), 6u);
  ASSERT_FALSE(p.headers.empty());
  for (const Experiment& x : p.experiments) {
    EXPECT_EQ(x.cpus, 2) << "the CPUs the program may use";
    // The program's CPU time is what its samples say (each stands for a period of it), whatever
    // else the machine runs, and no more than two CPUs' worth.
    double sampled = x.total_samples * p.headers.at(0).sampling_period_ns;
    EXPECT_NEAR(x.cpu_ns, sampled, 0.25 * sampled + 3e6) << x.id;
    EXPECT_LT(x.cpu_ns, 2.05 * static_cast<double>(x.duration_ns)) << x.id;
  }
  // Every sped experiment keeps its effective time at or above its CPU bound, whatever the load.
  const double period = p.headers.at(0).sampling_period_ns;
  double baseline_cpu = 0, baseline_time = 0;
  for (const Experiment& x : p.experiments) {
    if (x.speedup == 0) {
      baseline_cpu += x.cpu_ns;
      baseline_time += x.duration_ns;
      continue;
    }
    double bound = (x.cpu_ns - x.spin_wait_ns - called_for_ns(x, period)) / x.cpus;
    EXPECT_GE(x.effective_duration_ns, 0.98 * bound) << x.id << ": counted more delay than its CPU time allows";
  }
  double predicted = predicted_time_saved(p, "item", 0.5);
  // With its two CPUs to itself (85% busy in its baselines), the program can gain 40% at most. Beside
  // the other tests' load its baselines get less of them, and the answer moves both ways (23% and
  // 46.6% have come out): the claim is checked only where the baselines show a quiet machine.
  double busy = baseline_time > 0 ? baseline_cpu / baseline_time : 0;
  if (busy >= 1.6) {
    EXPECT_LT(predicted, 0.44) << "the CPU time allows 40% at most (37.5% with its 85% busy CPUs)";
  }
  // Not much less: the bound must not cut a real gain away. Checked where the baselines had more
  // than one CPU's worth: under make test's heaviest load (1.15 CPUs busy, its baselines' rates 0.21
  // to 0.33 items/ms as the load came and went) 13% came out.
  if (busy >= 1.3) {
    EXPECT_GT(predicted, 0.15) << "the middle stage bounds the rate: a 50% speedup saves about a third (baselines "
                               << busy << " CPUs busy)";
  }
}

TEST_F(Integration, AFixedRateLoopOnAbsoluteDeadlinesGainsNothing) {
  // Bug: a loop that sleeps to absolute deadlines from one starting time runs at its clock's rate
  // whatever its work costs, but its line was predicted to gain 15% at s = 0.5: the deadlines
  // stayed real times while the experiment discounted the delay inserted, so each tick looked
  // shorter. A monotonic deadline now moves later by the delay inserted since the program last
  // read the clock, as it would fall in the virtual speedup's program.
  // The median experiment: one baseline of a failed run held 2 ticks in 58.7 ms where the others
  // held 21-26 in 52 (the ticker stood still, with the machine), and the summed rates said 16%.
  // An experiment holds 20-28 ticks, so its rate alone is uncertain by about 5%: session 23's CI
  // run (400 ticks, 5 experiments of each kind) gave 7.7% for a bound of 7%. 800 ticks hold about
  // ten of each; without the deadline shift the answer is 20-24%.
  Profile p = run_half_speedup_of("ticker", "tick-work", "800");
  double predicted = median_time_saved(p, "tick", 0.5);
  EXPECT_LT(std::abs(predicted), 0.10) << "the clock sets the rate: the line's speedup saves nothing";
}

TEST_F(Integration, APauseIsNotChargedToTheLinesThatRunAfterIt) {
  // Bug: a pause starts where its thread settles, at a sample, so with the thread's sampling on
  // while it spun, the next sample landed in the code after the pause. With twice as many threads
  // as CPUs and two lines, an item took 11-16% more samples of the program's lines while pauses
  // ran than in the baselines (7-11% in this test, the unselected line up to 33%), and the
  // selected line was credited for pauses (crowd: 26.5% predicted for 32.4%). A spinning thread's
  // sampling now stops until the pause ends: 1.6-4.6% at 6000 items (8 runs, 5 beside two CPU
  // hogs; CI once 5.7%), the pauses' own cost. 9000 items and a bound of 6% keep the bug's 7-11% out.
  cpu_set_t cpus;
  ASSERT_EQ(sched_getaffinity(0, sizeof(cpus), &cpus), 0);
  Exit e = whatif(path("crowd2.jsonl"), {"--fixed-line", marker_spec("crowd.c", "crowd-work"), "--fixed-speedup", "50"},
                  {program("crowd"), "9000", std::to_string(2 * CPU_COUNT(&cpus)), "270"});
  ASSERT_EQ(e.status, 0) << e;
  Profile p = load_profile(path("crowd2.jsonl"));
  ASSERT_GE(p.experiments.size(), 6u);
  double samples[2] = {0, 0}, visits[2] = {0, 0};  // baselines, sped experiments
  for (const Experiment& x : p.experiments) {
    const PointObservation* o = point(x, "item");
    if (o == nullptr || x.total_samples < 0) continue;
    int sped = x.speedup > 0 ? 1 : 0;
    samples[sped] += x.total_samples;
    visits[sped] += o->delta;
  }
  ASSERT_GT(visits[0], 0);
  ASSERT_GT(visits[1], 0);
  ASSERT_GT(samples[0], 0);
  double ratio = (samples[1] / visits[1]) / (samples[0] / visits[0]);
  EXPECT_LT(ratio, 1.06) << "an item took more samples of the program's lines while pauses ran";
  EXPECT_GT(ratio, 0.95);
  // The first line is 500 of the 770 units of an item: a 50% speedup saves about a third.
  double predicted = predicted_time_saved(p, "item", 0.5);
  EXPECT_GT(predicted, 0.20);
  EXPECT_LT(predicted, 0.45);
}

TEST_F(Integration, ThreadsShorterThanASamplingPeriodAreSampledInProportionToTheirCpuTime) {
  // Bug: every thread's sampling clock started at zero, so a thread pool's task that ran 0.9 ms of
  // CPU at a 1-ms period was never sampled: the line that was nearly all the program's work had no
  // samples (and a virtual speedup of it changed nothing: 0% predicted for about 45%). The first
  // period is now drawn at random, so each task is sampled with the probability its CPU time says.
  // The measure is the CPU time inside the line, and pauses sleep: the tasks' whole CPU time also
  // holds the runtime's start of each thread and, with spinning pauses, the pauses, which grew
  // under outside load until this test failed on a busy machine (3892 samples for 6073 ms).
  Exit e = whatif(path("fanout.jsonl"),
                  {"--fixed-line", marker_spec("fanout.c", "fanout-work"), "--fixed-speedup", "50", "--pause", "sleep"},
                  {program("fanout"), "1000"});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("fanout ok"), std::string::npos) << e;
  Profile p = load_profile(path("fanout.jsonl"));
  std::string line = marker_spec("fanout.c", "fanout-work");
  double in_line = 0;
  for (const auto& [name, count] : p.sample_counts) {
    if (name.size() >= line.size() && name.compare(name.size() - line.size(), line.size(), line) == 0) in_line += count;
  }
  std::size_t at = e.out.find("line_cpu_ms=");
  ASSERT_NE(at, std::string::npos) << e;
  double line_cpu_ms = std::stod(e.out.substr(at + 12));
  ASSERT_GT(line_cpu_ms, 500) << e;
  // One sample per ms of CPU time (the default period).
  EXPECT_GT(in_line, 0.8 * line_cpu_ms) << in_line << " samples in the line for " << line_cpu_ms << " ms of CPU time in it";
  EXPECT_LT(in_line, 1.2 * line_cpu_ms) << in_line << " samples in the line for " << line_cpu_ms << " ms of CPU time in it";
}

TEST_F(Integration, AThreadWhoseFirstSampleComesAtOnceIsNotFloodedWithSignals) {
  // Bug: a new thread's sampler started before the signal handler could find the thread. Its first
  // period is random and may be the kernel's shortest (10 us); the handler ignored that first
  // signal, so the whole period was never set and the event fired every 10-20 us, faster than the
  // signals were delivered: the thread lived in its handler, its real-time signal queue overflowed
  // and the kernel's fallback, SIGIO, killed the program (1 in 8 runs of 2000 threads; 2 in 3
  // here, where every thread asks for a 5-us first period). The sampler now floors it at 20 us
  // (os::PerfSampler::kShortestPeriodNs): at the timer's 10-us floor the kernel throttled the
  // event and no later period took, and this run went from 9 s to past the 60-s limit.
  Exit e = whatif(path("first.jsonl"),
                  {"--fixed-line", marker_spec("fanout.c", "fanout-work"), "--fixed-speedup", "50", "--pause", "sleep"},
                  {program("fanout"), "1000"}, {{"WHATIF_FIRST_PERIOD_NS", "5000"}});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("fanout ok"), std::string::npos) << e;
  EXPECT_EQ(e.err.find("terminated"), std::string::npos) << e;
}

class Sync : public Integration, public ::testing::WithParamInterface<const char*> {};

TEST_P(Sync, FinishesWithTheRightResultUnderDelays) {
  std::string mode = GetParam();
  std::string hot = marker_spec("sync.c", "hot-" + mode);
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20", "--fixed-line", hot, "--fixed-speedup", "50"},
                  {program("sync"), mode, "2000"}, {{"WHATIF_LOG", "debug"}});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find(mode + " ok"), std::string::npos) << e;
  // Every blocking call the threads made left the count of runnable threads as it found it, and
  // every thread that exited left the registered ones (a drift would fake or hide bursts).
  EXPECT_NE(e.err.find("threads at exit: 1 registered, 0 in blocking calls"), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  auto experiments = p.experiments;
  // Four busy threads on two cores can starve the profiler thread for a while: ask for one.
  ASSERT_GE(experiments.size(), 1u);
  long delay = 0, visits = 0;
  for (const Experiment& x : experiments) {
    delay += static_cast<long>(x.delay_ns);
    const PointObservation* op = point(x, "op");
    if (op != nullptr) visits += static_cast<long>(op->delta);
  }
  EXPECT_GT(delay, 0) << "no delay inserted for the 50% speedup of " << hot;
  EXPECT_GT(visits, 0);
  EXPECT_EQ(p.runtimes.size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Primitives, Sync, ::testing::Values("mutex", "cond", "barrier", "rwlock", "sem"),
                         [](const auto& info) { return std::string(info.param); });

TEST_F(Integration, ExperimentsEndOnceThreadsHavePaidNotAfterAFixedDrain) {
  // A fixed 10 ms drain without delays ended every experiment; its time and progress counted at the
  // unsped rate and diluted every prediction (by a sixth for 50 ms experiments). A single thread
  // owes nothing when delays stop, so its experiments now end at the next profiler tick: 50-51 ms
  // here even with both cores saturated, >= 60 ms with the fixed drain.
  Profile p = run_half_speedup_of("spin", "spin", "1200");
  std::vector<double> durations_ms;
  double delay = 0;
  for (const Experiment& x : p.experiments) {
    durations_ms.push_back(x.duration_ns / 1e6);
    delay += x.delay_ns;
  }
  ASSERT_GE(durations_ms.size(), 5u);
  std::sort(durations_ms.begin(), durations_ms.end());
  EXPECT_LT(durations_ms[durations_ms.size() / 2], 56.0) << "experiments ran on without delays after their end";
  EXPECT_GT(delay, 0);
}

TEST_F(Integration, LockHandOffCreditsTheHoldersSampleBeforeTheWaiterWakes) {
  // Samples in the critical section used to be credited a profiler tick late, after the lock had
  // changed hands: the woken thread then paused inside its own critical section, and a fifth of
  // the selected samples inserted no delay at all (ratio 0.79 on lock contention).
  Profile p = run_half_speedup_of("handoff", "inside", "12000");
  ASSERT_GE(p.experiments.size(), 3u);
  double ratio = delay_ratio(p);
  EXPECT_GT(ratio, 0.95) << "delays of selected samples were lost at lock hand-offs";
  EXPECT_LT(ratio, 1.05) << "delays were counted twice";
}

/// A ping-pong program's profile with its `ping` line sped up by 50%: the partner waits (however
/// it does) while `ping` runs, so it is credited, not paused: it sleeps for under half the delay.
void expect_ping_partner_credited(const Profile& p) {
  EXPECT_GE(p.experiments.size(), 4u);
  auto [paused, delay, recorded] = paused_and_delay(p);
  EXPECT_TRUE(recorded) << "experiment records carry paused_ns";
  EXPECT_GT(delay, 0) << "no delay inserted for the ping samples";
  EXPECT_LT(paused, 0.5 * delay) << "the waiting thread slept " << paused / 1e6 << " ms paying delays of " << delay / 1e6
                                 << " ms it did not owe";
}

TEST_F(Integration, AThreadWokenThroughARawFutexIsCreditedNotDelayed) {
  // Bug: C++20 atomic waits, std::latch and Rust's std Mutex/Condvar/parking block in
  // syscall(SYS_futex), which whatif did not see: a thread woken that way paid every delay that
  // accrued while it slept, so a strictly serial ping-pong whose `ping` was sped up by 50% slowed
  // down in real time by the delays (periods x1.19-1.32) and was predicted at 0% (+-8) instead of
  // about 37%. Woken by the other thread, it owes nothing: nobody pauses at all (the paused time,
  // not the rounds' real pace, which a loaded test machine blurs).
  // Samples the profiler credits a tick late still leak a little, more on a loaded machine (up to
  // a fifth with the tests running two at a time); without the fix the partner pays about all of it.
  Profile p = run_half_speedup_of("futex_pingpong", "ping", "1500");
  expect_ping_partner_credited(p);
  EXPECT_GT(delay_ratio(p), 0.9) << "the ping samples' delays were inserted";
}

TEST_F(Integration, AThreadSpinWaitingForTheLineIsCreditedNotDelayed) {
  // Bug: a thread that waits in a user-space spin loop (a spin lock, a flag, a spinning barrier)
  // makes no call whatif sees, so it paid the delays of the line it waited for at its samples:
  // while it spun (the pause then ran past the hand-off) or, later, inside its own work. The
  // suite's spin lock had its critical line predicted at 10% for 44%. Interrupted at a pause, it
  // is waiting for another thread, and owes nothing for the wait, as a blocked thread woken by
  // another does. Here it spins all the while `ping` runs, so it pauses for almost nothing.
  expect_ping_partner_credited(run_half_speedup_of("spin_pingpong", "ping", "1500"));
}

TEST_F(Integration, AThreadSpinningWithoutPauseIsCreditedToo) {
  // Bug: only spin loops with x86's pause were recognised. `while (flag == value) ;`, as naive
  // code and many tests spin, paid the line's delays like working code (and its spinning counted
  // as work the virtual program must do). A small loop that only loads and compares is a wait.
  expect_ping_partner_credited(run_half_speedup_of("spin_pingpong_plain", "ping", "1500", "spin_pingpong.c"));
}

TEST_F(Integration, AThreadYieldingInALoopIsCreditedToo) {
  // Bug: a thread that polls a flag and calls sched_yield in a loop (std::this_thread::yield(),
  // Rust's yield_now) paid the line's delays as working code does (1.01-1.05 times the inserted
  // delay), and its time in sched_yield counted as work the virtual program must do, so the CPU
  // bound cut the rest: `ping` at s = 0.5 came out at 13-19% for 37.5%. Calls that follow each
  // other closely are a wait for another thread: each is credited what accrued since the last.
  Profile p = run_half_speedup_of("spin_pingpong_yield", "ping", "1500", "spin_pingpong.c");
  expect_ping_partner_credited(p);
  double cpu = 0, spin_wait = 0;
  for (const auto& experiment : p.experiments) {
    if (experiment.speedup <= 0 || experiment.cpu_ns < 0 || experiment.spin_wait_ns < 0) continue;
    cpu += experiment.cpu_ns;
    spin_wait += experiment.spin_wait_ns;
  }
  ASSERT_GT(cpu, 0) << "sped-up experiments record their CPU time";
  // The partner yields all the while `ping` runs (3/4 of each round), the main thread while `pong`
  // runs: about 40% of the program's CPU time is spent inside sched_yield on a quiet machine, 18-20%
  // beside two busy loops, 3.6-7% beside another yield ping-pong (CI runs this test's sibling at
  // the same time), whose threads take the CPU each yield hands over. Exactly none before the fix.
  EXPECT_GT(spin_wait / cpu, 0.015) << "time inside sched_yield is a wait, not work the program must do";
}

TEST_F(Integration, ALineThatPollsAndYieldsIsNotSpedUpWhileItWaits) {
  // Bug: the time a polling loop spends inside sched_yield was the loop line's, so speeding the
  // line up inserted delays for its waiting: the other thread paid part of them after its
  // hand-off (a plain store, which no rule sees), and the wait line of a yield ping-pong was
  // predicted to gain 11.6% (21.3% once sched_yield's time left the CPU bound) for nothing.
  // Inside sched_yield a thread waits, whatever line called it.
  // The delays show it without the noise of a prediction: 4.5-5.5% of the sped-up experiments'
  // time on a quiet machine or beside two busy loops (the loop's own load and compare are the
  // line's), 36-38% before the fix (7% beside a yield ping-pong). The prediction itself is not
  // asserted: with next to no delay inserted it is the throughput noise of 10 experiments per arm,
  // which a loaded machine makes anything (9.6% in CI beside this test's sibling, 31.8% in one
  // `make test`); on a quiet machine it was 1.2%, 21.3% before the fix.
  Profile p = run_half_speedup_of("spin_pingpong_yield", "wait", "1500", "spin_pingpong.c");
  ASSERT_GE(p.experiments.size(), 4u);
  double delay = 0, duration = 0;
  for (const auto& experiment : p.experiments) {
    if (experiment.speedup <= 0) continue;
    delay += experiment.delay_ns;
    duration += experiment.duration_ns;
  }
  ASSERT_GT(duration, 0);
  EXPECT_LT(delay / duration, 0.15) << "a thread inside sched_yield is not running the line that called it";
}

TEST_F(Integration, ALibraryConstructorCallingSyscallBeforeTheRuntimeStartsWorks) {
  // Bug: the syscall(3) shim forwarded to an original it had not looked up yet, so a library
  // initialised before libwhatif.so (jemalloc, abseil and glog call syscall(SYS_gettid) in their
  // constructors) crashed the program before main.
  Exit e = whatif(path("early.jsonl"), {"--end-to-end"}, {program("early_syscall")});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("early ok"), std::string::npos) << e;
}

TEST_F(Integration, OpenMpWorkersWokenForARegionAreCreditedNotDelayed) {
  // Bug: libgomp's threads sleep and wake in inline futex calls that whatif did not see, so each
  // region's workers paid the delays of the serial line that ran while they slept: the serial line
  // sped up by 50% made every round slower in real time and was predicted too low (Amdahl's serial
  // part on OpenMP). The thread that opens a region wakes its team: the team owes nothing.
  // Nobody should pause at all: the serial line's thread runs it, and the team sleeps meanwhile.
  // Without the fix the worker slept about 0.8 of the delay asked of it; with it, under 0.2 on a
  // quiet machine (samples the profiler credits a tick late leak a little more under load).
  Profile p = run_half_speedup_of("omp_amdahl", "serial", "300");
  ASSERT_GE(p.experiments.size(), 4u);
  auto [paused, delay, recorded] = paused_and_delay(p);
  ASSERT_TRUE(recorded) << "experiment records carry paused_ns";
  ASSERT_GT(delay, 0) << "no delay inserted for the serial line's samples";
  EXPECT_LT(paused, 0.5 * delay) << "the OpenMP workers slept " << paused / 1e6 << " ms paying delays of "
                                 << delay / 1e6 << " ms they did not owe";
}

TEST_F(Integration, AnOpenMpSerialLineIsNotCappedByItsWorkersSpinning) {
  // Bug: libgomp's workers wait for the next region spinning in libgomp, on no line in scope, so the
  // spin-wait count of an experiment's CPU bound missed them: their spinning counted as work the
  // virtual program must do, and the bound cut the serial line's delay by about half (24.8% and
  // 21.6% with OMP_WAIT_POLICY=active, for about 44%; holdout `ompfor`: 15.6% for 30%). A round is
  // the serial line (4 ms) and a 0.5-ms region: at s = 0.5 it saves 2 of 4.5 ms. Delays are sized
  // in CPU time here, so the test runs alone (tests/integration/CMakeLists.txt): beside another
  // spinning program a round took twice as long in wall time and the 2 ms saved were 20% of it.
  Profile p = run_half_speedup_of("omp_amdahl", "serial", "300");
  ASSERT_GE(p.experiments.size(), 4u);
  double predicted = predicted_time_saved(p, "round", 0.5);
  EXPECT_GT(predicted, 0.35) << "the serial line's experiments were capped";
  EXPECT_LT(predicted, 0.5);
}

TEST_F(Integration, CancelledThreadsInBlockingCallsRunTheirCleanup) {
  std::string out = path("p.jsonl");
  // Delays really inserted: the main thread's line is sped up, so the blocked threads owe delays.
  Exit e = whatif(out, {"--experiment-length", "20", "--fixed-line", marker_spec("cancel.c", "main-work"),
                        "--fixed-speedup", "50"},
                  {program("cancel"), "1200"});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("cancel ok"), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GE(p.experiments.size(), 2u);
  EXPECT_EQ(p.runtimes.size(), 1u);
}

}  // namespace
}  // namespace itest
