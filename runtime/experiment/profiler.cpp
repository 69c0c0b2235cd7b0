// The profiler thread's loop: sample draining and attribution, the experiment state machine, and
// profile writing. Runs only on the profiler thread (all signals blocked, re-entry guard set).
#include "experiment/profiler.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "os/log.h"
#include "threads/settle.h"
#include "libc/guard.h"
#include "libc/real.h"
#include "os/os.h"
#include "progress/progress_points.h"

namespace whatif::experiment {
namespace {

constexpr uint64_t kTickNs = 1000000;            // profiler wake-up period
constexpr uint64_t kCoolOffNs = 10000000;        // pause between experiments
constexpr uint64_t kMaxDrainNs = 10000000;       // longest wait for threads to execute owed delays
constexpr uint64_t kMaxExperimentNs = 10000000000ull;
constexpr uint64_t kTargetVisits = 10;           // minimum progress visits per experiment
constexpr double kBaselineProbability = 0.5;     // speedup 0 (paper §3.2)
constexpr uint64_t kSamplesWriteIntervalNs = 5000000000ull;

bool path_matches(std::string_view file, const std::string& spec) {
  if (file == spec) return true;
  return file.size() > spec.size() && file.substr(file.size() - spec.size()) == spec &&
         file[file.size() - spec.size() - 1] == '/';
}

bool line_matches(const symbols::SourceLine& line, const config::LineSpec& spec) {
  return line.line == spec.line && path_matches(line.file, spec.file);
}

}  // namespace

Profiler::Profiler(ProfilerContext context) : context_(std::move(context)) {
  const config::Config& config = *context_.config;
  random_.seed(config.seed_given ? config.seed : std::random_device{}());
  experiment_length_ns_ = config.experiment_length_ns;
  sampled_counts_.assign(config.sampled_points.size(), 0);
  breakpoint_retired_counts_.assign(config.breakpoint_points.size(), 0);
}

Profiler::~Profiler() = default;

int Profiler::start() {
  sigset_t all, previous;
  sigfillset(&all);
  real::pthread_sigmask(SIG_SETMASK, &all, &previous);  // the new thread inherits the full mask
  int result = real::pthread_create(&thread_, nullptr, &Profiler::thread_main, this);
  real::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  thread_started_ = result == 0;
  return result;
}

void Profiler::stop_and_finish(int exit_status) {
  if (!thread_started_) return;
  stop_requested_.store(true, std::memory_order_release);  // pairs with run()'s acquire
  real::pthread_join(thread_, nullptr);
  thread_started_ = false;
  context_.writer->runtime(os::monotonic_ns() - context_.start_ns, experiments_done_, exit_status);
}

void* Profiler::thread_main(void* self) {
  interpose::mark_runtime_thread();
  static_cast<Profiler*>(self)->run();
  return nullptr;
}

void Profiler::run() {
  setup_symbols();
  state_until_ns_ = os::monotonic_ns() + kCoolOffNs;
  while (!stop_requested_.load(std::memory_order_acquire)) {
    tick(os::monotonic_ns());
    os::sleep_ns(kTickNs);
  }
  uint64_t now = os::monotonic_ns();
  tick(now);  // the last samples
  if (context_.config->end_to_end && state_ == State::kRunning) finish_experiment(now);
  write_samples(now);
}

void Profiler::setup_symbols() {
  const config::Config& config = *context_.config;
  symbols::Scope scope;
  if (!config.binary_scope.empty()) scope.binary_patterns = config.binary_scope;
  if (!config.source_scope.empty()) scope.source_patterns = config.source_scope;
  auto map = symbols::SymbolMap::for_current_process(scope);
  if (!map) {
    log::warning("{}", map.error());
    context_.writer->warning(map.error());
    return;
  }
  symbols_ = std::move(*map);
  bool any_in_scope = false;
  for (const symbols::LoadedObject& object : symbols_->objects()) {
    context_.writer->object({object.path, object.build_id, object.bias, object.in_scope, object.debug_file});
    any_in_scope = any_in_scope || (object.in_scope && object.has_debug_info);
  }
  if (!any_in_scope) {
    std::string message = "no in-scope object has debug info, so no line can be profiled: rebuild with -g, or widen "
                          "the binary scope with -b";
    log::warning("{}", message);
    context_.writer->warning(message);
  }
  breakpoint_addresses_.assign(config.breakpoint_points.size(), 0);
  for (std::size_t i = 0; i < config.breakpoint_points.size(); ++i) {
    const config::LineSpec& spec = config.breakpoint_points[i];
    auto ranges = symbols_->ranges_for(spec.file, spec.line, /*in_scope_only=*/true);
    if (ranges.empty()) {
      std::string message = "progress point " + spec.text() + " matches no code in scope: check the file and line with "
                            "`whatif lines PROGRAM " + spec.text() + "`, or add its library with -b";
      log::warning("{}", message);
      context_.writer->warning(message);
      continue;
    }
    uint64_t first = ranges.front().begin;
    for (const auto& range : ranges) first = std::min<uint64_t>(first, range.begin);
    breakpoint_addresses_[i] = first;
  }
  if (config.fixed_line) {
    fixed_line_name_ = canonical_fixed_line_name();
    fixed_line_ranges_ = symbols_->ranges_for(config.fixed_line->file, config.fixed_line->line, /*in_scope_only=*/true);
  }
  if (config.fixed_line && fixed_line_ranges_.empty()) {
    std::string message = "--fixed-line " + config.fixed_line->text() + " matches no code in scope: check it with "
                          "`whatif lines PROGRAM " + config.fixed_line->text() + "`, or widen the scope with -b/-s";
    log::warning("{}", message);
    context_.writer->warning(message);
  }
  write_warnings();
}

std::string Profiler::canonical_fixed_line_name() {
  const config::LineSpec& spec = *context_.config->fixed_line;
  for (const symbols::AddressRange& range : symbols_->ranges_for(spec.file, spec.line, /*in_scope_only=*/true)) {
    if (auto info = symbols_->lookup(range.begin)) {
      for (const symbols::SourceLine& frame : info->frames) {
        if (line_matches(frame, spec)) return std::string(frame.file) + ":" + std::to_string(frame.line);
      }
    }
  }
  return spec.text();
}

void Profiler::write_warnings() {
  if (!symbols_) return;
  for (const std::string& message : symbols_->take_warnings()) {
    log::warning("{}", message);
    context_.writer->warning(message);
  }
}

void Profiler::tick(uint64_t now) {
  if (refresh_requested_.exchange(false, std::memory_order_acq_rel) && symbols_) {
    std::size_t known = symbols_->objects().size();
    if (symbols_->refresh()) {
      address_cache_.clear();  // addresses in new objects were cached as unknown
      const auto& objects = symbols_->objects();
      for (std::size_t i = known; i < objects.size(); ++i) {
        context_.writer->object({objects[i].path, objects[i].build_id, objects[i].bias, objects[i].in_scope, objects[i].debug_file});
      }
      write_warnings();
    }
  }
  context_.threads->snapshot(snapshot_);
  for (threads::ThreadState* thread : snapshot_) {
    if (!thread->breakpoints_opened && !breakpoint_addresses_.empty()) open_breakpoints(thread);
    drain_thread(thread);
  }
  reap_retired();
  integrate_in_flight(now);

  switch (state_) {
    case State::kCoolOff:
      if (now >= state_until_ns_) {
        state_ = State::kWaitingForLine;
        candidate_ = -1;
      }
      break;
    case State::kWaitingForLine:
      if (context_.config->fixed_line) start_experiment(now, -1);
      else if (candidate_ >= 0) start_experiment(now, candidate_);
      break;
    case State::kRunning:
      if (!context_.config->end_to_end && now - experiment_start_ns_ >= experiment_length_ns_) begin_draining(now);
      break;
    case State::kDraining:
      if (drained() || now >= state_until_ns_) finish_experiment(now);
      break;
    case State::kDone:
      break;
  }
  if (now - last_samples_write_ns_ >= kSamplesWriteIntervalNs) {
    if (last_samples_write_ns_ != 0) write_samples(now);
    last_samples_write_ns_ = now;
  }
}

void Profiler::drain_thread(threads::ThreadState* thread) {
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
}

void Profiler::handle_sample(threads::ThreadState* thread, const os::RawSample& sample) {
  int32_t id = attribute(sample.ip, false);
  if (id < 0) id = attribute_unwound(sample);
  // The frame-pointer callchain: the fallback when the sample was not unwound.
  // callchain[0] is the sampled IP; the rest are return addresses (look up the call itself).
  for (uint32_t i = 1; i < sample.callchain_length && id < 0; ++i) id = attribute(sample.callchain[i], true);
  if (id < 0) return;
  Line& line = lines_[static_cast<std::size_t>(id)];
  line.samples += sample.weight;
  if (line.sampled_point >= 0) sampled_counts_[static_cast<std::size_t>(line.sampled_point)] += sample.weight;
  if (state_ == State::kWaitingForLine && candidate_ < 0) candidate_ = id;
  if (state_ != State::kRunning) return;
  total_samples_ += sample.weight;
  bool selected = context_.config->fixed_line ? line.fixed_match : id == selected_;
  if (selected) {
    selected_samples_ += sample.weight;
    // The thread credited the samples it scanned itself whose IP is in the published ranges
    // (settle_delays); the rest (attributed through the callchain, or scanned here) are credited now.
    if (!sample.owner_scanned || !published_ranges_.contains(sample.ip)) {
      threads::credit_selected(*context_.delays, *thread, sample.weight);
    }
  }
}

int32_t Profiler::attribute(uint64_t address, bool is_return_address) {
  if (!symbols_ || address == 0) return -1;
  uint64_t key = is_return_address ? address - 1 : address;
  auto cached = address_cache_.find(key);
  if (cached != address_cache_.end()) return cached->second;
  int32_t id = -1;
  // Out-of-scope objects (libc, ...) never yield a line: skip them before touching their DWARF.
  const symbols::LoadedObject* object = symbols_->object_at(key);
  if (object != nullptr && object->in_scope) {
    if (auto info = symbols_->lookup(key)) {
      if (const symbols::SourceLine* line = symbols_->first_in_scope(*info)) id = intern_line(*line);
    }
  }
  address_cache_.emplace(key, id);
  return id;
}

int32_t Profiler::attribute_unwound(const os::RawSample& sample) {
  // A frame-pointer chain taken in a leaf without a frame (glibc's memset) skips its caller, so an
  // out-of-scope IP is unwound with DWARF CFI from the sample's registers and stack copy instead.
  if (sample.user == nullptr || sample.user->size == 0) return -1;
  if (!unwinder_.load()) {
    if (!unwind_warned_) {
      unwind_warned_ = true;
      log::warning("{}", unwinder_.load_error());
      context_.writer->warning(unwinder_.load_error());
    }
    return -1;
  }
  const os::UserStack& user = *sample.user;
  unwind::Snapshot snapshot{user.regs, user.stack_start, user.bytes, user.size};
  struct Found {
    Profiler* self;
    int32_t id = -1;
  } found{this};
  uint64_t frames[os::RawSample::kMaxCallchain];
  unwinder_.unwind(snapshot, frames, os::RawSample::kMaxCallchain,
                   [](void* context, uint64_t frame, std::size_t index) {
                     auto* f = static_cast<Found*>(context);
                     f->id = index == 0 ? -1 : f->self->attribute(frame, /*is_return_address=*/true);
                     return f->id >= 0;
                   },
                   &found);
  return found.id;
}

int32_t Profiler::intern_line(const symbols::SourceLine& source) {
  std::string name = std::string(source.file) + ":" + std::to_string(source.line);
  auto [it, inserted] = line_index_.try_emplace(name, static_cast<int32_t>(lines_.size()));
  if (inserted) {
    Line line;
    line.name = name;
    line.file = std::string(source.file);
    line.number = source.line;
    const config::Config& config = *context_.config;
    line.fixed_match = config.fixed_line && line_matches(source, *config.fixed_line);
    for (std::size_t i = 0; i < config.sampled_points.size(); ++i) {
      if (line_matches(source, config.sampled_points[i])) line.sampled_point = static_cast<int>(i);
    }
    lines_.push_back(std::move(line));
  }
  return it->second;
}

void Profiler::open_breakpoints(threads::ThreadState* thread) {
  thread->breakpoints_opened = true;
  for (std::size_t i = 0; i < breakpoint_addresses_.size() && i < threads::ThreadState::kMaxBreakpoints; ++i) {
    if (breakpoint_addresses_[i] == 0) continue;
    int fd = os::open_breakpoint_counter(thread->tid, breakpoint_addresses_[i]);
    if (fd < 0) {
      static log::WarnOnce warn_once;
      warn_once("cannot set a hardware breakpoint for progress point {}: {} (breakpoint progress points need "
                "perf_event breakpoints; use COZ_PROGRESS in the source instead)",
                context_.config->breakpoint_points[i].text(), std::strerror(-fd));
      continue;
    }
    thread->breakpoint_fds[i] = fd;
  }
}

void Profiler::close_breakpoints(threads::ThreadState* thread) {
  for (std::size_t i = 0; i < breakpoint_retired_counts_.size() && i < threads::ThreadState::kMaxBreakpoints; ++i) {
    int& fd = thread->breakpoint_fds[i];
    if (fd < 0) continue;
    uint64_t value = 0;
    if (os::read_counter(fd, value)) breakpoint_retired_counts_[i] += value;
    os::close_counter(fd);
    fd = -1;
  }
}

std::vector<uint64_t> Profiler::read_breakpoint_points() {
  std::vector<uint64_t> totals = breakpoint_retired_counts_;
  for (threads::ThreadState* thread : snapshot_) {
    for (std::size_t i = 0; i < totals.size() && i < threads::ThreadState::kMaxBreakpoints; ++i) {
      uint64_t value = 0;
      if (thread->breakpoint_fds[i] >= 0 && os::read_counter(thread->breakpoint_fds[i], value)) totals[i] += value;
    }
  }
  return totals;
}

void Profiler::reap_retired() {
  context_.threads->take_retired(retired_);
  if (retired_.empty()) return;
  for (threads::ThreadState* thread : retired_) {
    drain_thread(thread);
    close_breakpoints(thread);
  }
  // The tick's snapshot must not keep pointers to the threads freed below.
  std::sort(retired_.begin(), retired_.end());
  std::erase_if(snapshot_, [&](threads::ThreadState* thread) {
    return std::binary_search(retired_.begin(), retired_.end(), thread);
  });
  for (threads::ThreadState* thread : retired_) delete thread;
}

void Profiler::start_experiment(uint64_t now, int32_t line) {
  const config::Config& config = *context_.config;
  if (config.fixed_speedup_percent) {
    speedup_ = *config.fixed_speedup_percent / 100.0;
  } else if (std::uniform_real_distribution<double>(0, 1)(random_) < kBaselineProbability) {
    speedup_ = 0;
  } else {
    speedup_ = std::uniform_int_distribution<int>(1, 20)(random_) * 0.05;
  }
  selected_ = line;
  publish_selected_ranges(line);
  delays::GlobalDelays& delays = *context_.delays;
  global_delay_at_start_ = delays.global_ns.load(std::memory_order_acquire);
  // Release pairs with catch_up's acquire loads: debts from before are forgiven from here on.
  delays.epoch_start_ns.store(global_delay_at_start_, std::memory_order_release);
  delays.delay_size_ns.store(static_cast<uint64_t>(speedup_ * static_cast<double>(config.sampling_period_ns)),
                             std::memory_order_release);
  delays.phase.store(static_cast<int>(delays::Phase::kRunning), std::memory_order_release);
  points_at_start_ = progress::read_source_points();
  breakpoints_at_start_ = read_breakpoint_points();
  sampled_at_start_ = sampled_counts_;
  in_flight_integral_.clear();
  last_integration_ns_ = now;
  selected_samples_ = 0;
  total_samples_ = 0;
  experiment_start_ns_ = now;
  state_ = State::kRunning;
}

void Profiler::publish_selected_ranges(int32_t line) {
  const std::vector<symbols::AddressRange>* ranges = &fixed_line_ranges_;
  if (line >= 0) {
    Line& selected = lines_[static_cast<std::size_t>(line)];
    if (!selected.ranges_known && symbols_) {
      selected.ranges = symbols_->ranges_for(selected.file, selected.number, /*in_scope_only=*/true);
    }
    selected.ranges_known = true;
    ranges = &selected.ranges;
  }
  delays::RangesSnapshot& published = published_ranges_;
  published.count = 0;
  for (const symbols::AddressRange& range : *ranges) {
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
  delays.phase.store(static_cast<int>(delays::Phase::kDraining), std::memory_order_release);
  state_ = State::kDraining;
  state_until_ns_ = now + kMaxDrainNs;
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

void Profiler::integrate_in_flight(uint64_t now) {
  if (state_ != State::kRunning && state_ != State::kDraining) return;
  double elapsed = static_cast<double>(now - last_integration_ns_);
  last_integration_ns_ = now;
  if (elapsed <= 0) return;
  for (const progress::PointReading& reading : progress::read_source_points()) {
    if (!reading.latency) continue;
    double in_flight = static_cast<double>(static_cast<int64_t>(reading.visits - reading.departures));
    in_flight_integral_[reading.name] += in_flight * elapsed;
  }
}

std::vector<profile::PointResult> Profiler::point_deltas(uint64_t now) {
  std::vector<profile::PointResult> results;
  double duration = static_cast<double>(now - experiment_start_ns_);
  for (const progress::PointReading& reading : progress::read_source_points()) {
    const progress::PointReading* before = nullptr;
    for (const auto& start : points_at_start_) {
      if (start.name == reading.name && start.latency == reading.latency) before = &start;
    }
    profile::PointResult result;
    result.name = reading.name;
    result.latency = reading.latency;
    result.delta = reading.visits - (before ? before->visits : 0);
    if (reading.latency) {
      result.departures = reading.departures - (before ? before->departures : 0);
      result.in_flight_end = static_cast<int64_t>(reading.visits - reading.departures);
      auto integral = in_flight_integral_.find(reading.name);
      result.in_flight_avg = integral != in_flight_integral_.end() && duration > 0 ? integral->second / duration : 0;
      // Over effective time: the real-time integral less the virtual time removed, weighted by
      // the requests in flight when each delay was inserted (exact, unlike the tick's readings).
      double delayed = static_cast<double>(reading.delayed_in_flight_ns - (before ? before->delayed_in_flight_ns : 0));
      double effective_duration =
          duration - static_cast<double>(context_.delays->global_ns.load(std::memory_order_acquire) - global_delay_at_start_);
      double real = integral != in_flight_integral_.end() ? integral->second : 0;
      result.in_flight_effective_avg = effective_duration > 0 ? std::max(0.0, (real - delayed) / effective_duration) : 0;
    }
    results.push_back(std::move(result));
  }
  const config::Config& config = *context_.config;
  std::vector<uint64_t> breakpoints = read_breakpoint_points();
  for (std::size_t i = 0; i < breakpoints.size(); ++i) {
    if (breakpoint_addresses_.size() <= i || breakpoint_addresses_[i] == 0) continue;
    profile::PointResult result;
    result.name = config.breakpoint_points[i].text();
    result.delta = breakpoints[i] - (i < breakpoints_at_start_.size() ? breakpoints_at_start_[i] : 0);
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
  record.id = experiments_done_;
  record.speedup = speedup_;
  record.start_ns = experiment_start_ns_ - context_.start_ns;
  record.duration_ns = now - experiment_start_ns_;
  record.delay_ns = global - global_delay_at_start_;
  record.selected_samples = selected_samples_;
  record.total_samples = total_samples_;
  record.elapsed_ns = now - context_.start_ns;
  if (config.fixed_line) {
    record.selected = fixed_line_name_.empty() ? config.fixed_line->text() : fixed_line_name_;
    for (const Line& line : lines_) {
      if (line.fixed_match) record.line_samples_total += line.samples;
    }
  } else {
    record.selected = lines_[static_cast<std::size_t>(selected_)].name;
    record.line_samples_total = lines_[static_cast<std::size_t>(selected_)].samples;
  }
  record.points = point_deltas(now);
  context_.writer->experiment(record);
  ++experiments_done_;

  delays.epoch_start_ns.store(global, std::memory_order_release);
  delays.phase.store(static_cast<int>(delays::Phase::kIdle), std::memory_order_release);

  // Adapt the length so experiments see enough visits of the least-visited active point.
  // Points not visited at all in this experiment are ignored unless none was visited.
  uint64_t fewest = UINT64_MAX;
  for (const profile::PointResult& point : record.points) {
    if (point.delta == 0) continue;
    fewest = std::min(fewest, point.delta);
  }
  if (!config.end_to_end) {
    if (fewest == UINT64_MAX || fewest < kTargetVisits) experiment_length_ns_ = std::min(experiment_length_ns_ * 2, kMaxExperimentNs);
    else if (fewest > 4 * kTargetVisits && experiment_length_ns_ >= 2 * config.experiment_length_ns) experiment_length_ns_ /= 2;
  }
  state_ = State::kCoolOff;
  state_until_ns_ = now + kCoolOffNs;
}

void Profiler::write_samples(uint64_t now) {
  std::vector<std::pair<std::string, uint64_t>> counts;
  for (const Line& line : lines_) {
    if (line.samples > 0) counts.emplace_back(line.name, line.samples);
  }
  context_.writer->samples(counts, now - context_.start_ns);
}

}  // namespace whatif::experiment
