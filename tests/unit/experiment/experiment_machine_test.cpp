// Unit tests of the experiment state machine (transitions, line and speedup choice, drain end) and
// of the length adaptation, driven with made-up times and samples. Test thread only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "experiment/experiment_machine.h"
#include "whatif/profile_format.h"

namespace whatif::experiment {
namespace {

constexpr uint64_t kMs = 1000000;
constexpr uint64_t kLength = 100 * kMs;
using State = ExperimentMachine::State;
using Kind = ExperimentMachine::Action::Kind;

MachineSettings settings(bool fixed_line = false, std::optional<int> fixed_speedup = std::nullopt, bool end_to_end = false) {
  return {fixed_line, fixed_speedup, end_to_end, kLength};
}

constexpr uint64_t kWarmUp = kLength / kWarmUpDivisor;

/// Runs cool-off and waiting from `now` until an experiment on line 0 starts, then its warm-up;
/// returns its start action, with `now` where its measurement began.
ExperimentMachine::Action start_next(ExperimentMachine& machine, uint64_t& now) {
  now += kCoolOffNs;
  EXPECT_EQ(machine.tick(now, false).kind, Kind::kNone);
  EXPECT_EQ(machine.state(), State::kWaitingForLine);
  machine.on_sample(0, true, 1);
  ExperimentMachine::Action action = machine.tick(now, false);
  EXPECT_EQ(action.kind, Kind::kStart);
  if (machine.state() != State::kWarmingUp) return action;  // end-to-end: measured from the start
  now += machine.length_ns() / kWarmUpDivisor;
  EXPECT_EQ(machine.tick(now, false).kind, Kind::kMeasure);
  return action;
}

TEST(ExperimentMachine, SaysWhenItNextChangesStateByItsOwnClock) {
  // The profiler thread sleeps up to that deadline (at most a coarse tick) and ticks finely while
  // the machine waits for a sample, a visit or the drain.
  ExperimentMachine machine(settings(), 1);
  machine.begin(1000);
  EXPECT_EQ(machine.next_deadline_ns(), 1000 + kCoolOffNs) << "cool-off";
  uint64_t now = 1000 + kCoolOffNs;
  machine.tick(now, false);
  ASSERT_EQ(machine.state(), State::kWaitingForLine);
  EXPECT_EQ(machine.next_deadline_ns(), 0u) << "a sampled line is looked for at every tick";
  machine.on_sample(0, false, 1);
  ASSERT_EQ(machine.tick(now, false).kind, Kind::kStart);
  EXPECT_EQ(machine.next_deadline_ns(), now + kWarmUp) << "warm-up";
  now += kWarmUp;
  ASSERT_EQ(machine.tick(now, false).kind, Kind::kMeasure);
  EXPECT_EQ(machine.next_deadline_ns(), now + kLength) << "measurement";
  ASSERT_EQ(machine.tick(now + kLength, false).kind, Kind::kBeginDraining);
  EXPECT_EQ(machine.next_deadline_ns(), 0u) << "the drain ends when no thread owes delay";

  ExperimentMachine end_to_end(settings(false, std::nullopt, true), 1);
  uint64_t start = 0;
  end_to_end.begin(start);
  start_next(end_to_end, start);
  ASSERT_EQ(end_to_end.state(), State::kRunning);
  EXPECT_EQ(end_to_end.next_deadline_ns(), UINT64_MAX) << "an end-to-end measurement ends with the program";
}

TEST(ExperimentMachine, CoolsOffWaitsForASampledLineRunsDrainsAndFinishes) {
  ExperimentMachine machine(settings(false, 50), 1);
  machine.begin(1000);
  EXPECT_EQ(machine.state(), State::kCoolOff);
  EXPECT_FALSE(machine.on_sample(3, false, 1)) << "no experiment runs";
  EXPECT_EQ(machine.tick(1000 + kCoolOffNs - 1, false).kind, Kind::kNone);
  EXPECT_EQ(machine.state(), State::kCoolOff);
  uint64_t now = 1000 + kCoolOffNs;
  EXPECT_EQ(machine.tick(now, false).kind, Kind::kNone);
  EXPECT_EQ(machine.state(), State::kWaitingForLine);
  EXPECT_EQ(machine.tick(++now, false).kind, Kind::kNone) << "no line sampled yet";
  EXPECT_EQ(machine.state(), State::kWaitingForLine);

  EXPECT_FALSE(machine.on_sample(7, false, 1));
  EXPECT_FALSE(machine.on_sample(9, false, 1));
  ExperimentMachine::Action action = machine.tick(++now, false);
  EXPECT_EQ(action.kind, Kind::kStart);
  EXPECT_EQ(action.line, 7) << "the first line sampled while waiting";
  EXPECT_DOUBLE_EQ(action.speedup, 0.5);
  EXPECT_EQ(machine.state(), State::kWarmingUp);
  EXPECT_EQ(machine.selected(), 7);

  // Warm-up: the speedup is in effect (its samples are credited) but nothing is counted yet.
  EXPECT_TRUE(machine.on_sample(7, false, 5)) << "a warming-up experiment credits its line's samples";
  EXPECT_FALSE(machine.on_sample(9, false, 1));
  EXPECT_EQ(machine.selected_samples(), 0u);
  EXPECT_EQ(machine.total_samples(), 0u);
  EXPECT_EQ(machine.tick(now + kWarmUp - 1, false).kind, Kind::kNone);
  EXPECT_EQ(machine.state(), State::kWarmingUp);
  now += kWarmUp;
  ExperimentMachine::Action measure = machine.tick(now, false);
  EXPECT_EQ(measure.kind, Kind::kMeasure) << "the caller snapshots progress and delay now";
  EXPECT_EQ(measure.line, 7);
  EXPECT_EQ(machine.state(), State::kRunning);
  EXPECT_EQ(machine.start_ns(), now) << "the experiment is measured from the end of its warm-up";
  uint64_t start = now;

  EXPECT_TRUE(machine.on_sample(7, false, 2));
  EXPECT_FALSE(machine.on_sample(9, false, 1));
  EXPECT_FALSE(machine.on_sample(9, true, 1)) << "fixed_match means nothing without --fixed-line";
  EXPECT_EQ(machine.selected_samples(), 2u);
  EXPECT_EQ(machine.total_samples(), 4u);

  EXPECT_EQ(machine.tick(start + kLength - 1, true).kind, Kind::kNone) << "runs for the whole length";
  EXPECT_EQ(machine.tick(start + kLength, false).kind, Kind::kBeginDraining);
  EXPECT_EQ(machine.state(), State::kDraining);
  EXPECT_FALSE(machine.on_sample(7, false, 1)) << "draining samples are not the experiment's";
  EXPECT_EQ(machine.tick(start + kLength + 1, false).kind, Kind::kNone) << "threads still owe delay";
  EXPECT_EQ(machine.tick(start + kLength + 2, true).kind, Kind::kFinish);

  machine.finish(start + kLength + 2, Outcome{20});
  EXPECT_EQ(machine.state(), State::kCoolOff);
  EXPECT_EQ(machine.experiments_done(), 1u);
  EXPECT_EQ(machine.length_ns(), kLength) << "20 visits: enough, not many";
  EXPECT_EQ(machine.tick(start + kLength + 1 + kCoolOffNs, false).kind, Kind::kNone);
  EXPECT_EQ(machine.state(), State::kCoolOff) << "cool-off lasts kCoolOffNs from the finish";
  EXPECT_EQ(machine.tick(start + kLength + 2 + kCoolOffNs, false).kind, Kind::kNone);
  EXPECT_EQ(machine.state(), State::kWaitingForLine);
}

TEST(ExperimentMachine, CoolsOffLongerAfterAnExperimentThatInsertedDelay) {
  // A sped-up producer fills an unbounded queue while its consumer pays the delay; the next
  // experiment must not measure the drain of that backlog as its own rate.
  ExperimentMachine machine(settings(), 1);
  uint64_t now = 0;
  machine.begin(now);
  // Runs an experiment, finishes it with `inserted_ns` of delay and returns its cool-off.
  auto cool_off_after = [&](uint64_t inserted_ns, bool set_aside = false) {
    start_next(machine, now);
    now += kLength;
    EXPECT_EQ(machine.tick(now, true).kind, Kind::kBeginDraining);
    EXPECT_EQ(machine.tick(now, true).kind, Kind::kFinish);
    Outcome outcome{20};
    outcome.inserted_ns = inserted_ns;
    outcome.set_aside = set_aside;
    machine.finish(now, outcome);
    EXPECT_EQ(machine.state(), State::kCoolOff);
    uint64_t cool_off = machine.next_deadline_ns() - now;
    machine.tick(now + cool_off - 1, false);
    EXPECT_EQ(machine.state(), State::kCoolOff);
    now += cool_off - kCoolOffNs;  // start_next adds kCoolOffNs
    return cool_off;
  };
  EXPECT_EQ(cool_off_after(0), kCoolOffNs) << "no delay inserted: the usual cool-off";
  EXPECT_EQ(cool_off_after(30 * kMs), kCoolOffNs + kSettleFactor * 30 * kMs) << "twice the delay inserted";
  EXPECT_EQ(cool_off_after(90 * kMs), kCoolOffNs + kLength) << "never more than a length beyond the usual";
  EXPECT_EQ(cool_off_after(30 * kMs, true), kCoolOffNs + kSettleFactor * 30 * kMs)
      << "a set-aside experiment's backlog is as real";
  start_next(machine, now);
  EXPECT_EQ(machine.state(), State::kRunning) << "and the warm-up is the usual one";
}

TEST(ExperimentMachine, MeasurementStartsAndEndsRightAfterAProgressVisit) {
  // Items of 3 ms, 30 to an experiment: a window cut anywhere counted one item more or less than
  // the time it spanned held (3% of each experiment's rate). Once the warm-up or the length is
  // over, the boundary waits for a visit, at most a quarter of the length.
  ExperimentMachine machine(settings(true, 50), 1);
  machine.begin(0);
  uint64_t now = kCoolOffNs;
  machine.tick(now, false);  // the cool-off ends
  ASSERT_EQ(machine.tick(now, false).kind, Kind::kStart);
  EXPECT_FALSE(machine.awaiting_visit(now));
  now += kWarmUp;
  EXPECT_TRUE(machine.awaiting_visit(now));
  EXPECT_EQ(machine.tick(now, false, false).kind, Kind::kNone) << "no visit yet: still warming up";
  EXPECT_EQ(machine.state(), State::kWarmingUp);
  now += 2 * kMs;
  EXPECT_EQ(machine.tick(now, false, true).kind, Kind::kMeasure) << "the tick after a visit";
  EXPECT_EQ(machine.start_ns(), now);
  EXPECT_FALSE(machine.awaiting_visit(now + kLength - 1));
  EXPECT_EQ(machine.tick(now + kLength, false, false).kind, Kind::kNone) << "long enough, but no visit";
  EXPECT_EQ(machine.state(), State::kRunning);
  EXPECT_EQ(machine.tick(now + kLength + kMs, false, true).kind, Kind::kBeginDraining);
  machine.finish(now + kLength + kMs, {});

  // A program whose points are seldom visited: the boundaries wait a quarter of the length at most.
  now += kLength + kMs + kCoolOffNs;
  machine.tick(now, false);  // the cool-off ends
  ASSERT_EQ(machine.tick(now, false).kind, Kind::kStart);
  now += kWarmUp;
  EXPECT_EQ(machine.tick(now + kLength / 4 - 1, false, false).kind, Kind::kNone);
  EXPECT_EQ(machine.tick(now + kLength / 4, false, false).kind, Kind::kMeasure);
  now += kLength / 4;
  EXPECT_EQ(machine.tick(now + kLength + kLength / 4 - 1, false, false).kind, Kind::kNone);
  EXPECT_EQ(machine.tick(now + kLength + kLength / 4, false, false).kind, Kind::kBeginDraining);
}

TEST(ExperimentMachine, EachExperimentTakesTheFirstLineSampledAfterItsCoolOff) {
  ExperimentMachine machine(settings(false, 10), 1);
  machine.begin(0);
  uint64_t now = kCoolOffNs;
  machine.tick(now, false);
  machine.on_sample(4, false, 1);
  ASSERT_EQ(machine.tick(now, false).line, 4);
  machine.finish(now, Outcome{20});
  machine.on_sample(5, false, 1);  // cooling off: not a candidate
  now += kCoolOffNs;
  EXPECT_EQ(machine.tick(now, false).kind, Kind::kNone);
  EXPECT_EQ(machine.tick(now, false).kind, Kind::kNone) << "neither the last line nor a cool-off sample";
  machine.on_sample(6, false, 1);
  ExperimentMachine::Action action = machine.tick(now, false);
  EXPECT_EQ(action.kind, Kind::kStart);
  EXPECT_EQ(action.line, 6);
  EXPECT_EQ(machine.selected_samples(), 0u) << "counts restart with each experiment";
  EXPECT_EQ(machine.total_samples(), 0u);
}

TEST(ExperimentMachine, DrainEndsAtItsDeadlineEvenIfThreadsStillOwe) {
  ExperimentMachine machine(settings(false, 10), 1);
  machine.begin(0);
  uint64_t now = 0;
  start_next(machine, now);
  uint64_t drain_start = now + kLength;
  ASSERT_EQ(machine.tick(drain_start, false).kind, Kind::kBeginDraining);
  EXPECT_EQ(machine.tick(drain_start + kMaxDrainNs - 1, false).kind, Kind::kNone);
  EXPECT_EQ(machine.state(), State::kDraining);
  EXPECT_EQ(machine.tick(drain_start + kMaxDrainNs, false).kind, Kind::kFinish);
}

TEST(ExperimentMachine, FixedLineStartsWithoutASampleAndSelectsItsMatches) {
  ExperimentMachine machine(settings(/*fixed_line=*/true, 25), 1);
  machine.begin(0);
  EXPECT_EQ(machine.tick(kCoolOffNs, false).kind, Kind::kNone);
  ExperimentMachine::Action action = machine.tick(kCoolOffNs, false);
  EXPECT_EQ(action.kind, Kind::kStart) << "no candidate needed";
  EXPECT_EQ(action.line, -1);
  EXPECT_DOUBLE_EQ(action.speedup, 0.25);
  ASSERT_EQ(machine.tick(kCoolOffNs + kWarmUp, false).kind, Kind::kMeasure);
  EXPECT_TRUE(machine.on_sample(4, true, 3));
  EXPECT_TRUE(machine.on_sample(8, true, 1)) << "every line matching --fixed-line is selected";
  EXPECT_FALSE(machine.on_sample(5, false, 1));
  EXPECT_EQ(machine.selected_samples(), 4u);
  EXPECT_EQ(machine.total_samples(), 5u);
  EXPECT_FALSE(machine.on_sample(4, true, 2, /*waiting=*/true)) << "the line's thread waits inside sched_yield";
  EXPECT_EQ(machine.selected_samples(), 4u);
  EXPECT_EQ(machine.total_samples(), 7u) << "a waiting sample is still the program's time";
}

TEST(ExperimentMachine, FixedSpeedupRunsCarryTheirOwnBaselineInPairs) {
  // A --fixed-speedup run interleaves baselines so its prediction comes from one run: every pair
  // of experiments holds one at 0 and one at the fixed speedup, in an order that varies (each pair
  // starts at the speed the last one ended with).
  ExperimentMachine machine(settings(false, 35), 7);
  machine.begin(0);
  uint64_t now = 0;
  int baseline_first = 0;
  for (int pair = 0; pair < 50; ++pair) {
    double first = start_next(machine, now).speedup;
    machine.finish(now, Outcome{20});
    double second = start_next(machine, now).speedup;
    machine.finish(now, Outcome{20});
    EXPECT_DOUBLE_EQ(first + second, 0.35) << "pair " << pair;
    EXPECT_TRUE(first == 0 || second == 0) << "pair " << pair;
    if (first == 0) ++baseline_first;
  }
  EXPECT_GT(baseline_first, 10);
  EXPECT_LT(baseline_first, 40);
}

TEST(ExperimentMachine, FixedSpeedupPairsSettleOnlyWhenTheSpeedChanges) {
  // 0 s s 0 0 s ...: an experiment followed by one at its own speed leaves nothing to settle, and
  // half the changes of speed a random order would make are saved.
  ExperimentMachine machine(settings(false, 60), 3);
  machine.begin(0);
  uint64_t now = 0;
  std::vector<double> speeds;
  std::vector<uint64_t> cool_offs;
  for (int i = 0; i < 24; ++i) {
    speeds.push_back(start_next(machine, now).speedup);
    now += kLength;
    EXPECT_EQ(machine.tick(now, true).kind, Kind::kBeginDraining);
    EXPECT_EQ(machine.tick(now, true).kind, Kind::kFinish);
    Outcome outcome{20};
    outcome.inserted_ns = speeds.back() > 0 ? 40 * kMs : 0;
    machine.finish(now, outcome);
    cool_offs.push_back(machine.next_deadline_ns() - now);
    now += cool_offs.back() - kCoolOffNs;  // start_next adds kCoolOffNs
  }
  for (std::size_t i = 0; i + 1 < speeds.size(); ++i) {
    bool settles = speeds[i] > 0 && speeds[i + 1] != speeds[i];
    EXPECT_EQ(cool_offs[i], kCoolOffNs + (settles ? kSettleFactor * 40 * kMs : 0)) << "experiment " << i;
  }
  for (std::size_t i = 2; i + 1 < speeds.size(); i += 2) {
    EXPECT_EQ(speeds[i], speeds[i - 1]) << "pair " << i / 2 << " starts at the speed the last ended with";
    EXPECT_NE(speeds[i], speeds[i + 1]) << "pair " << i / 2 << " holds both speeds";
  }
}

/// Runs `count` experiments of `machine` (a --fixed-speedup run), the i-th finishing with
/// `outcome_of(i)`: the length must not move, and the experiments kept (neither set aside nor idle)
/// must hold about as many baselines as sped experiments, every pair whole.
template <typename OutcomeOf>
void expect_skipped_ones_teach_nothing(ExperimentMachine& machine, uint64_t& now, int count, OutcomeOf outcome_of) {
  const uint64_t length = machine.length_ns();
  std::vector<double> kept;
  for (int i = 0; i < count; ++i) {
    double speedup = start_next(machine, now).speedup;
    Outcome outcome = outcome_of(i);
    machine.finish(now, outcome);
    if (!outcome.set_aside && !outcome.idle) kept.push_back(speedup);
  }
  EXPECT_EQ(machine.length_ns(), length);
  int baselines = static_cast<int>(std::count(kept.begin(), kept.end(), 0.0));
  int sped = static_cast<int>(kept.size()) - baselines;
  EXPECT_LE(std::abs(baselines - sped), 2) << baselines << " baselines, " << sped << " sped";
}

TEST(ExperimentMachine, ASetAsideExperimentIsRepeatedAndTeachesNothing) {
  // An experiment that lost its samples is not measured at all: a --fixed-speedup run repeats its
  // speedup so every pair stays whole, and its few visits do not double the next length.
  ExperimentMachine machine(settings(false, 35), 7);
  machine.begin(0);
  uint64_t now = 0;
  expect_skipped_ones_teach_nothing(machine, now, 40, [](int i) {
    Outcome outcome{20};
    outcome.set_aside = i % 3 == 1;
    if (outcome.set_aside) outcome.fewest = 1;  // too few visits: would double the length
    return outcome;
  });
}

TEST(ExperimentMachine, IdleExperimentsNeitherGrowTheLengthNorBreakPairs) {
  // Bug: between two loads a server's experiments saw no visit, and each doubled the next length
  // (100 ms to 800 ms over a 1.5-s pause), so the next load began with one long experiment at one
  // speedup. The readers leave such experiments out; the machine now learns nothing from them.
  EXPECT_TRUE(format::idle_experiment(0, 2000000, 125000000));    // a server's tail: 2 ms of CPU in 125 ms
  EXPECT_FALSE(format::idle_experiment(0, 50000000, 100000000));  // busy without progress (a set phase)
  EXPECT_FALSE(format::idle_experiment(3, 1000000, 100000000));   // slow progress is progress
  ExperimentMachine machine(settings(false, 35), 7);
  machine.begin(0);
  uint64_t now = 0;
  start_next(machine, now);
  machine.finish(now, Outcome{20});  // progress seen at the usual length
  expect_skipped_ones_teach_nothing(machine, now, 30, [](int i) {
    Outcome outcome{20};
    outcome.idle = i >= 10 && i < 20;  // the pause between two loads
    if (outcome.idle) outcome.fewest = 0, outcome.visits = 0;
    return outcome;
  });
}

TEST(RingLosses, AnExperimentWhoseRingsDroppedItsSamplesIsSetAside) {
  // Bug: a Rust program's first experiment, while the profiler thread read the standard library's
  // DWARF, kept 9-30% of its samples (the rest dropped by the full rings) and was averaged in:
  // rmutex B came out at 22.7% in one run of two (the other 45.2, truth 47.8).
  RingLosses losses;
  EXPECT_TRUE(losses.set_aside(/*dropped=*/82, /*kept=*/54));
  EXPECT_FALSE(losses.set_aside(5, 160)) << "a few dropped: within the samples' own noise";
  EXPECT_FALSE(losses.set_aside(0, 160));
  for (std::size_t i = 1; i < kCoverageMaxInARow; ++i) EXPECT_TRUE(losses.set_aside(100, 100)) << i;
  EXPECT_FALSE(losses.set_aside(100, 100)) << "five in a row: the program's steady state, kept";
  EXPECT_FALSE(losses.set_aside(100, 100)) << "and from then on";
  EXPECT_FALSE(losses.set_aside(0, 100));
  EXPECT_TRUE(losses.set_aside(100, 100)) << "a clean experiment starts the count again";
}

TEST(ProfilerLoad, AnExperimentInWhichTheProfilerThreadTookACpuIsSetAside) {
  // Bug: holdout rbarrier A (3 threads on 2 CPUs, Rust) came out at +55 in one run of two (+30 in
  // the other, truth 27.8). Its first experiment ran while the profiler thread resolved the Rust
  // standard library's DWARF, 150-360 ms of its CPU, and was averaged in.
  constexpr uint64_t kMs = 1000000;
  ProfilerLoad load;
  EXPECT_TRUE(load.busy(250 * kMs, 300 * kMs)) << "the first experiment: no history, judged by the share alone";
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(load.busy(3 * kMs, 100 * kMs)) << i;
  EXPECT_FALSE(load.busy(8 * kMs, 100 * kMs)) << "a busier tick, still a small share";
  EXPECT_TRUE(load.busy(40 * kMs, 100 * kMs)) << "a later spike (a dlopen's symbols)";
  EXPECT_FALSE(load.busy(3 * kMs, 100 * kMs)) << "spikes do not raise the reference";
  EXPECT_FALSE(load.busy(0, 0));
  // A program whose sampling keeps the profiler thread busy all along (many threads): judged by its
  // own level, not set aside from the start for good.
  ProfilerLoad heavy;
  for (std::size_t i = 0; i + 1 < kCoverageMaxInARow; ++i) EXPECT_TRUE(heavy.busy(35 * kMs, 100 * kMs)) << i;
  EXPECT_FALSE(heavy.busy(35 * kMs, 100 * kMs)) << "its steady state, from the last of a run of them on";
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(heavy.busy((30 + i * 3) * kMs, 100 * kMs)) << i;
  EXPECT_FALSE(heavy.busy(60 * kMs, 100 * kMs)) << "less than three times its own level";
  ProfilerLoad moderate;  // a tenth of a CPU all along
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(moderate.busy(10 * kMs, 100 * kMs)) << i;
  EXPECT_TRUE(moderate.busy(35 * kMs, 100 * kMs)) << "three times its own level, and a fifth of a CPU";
}

TEST(SampleCoverage, AnExperimentWhoseSamplesFallFarShortOfItsCpuTimeLostThem) {
  constexpr uint64_t kPeriod = 1000000;
  SampleCoverage coverage;
  // The reference is the run's own ratio: here 0.5 (half its CPU time out of reach all along).
  EXPECT_FALSE(coverage.lost(20, 140 * kPeriod, kPeriod));  // no judgement before 3 experiments
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(coverage.lost(70, 140 * kPeriod, kPeriod));
  EXPECT_FALSE(coverage.lost(62, 140 * kPeriod, kPeriod));  // ordinary variation
  EXPECT_TRUE(coverage.lost(20, 140 * kPeriod, kPeriod));   // 20 of ~70 expected
  EXPECT_TRUE(coverage.lost(0, 300 * kPeriod, kPeriod));
  // Few samples vary more: 3 of 7 expected is no evidence.
  EXPECT_FALSE(coverage.lost(3, 14 * kPeriod, kPeriod));
  // Too little CPU time to tell anything, and no period.
  EXPECT_FALSE(coverage.lost(0, 5 * kPeriod, kPeriod));
  EXPECT_FALSE(coverage.lost(0, 140 * kPeriod, 0));
  // Lost experiments do not lower the reference.
  EXPECT_FALSE(coverage.lost(70, 140 * kPeriod, kPeriod));
  EXPECT_TRUE(coverage.lost(10, 140 * kPeriod, kPeriod));
  EXPECT_TRUE(coverage.lost(10, 140 * kPeriod, kPeriod));
  EXPECT_FALSE(coverage.lost(70, 140 * kPeriod, kPeriod));
  EXPECT_TRUE(coverage.lost(10, 140 * kPeriod, kPeriod));
  // A program whose ratio changes for good (a phase whose CPU time is out of reach) is judged by
  // its new ratio after kCoverageMaxInARow experiments, not set aside from then on.
  SampleCoverage moving;
  for (int i = 0; i < 9; ++i) EXPECT_FALSE(moving.lost(140, 140 * kPeriod, kPeriod));
  for (std::size_t i = 0; i + 1 < kCoverageMaxInARow; ++i) EXPECT_TRUE(moving.lost(50, 140 * kPeriod, kPeriod));
  EXPECT_FALSE(moving.lost(50, 140 * kPeriod, kPeriod));
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(moving.lost(45 + i * 2, 140 * kPeriod, kPeriod));
  EXPECT_TRUE(moving.lost(5, 140 * kPeriod, kPeriod));
}

TEST(PeriodsPerSample, ASelectedSampleStandsForTheCpuTimeWhatifsOwnWorkAddsToItsPeriod) {
  constexpr uint64_t kPeriod = 1000000;
  PeriodsPerSample ratio;
  // Until enough samples were pooled, a sample is worth its period.
  ratio.add(97, 100 * kPeriod, kPeriod);
  EXPECT_DOUBLE_EQ(ratio.factor(), 1.0);
  // A computing thread here kept 0.97 samples per ms of its CPU time: the rest landed in the kernel's
  // delivery of the samples' own signals, whatif's time.
  for (int i = 0; i < 10; ++i) ratio.add(97, 100 * kPeriod, kPeriod);
  EXPECT_NEAR(ratio.factor(), 100.0 / 97.0, 1e-9);
  // Pooled, not per experiment: one experiment with few samples moves it only part of the way.
  ratio.add(80, 100 * kPeriod, kPeriod);
  EXPECT_GT(ratio.factor(), 100.0 / 97.0);
  EXPECT_LT(ratio.factor(), 1.1);
  // Experiments with too little CPU time teach nothing; more samples than periods is no gain.
  PeriodsPerSample dense;
  for (int i = 0; i < 10; ++i) dense.add(0, 5 * kPeriod, kPeriod);
  EXPECT_DOUBLE_EQ(dense.factor(), 1.0);
  for (int i = 0; i < 10; ++i) dense.add(105, 100 * kPeriod, kPeriod);
  EXPECT_DOUBLE_EQ(dense.factor(), 1.0);
  // Far fewer samples than CPU time is lost sampling, not overhead: capped.
  PeriodsPerSample sparse;
  for (int i = 0; i < 10; ++i) sparse.add(50, 100 * kPeriod, kPeriod);
  EXPECT_DOUBLE_EQ(sparse.factor(), kPeriodsPerSampleMax);
}

TEST(ExperimentMachine, FixedSpeedupZeroAndEndToEndRunsKeepTheirSpeedup) {
  ExperimentMachine zero(settings(false, 0), 7);
  zero.begin(0);
  uint64_t now = 0;
  for (int i = 0; i < 10; ++i) {
    EXPECT_DOUBLE_EQ(start_next(zero, now).speedup, 0);
    zero.finish(now, Outcome{20});
  }
  MachineSettings one = settings(false, 35);
  one.end_to_end = true;
  ExperimentMachine end_to_end(one, 7);
  end_to_end.begin(0);
  now = 0;
  EXPECT_DOUBLE_EQ(start_next(end_to_end, now).speedup, 0.35);
}

std::vector<double> speedups(uint64_t seed, int count) {
  ExperimentMachine machine(settings(), seed);
  machine.begin(0);
  uint64_t now = 0;
  std::vector<double> out;
  for (int i = 0; i < count; ++i) {
    out.push_back(start_next(machine, now).speedup);
    machine.finish(now, Outcome{20});
  }
  return out;
}

TEST(ExperimentMachine, HalfTheExperimentsAreBaselinesTheRestMultiplesOfFivePercent) {
  std::vector<double> chosen = speedups(42, 2000);
  std::map<int, int> by_step;  // speedup / 5% -> experiments
  for (double speedup : chosen) {
    double steps = speedup / 0.05;
    ASSERT_NEAR(steps, std::round(steps), 1e-9) << speedup;
    by_step[static_cast<int>(std::lround(steps))]++;
  }
  EXPECT_GE(by_step[0], 900) << "baselines, probability 1/2";
  EXPECT_LE(by_step[0], 1100);
  EXPECT_EQ(by_step.size(), 21u) << "0 and each of 5%..100%";
  EXPECT_EQ(by_step.begin()->first, 0);
  EXPECT_EQ(by_step.rbegin()->first, 20);
  EXPECT_EQ(speedups(42, 200), std::vector<double>(chosen.begin(), chosen.begin() + 200)) << "a seed repeats its choices";
  EXPECT_NE(speedups(43, 200), std::vector<double>(chosen.begin(), chosen.begin() + 200));
}

TEST(ExperimentMachine, EndToEndRunsUntilFinishedAndKeepsItsLength) {
  ExperimentMachine machine(settings(false, 10, /*end_to_end=*/true), 1);
  machine.begin(0);
  uint64_t now = 0;
  start_next(machine, now);
  EXPECT_EQ(machine.tick(now + 1000 * kLength, false).kind, Kind::kNone);
  EXPECT_EQ(machine.state(), State::kRunning);
  machine.finish(now + 1000 * kLength, Outcome{0});
  EXPECT_EQ(machine.length_ns(), kLength);
}

TEST(ExperimentMachine, FinishAdaptsTheLengthToTheVisits) {
  ExperimentMachine machine(settings(false, 10), 1);
  machine.begin(0);
  uint64_t now = 0;
  start_next(machine, now);
  machine.finish(now, Outcome{3});
  EXPECT_EQ(machine.length_ns(), 2 * kLength);
  start_next(machine, now);
  machine.finish(now, Outcome{0});
  EXPECT_EQ(machine.length_ns(), 4 * kLength);
  start_next(machine, now);
  EXPECT_EQ(machine.tick(now + 4 * kLength - 1, false).kind, Kind::kNone) << "the adapted length is the one run";
  EXPECT_EQ(machine.tick(now + 4 * kLength, false).kind, Kind::kBeginDraining);
  machine.finish(now, Outcome{1000});
  EXPECT_EQ(machine.length_ns(), 2 * kLength);
}

TEST(ExperimentMachine, ThePhaseBeforeAnyProgressDoesNotGrowTheLength) {
  // A server loading its data before the load it serves: no experiment sees a visit, and the first
  // one of the measured phase must not be many times longer than the rest.
  ExperimentMachine machine(settings(), 1);
  machine.begin(0);
  uint64_t now = 0;
  for (int i = 0; i < 3; ++i) {
    start_next(machine, now);
    machine.finish(now, Outcome{0});
    EXPECT_EQ(machine.length_ns(), kLength) << "experiment " << i;
  }
  start_next(machine, now);
  machine.finish(now, Outcome{0, 4});
  EXPECT_EQ(machine.length_ns(), 2 * kLength) << "too few visits once progress has begun";
  start_next(machine, now);
  machine.finish(now, Outcome{0});
  EXPECT_EQ(machine.length_ns(), 4 * kLength) << "a rare point: an experiment without visits grows the next";

  // A point visited between measurement windows only (every 100 ms, against 15-ms windows) is
  // progress seen too: the length grows until the windows catch its visits.
  ExperimentMachine rare(settings(), 1);
  rare.begin(0);
  now = 0;
  start_next(rare, now);
  Outcome between;
  between.progress_seen = true;
  rare.finish(now, between);
  EXPECT_EQ(rare.length_ns(), 2 * kLength);
}

TEST(ExperimentMachine, AnEndToEndExperimentIsMeasuredFromItsStart) {
  ExperimentMachine machine(settings(false, 10, /*end_to_end=*/true), 1);
  machine.begin(0);
  uint64_t now = 0;
  start_next(machine, now);
  EXPECT_EQ(machine.state(), State::kRunning) << "one experiment for the whole run: nothing to settle first";
  EXPECT_EQ(machine.start_ns(), now);
}

TEST(ExperimentLength, DoublesWhenTheLeastVisitedPointSawTooFew) {
  EXPECT_EQ(next_length_ns(kLength, kLength, kTargetVisits - 1), 2 * kLength);
  EXPECT_EQ(next_length_ns(kLength, kLength, 0), 2 * kLength) << "no point visited at all";
  EXPECT_EQ(next_length_ns(kLength, kLength, kTargetVisits), kLength);
}

TEST(ExperimentLength, HalvesWhenManyVisitsButNeverBelowTheMinimum) {
  EXPECT_EQ(next_length_ns(4 * kLength, kLength, 4 * kTargetVisits + 1), 2 * kLength);
  EXPECT_EQ(next_length_ns(4 * kLength, kLength, 4 * kTargetVisits), 4 * kLength) << "not many enough";
  EXPECT_EQ(next_length_ns(2 * kLength, kLength, 1000), kLength);
  EXPECT_EQ(next_length_ns(kLength, kLength, 1000), kLength) << "already at the minimum";
  EXPECT_EQ(next_length_ns(3 * kLength / 2, kLength, 1000), 3 * kLength / 2) << "half would be below the minimum";
}

TEST(ExperimentLength, DoublingIsCapped) {
  EXPECT_EQ(next_length_ns(kMaxExperimentNs, kLength, 0), kMaxExperimentNs);
  EXPECT_EQ(next_length_ns(kMaxExperimentNs / 2 + kMs, kLength, 1), kMaxExperimentNs);
}

TEST(ExperimentLength, FewestVisitsIgnoresUnvisitedPoints) {
  std::vector<profile::PointResult> points(3);
  points[0].delta = 0;
  points[1].delta = 50;
  points[2].delta = 12;
  EXPECT_EQ(fewest_visits(points), 12u);
  points[1].delta = points[2].delta = 0;
  EXPECT_EQ(fewest_visits(points), 0u);
  EXPECT_EQ(fewest_visits({}), 0u);
}

TEST(CpuBound, ADelayThatWouldMakeTheProgramFasterThanItsCpuWorkAllowsIsCut) {
  // The cpu_pipeline shape: 100 ms, 2 CPUs busy 170 ms, 100 of them in the line, sped up 50%.
  // The virtual program still runs 170 - 50 = 120 ms of CPU, at least 60 ms on two CPUs, so no
  // more than 40 ms of the 55 inserted can count.
  CpuWork work{170 * kMs, 0, 100 * kMs, 2};
  EXPECT_EQ(delay_within_cpu_bound(55 * kMs, 100 * kMs, 0.5, work), 40 * kMs);
  // Within the bound the delay counts whole.
  EXPECT_EQ(delay_within_cpu_bound(30 * kMs, 100 * kMs, 0.5, work), 30 * kMs);
  // The same work on four CPUs binds at 30 ms.
  work.cpus = 4;
  EXPECT_EQ(delay_within_cpu_bound(55 * kMs, 100 * kMs, 0.5, work), 55 * kMs);
}

TEST(CpuBound, SpinWaitsAreNotWorkTheVirtualProgramMustDo) {
  // A waiter spinning for a lock would spin less if the holder's line ran faster: its sampled
  // spin is left out, and the bound is a bound still.
  CpuWork work{190 * kMs, 60 * kMs, 100 * kMs, 2};
  EXPECT_EQ(delay_within_cpu_bound(45 * kMs, 100 * kMs, 0.5, work), 45 * kMs);
  work.spin_wait_ns = 0;
  EXPECT_EQ(delay_within_cpu_bound(45 * kMs, 100 * kMs, 0.5, work), 30 * kMs);
}

TEST(CpuBound, NoWorkOrNoCpusLeavesTheDelayAndABoundPastTheDurationLeavesNone) {
  EXPECT_EQ(delay_within_cpu_bound(40 * kMs, 100 * kMs, 0.5, CpuWork{0, 0, 0, 2}), 40 * kMs);
  EXPECT_EQ(delay_within_cpu_bound(40 * kMs, 100 * kMs, 0.5, CpuWork{100 * kMs, 0, 0, 0}), 40 * kMs);
  EXPECT_EQ(delay_within_cpu_bound(40 * kMs, 100 * kMs, 0.0, CpuWork{220 * kMs, 0, 0, 2}), 0u);
}

}  // namespace
}  // namespace whatif::experiment
