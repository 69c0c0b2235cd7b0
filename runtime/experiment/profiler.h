// The profiler thread: each tick drains every thread's samples into the Attributor, drives the
// ExperimentMachine and applies its decisions to the runtime (delays, threads, progress points),
// and writes the profile. All of it runs on the one profiler thread, which blocks all signals.
#pragma once
#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/config.h"
#include "delays/contention.h"
#include "delays/delays.h"
#include "os/perf_event.h"
#include "experiment/attribution.h"
#include "experiment/instruction_counts.h"
#include "fncounters/function_counters.h"
#include "fncounters/process_counters.h"
#include "experiment/breakpoint_points.h"
#include "experiment/experiment_machine.h"
#include "experiment/latency.h"
#include "lbr/aggregator.h"
#include "profile/profile_writer.h"
#include "progress/progress_points.h"
#include "symbols/symbol_map.h"
#include "threads/process_tree.h"
#include "threads/threads.h"

namespace whatif::experiment {

/// What the profiler needs from the rest of the runtime.
struct ProfilerContext {
  const config::Config* config = nullptr;
  delays::GlobalDelays* delays = nullptr;
  threads::ThreadRegistry* threads = nullptr;
  profile::ProfileWriter* writer = nullptr;
  /// The shared memory of the process tree (its delays are `delays`), or nullptr: forked children
  /// then run unprofiled.
  threads::ProcessTree* tree = nullptr;
  uint64_t start_ns = 0;
  /// Sampling events per thread that the adaptive sampler moves to the timer when switches cost too
  /// much (2 with kernel-mode samples, 1 without); 0: no thread switches sampler.
  uint32_t switch_events = 0;
  bool lbr = false;  ///< threads have branch tracers: drain them, publish the code map, write branches
  /// `--counters`' function counters, or nullptr when no function is selected.
  fncounters::FunctionCounters* function_counters = nullptr;
  /// `--counters`' process-wide interval counters (written when ready()), or nullptr.
  fncounters::ProcessCounters* process_counters = nullptr;
};

class Profiler {
 public:
  explicit Profiler(ProfilerContext context);
  ~Profiler();

  /// Starts the thread (with all signals blocked). Returns 0 or an errno.
  int start();
  /// Stops the thread, completes an end-to-end experiment, writes final samples and runtime.
  void stop_and_finish(int exit_status);
  /// The starting thread, after start(), when there are -p points: waits until they are patched
  /// (or left to breakpoints), at most `timeout_ns`, so that the patch is written while this is the
  /// program's only thread. Past the timeout the program goes on and the points use breakpoints.
  void wait_for_progress_points(uint64_t timeout_ns);
  /// Asks for a line-map refresh after dlopen (any thread).
  void request_refresh() { refresh_requested_.store(true, std::memory_order_release); }

 private:
  static void* thread_main(void* self);
  void run();
  /// Builds the symbol map, resolves breakpoint points and the fixed line; warns about misses.
  void setup_symbols();
  /// Patches or arms the -p points (inside setup_symbols), then lets the waiting program go on.
  void setup_progress_points();
  /// Measures what a sampling event's switch costs (or takes WHATIF_SWITCH_COST_NS) and sets the
  /// adaptive sampler's thresholds from it (sampling/switch_rule.h), before the first window.
  void choose_switch_thresholds();
  /// One round of the switch-cost probe, kept unless the profiler thread lost its CPU in it.
  void probe_switch_cost(int pairs);
  /// The adaptive sampler's thresholds from the mean of the rounds so far.
  void update_switch_thresholds();
  void tick(uint64_t now);
  /// Sleeps `sleep_ns`; in an experiment with latency points, reads their requests in flight at
  /// random gaps meanwhile.
  void sleep_between_ticks(uint64_t sleep_ns);
  /// How long the profiler thread sleeps after a tick at `now` (kFineTickNs or up to kCoarseTickNs).
  uint64_t next_sleep_ns(uint64_t now) const;
  void refresh_symbols();
  void drain_thread(threads::ThreadState* thread);
  /// `thread` is nullptr for a sample a child process forwarded (the child credited it).
  void handle_sample(threads::ThreadState* thread, const os::RawSample& sample);
  /// Drains the samples child processes forwarded; frees the slots of children that exited.
  void drain_children(uint64_t now);
  /// Progress points of this process, with the visits child processes made added.
  std::vector<progress::PointReading> read_points() const;
  void reap_retired();
  /// Applies a kStart decision: publishes the line and the delay size, reads the points' counts.
  void start_experiment(uint64_t now, int32_t line, double speedup);
  /// Applies a kMeasure decision (and the start of an experiment without warm-up): the measurement
  /// window opens, so progress, delay and pauses are read from here.
  void begin_measuring(uint64_t now);
  /// Publishes the selected line's address ranges so threads credit their own samples in it.
  void publish_selected_ranges(int32_t line);
  void begin_draining(uint64_t now);
  /// A live thread outside a blocking call that still owes delay up to drain_target_ns_.
  bool owes_before_drain_end(const threads::ThreadState& thread) const;
  /// No thread in the snapshot owes_before_drain_end.
  bool drained() const;
  /// Writes the experiment's record and hands its visits to the machine (length, cool-off).
  void finish_experiment(uint64_t now);
  /// The points' results since begin_measuring, over the experiment's `delay_ns`.
  std::vector<profile::PointResult> point_deltas(uint64_t now, uint64_t delay_ns);
  void write_samples(uint64_t now);
  /// One `instructions` record per in-scope object with samples: its cumulative per-instruction
  /// counts at ELF virtual addresses (runtime IP minus the object's load bias).
  void write_instructions();
  /// --lbr: publishes the code the tracers may follow (after the symbol map changes).
  void publish_code_map();
  /// --lbr: the cumulative branch records and statistics.
  void write_branches();
  /// One `counters` record per (thread, selected function) with calls, and the events' warnings.
  void write_function_counters(uint64_t now);
  /// A counter_interval record when the interval has passed (or `force`, at the end).
  void write_counter_interval(uint64_t now, bool force);
  /// `whatif ctl PID reload`: reads os::counters_reload_path and swaps the selected functions.
  void reload_function_counters();
  /// Logs and writes `message` into the profile.
  void warn(const std::string& message);
  /// Every kContentionWindowNs, from each thread's schedstat: its outside CPU contention
  /// (delays/contention.h, stored where its selected samples are credited) unless --no-contention,
  /// and its adaptive sampler's backend (sampling/switch_rule.h).
  void update_schedstat(uint64_t now);
  /// Whether any progress point has been visited since the start, in or between experiments.
  bool progress_seen() const;
  /// Visits (and latency arrivals) of every progress point so far: source, -p and sampled points.
  uint64_t progress_visits() const;
  /// For ExperimentMachine::tick: whether a point was visited since the machine began to wait for
  /// a visit to end its warm-up or measurement at (false on the tick it begins; true when it waits
  /// for none).
  bool visited_since_awaiting(uint64_t now);
  /// The program's CPU time so far: its threads' and forked children's, not whatif's (the profiler
  /// thread's, which calls it, nor the spins of pauses). Only differences mean anything.
  uint64_t program_cpu_ns();
  /// Notes the CPU work at the end of the measured part (the drain's start, or the experiment's end).
  void end_cpu_work();
  /// Whether `ip` is at a spin-wait (threads::spin_wait_at), cached per IP.
  bool at_spin_wait(uint64_t ip);
  static constexpr std::size_t kMaxSpinWaitIps = 1 << 16;
  /// The adaptive sampler's rule for one thread, from its CPU time (schedstat, `run_ns`; the
  /// thread's previous reading is still in its state) and its voluntary context switches.
  void update_sampler(threads::ThreadState& thread, uint64_t run_ns);
  /// The end-of-run summary of threads the adaptive sampler moved to the timer.
  void warn_timer_threads();
  /// At the end: whether whatif's own time in forked children was a large share of their lives.
  void warn_child_costs();
  void write_warnings();

  ProfilerContext context_;
  pthread_t thread_{};
  bool thread_started_ = false;
  std::atomic<bool> stop_requested_{false};
  std::atomic<bool> refresh_requested_{false};
  /// The -p start-up hand-off: kGateWaiting until the profiler takes it to patch (kGatePatching)
  /// and releases it (kGateDone), or the program stops waiting first (kGateAbandoned).
  static constexpr int kGateWaiting = 0, kGatePatching = 1, kGateDone = 2, kGateAbandoned = 3;
  std::atomic<int> points_gate_{kGateWaiting};
  std::unique_ptr<symbols::SymbolMap> symbols_;
  Attributor attributor_;
  InstructionCounts instructions_;  // every sampled IP; filtered to in-scope objects when written
  BreakpointPoints breakpoints_;
  ExperimentMachine machine_;
  InFlightIntegral in_flight_;
  std::string fixed_line_name_;  // --fixed-line as FILE:LINE the way samples name it
  std::vector<symbols::AddressRange> fixed_line_ranges_;
  std::vector<threads::ThreadState*> snapshot_;
  std::vector<threads::ThreadState*> retired_;

  // The current experiment's runtime side (the machine holds its decisions).
  uint64_t global_delay_at_start_ = 0;
  uint64_t global_delay_at_warm_up_ = 0;  ///< the global delay when the experiment started (its warm-up)
  uint64_t paused_at_start_ = 0;  // GlobalDelays::paused_ns then
  uint64_t cpu_at_start_ = 0;     // program_cpu_ns() then
  uint64_t spin_wait_at_start_ = 0;  // spin_wait_samples_ then
  uint64_t cpu_at_end_ = 0;         // program_cpu_ns() when the measured part ended (0: not yet)
  uint64_t spin_wait_at_end_ = 0;   // spin_wait_samples_ then
  uint64_t spin_wait_samples_ = 0;   // samples (weighted) at a spin-wait since the start
  SampleCoverage coverage_;          // sets aside experiments that lost their samples
  PeriodsPerSample periods_per_sample_;  // CPU time per kept sample, in periods
  double sample_scale_ = 1;          // periods_per_sample_ when the experiment started
  RingLosses ring_losses_;           // sets aside experiments whose rings dropped their samples
  uint64_t ring_lost_ = 0;           // samples the threads' rings dropped so far (full rings)
  uint64_t ring_lost_at_start_ = 0;  // and when the experiment's measured part began
  uint64_t unscoped_samples_ = 0;    // samples (weighted) in no in-scope line, not whatif's own, since the start
  uint64_t profiler_cpu_at_start_ = 0, profiler_cpu_at_end_ = 0;  // this thread's CPU time then
  ProfilerLoad profiler_load_;       // sets aside experiments this thread's own work disturbed
  uint64_t own_at_start_ = 0, unscoped_at_start_ = 0;  // own and unscoped samples when the measured part began
  uint64_t own_at_end_ = 0, unscoped_at_end_ = 0;      // and when it ended
  std::unordered_map<uint64_t, bool> spin_wait_ips_;  // IP -> threads::spin_wait_at(IP), a cache
  uint64_t drain_target_ns_ = 0;
  /// What the running threads still owed, on average, when an oversubscribed experiment ended
  /// without a drain: the delay they did not execute, which its effective time gets back.
  uint64_t unpaid_ns_ = 0;
  bool awaiting_visit_ = false;        // the machine waits for a progress visit (visited_since_awaiting)
  uint64_t visits_when_awaiting_ = 0;  // progress_visits() when it began to
  delays::RangesSnapshot published_ranges_;  // what threads credit themselves in this experiment
  std::vector<progress::PointReading> points_at_start_;
  std::vector<uint64_t> breakpoints_at_start_;
  std::vector<uint64_t> sampled_counts_;  // per sampled point, since the start
  std::vector<uint64_t> sampled_at_start_;
  uint64_t last_samples_write_ns_ = 0;
  uint64_t last_contention_ns_ = 0;
  delays::TreeDemand tree_demand_;  ///< whether the tree wants more CPUs than it has, over recent windows
  int usable_cpus_ = 1;
  std::vector<delays::SchedWindow> sched_windows_;  // update_schedstat's scratch
  delays::SchedWindow retired_window_;  // exited threads' run and wait since their last reading
  threads::ExitDemand exit_demand_;     // reads those, estimating the waits exits did not read
  uint64_t children_run_seen_ = 0;   // the tree's children_run_ns at the last window
  uint64_t children_wait_seen_ = 0;  // and children_wait_ns
  double contention_weighted_ = 0;  // sum of permille x run time, for the end-of-run warning
  double contention_run_ns_ = 0;
  uint64_t switch_cost_ns_ = 0;  ///< one event's switch, measured or given (choose_switch_thresholds)
  // The switch-cost probe: 9 rounds of 16 restarts at start-up, then 4 every 50 ms (about 0.2% of
  // a CPU where switches are dear); thresholds follow the mean every 8 rounds.
  static constexpr int kSwitchProbeFirstRounds = 9;
  static constexpr int kSwitchProbeFirstPairs = 16;
  static constexpr int kSwitchProbePairs = 4;
  static constexpr uint64_t kSwitchProbeEveryNs = 50000000;
  static constexpr uint64_t kSwitchProbeUpdateRounds = 8;
  static constexpr uint64_t kSwitchProbeOutlierNs = 200000;
  os::SwitchCostProbe switch_probe_;
  uint64_t switch_probe_sum_ns_ = 0;
  uint64_t switch_probe_rounds_ = 0;
  uint64_t last_switch_probe_ns_ = 0;
  uint32_t timer_threads_ = 0;         // threads the adaptive sampler moved to the timer at least once
  std::vector<pid_t> timer_thread_ids_;  // the first few of them, for the summary
  uint64_t last_interval_ns_ = 0;
  uint64_t last_liveness_check_ns_ = 0;
  uint64_t children_lost_ = 0;  // forwarded samples lost to full rings, of freed slots
  // Children that exited through the runtime: how many, their lives and whatif's own time in them.
  uint64_t children_timed_ = 0;
  uint64_t children_life_ns_ = 0;
  uint64_t children_own_ns_ = 0;
  bool children_lost_warned_ = false;
  bool children_refused_warned_ = false;
  lbr::Aggregator branches_;  // --lbr
};

}  // namespace whatif::experiment
