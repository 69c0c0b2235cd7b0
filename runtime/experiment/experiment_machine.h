// The experiment state machine (cool-off, waiting for a line, warming up, running, draining), the speedup
// choice and the adaptation of the experiment length: pure decisions over time and samples, no
// threads, delays or perf. Owned and driven by the profiler thread only.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <vector>

#include "experiment/allocation.h"
#include "profile/profile_writer.h"

namespace whatif::experiment {

inline constexpr uint64_t kCoolOffNs = 10000000;    ///< pause between experiments
inline constexpr uint64_t kMaxDrainNs = 10000000;   ///< longest wait for threads to execute owed delays
inline constexpr uint64_t kMaxExperimentNs = 10000000000ull;  ///< the length never grows past this
inline constexpr uint64_t kTargetVisits = 10;       ///< minimum progress visits per experiment
inline constexpr double kBaselineProbability = 0.5;  ///< chance of speedup 0 (paper §3.2)
/// An experiment's virtual speedup runs this fraction of its length before its measurement starts:
/// state the previous experiment left behind (items buffered in a queue between threads, a lock's
/// waiters) settles at the new speed first. A 2-stage pipeline with a queue of 4 filled it in every
/// sped-up experiment and drained it into the next baseline, counting the same 4 items against the
/// speedup twice: its bottleneck stage was predicted at 6-13% for a 25% effect.
inline constexpr uint64_t kWarmUpDivisor = 4;
/// After an experiment that inserted delay d, the cool-off lasts kSettleFactor × d longer (at most
/// one length), with no delay: a queue with no practical bound keeps what a sped-up experiment let
/// pile up, and the experiments after it drained it at the speed of its consumer. A producer 2 ms
/// an item, a consumer 1.4 ms, a pipe between them: the baselines after a sped-up producer drained
/// 20 items through their whole measurement, at the sped-up program's rate, and the producer was
/// predicted at +3 to +8% for a 31% effect. The backlog grows while the consumer pays the delay, so
/// the time it takes to drain goes with the delay inserted; a longer warm-up would drain it at the
/// next experiment's speed, and a sped-up one would pile up more. An experiment followed by one at
/// the same speed on the same line (a --fixed-speedup run's pairs alternate their order for that)
/// needs no settling.
inline constexpr uint64_t kSettleFactor = 2;
/// An experiment's measurement starts and ends at the first tick after a progress visit, once its
/// warm-up or its length is over, but waits at most this fraction of its length for one: a window
/// cut anywhere counts the item under way at its end and not the one at its start, or the reverse,
/// so with 30 items of 3 ms in 100 ms every experiment's rate was off by up to one item (3%), and
/// the prediction of one line, from six experiments, moved by 3 points between identical runs.
inline constexpr uint64_t kVisitWaitDivisor = 4;

/// The smallest non-zero visit count of `points`, or 0 when no point was visited: points not
/// visited in an experiment do not steer its length unless none was.
uint64_t fewest_visits(const std::vector<profile::PointResult>& points);

/// The next experiment's length: doubled (up to kMaxExperimentNs) when the least-visited point saw
/// fewer than kTargetVisits (or none was visited), halved when it saw more than 4 × kTargetVisits
/// and the halved length stays at least `minimum_ns`, else unchanged. The machine applies it only
/// once some experiment has seen a progress visit.
uint64_t next_length_ns(uint64_t current_ns, uint64_t minimum_ns, uint64_t fewest);

/// What the program did during an experiment, beside the delay it counts (the profiler measures it).
struct CpuWork {
  uint64_t cpu_ns = 0;        ///< the program's CPU time (its threads and forked children), whatif's spins not
  uint64_t spin_wait_ns = 0;  ///< of it, sampled at spin-waits (threads::spin_wait_at)
  uint64_t line_ns = 0;       ///< of it, sampled in the selected line
  int cpus = 1;               ///< the CPUs the program may use
};

/// The delay an experiment may count: at most its duration less the CPU bound. A program cannot
/// run faster than its CPU work over the CPUs it may use, and in the virtual speedup's program that
/// work is the measured CPU time, less speedup × the line's share, less its spin-waits (which would
/// shrink too, so the bound stays a bound). A delay beyond that is time the experiment's threads
/// did not lose: a paused thread's CPU went to one that would have waited for it (a 3-thread
/// pipeline on 2 CPUs, bound by its middle stage, was predicted at +53% for the stage where CPU
/// time allows +38%, and +34% came true).
uint64_t delay_within_cpu_bound(uint64_t delay_ns, uint64_t duration_ns, double speedup, const CpuWork& work);

/// An experiment's samples stand for the program's CPU time during it: every sample of its code, in
/// scope or not, is a period of some thread's CPU time. Where they fall far short of it, the program
/// ran unseen or inside whatif (samples lost, the machine stalled with the threads' clocks running,
/// or whatif's own code took the time): in this VM 1 experiment in ~700 kept a quarter of its samples
/// and a sixth of its progress visits while the program's CPU time stayed as in the others, and one
/// such experiment moved its line's prediction by 20-30 points; another kept 80% of its samples, 16%
/// of them in whatif's code (the run's others: 0-3%), and a third of its progress. Such an experiment
/// is set aside, not averaged in. "Far short" is against the ratio of samples to CPU time of the
/// run's own recent experiments (a program whose time is partly unsampled all along keeps its lower
/// ratio), by both a fraction and a count of standard deviations (few samples vary more).
inline constexpr std::size_t kCoverageHistory = 9;      ///< recent experiments whose median ratio is the reference
inline constexpr std::size_t kCoverageMinHistory = 3;   ///< no judgement before this many
inline constexpr double kCoverageFloor = 0.7;           ///< lost below this fraction of the expected samples
inline constexpr double kCoverageSigmas = 4;            ///< and this many standard deviations (Poisson) below it
inline constexpr uint64_t kCoverageMinPeriods = 10;     ///< an experiment with less CPU time teaches no ratio
/// This many in a row is no disturbance but a program whose ratio changed for good (a phase whose CPU
/// time whatif cannot sample): the last of them starts the reference afresh and is kept.
inline constexpr std::size_t kCoverageMaxInARow = 5;

/// The recent values of a per-experiment ratio, whose median is the reference for the next. An
/// outlier is set aside and teaches nothing; kCoverageMaxInARow of them in a row are the program's
/// new normal: the last is kept and the reference restarts from it.
class RecentRatios {
 public:
  std::size_t known() const { return std::min(count_, kCoverageHistory); }
  /// The median of the known values (0 with none).
  double median() const;
  /// Whether an experiment whose ratio is `value`, an outlier against median() or not, is set aside;
  /// when it is not, `value` joins the history.
  bool set_aside(bool outlier, double value);

 private:
  std::array<double, kCoverageHistory> values_{};
  std::size_t count_ = 0;     ///< values seen; the last kCoverageHistory are kept
  std::size_t in_a_row_ = 0;  ///< outliers set aside since the last kept one
};

class SampleCoverage {
 public:
  /// Whether an experiment with `samples` (weighted: its measured part's samples of the program's
  /// code, in scope or not, whatif's own not) over `cpu_ns` of the program's CPU time lost its
  /// samples; when it did not, its ratio joins the reference. `period_ns` is the sampling period.
  bool lost(uint64_t samples, uint64_t cpu_ns, uint64_t period_ns);

 private:
  RecentRatios ratios_;  ///< samples per period of CPU time
};

/// A kept sample stands for more than its period of the program's CPU time. whatif's own work in a
/// sampled thread (each sample's timer interrupt and signal delivery in the kernel, its handler) is
/// CPU time too, and the samples that land in it are not the program's: a thread that computed
/// alone kept 0.97 samples per ms of its CPU time here. That work comes with the program's CPU time,
/// so a line that ran faster would also save its share of it: a selected sample's delay is its
/// period times this ratio. Pooled over the run's kept baselines with decaying weights (one
/// experiment's count varies by a few percent); 1 until kPeriodsPerSampleMinSamples were seen.
inline constexpr double kPeriodsPerSampleDecay = 0.9;        ///< a past experiment's weight per experiment since
inline constexpr double kPeriodsPerSampleMinSamples = 100;   ///< pooled samples before the ratio applies
inline constexpr double kPeriodsPerSampleMax = 1.1;          ///< beyond it, time is out of reach, not overhead

class PeriodsPerSample {
 public:
  /// A kept experiment's `samples` (weighted, the program's, in scope or not) over `cpu_ns`.
  void add(uint64_t samples, uint64_t cpu_ns, uint64_t period_ns);
  /// Periods of the program's CPU time per kept sample, in [1, kPeriodsPerSampleMax].
  double factor() const;

 private:
  double samples_ = 0;
  double periods_ = 0;
};

/// Samples the threads' rings dropped during an experiment (the profiler thread fell behind
/// draining them, e.g. while it read a Rust binary's standard-library DWARF at the start of the
/// run) were neither counted nor credited: a Rust program's first experiment kept 9-30% of its
/// samples and moved its line's prediction by 10-20 points, before SampleCoverage had the history
/// to judge it. Such an experiment is set aside; kCoverageMaxInARow in a row are the program's
/// steady state, and from the last of them on every experiment is kept.
inline constexpr uint64_t kRingLostShare = 10;  ///< set aside above 1 in this many samples dropped

class RingLosses {
 public:
  /// Whether an experiment that kept `kept` samples while its rings dropped `dropped` is set aside.
  bool set_aside(uint64_t dropped, uint64_t kept);

 private:
  std::size_t in_a_row_ = 0;
};

/// The profiler thread's own work competes with the program for the CPUs and lags the delays it
/// credits. A Rust program's first ticks resolved its standard library's DWARF for 150-360 ms of
/// the profiler thread's CPU, inside the first experiment: the program's 3 threads on 2 CPUs lost a
/// share of a CPU that the other experiments gave them, and that experiment's rate of progress
/// moved its line's prediction by 25 points (holdout `rbarrier` A: +55 against +30 in the run
/// beside it). An experiment in which the profiler thread took more than kBusyShare of its length,
/// and more than kBusyOverTypical times the run's recent median share, is set aside. A program
/// whose sampling keeps the profiler that busy all along (many threads) keeps its experiments.
inline constexpr double kBusyShare = 0.2;
inline constexpr double kBusyOverTypical = 3;

class ProfilerLoad {
 public:
  /// Whether an experiment of `duration_ns` in which the profiler thread used `profiler_cpu_ns` of
  /// CPU was disturbed by it; when it was not, its share joins the reference.
  bool busy(uint64_t profiler_cpu_ns, uint64_t duration_ns);

 private:
  RecentRatios shares_;  ///< the profiler thread's CPU time per experiment length
};

/// What the machine's options fix; everything else it decides.
struct MachineSettings {
  bool fixed_line = false;                    ///< --fixed-line: every experiment is on that line
  std::optional<int> fixed_speedup_percent;   ///< --fixed-speedup: pairs of (0, s) in random order
  bool end_to_end = false;                    ///< one experiment, ended by the program's exit
  uint64_t min_length_ns = 100000000;         ///< the first and minimum experiment length
  bool adaptive = true;                       ///< Allocator policy (false: in proportion to samples)
};

/// What an experiment measured, for the allocation of the next ones.
struct Outcome {
  uint64_t fewest = 0;       ///< fewest_visits of its points (steers the length)
  uint64_t visits = 0;       ///< visits of all its throughput points
  double effective_ns = 0;   ///< its duration minus the delay inserted
  uint64_t inserted_ns = 0;  ///< the delay inserted from its start, warm-up included (kSettleFactor)
  /// Some progress point has been visited since the start, in an experiment or between them (a
  /// point visited every 100 ms is seldom inside a 15-ms measurement window at first).
  bool progress_seen = false;
  /// Set aside (SampleCoverage::lost): it teaches neither the length nor the allocator, and a
  /// --fixed-speedup run repeats its speedup.
  bool set_aside = false;
  /// The program was idle through it (format::idle_experiment): the readers leave it out, so it is
  /// handled as one set aside. Otherwise a server's pause between loads doubled the length at each
  /// idle experiment, and the next load began with one long experiment at one speedup.
  bool idle = false;
};

/// Decides when experiments start, on which line and at which speedup, and when they drain and
/// end; the Profiler applies each decision to the runtime.
class ExperimentMachine {
 public:
  enum class State { kCoolOff, kWaitingForLine, kWarmingUp, kRunning, kDraining };

  /// What the caller must do after a tick.
  struct Action {
    /// kStart: the speedup takes effect (delays accrue); kMeasure: the measurement window opens
    /// (the caller snapshots progress and delay now); kBeginDraining; kFinish.
    enum class Kind { kNone, kStart, kMeasure, kBeginDraining, kFinish };
    Kind kind = Kind::kNone;
    int32_t line = -1;   ///< kStart: the selected line, -1 for the fixed line
    double speedup = 0;  ///< kStart: the virtual speedup, 0 for a baseline
  };

  /// `seed` drives the speedup choice: equal seeds give equal sequences.
  ExperimentMachine(MachineSettings settings, uint64_t seed);

  /// Enters the first cool-off, ending at now + kCoolOffNs.
  void begin(uint64_t now);
  /// One profiler tick. `drained` (no thread owes delay) matters only while draining; `visited`
  /// (a progress point was visited since awaiting_visit() became true) only while it is. kStart
  /// and kBeginDraining take effect in the machine; after kFinish the caller writes the
  /// experiment and calls finish().
  Action tick(uint64_t now, bool drained, bool visited = true);
  /// The warm-up or the measurement is long enough and waits for a progress visit to end it at
  /// (kVisitWaitDivisor): the caller tells tick() whether one came.
  bool awaiting_visit(uint64_t now) const;
  /// When the machine next changes state by its own clock: the end of a cool-off, of a warm-up or of
  /// a measurement (then it awaits a visit); UINT64_MAX for an end-to-end measurement, which ends
  /// with the program; 0 while it waits for something else (a sampled line, a visit, the drain), to
  /// be looked for at every tick.
  uint64_t next_deadline_ns() const;
  /// A sample attributed to `line` (`fixed_match`: the line is the --fixed-line). While waiting,
  /// the first such line becomes the candidate; while running it is counted. Returns true when it
  /// is in the selected line of a warming-up or running experiment (the caller credits its delay).
  /// A `waiting` sample (inside sched_yield) counts for the line's share of samples, but never as
  /// the selected line running.
  bool on_sample(int32_t line, bool fixed_match, uint64_t weight, bool waiting = false);
  /// Ends the experiment: adapts the length to `outcome.fewest` (not with end_to_end), teaches the
  /// allocator its rate and enters cool-off until now + kCoolOffNs, longer by kSettleFactor ×
  /// `outcome.inserted_ns` (at most a length) unless a --fixed-speedup run's next experiment has the
  /// same speedup.
  void finish(uint64_t now, const Outcome& outcome);

  /// The state.
  State state() const { return state_; }
  /// Running or draining: progress and latency are being measured.
  bool in_experiment() const { return state_ == State::kRunning || state_ == State::kDraining; }
  /// Warming up, running or draining: the virtual speedup is in effect.
  bool speeding() const { return state_ == State::kWarmingUp || in_experiment(); }
  /// The selected line (-1 for the fixed line) of the current or last experiment.
  int32_t selected() const { return selected_; }
  /// The speedup of the current or last experiment.
  double speedup() const { return speedup_; }
  /// When the current or last experiment's measurement started (after its warm-up).
  uint64_t start_ns() const { return start_ns_; }
  /// The current experiment length (adapted by finish()).
  uint64_t length_ns() const { return length_ns_; }
  /// Samples in the selected line since the experiment started.
  uint64_t selected_samples() const { return selected_samples_; }
  /// Samples in any line since the experiment started.
  uint64_t total_samples() const { return total_samples_; }
  /// Experiments finished so far (the next experiment's id).
  uint64_t experiments_done() const { return experiments_done_; }
  const Allocator& allocator() const { return allocator_; }

 private:
  double choose_speedup();
  Action start(uint64_t now, int32_t line);

  MachineSettings settings_;
  std::mt19937_64 random_;
  Allocator allocator_;
  State state_ = State::kCoolOff;
  uint64_t state_until_ns_ = 0;
  int32_t candidate_ = -1;
  int32_t selected_ = -1;
  double speedup_ = 0;
  std::deque<double> pending_speedups_;  ///< --fixed-speedup: the other half of the pair, and repeats
  uint64_t start_ns_ = 0;
  uint64_t length_ns_ = 0;
  uint64_t selected_samples_ = 0;
  uint64_t total_samples_ = 0;
  uint64_t experiments_done_ = 0;
  bool progress_seen_ = false;  ///< some experiment saw a progress visit: the length adapts from then on
};

}  // namespace whatif::experiment
