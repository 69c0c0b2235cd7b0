// The experiment state machine and length adaptation (see experiment_machine.h). Pure: runs on
// the profiler thread, or in tests.
#include "experiment/experiment_machine.h"

#include <algorithm>
#include <cmath>

namespace whatif::experiment {

uint64_t fewest_visits(const std::vector<profile::PointResult>& points) {
  uint64_t fewest = 0;
  for (const profile::PointResult& point : points) {
    if (point.delta != 0 && (fewest == 0 || point.delta < fewest)) fewest = point.delta;
  }
  return fewest;
}

uint64_t next_length_ns(uint64_t current_ns, uint64_t minimum_ns, uint64_t fewest) {
  if (fewest < kTargetVisits) return std::min(current_ns * 2, kMaxExperimentNs);  // 0: none visited
  if (fewest > 4 * kTargetVisits && current_ns >= 2 * minimum_ns) return current_ns / 2;
  return current_ns;
}

uint64_t delay_within_cpu_bound(uint64_t delay_ns, uint64_t duration_ns, double speedup, const CpuWork& work) {
  double virtual_cpu = static_cast<double>(work.cpu_ns) - static_cast<double>(work.spin_wait_ns) -
                       speedup * static_cast<double>(work.line_ns);
  if (!(virtual_cpu > 0) || work.cpus <= 0) return delay_ns;
  double bound = virtual_cpu / work.cpus;
  double most = static_cast<double>(duration_ns) - bound;
  if (most <= 0) return 0;
  return std::min(delay_ns, static_cast<uint64_t>(most));
}

double RecentRatios::median() const {
  const std::size_t n = known();
  if (n == 0) return 0;
  std::array<double, kCoverageHistory> sorted = values_;
  auto middle = sorted.begin() + static_cast<std::ptrdiff_t>(n / 2);
  std::nth_element(sorted.begin(), middle, sorted.begin() + static_cast<std::ptrdiff_t>(n));
  return *middle;
}

bool RecentRatios::set_aside(bool outlier, double value) {
  if (outlier) {
    if (++in_a_row_ < kCoverageMaxInARow) return true;
    count_ = 0;  // the program changed for good: its new value is the reference from here on
  }
  in_a_row_ = 0;
  values_[count_ % kCoverageHistory] = value;
  ++count_;
  return false;
}

bool SampleCoverage::lost(uint64_t samples, uint64_t cpu_ns, uint64_t period_ns) {
  if (period_ns == 0 || cpu_ns < kCoverageMinPeriods * period_ns) return false;
  const double periods = static_cast<double>(cpu_ns) / static_cast<double>(period_ns);
  bool outlier = false;
  if (ratios_.known() >= kCoverageMinHistory) {
    const double expected = periods * ratios_.median();
    const double seen = static_cast<double>(samples);
    outlier = seen < kCoverageFloor * expected && seen < expected - kCoverageSigmas * std::sqrt(expected);
  }
  return ratios_.set_aside(outlier, static_cast<double>(samples) / periods);
}

void PeriodsPerSample::add(uint64_t samples, uint64_t cpu_ns, uint64_t period_ns) {
  if (period_ns == 0 || cpu_ns < kCoverageMinPeriods * period_ns) return;
  samples_ = samples_ * kPeriodsPerSampleDecay + static_cast<double>(samples);
  periods_ = periods_ * kPeriodsPerSampleDecay + static_cast<double>(cpu_ns) / static_cast<double>(period_ns);
}

double PeriodsPerSample::factor() const {
  if (samples_ < kPeriodsPerSampleMinSamples) return 1;
  return std::clamp(periods_ / samples_, 1.0, kPeriodsPerSampleMax);
}

bool ProfilerLoad::busy(uint64_t profiler_cpu_ns, uint64_t duration_ns) {
  if (duration_ns == 0) return false;
  const double share = static_cast<double>(profiler_cpu_ns) / static_cast<double>(duration_ns);
  return shares_.set_aside(share > kBusyShare && share > kBusyOverTypical * shares_.median(), share);
}

bool RingLosses::set_aside(uint64_t dropped, uint64_t kept) {
  if (dropped * kRingLostShare <= kept + dropped) {
    in_a_row_ = 0;
    return false;
  }
  in_a_row_ = std::min(in_a_row_ + 1, kCoverageMaxInARow);
  return in_a_row_ < kCoverageMaxInARow;
}

ExperimentMachine::ExperimentMachine(MachineSettings settings, uint64_t seed)
    : settings_(settings), random_(seed), allocator_(settings.adaptive), length_ns_(settings.min_length_ns) {}

void ExperimentMachine::begin(uint64_t now) {
  state_ = State::kCoolOff;
  state_until_ns_ = now + kCoolOffNs;
}

bool ExperimentMachine::awaiting_visit(uint64_t now) const {
  if (state_ == State::kWarmingUp) return now >= state_until_ns_;
  return state_ == State::kRunning && !settings_.end_to_end && now - start_ns_ >= length_ns_;
}

uint64_t ExperimentMachine::next_deadline_ns() const {
  switch (state_) {
    case State::kCoolOff:
    case State::kWarmingUp: return state_until_ns_;
    case State::kRunning: return settings_.end_to_end ? UINT64_MAX : start_ns_ + length_ns_;
    case State::kWaitingForLine:
    case State::kDraining: return 0;
  }
  return 0;
}

ExperimentMachine::Action ExperimentMachine::tick(uint64_t now, bool drained, bool visited) {
  const uint64_t visit_wait = length_ns_ / kVisitWaitDivisor;
  switch (state_) {
    case State::kCoolOff:
      if (now >= state_until_ns_) {
        state_ = State::kWaitingForLine;
        candidate_ = -1;
      }
      break;
    case State::kWaitingForLine:
      if (settings_.fixed_line) return start(now, -1);
      if (candidate_ >= 0) return start(now, candidate_);
      break;
    case State::kWarmingUp:
      if (now >= state_until_ns_ && (visited || now - state_until_ns_ >= visit_wait)) {
        state_ = State::kRunning;
        start_ns_ = now;
        selected_samples_ = 0;
        total_samples_ = 0;
        return {Action::Kind::kMeasure, selected_, speedup_};
      }
      break;
    case State::kRunning:
      if (!settings_.end_to_end && now - start_ns_ >= length_ns_ && (visited || now - start_ns_ - length_ns_ >= visit_wait)) {
        state_ = State::kDraining;
        state_until_ns_ = now + kMaxDrainNs;
        return {Action::Kind::kBeginDraining};
      }
      break;
    case State::kDraining:
      if (drained || now >= state_until_ns_) return {Action::Kind::kFinish};
      break;
  }
  return {};
}

bool ExperimentMachine::on_sample(int32_t line, bool fixed_match, uint64_t weight, bool waiting) {
  allocator_.on_sample(line, weight);
  if (state_ == State::kWaitingForLine && candidate_ < 0) candidate_ = line;
  if (state_ != State::kRunning && state_ != State::kWarmingUp) return false;
  bool selected = !waiting && (settings_.fixed_line ? fixed_match : line == selected_);
  if (state_ == State::kWarmingUp) return selected;  // credited, not counted
  total_samples_ += weight;
  if (selected) selected_samples_ += weight;
  return selected;
}

void ExperimentMachine::finish(uint64_t now, const Outcome& outcome) {
  ++experiments_done_;
  state_ = State::kCoolOff;
  const bool pairs = settings_.fixed_speedup_percent && !settings_.end_to_end && *settings_.fixed_speedup_percent > 0;
  const bool kept = !outcome.set_aside && !outcome.idle;
  if (pairs && !kept) pending_speedups_.push_back(speedup_);  // the pair stays whole
  if (pairs && pending_speedups_.empty()) {
    // The next pair starts at the speed just run (0 s, s 0, 0 s, ...): it finds the program's
    // queues as that speed left them, and needs no time to settle.
    pending_speedups_.push_back(speedup_);
    pending_speedups_.push_back(speedup_ > 0 ? 0.0 : *settings_.fixed_speedup_percent / 100.0);
  }
  // Set aside or not, its delay left its backlog (the length is the one it ran with), unless the
  // next experiment runs at the same speed on the same line.
  const bool same_next = pairs && pending_speedups_.front() == speedup_;
  const uint64_t settle = same_next ? 0 : std::min(kSettleFactor * outcome.inserted_ns, length_ns_);
  state_until_ns_ = now + kCoolOffNs + settle;
  if (!kept) return;
  if (outcome.fewest > 0 || outcome.visits > 0 || outcome.progress_seen) progress_seen_ = true;
  // Before any progress at all the program is in a phase without it (a server loading its data, a
  // set-up step): no length helps there, and a length grown through it would make the first
  // experiment of the measured phase several times longer than the rest, one speedup's delays over
  // the start of the load (memcached's get phase began with a 400-ms experiment: 1.4x slowdown
  // when it drew a large speedup on the sendmsg line).
  if (!settings_.end_to_end && progress_seen_) {
    length_ns_ = next_length_ns(length_ns_, settings_.min_length_ns, outcome.fewest);
  }
  if (!settings_.fixed_line) allocator_.on_result(selected_, speedup_, outcome.visits, outcome.effective_ns);
}

double ExperimentMachine::choose_speedup() {
  if (settings_.fixed_speedup_percent) {
    double fixed = *settings_.fixed_speedup_percent / 100.0;
    // One end-to-end experiment, or a run that only measures overhead: no baseline to interleave.
    if (settings_.end_to_end || !(fixed > 0)) return fixed;
    // Otherwise the run carries its own baseline: experiments come in pairs, one at speedup 0 and
    // one at `fixed`, so both see the same stretch of the machine's noise and the prediction and
    // its interval come from this one run. The first pair's order is random; finish() starts each
    // next pair with the speedup just run.
    if (!pending_speedups_.empty()) {
      double next = pending_speedups_.front();
      pending_speedups_.pop_front();
      return next;
    }
    bool baseline_first = (random_() & 1) != 0;
    pending_speedups_.push_back(baseline_first ? fixed : 0.0);
    return baseline_first ? 0.0 : fixed;
  }
  if (std::uniform_real_distribution<double>(0, 1)(random_) < kBaselineProbability) return 0;
  return allocator_.choose_nonzero_speedup(selected_, random_);
}

ExperimentMachine::Action ExperimentMachine::start(uint64_t now, int32_t candidate) {
  int32_t line = settings_.fixed_line ? candidate : allocator_.choose_line(candidate, random_);
  selected_ = line;
  speedup_ = choose_speedup();
  selected_samples_ = 0;
  total_samples_ = 0;
  start_ns_ = now;
  // One end-to-end experiment measures the whole run: nothing before it to settle.
  uint64_t warm_up = settings_.end_to_end ? 0 : length_ns_ / kWarmUpDivisor;
  state_ = warm_up > 0 ? State::kWarmingUp : State::kRunning;
  state_until_ns_ = now + warm_up;
  return {Action::Kind::kStart, line, speedup_};
}

}  // namespace whatif::experiment
