// The profiler thread's loop: drains samples into the Attributor, applies the ExperimentMachine's
// decisions to delays and threads, and writes the profile. Runs only on the profiler thread (all
// signals blocked, re-entry guard set).
#include "experiment/profiler.h"

#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <random>
#include <unordered_map>

#include "lbr/code_map.h"
#include "libc/guard.h"
#include "libc/real.h"
#include "os/log.h"
#include "os/memory.h"
#include "os/os.h"
#include "threads/sampler_switch.h"
#include "threads/settle.h"
#include "whatif/profile_format.h"

// The bounds of runtime/interpose/shims.cpp's section, from the linker (weak: a build without the
// shims, such as a unit test's, has none).
extern "C" __attribute__((weak, visibility("hidden"))) const char __start_whatif_shims[];
extern "C" __attribute__((weak, visibility("hidden"))) const char __stop_whatif_shims[];

namespace whatif::experiment {
namespace {
/// `ranges` less `hole`.
std::vector<symbols::AddressRange> ranges_without(const std::vector<symbols::AddressRange>& ranges, symbols::AddressRange hole) {
  std::vector<symbols::AddressRange> kept;
  for (const symbols::AddressRange& range : ranges) {
    if (range.end <= hole.begin || range.begin >= hole.end) {
      kept.push_back(range);
      continue;
    }
    if (range.begin < hole.begin) kept.push_back({range.begin, hole.begin});
    if (range.end > hole.end) kept.push_back({hole.end, range.end});
  }
  return kept;
}


// The profiler thread's wake-up period: fine while the experiment machine waits for a sampled
// line, a progress visit or the drain (an experiment's window starts and ends at the first tick
// after a visit, so its rate is off by up to a tick's worth of time), coarse otherwise, up to the
// machine's next deadline. Each wake-up costs the program: in this VM a sleep and wake-up of the
// profiler thread takes ~40 us of CPU, and where it preempts a program thread, that thread's
// perf events stop and restart their hrtimers (15-25 us each). On futexsem (--fixed-speedup 0,
// medians of 6 runs) the profiler thread's CPU time fell from ~150 to ~35 samples of 0.25 ms,
// and the two program threads' from 11% and 14% above native to 8% and 13%. The coarse tick stays
// well inside what a thread's ring holds between drains (14 samples with stacks, at most 2 a ms).
constexpr uint64_t kFineTickNs = 1000000;
constexpr uint64_t kCoarseTickNs = 3000000;
constexpr uint64_t kSamplesWriteIntervalNs = 5000000000ull;
constexpr uint64_t kLivenessCheckNs = 100000000;  // how often to look for children killed before exiting
constexpr uint64_t kContentionWindowNs = 20000000;  // schedstat window for outside CPU contention
constexpr uint64_t kChildCostMinChildren = 10;  // fewer forked children: no cost warning
constexpr double kChildCostWarnShare = 0.1;      // whatif's own share of a child's life that warns
constexpr double kContentionWarnPermille = 1150;   // average above this: the run says the machine was busy

MachineSettings settings_of(const config::Config& config) {
  return {config.fixed_line.has_value(), config.fixed_speedup_percent, config.end_to_end, config.experiment_length_ns,
          config.adaptive_allocation};
}

}  // namespace

Profiler::Profiler(ProfilerContext context)
    : context_(std::move(context)),
      attributor_(*context_.config),
      breakpoints_(context_.config->breakpoint_points),
      machine_(settings_of(*context_.config),
               context_.config->seed_given ? context_.config->seed : std::random_device{}()),
      in_flight_(context_.config->seed_given ? context_.config->seed + 1 : std::random_device{}()) {
  sampled_counts_.assign(context_.config->sampled_points.size(), 0);
  usable_cpus_ = os::usable_cpus();
}

Profiler::~Profiler() = default;

int Profiler::start() {
  int result = real::create_runtime_thread(&thread_, &Profiler::thread_main, this);
  thread_started_ = result == 0;
  return result;
}

void Profiler::stop_and_finish(int exit_status) {
  if (!thread_started_) return;
  stop_requested_.store(true, std::memory_order_release);  // pairs with run()'s acquire
  real::pthread_join(thread_, nullptr);
  thread_started_ = false;
  context_.writer->runtime(os::monotonic_ns() - context_.start_ns, machine_.experiments_done(), exit_status);
}

void Profiler::wait_for_progress_points(uint64_t timeout_ns) {
  if (!thread_started_) return;
  uint64_t deadline = os::monotonic_ns() + timeout_ns;
  for (;;) {
    int gate = points_gate_.load(std::memory_order_acquire);  // pairs with the profiler's release
    if (gate == kGateDone) return;
    if (gate == kGateWaiting && os::monotonic_ns() >= deadline) {
      int expected = kGateWaiting;  // the profiler has not started patching: it must not now
      if (points_gate_.compare_exchange_strong(expected, kGateAbandoned, std::memory_order_acq_rel)) return;
    }
    os::sleep_ns(100000);
  }
}

void* Profiler::thread_main(void* self) {
  interpose::mark_runtime_thread();
  static_cast<Profiler*>(self)->run();
  return nullptr;
}

void Profiler::run() {
  setup_symbols();
  choose_switch_thresholds();
  machine_.begin(os::monotonic_ns());
  while (!stop_requested_.load(std::memory_order_acquire)) {
    uint64_t now = os::monotonic_ns();
    tick(now);
    sleep_between_ticks(next_sleep_ns(now));
  }
  uint64_t now = os::monotonic_ns();
  tick(now);  // the last samples
  if (context_.config->end_to_end && machine_.state() == ExperimentMachine::State::kRunning) finish_experiment(now);
  write_counter_interval(now, true);
  write_samples(now);
  warn_timer_threads();
  warn_child_costs();
  if (contention_run_ns_ > 0 && contention_weighted_ / contention_run_ns_ > kContentionWarnPermille) {
    double permille = contention_weighted_ / contention_run_ns_;
    warn(fmt::format("other processes kept this program's threads waiting for a CPU: each ms of their CPU time "
                     "took {:.2f} ms on average; virtual speedups were scaled for it (--no-contention turns that "
                     "off), but predictions on a quieter machine are more reliable",
                     permille / 1000.0));
  }
  if (context_.tree != nullptr) {
    // Children that outlive the root run on undelayed and no longer join the tree.
    context_.tree->close();
    context_.delays->delay_size_ns.store(0, std::memory_order_release);
    context_.delays->phase.store(static_cast<int>(delays::Phase::kIdle), std::memory_order_release);
  }
}

void Profiler::warn_child_costs() {
  if (context_.tree == nullptr || children_timed_ < kChildCostMinChildren) return;
  const double life_ms = static_cast<double>(children_life_ns_) / static_cast<double>(children_timed_) / 1e6;
  const double own_ms = static_cast<double>(children_own_ns_) / static_cast<double>(children_timed_) / 1e6;
  const uint64_t forks = context_.tree->forks();
  const double fork_ms = forks > 0 ? static_cast<double>(context_.tree->fork_ns()) / static_cast<double>(forks) / 1e6 : 0;
  // whatif's own time in a child (its setup after fork and its exit flush; the fork and the exit's
  // teardown in the kernel cost more again) lengthens it: the children's own work is a smaller
  // share of the program than without whatif, and predictions for their lines are diluted.
  if (own_ms < kChildCostWarnShare * life_ms) return;
  warn(fmt::format("forked children lived {:.2f} ms on average ({} children), of which whatif's own setup and exit "
                   "took {:.2f} ms, and each fork took {:.2f} ms in its parent: under whatif their work is a smaller "
                   "share of the program than without it, so predictions for lines in them come out lower than a "
                   "real speedup gives; children that live much longer than that are profiled faithfully",
                   life_ms, children_timed_, own_ms, fork_ms));
}

void Profiler::sleep_between_ticks(uint64_t sleep_ns) {
  if (!machine_.in_experiment() || !in_flight_.tracking()) {
    os::sleep_ns(sleep_ns);
    return;
  }
  // Latency points: read the requests in flight at random moments until the next tick, so that
  // their time average keeps no step with the program's own period (InFlightIntegral).
  uint64_t now = os::monotonic_ns();
  const uint64_t until = now + sleep_ns;
  while (now < until) {
    os::sleep_ns(std::min(in_flight_.next_gap_ns(), until - now));
    now = os::monotonic_ns();
    in_flight_.integrate(now, read_points());
  }
}

uint64_t Profiler::next_sleep_ns(uint64_t now) const {
  const uint64_t deadline = machine_.next_deadline_ns();
  if (deadline <= now) return kFineTickNs;  // 0: waiting for a line, a visit or the drain
  return std::clamp(deadline - now, kFineTickNs, kCoarseTickNs);
}

void Profiler::warn(const std::string& message) {
  log::warning("{}", message);
  context_.writer->warning(message);
}

void Profiler::setup_symbols() {
  struct ReleaseGate {  // whatever happens below, the waiting program goes on
    std::atomic<int>& gate;
    ~ReleaseGate() {
      int expected = kGatePatching;
      gate.compare_exchange_strong(expected, kGateDone, std::memory_order_acq_rel);
      expected = kGateWaiting;
      gate.compare_exchange_strong(expected, kGateDone, std::memory_order_acq_rel);
    }
  } release_gate{points_gate_};
  const config::Config& config = *context_.config;
  symbols::Scope scope;
  if (!config.binary_scope.empty()) scope.binary_patterns = config.binary_scope;
  if (Dl_info self{}; dladdr(reinterpret_cast<void*>(&Profiler::thread_main), &self) != 0 && self.dli_fname != nullptr) {
    scope.runtime_path = self.dli_fname;  // as dl_iterate_phdr names it: its "OWN" lines are whatif's
  }
  if (!config.source_scope.empty()) scope.source_patterns = config.source_scope;
  auto map = symbols::SymbolMap::for_current_process(scope);
  if (!map) {
    warn(map.error());
    return;
  }
  symbols_ = std::move(*map);
  attributor_.set_symbols(symbols_.get());
  bool any_in_scope = false;
  for (const symbols::LoadedObject& object : symbols_->objects()) {
    context_.writer->object({object.path, object.build_id, object.bias, object.in_scope, object.debug_file});
    any_in_scope = any_in_scope || (object.in_scope && (object.has_debug_info || !object.functions_from.empty()));
  }
  if (!any_in_scope) {
    warn("no in-scope object has debug info or function symbols, so nothing can be profiled: rebuild with -g, or "
         "widen the binary scope with -b");
  }
  setup_progress_points();
  if (context_.lbr) publish_code_map();
  if (config.spin_pauses) os::calibrate_spin();
  // Time in libwhatif.so (shims, handlers), in -p trampolines and traps is whatif's, not the program's.
  const symbols::LoadedObject* own = symbols_->object_at(reinterpret_cast<uintptr_t>(&Profiler::thread_main));
  std::vector<symbols::AddressRange> own_code = own != nullptr ? own->executable_ranges : std::vector<symbols::AddressRange>{};
  if (!own_code.empty()) {
    uint64_t begin = own_code.front().begin, end = own_code.front().end;
    for (const symbols::AddressRange& range : own_code) {
      begin = std::min<uint64_t>(begin, range.begin);
      end = std::max<uint64_t>(end, range.end);
    }
    threads::set_own_code(begin, end);
  }
  // libc's sched_yield (the original past the shim): its samples are a wait, not work.
  Dl_info yield_info{};
  void* yield_entry = nullptr;  // dladdr1 stores a const ElfW(Sym)* here
  if (real::sched_yield != nullptr &&
      dladdr1(reinterpret_cast<void*>(real::sched_yield), &yield_info, &yield_entry, RTLD_DL_SYMENT) != 0 &&
      yield_entry != nullptr && static_cast<const ElfW(Sym)*>(yield_entry)->st_size > 0) {
    const auto* yield_symbol = static_cast<const ElfW(Sym)*>(yield_entry);
    auto begin = reinterpret_cast<uint64_t>(real::sched_yield);
    threads::set_yield_code(begin, begin + yield_symbol->st_size);
  }
  // The shims' bodies (their section, runtime/interpose/shims.cpp) are the program's library calls.
  const auto shims_begin = reinterpret_cast<uint64_t>(+__start_whatif_shims);
  const auto shims_end = reinterpret_cast<uint64_t>(+__stop_whatif_shims);
  if (shims_begin != 0 && shims_end > shims_begin) {
    const uint64_t begin = shims_begin, end = shims_end;
    threads::set_shim_code(begin, end);
    own_code = ranges_without(own_code, symbols::AddressRange{begin, end});
  }
  for (const symbols::AddressRange& range : breakpoints_.trampolines()) own_code.push_back(range);
  attributor_.set_own_time(std::move(own_code), breakpoints_.addresses());
  if (config.fixed_line) {
    fixed_line_name_ = canonical_line_name(*symbols_, *config.fixed_line);
    fixed_line_ranges_ = symbols_->ranges_for(config.fixed_line->file, config.fixed_line->line, /*in_scope_only=*/true);
    if (fixed_line_ranges_.empty()) {
      warn("--fixed-line " + config.fixed_line->text() + " matches no code in scope: check it with `whatif lines PROGRAM " +
           config.fixed_line->text() + "`, or widen the scope with -b/-s");
    }
  }
  write_warnings();
}

void Profiler::setup_progress_points() {
  const config::Config& config = *context_.config;
  for (const std::string& message : breakpoints_.resolve(*symbols_)) warn(message);
  bool allowed = config.patch_points;
  std::string why_not = "patching is off (WHATIF_PROGRESS_PATCH=off)";
  if (allowed) {
    int expected = kGateWaiting;
    if (!points_gate_.compare_exchange_strong(expected, kGatePatching, std::memory_order_acq_rel)) {
      allowed = false;
      why_not = "the program went on before its code could be patched (reading its symbols took too long)";
    } else if (int threads = os::thread_count(); threads != 2) {  // the program's first thread and this one
      allowed = false;
      why_not = threads < 0 ? "the program's threads cannot be counted (/proc/self/task)"
                            : fmt::format("the program had {} threads at start-up, so one could be running the line "
                                          "while it is patched",
                                          threads - 1);
    }
  }
  std::vector<std::string> fallbacks = breakpoints_.install_patches(*symbols_, allowed, why_not);
  if (config.patch_points) {  // a user who turned patching off knows; the records still say so
    for (const std::string& message : fallbacks) warn(message);
  }
  points_gate_.store(kGateDone, std::memory_order_release);  // pairs with wait_for_progress_points' acquire
  for (const BreakpointPoints::Description& point : breakpoints_.describe()) {
    context_.writer->progress_point(point.name, mechanism_name(point.mechanism), point.address, point.reason);
  }
}

void Profiler::write_warnings() {
  if (!symbols_) return;
  for (const std::string& message : symbols_->take_warnings()) warn(message);
}

void Profiler::refresh_symbols() {
  std::size_t known = symbols_->objects().size();
  if (!attributor_.refresh()) return;
  const auto& objects = symbols_->objects();
  for (std::size_t i = known; i < objects.size(); ++i) {
    context_.writer->object({objects[i].path, objects[i].build_id, objects[i].bias, objects[i].in_scope, objects[i].debug_file});
  }
  if (context_.lbr) publish_code_map();
  write_warnings();
}

void Profiler::tick(uint64_t now) {
  if (refresh_requested_.exchange(false, std::memory_order_acq_rel) && symbols_) refresh_symbols();
  context_.threads->snapshot(snapshot_);
  for (threads::ThreadState* thread : snapshot_) {
    if (!thread->breakpoints_opened && breakpoints_.any()) breakpoints_.open(*thread);
    drain_thread(thread);
  }
  reap_retired();
  drain_children(now);
  // Draining can take long: the first drain resolves every new address (a Rust program's first
  // took 150-360 ms here). The experiment's start and end are stamped with the time of the
  // readings they pair with (visits, CPU time), not with the time the tick began.
  now = os::monotonic_ns();
  if (std::string warning = attributor_.take_warning(); !warning.empty()) warn(warning);
  if (context_.function_counters != nullptr) {
    for (const std::string& message : context_.function_counters->take_unavailable_warnings()) warn(message);
    if (fncounters::FunctionCounters::take_reload_request()) reload_function_counters();
  }
  if (machine_.in_experiment()) in_flight_.integrate(now, read_points());

  bool draining = machine_.state() == ExperimentMachine::State::kDraining;
  ExperimentMachine::Action action = machine_.tick(now, draining && drained(), visited_since_awaiting(now));
  switch (action.kind) {
    case ExperimentMachine::Action::Kind::kStart: start_experiment(now, action.line, action.speedup); break;
    case ExperimentMachine::Action::Kind::kMeasure: begin_measuring(now); break;
    case ExperimentMachine::Action::Kind::kBeginDraining: begin_draining(now); break;
    case ExperimentMachine::Action::Kind::kFinish: finish_experiment(now); break;
    case ExperimentMachine::Action::Kind::kNone: break;
  }
  if (switch_probe_.is_open() && now - last_switch_probe_ns_ >= kSwitchProbeEveryNs) {
    // The cost depends on the moment (os::SwitchCostProbe): a mean over rounds spread in time.
    last_switch_probe_ns_ = now;
    probe_switch_cost(kSwitchProbePairs);
    if (switch_probe_rounds_ % kSwitchProbeUpdateRounds == 0) update_switch_thresholds();
  }
  if (now - last_contention_ns_ >= kContentionWindowNs) update_schedstat(now);
  write_counter_interval(now, false);
  if (now - last_samples_write_ns_ >= kSamplesWriteIntervalNs) {
    if (last_samples_write_ns_ != 0) write_samples(now);
    last_samples_write_ns_ = now;
  }
}

void Profiler::update_schedstat(uint64_t now) {
  uint64_t window = last_contention_ns_ == 0 ? 0 : now - last_contention_ns_;
  last_contention_ns_ = now;
  sched_windows_.assign(snapshot_.size(), delays::SchedWindow{});
  std::vector<bool> measured(snapshot_.size(), false);
  std::vector<uint32_t> wall_per_cpu(snapshot_.size(), 0);
  const bool spin = context_.config->contention && context_.config->spin_pauses;
  for (std::size_t i = 0; i < snapshot_.size(); ++i) {
    threads::ThreadState* thread = snapshot_[i];
    if (thread->retired.load(std::memory_order_acquire)) continue;
    uint64_t run = 0, wait = 0;
    if (!threads::read_task_schedstat(*thread, run, wait)) continue;
    measured[i] = threads::advance_schedstat(*thread, run, wait, sched_windows_[i]);
    update_sampler(*thread, run);
    if (spin) wall_per_cpu[i] = thread->wall_per_cpu.update(run, wait);
  }
  if (window == 0 || !context_.config->contention) return;
  // Beside the threads read now, the program ran in threads that exited during the window (their
  // last readings) and in forked children: a parent's waits for a CPU while its children ran are
  // the program's own, not outside load (a fork-per-task parent had its samples scaled by 1.4 for
  // its children's demand, and its line predicted at 0%).
  delays::SchedWindow others = retired_window_;
  retired_window_ = {};
  if (context_.tree != nullptr) {
    uint64_t children_run = context_.tree->children_run_ns(), children_wait = context_.tree->children_wait_ns();
    others.run_ns += children_run - children_run_seen_;
    others.wait_ns += children_wait - children_wait_seen_;
    children_run_seen_ = children_run;
    children_wait_seen_ = children_wait;
  }
  bool oversubscribed = false;
  uint32_t tree_figure = delays::kNoContention;
  if (spin) {
    // The whole tree's demand: this process's threads and every forked child's.
    uint64_t run = others.run_ns, wait = others.wait_ns;
    for (const delays::SchedWindow& w : sched_windows_) {
      run += w.run_ns;
      wait += w.wait_ns;
    }
    bool was = tree_demand_.on();
    oversubscribed = tree_demand_.update(run, wait, window, usable_cpus_);
    if (oversubscribed != was) {
      log::debug("oversubscribed {}: the tree ran {:.1f} and waited {:.1f} CPU-ms in a {:.1f}-ms window on {} CPUs",
                 oversubscribed ? "on" : "off", static_cast<double>(run) / 1e6, static_cast<double>(wait) / 1e6,
                 static_cast<double>(window) / 1e6, usable_cpus_);
    }
    tree_figure = oversubscribed ? delays::tree_wall_per_cpu(run, wait) : delays::kNoContention;
    context_.delays->tree_wall_per_cpu.store(tree_figure, std::memory_order_relaxed);
    context_.delays->oversubscribed.store(oversubscribed, std::memory_order_relaxed);
  }
  std::vector<uint32_t> permille = delays::contention_permille(sched_windows_, window, usable_cpus_, others);
  for (std::size_t i = 0; i < snapshot_.size(); ++i) {
    if (oversubscribed && wall_per_cpu[i] != 0) {
      snapshot_[i]->delays.contention_permille.store(wall_per_cpu[i], std::memory_order_relaxed);
    } else if (oversubscribed && !snapshot_[i]->wall_per_cpu.measured()) {
      snapshot_[i]->delays.contention_permille.store(tree_figure, std::memory_order_relaxed);
    }
    if (!measured[i] || permille[i] == 0) continue;  // too little run time: keep the previous figure
    // The end-of-run warning is about other processes, whichever waits the pauses scale by.
    if (!oversubscribed) snapshot_[i]->delays.contention_permille.store(permille[i], std::memory_order_relaxed);
    contention_weighted_ += static_cast<double>(permille[i]) * static_cast<double>(sched_windows_[i].run_ns);
    contention_run_ns_ += static_cast<double>(sched_windows_[i].run_ns);
  }
}

void Profiler::choose_switch_thresholds() {
  if (context_.switch_events == 0) return;
  const config::Config& config = *context_.config;
  if (config.switch_cost_ns != 0) {
    switch_cost_ns_ = config.switch_cost_ns;
    sampling::set_switch_thresholds(sampling::SwitchThresholds::for_cost(switch_cost_ns_, context_.switch_events));
    log::debug("a sampling event's switch costs {:.1f} us (given)", static_cast<double>(switch_cost_ns_) / 1e3);
    return;
  }
  if (switch_probe_.open(config.sampling_period_ns) != 0) return;  // no perf_event: the defaults
  for (int round = 0; round < kSwitchProbeFirstRounds; ++round) probe_switch_cost(kSwitchProbeFirstPairs);
  update_switch_thresholds();
}

void Profiler::probe_switch_cost(int pairs) {
  const uint64_t cost = switch_probe_.round(pairs);
  if (cost > kSwitchProbeOutlierNs) return;  // the thread lost its CPU during the round
  switch_probe_sum_ns_ += cost;
  ++switch_probe_rounds_;
}

void Profiler::update_switch_thresholds() {
  if (switch_probe_rounds_ == 0) return;
  const uint64_t cost = std::max<uint64_t>(switch_probe_sum_ns_ / switch_probe_rounds_, 1);
  const sampling::SwitchThresholds before = sampling::switch_thresholds();
  const sampling::SwitchThresholds now = sampling::SwitchThresholds::for_cost(cost, context_.switch_events);
  switch_cost_ns_ = cost;
  sampling::set_switch_thresholds(now);
  if (now.to_timer != before.to_timer) {
    log::debug("a sampling event's switch costs {:.1f} us on average over {} rounds ({} a thread): threads move to "
               "the timer at {} voluntary switches per CPU-second", static_cast<double>(cost) / 1e3,
               switch_probe_rounds_, context_.switch_events, now.to_timer);
  }
}

void Profiler::update_sampler(threads::ThreadState& thread, uint64_t run_ns) {
  if (threads::apply_switch_rule(thread, run_ns)) {
    ++timer_threads_;
    if (timer_thread_ids_.size() < 8) timer_thread_ids_.push_back(thread.tid);
  }
}

void Profiler::warn_timer_threads() {
  if (context_.tree != nullptr) {  // forked children's threads that moved (their forwarders noted them)
    for (pid_t tid : context_.tree->timer_thread_ids()) {
      if (timer_thread_ids_.size() < 8) timer_thread_ids_.push_back(tid);
    }
    timer_threads_ += context_.tree->timer_threads();
  }
  if (timer_threads_ == 0) return;
  std::string ids;
  for (pid_t tid : timer_thread_ids_) ids += (ids.empty() ? "" : ", ") + std::to_string(tid);
  if (timer_threads_ > timer_thread_ids_.size()) ids += ", ...";
  const double switch_us = static_cast<double>(switch_cost_ns_ * context_.switch_events) / 1e3;
  warn(fmt::format("{} thread{} sampled with the CPU-time timer instead of perf_event for part of the run "
                   "(tid{} {}): {} blocked more than {} times per second of {} CPU time, and per-thread perf events "
                   "cost {:.1f} us at every context switch here. Timer samples come at scheduler ticks, each "
                   "weighted by the periods it stands for; --sampler perf keeps perf_event on every thread",
                   timer_threads_, timer_threads_ == 1 ? " was" : "s were", timer_threads_ == 1 ? "" : "s", ids,
                   timer_threads_ == 1 ? "it" : "they", sampling::switch_thresholds().to_timer,
                   timer_threads_ == 1 ? "its" : "their", switch_us));
}

void Profiler::drain_thread(threads::ThreadState* thread) {
  if (thread->tracer) {
    thread->tracer->drain([this](const lbr::Edge* edges, uint32_t count) { branches_.add_burst(edges, count); });
  }
  if (!thread->sampler) return;
  struct Context {
    Profiler* self;
    threads::ThreadState* thread;
  } context{this, thread};
  thread->sampler->drain(
      [](void* raw, const os::RawSample& sample) {
        auto* c = static_cast<Context*>(raw);
        c->self->handle_sample(c->thread, sample);
      },
      &context);
  const uint64_t lost = thread->sampler->lost();
  if (lost < thread->sampler_lost_seen) thread->sampler_lost_seen = 0;  // a new sampler counts afresh
  ring_lost_ += lost - thread->sampler_lost_seen;
  thread->sampler_lost_seen = lost;
}

void Profiler::handle_sample(threads::ThreadState* thread, const os::RawSample& sample) {
  if (context_.config->instruction_counts) instructions_.add(sample.ip, sample.weight);
  const uint64_t own_before = attributor_.own_samples();
  int32_t id = attributor_.attribute_sample(sample);
  const bool own = attributor_.own_samples() != own_before;  // whatif's own time (attribute_sample)
  // A spin-wait is no work the virtual program must do (the CPU bound) whether or not a line in
  // scope holds it: an OpenMP worker waits spinning in libgomp alone, and counted as work it capped
  // the serial line's experiments at half their delay (15.6% predicted for 30%). Not whatif's own
  // pauses, whose spins the bound takes out itself.
  if (!own && at_spin_wait(sample.ip)) spin_wait_samples_ += sample.weight;
  if (id < 0) {
    if (!own) unscoped_samples_ += sample.weight;
    return;
  }
  Line& line = attributor_.line(id);
  line.samples += sample.weight;
  if (line.sampled_point >= 0) sampled_counts_[static_cast<std::size_t>(line.sampled_point)] += sample.weight;
  // Inside sched_yield the thread waits, whichever line called it: a loop that polls and yields
  // would otherwise be sped up for the time it waits (a yield ping-pong's wait line: 21% for 0%).
  if (machine_.on_sample(id, line.fixed_match, sample.weight, threads::in_yield_code(sample.ip)) && thread != nullptr &&
      threads::profiler_credits(sample, published_ranges_)) {
    threads::credit_selected(*context_.delays, *thread, sample.weight);
  }
}

void Profiler::drain_children(uint64_t now) {
  threads::ProcessTree* tree = context_.tree;
  if (tree == nullptr || !tree->forked()) return;  // a program that never forked: 64 empty slots a tick
  bool check_liveness = now - last_liveness_check_ns_ >= kLivenessCheckNs;
  if (check_liveness) last_liveness_check_ns_ = now;
  uint64_t lost = 0;
  for (std::size_t i = 0; i < threads::ProcessTree::kMaxProcesses; ++i) {
    threads::ProcessSlot& slot = tree->slot(i);
    threads::ProcessSlot::State state = slot.state();
    if (state != threads::ProcessSlot::kLive && state != threads::ProcessSlot::kExited) continue;
    slot.drain([](void* self, const os::RawSample& sample) { static_cast<Profiler*>(self)->handle_sample(nullptr, sample); },
               this);
    lost += slot.lost();
    // A child killed before its exit path ran never marks its slot exited.
    if (state == threads::ProcessSlot::kExited || (check_liveness && os::process_exited(slot.pid()))) {
      if (state == threads::ProcessSlot::kExited && slot.life_ns() > 0) {
        ++children_timed_;
        children_life_ns_ += slot.life_ns();
        children_own_ns_ += std::min(slot.own_ns(), slot.life_ns());
      }
      children_lost_ += slot.lost();
      lost -= slot.lost();
      delays::forget_runnable_threads(slot.runnable_tally());  // a killed child never took its threads out
      slot.release();
    }
  }
  if (!children_refused_warned_ && tree->refused() > 0) {
    children_refused_warned_ = true;
    warn("more than " + std::to_string(threads::ProcessTree::kMaxProcesses) +
         " processes of this program ran at once: the others ran unprofiled (their samples and progress visits are "
         "missing); fork fewer workers at a time to profile them all");
  }
  if (!children_lost_warned_ && children_lost_ + lost > 0) {
    children_lost_warned_ = true;
    warn("child processes produced samples faster than the profiler drained them; some of their samples are lost");
  }
}

std::vector<progress::PointReading> Profiler::read_points() const {
  return context_.tree != nullptr ? context_.tree->read_points() : progress::read_source_points();
}

void Profiler::reap_retired() {
  context_.threads->take_retired(retired_);
  if (retired_.empty()) return;
  for (threads::ThreadState* thread : retired_) {
    delays::SchedWindow since = exit_demand_.account(*thread);
    retired_window_.run_ns += since.run_ns;
    retired_window_.wait_ns += since.wait_ns;
    drain_thread(thread);
    breakpoints_.close(*thread);
    threads::close_task_files(*thread);
    if (thread->tracer) branches_.retire(*thread->tracer);
  }
  // The tick's snapshot must not keep pointers to the threads freed below.
  std::sort(retired_.begin(), retired_.end());
  std::erase_if(snapshot_, [&](threads::ThreadState* thread) {
    return std::binary_search(retired_.begin(), retired_.end(), thread);
  });
  for (threads::ThreadState* thread : retired_) delete thread;
}

void Profiler::start_experiment(uint64_t now, int32_t line, double speedup) {
  publish_selected_ranges(line);
  delays::GlobalDelays& delays = *context_.delays;
  global_delay_at_start_ = delays.global_ns.load(std::memory_order_acquire);
  global_delay_at_warm_up_ = global_delay_at_start_;
  paused_at_start_ = delays.paused_ns.load(std::memory_order_relaxed);
  // Release pairs with catch_up's acquire loads: debts from before are forgiven from here on.
  delays.epoch_start_ns.store(global_delay_at_start_, std::memory_order_release);
  sample_scale_ = periods_per_sample_.factor();  // a sample stands for its share of whatif's time too
  delays.delay_size_ns.store(
      static_cast<uint64_t>(speedup * sample_scale_ * static_cast<double>(context_.config->sampling_period_ns)),
      std::memory_order_release);
  delays.phase.store(static_cast<int>(delays::Phase::kRunning), std::memory_order_release);
  begin_measuring(now);
}

void Profiler::begin_measuring(uint64_t now) {
  delays::GlobalDelays& delays = *context_.delays;
  global_delay_at_start_ = delays.global_ns.load(std::memory_order_acquire);
  if (delays.oversubscribed.load(std::memory_order_relaxed)) {
    // Debts from the warm-up are forgiven: paid inside the measured part, they paused the program
    // beyond the delay it counts (a spinning pause pays a debt of d in about d of wall time, so a
    // thread enters the measured part owing several samples' delay: 8 threads on 2 CPUs).
    delays.epoch_start_ns.store(global_delay_at_start_, std::memory_order_release);
  }
  paused_at_start_ = delays.paused_ns.load(std::memory_order_relaxed);
  ring_lost_at_start_ = ring_lost_;
  cpu_at_start_ = program_cpu_ns();
  profiler_cpu_at_start_ = os::thread_cpu_ns();
  spin_wait_at_start_ = spin_wait_samples_;
  own_at_start_ = attributor_.own_samples();
  unscoped_at_start_ = unscoped_samples_;
  cpu_at_end_ = spin_wait_at_end_ = 0;
  points_at_start_ = read_points();
  breakpoints_at_start_ = breakpoints_.read(snapshot_);
  sampled_at_start_ = sampled_counts_;
  in_flight_.reset(now, points_at_start_);
}

void Profiler::publish_selected_ranges(int32_t line) {
  const std::vector<symbols::AddressRange>& ranges = line >= 0 ? attributor_.ranges_of(line) : fixed_line_ranges_;
  delays::RangesSnapshot& published = published_ranges_;
  published.count = 0;
  for (const symbols::AddressRange& range : ranges) {
    if (published.count == delays::SelectedRanges::kMax) break;  // the rest are credited here, a tick later
    published.begin[published.count] = range.begin;
    published.end[published.count] = range.end;
    ++published.count;
  }
  delays::publish_selected_ranges(*context_.delays, published.begin, published.end, published.count);
}

void Profiler::begin_draining(uint64_t now) {
  delays::GlobalDelays& delays = *context_.delays;
  delays.delay_size_ns.store(0, std::memory_order_release);
  end_cpu_work();  // the drain adds no delay, and the machine counts no samples in it
  if (delays.oversubscribed.load(std::memory_order_relaxed)) {
    // No drain: a spinning pause keeps its thread's CPU share, so paying a debt of d takes about d
    // of wall time, and with several threads per CPU every drain ran its 10-ms limit, its time and
    // progress counting at the unsped rate (8 threads of one line on 2 CPUs: 43% predicted for
    // 49.5%). The experiment ends here; each running thread is short of the delay by what it still
    // owes, so the program was delayed by the global delay less the average of that (exact for
    // threads alike in what they run), and their debts are forgiven.
    uint64_t global = delays.global_ns.load(std::memory_order_acquire);
    uint64_t owed = 0, running = 0;
    for (const threads::ThreadState* thread : snapshot_) {
      if (thread->retired.load(std::memory_order_acquire) || thread->delays.blocked.load(std::memory_order_acquire)) continue;
      uint64_t mine = std::max(thread->delays.local_ns.load(std::memory_order_acquire),
                               delays.epoch_start_ns.load(std::memory_order_acquire));
      owed += global > mine ? global - mine : 0;
      ++running;
    }
    unpaid_ns_ = running > 0 ? owed / running : 0;
    finish_experiment(now);
    return;
  }
  delays.phase.store(static_cast<int>(delays::Phase::kDraining), std::memory_order_release);
  // The drain's time and progress count in the experiment at the unsped rate, diluting the
  // virtual speedup, so it lasts only until no running thread owes delay. Threads that owe are
  // signalled to settle now instead of at their next sample or blocking call.
  drain_target_ns_ = delays.global_ns.load(std::memory_order_acquire);
  for (threads::ThreadState* thread : snapshot_) {
    if (owes_before_drain_end(*thread)) os::tgkill(getpid(), thread->tid, os::sample_signal());
  }
  if (drained()) finish_experiment(now);
}

bool Profiler::owes_before_drain_end(const threads::ThreadState& thread) const {
  return !thread.retired.load(std::memory_order_acquire) && delays::owes_while_running(thread.delays, drain_target_ns_);
}

bool Profiler::drained() const {
  return std::none_of(snapshot_.begin(), snapshot_.end(),
                      [this](const threads::ThreadState* thread) { return owes_before_drain_end(*thread); });
}

std::vector<profile::PointResult> Profiler::point_deltas(uint64_t now, uint64_t delay_ns) {
  const config::Config& config = *context_.config;
  std::vector<profile::PointResult> results =
      source_point_deltas(read_points(), points_at_start_, in_flight_,
                          static_cast<double>(now - machine_.start_ns()), delay_ns);
  for (profile::PointResult& result : breakpoints_.deltas(breakpoints_.read(snapshot_), breakpoints_at_start_)) {
    results.push_back(std::move(result));
  }
  for (std::size_t i = 0; i < sampled_counts_.size(); ++i) {
    profile::PointResult result;
    result.name = "sampled:" + config.sampled_points[i].text();
    result.delta = sampled_counts_[i] - (i < sampled_at_start_.size() ? sampled_at_start_[i] : 0);
    results.push_back(std::move(result));
  }
  if (config.end_to_end) results.push_back({"end-to-end", false, 1, 0, 0, 0});
  return results;
}

void Profiler::finish_experiment(uint64_t now) {
  delays::GlobalDelays& delays = *context_.delays;
  delays.delay_size_ns.store(0, std::memory_order_release);
  uint64_t global = delays.global_ns.load(std::memory_order_acquire);
  const config::Config& config = *context_.config;

  profile::ExperimentRecord record;
  record.id = machine_.experiments_done();
  record.speedup = machine_.speedup();
  record.start_ns = machine_.start_ns() - context_.start_ns;
  record.duration_ns = now - machine_.start_ns();
  record.delay_ns = global - global_delay_at_start_ - std::min(std::exchange(unpaid_ns_, 0), global - global_delay_at_start_);
  record.selected_samples = machine_.selected_samples();
  record.total_samples = machine_.total_samples();
  record.elapsed_ns = now - context_.start_ns;
  record.paused_ns = delays.paused_ns.load(std::memory_order_relaxed) - paused_at_start_;
  const uint64_t period = config.sampling_period_ns;
  if (cpu_at_end_ == 0) end_cpu_work();
  experiment::CpuWork work;
  work.cpu_ns = cpu_at_end_ - std::min(cpu_at_end_, cpu_at_start_);
  work.spin_wait_ns = (spin_wait_at_end_ - spin_wait_at_start_) * period;
  work.line_ns = static_cast<uint64_t>(static_cast<double>(record.selected_samples * period) * sample_scale_);
  work.cpus = usable_cpus_;
  record.cpu_ns = work.cpu_ns;
  record.spin_wait_ns = work.spin_wait_ns;
  record.cpus = work.cpus;
  record.sample_scale = sample_scale_;
  record.own_samples = own_at_end_ - own_at_start_;
  record.unscoped_samples = unscoped_at_end_ - unscoped_at_start_;
  const uint64_t kept = record.total_samples + record.unscoped_samples;
  const bool dropped = ring_losses_.set_aside(ring_lost_ - ring_lost_at_start_, kept);  // first: no ratio then
  const bool busy = profiler_load_.busy(profiler_cpu_at_end_ - std::min(profiler_cpu_at_end_, profiler_cpu_at_start_),
                                        record.duration_ns);
  const bool lost = coverage_.lost(kept, record.cpu_ns, period);
  // From baselines only: a sped-up experiment's pauses take CPU time (their system calls and
  // context switches) that no sample of the program's stands for.
  if (!dropped && !busy && !lost && record.speedup == 0) periods_per_sample_.add(kept, record.cpu_ns, period);
  record.set_aside = !config.end_to_end && (dropped || busy || lost);
  if (record.set_aside) {
    log::debug("experiment {} set aside:{}{}{}", record.id, dropped ? " its rings dropped samples" : "",
               busy ? " the profiler thread was busy" : "", lost ? " its samples fell short of its CPU time" : "");
  }
  record.delay_ns = experiment::delay_within_cpu_bound(record.delay_ns, record.duration_ns, record.speedup, work);
  if (config.fixed_line) {
    record.selected = fixed_line_name_.empty() ? config.fixed_line->text() : fixed_line_name_;
    for (const Line& line : attributor_.lines()) {
      if (line.fixed_match) record.line_samples_total += line.samples;
    }
  } else {
    const Line& selected = attributor_.line(machine_.selected());
    record.selected = selected.name;
    record.line_samples_total = selected.samples;
  }
  record.points = point_deltas(now, record.delay_ns);
  context_.writer->experiment(record);

  delays.epoch_start_ns.store(global, std::memory_order_release);
  delays.phase.store(static_cast<int>(delays::Phase::kIdle), std::memory_order_release);
  Outcome outcome;
  outcome.fewest = fewest_visits(record.points);
  for (const profile::PointResult& point : record.points) outcome.visits += point.delta;  // visits or arrivals
  outcome.progress_seen = progress_seen();
  outcome.set_aside = record.set_aside;
  outcome.idle = !config.end_to_end && format::idle_experiment(static_cast<double>(outcome.visits),
                                                              static_cast<double>(record.cpu_ns),
                                                              static_cast<double>(record.duration_ns));
  outcome.effective_ns = static_cast<double>(record.duration_ns) - static_cast<double>(record.delay_ns);
  outcome.inserted_ns = global - std::min(global, global_delay_at_warm_up_);
  machine_.finish(now, outcome);
}

uint64_t Profiler::program_cpu_ns() {
  // The process's CPU time and its children's (as their forwarders last reported it), less the
  // profiler thread's (this one) and the pauses' (their spins, and the CPU time around their
  // sleeps): the pauses' sums cover the whole process tree.
  const delays::GlobalDelays& delays = *context_.delays;
  uint64_t own = os::process_cpu_ns(), mine = os::thread_cpu_ns();
  uint64_t children = context_.tree != nullptr ? context_.tree->children_run_ns() : 0;
  uint64_t whatif = mine + delays.spun_cpu_ns.load(std::memory_order_relaxed) +
                    delays.paused_cpu_ns.load(std::memory_order_relaxed);
  uint64_t total = own + children;
  return total > whatif ? total - whatif : 0;
}

void Profiler::end_cpu_work() {
  cpu_at_end_ = program_cpu_ns();
  profiler_cpu_at_end_ = os::thread_cpu_ns();
  spin_wait_at_end_ = spin_wait_samples_;
  own_at_end_ = attributor_.own_samples();
  unscoped_at_end_ = unscoped_samples_;
}

bool Profiler::at_spin_wait(uint64_t ip) {
  auto [it, inserted] = spin_wait_ips_.try_emplace(ip, false);
  if (inserted) {
    if (spin_wait_ips_.size() > kMaxSpinWaitIps) {  // a JIT or a huge program: start over
      spin_wait_ips_.clear();
      it = spin_wait_ips_.try_emplace(ip, false).first;
    }
    it->second = threads::spin_wait_at(ip);
  }
  return it->second;
}

uint64_t Profiler::progress_visits() const {
  uint64_t total = 0;
  for (const progress::PointReading& reading : read_points()) total += reading.visits;
  for (uint64_t visits : breakpoints_.read(snapshot_)) total += visits;
  for (uint64_t visits : sampled_counts_) total += visits;
  return total;
}

bool Profiler::visited_since_awaiting(uint64_t now) {
  if (!machine_.awaiting_visit(now)) {
    awaiting_visit_ = false;
    return true;
  }
  // Read only while a boundary waits (a tick or two an experiment, ending at the first tick after a
  // visit): breakpoint counts are a read(2) per thread.
  uint64_t visits = progress_visits();
  if (visits == 0) return true;  // no point visited yet (or none at all): nothing to wait for
  if (!awaiting_visit_) {
    awaiting_visit_ = true;
    visits_when_awaiting_ = visits;
    return false;
  }
  return visits > visits_when_awaiting_;
}

bool Profiler::progress_seen() const { return progress_visits() > 0 || context_.config->end_to_end; }

void Profiler::write_samples(uint64_t now) {
  std::vector<std::pair<std::string, uint64_t>> counts;
  for (const Line& line : attributor_.lines()) {
    if (line.samples > 0) counts.emplace_back(line.name, line.samples);
  }
  context_.writer->samples(counts, now - context_.start_ns);
  write_instructions();
  if (context_.lbr) write_branches();
  write_function_counters(now);
}

void Profiler::reload_function_counters() {
  // The file `whatif ctl` wrote (by rename): `function NAME`, `event SET ENCODING` (SET: * or the
  // set's number; ENCODING as in WHATIF_COUNTER_EVENTS) and `cycle N` lines.
  std::string path = os::counters_reload_path(getpid());
  std::string text = os::read_text(path.c_str(), 1 << 20);
  os::remove_file(path.c_str());  // consumed: one reload per `whatif ctl`, nothing left in /tmp
  std::vector<std::string> names;
  std::vector<fncounters::EventSpec> events;
  uint32_t cycle = context_.config->counter_cycle;
  std::vector<std::string> warnings;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    std::size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    std::string keyword = line.substr(0, space), value = line.substr(space + 1);
    if (keyword == "function") {
      names.push_back(value);
    } else if (keyword == "cycle") {
      cycle = static_cast<uint32_t>(std::strtoul(value.c_str(), nullptr, 10));
    } else if (keyword == "event") {
      std::size_t gap = value.find(' ');
      auto event = gap == std::string::npos ? std::nullopt : config::parse_counter_event(value.substr(gap + 1));
      if (!event) {
        warnings.push_back("--counters reload: malformed event line '" + line + "' in " + path + "; it is ignored");
        continue;
      }
      std::string set = value.substr(0, gap);
      event->set = set == "*" ? -1 : static_cast<int>(std::strtol(set.c_str(), nullptr, 10));
      events.push_back(*event);
    }
  }
  if (names.empty()) {
    warn("--counters reload: " + path + " is missing or names no function; the selection is unchanged (use `whatif "
         "ctl PID reload CONFIG`)");
    return;
  }
  std::size_t found = context_.function_counters->reload(names, events, cycle, warnings);
  for (const std::string& message : warnings) warn(message);
  // A record the user (and `whatif ctl`'s tests) can see the swap in.
  std::string counted;
  for (const fncounters::EventSpec& event : events) counted += (counted.empty() ? "" : ", ") + event.name;
  warn("--counters reload: now counting " + std::to_string(found) + " of the " + std::to_string(names.size()) +
       " functions named, with events: " + (counted.empty() ? std::string("none (time only)") : counted));
}

void Profiler::write_function_counters(uint64_t now) {
  fncounters::FunctionCounters* counters = context_.function_counters;
  if (counters == nullptr) return;
  for (const std::string& message : counters->take_unavailable_warnings()) warn(message);
  const auto& events = counters->events();
  for (const fncounters::FunctionTotals& totals : counters->totals()) {
    profile::CountersRecord record;
    record.tid = totals.tid;
    record.function = totals.function;
    record.calls = totals.calls;
    record.inclusive_ns = totals.inclusive[0];
    record.exclusive_ns = totals.exclusive[0];
    for (std::size_t e = 0; e < events.size(); ++e) {
      // Cycled, or counted under some of the run's configurations only: the calls it counted in.
      int64_t measured = counters->counted_in_every_call(e) ? -1 : static_cast<int64_t>(totals.measured[e]);
      record.events.push_back({events[e].name, totals.inclusive[e + 1], totals.exclusive[e + 1], measured});
    }
    context_.writer->counters(record, now - context_.start_ns);
  }
}

void Profiler::write_counter_interval(uint64_t now, bool force) {
  fncounters::ProcessCounters* counters = context_.process_counters;
  uint64_t every = context_.config->counter_interval_ns;
  if (counters == nullptr || every == 0 || !counters->ready()) return;
  if (last_interval_ns_ == 0) last_interval_ns_ = now;  // the first interval starts at the open
  if (!force && now - last_interval_ns_ < every) return;
  last_interval_ns_ = now;
  fncounters::Interval interval = counters->read(now);
  if (interval.interval_ns == 0) return;
  profile::CounterIntervalRecord record;
  record.interval_ns = interval.interval_ns;
  for (const fncounters::IntervalValue& value : interval.values) {
    record.values.push_back({value.name, value.value, value.running_fraction});
  }
  record.unavailable = std::move(interval.unavailable);
  context_.writer->counter_interval(record, now - context_.start_ns);
}

void Profiler::write_instructions() {
  if (!context_.config->instruction_counts || !symbols_ || instructions_.size() == 0) return;
  std::unordered_map<const symbols::LoadedObject*, std::vector<std::pair<uint64_t, uint64_t>>> by_object;
  instructions_.for_each([&](uint64_t ip, uint64_t samples) {
    const symbols::LoadedObject* object = symbols_->object_at(ip);
    if (object != nullptr && object->in_scope) by_object[object].emplace_back(ip - object->bias, samples);
  });
  for (auto& [object, counts] : by_object) {
    std::sort(counts.begin(), counts.end());
    context_.writer->instructions(object->path, object->build_id, counts);
  }
}

void Profiler::publish_code_map() {
  if (!symbols_) return;
  const symbols::LoadedObject* own = symbols_->object_at(reinterpret_cast<uintptr_t>(&Profiler::thread_main));
  std::vector<lbr::CodeRange> code, rseq;
  for (const symbols::LoadedObject& object : symbols_->objects()) {
    if (&object == own || object.path.find("libZydis") != std::string::npos) continue;  // our own code: never traced
    for (const symbols::AddressRange& range : object.executable_ranges) code.push_back({range.begin, range.end});
    for (const lbr::CodeRange& range : lbr::rseq_sections(object.path, object.bias)) rseq.push_back(range);
  }
  lbr::publish_code_map(lbr::build_code_map(std::move(code), std::move(rseq)));
}

void Profiler::write_branches() {
  if (symbols_) {
    for (const lbr::ObjectBranches& object : branches_.records(*symbols_)) {
      context_.writer->branches({object.path, object.build_id, object.edges, object.ranges, object.paths});
    }
  }
  lbr::StatsTotals live;
  for (threads::ThreadState* thread : snapshot_) {
    if (thread->tracer) {
      live.add(thread->tracer->stats());
      live.registers = std::max(live.registers, thread->tracer->registers());
    }
  }
  lbr::StatsTotals total = branches_.totals(live);
  const config::Config& config = *context_.config;
  profile::BranchStatsRecord record;
  record.depth = config.lbr_depth;
  record.every = config.lbr_every;
  record.bursts = total.bursts;
  record.completed = total.completed;
  record.taken = total.taken;
  record.breakpoints = total.breakpoints;
  record.static_branches = total.static_branches;
  record.dynamic_branches = total.dynamic_branches;
  record.flow_resolved = total.flow_resolved;
  record.decoded_blocks = total.decoded_blocks;
  record.lookahead_settled = total.lookahead_settled;
  record.breakpoint_moves = total.moves;
  record.registers = total.registers;
  for (int i = 0; i < static_cast<int>(lbr::EndReason::kCount); ++i) {
    record.ended.emplace_back(lbr::end_reason_name(static_cast<lbr::EndReason>(i)), total.ended[i]);
  }
  context_.writer->branch_stats(record);
}

}  // namespace whatif::experiment
