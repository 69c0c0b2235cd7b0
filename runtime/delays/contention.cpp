// CPU contention per thread (contention.h); pure, on the profiler thread or a child's forwarder.
#include "delays/contention.h"

#include <algorithm>

namespace whatif::delays {

namespace {
/// A wall-per-CPU ratio in permille, rounded, within [kNoContention, max_permille].
uint32_t clamped_permille(double ratio, uint32_t max_permille) {
  double permille = std::clamp(ratio * kNoContention, static_cast<double>(kNoContention), static_cast<double>(max_permille));
  return static_cast<uint32_t>(permille + 0.5);
}
}  // namespace

bool oversubscribed(uint64_t run_ns, uint64_t wait_ns, uint64_t window_ns, int cpus, bool was) {
  double capacity = static_cast<double>(std::max(cpus, 1)) * static_cast<double>(window_ns);
  double demand = static_cast<double>(run_ns) + static_cast<double>(wait_ns);
  if (capacity <= 0) return was;
  return demand * kNoContention > capacity * (was ? kNoContention : kOversubscribedPermille);
}

bool TreeDemand::update(uint64_t run_ns, uint64_t wait_ns, uint64_t window_ns, int cpus) {
  if (window_ns == 0) return on_;
  demand_sum_ = demand_sum_ * kWindowKeep + static_cast<double>(run_ns) + static_cast<double>(wait_ns);
  capacity_sum_ = capacity_sum_ * kWindowKeep + static_cast<double>(window_ns);
  // The sums as one window of the decayed length: the same rule and hysteresis as oversubscribed.
  on_ = oversubscribed(0, static_cast<uint64_t>(demand_sum_), static_cast<uint64_t>(capacity_sum_), cpus, on_);
  return on_;
}

uint32_t WallPerCpu::update(uint64_t run_ns, uint64_t wait_ns) {
  if (!known_ || run_ns < run_ns_ || wait_ns < wait_ns_) {
    run_ns_ = run_ns;
    wait_ns_ = wait_ns;
    run_sum_ = wait_sum_ = 0;
    known_ = true;
    return 0;
  }
  uint64_t run = run_ns - run_ns_;
  if (run < kMinRunNs) return 0;
  uint64_t wait = wait_ns - wait_ns_;
  run_ns_ = run_ns;
  wait_ns_ = wait_ns;
  measured_ = true;
  run_sum_ = run_sum_ * kWindowKeep + static_cast<double>(run);
  wait_sum_ = wait_sum_ * kWindowKeep + static_cast<double>(wait);
  return clamped_permille((run_sum_ + wait_sum_) / run_sum_, kMaxSpinContention);
}

uint32_t tree_wall_per_cpu(uint64_t run_ns, uint64_t wait_ns) {
  if (run_ns == 0) return kNoContention;
  return clamped_permille((static_cast<double>(run_ns) + static_cast<double>(wait_ns)) / static_cast<double>(run_ns),
                          kMaxSpinContention);
}

std::vector<uint32_t> contention_permille(const std::vector<SchedWindow>& threads, uint64_t window_ns, int cpus,
                                          const SchedWindow& exited) {
  std::vector<uint32_t> out(threads.size(), 0);
  double run = static_cast<double>(exited.run_ns), wait = static_cast<double>(exited.wait_ns);
  int running = exited.run_ns >= kMinRunNs ? 1 : 0;  // the exited threads, together, as one that ran
  for (const SchedWindow& t : threads) {
    run += static_cast<double>(t.run_ns);
    wait += static_cast<double>(t.wait_ns);
    if (t.run_ns >= kMinRunNs) ++running;
  }
  if (running > 1) {  // others pause by sleeping, and the scheduler gives a sleeper its time back
    for (std::size_t i = 0; i < threads.size(); ++i) {
      if (threads[i].run_ns >= kMinRunNs) out[i] = kNoContention;
    }
    return out;
  }
  // The part of the waiting the program's own threads explain: demand beyond the CPUs it may use.
  double capacity = static_cast<double>(std::max(cpus, 1)) * static_cast<double>(window_ns);
  double internal = std::max(0.0, run + wait - capacity);
  double outside_share = wait > 0 ? std::max(0.0, 1.0 - internal / wait) : 0.0;
  for (std::size_t i = 0; i < threads.size(); ++i) {
    const SchedWindow& t = threads[i];
    if (t.run_ns < kMinRunNs) continue;
    out[i] = clamped_permille((static_cast<double>(t.run_ns) + static_cast<double>(t.wait_ns) * outside_share) /
                                  static_cast<double>(t.run_ns),
                              kMaxContention);
  }
  return out;
}

}  // namespace whatif::delays
