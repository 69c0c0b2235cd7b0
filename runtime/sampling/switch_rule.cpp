// The sampler switching rule and the process's thresholds for it (the profiler thread sets and applies
// them; forked children inherit them). Arithmetic on atomics, no system calls.
#include "sampling/switch_rule.h"

#include <algorithm>
#include <atomic>

namespace whatif::sampling {

namespace {
std::atomic<uint64_t> g_to_timer{SwitchRule::kMostToTimer};
std::atomic<uint64_t> g_to_perf{SwitchRule::kMostToTimer / 4};
}  // namespace

SwitchThresholds SwitchThresholds::for_cost(uint64_t switch_ns, uint32_t events) {
  SwitchThresholds thresholds;
  if (switch_ns == 0 || events == 0) return thresholds;
  const double per_switch_ns = static_cast<double>(switch_ns) * static_cast<double>(events);
  const double affordable = SwitchRule::kPerfCostBudget * 1e9 / per_switch_ns;
  thresholds.to_timer = std::clamp(static_cast<uint64_t>(affordable), SwitchRule::kFewestToTimer, SwitchRule::kMostToTimer);
  thresholds.to_perf = thresholds.to_timer / 4;
  return thresholds;
}

SwitchThresholds switch_thresholds() {
  return {g_to_timer.load(std::memory_order_relaxed), g_to_perf.load(std::memory_order_relaxed)};
}

void set_switch_thresholds(SwitchThresholds thresholds) {
  g_to_timer.store(thresholds.to_timer, std::memory_order_relaxed);
  g_to_perf.store(thresholds.to_perf, std::memory_order_relaxed);
}

bool next_on_timer(SwitchState& state, uint64_t run_ns, uint64_t switches, const SwitchThresholds& thresholds) {
  state.run_ns += run_ns;
  state.switches += switches;
  if (state.run_ns < SwitchRule::kMinRunNs && state.switches < SwitchRule::kMinSwitches) return state.on_timer;
  // switches per CPU-second >= threshold  <=>  switches * 1e9 >= threshold * run_ns: no division by
  // zero CPU time. Clamped, both sides stay far inside 64 bits (1e9 switches, 1e6 s of CPU time).
  const uint64_t switches_now = state.switches < 1000000000u ? state.switches : 1000000000u;
  const uint64_t cpu_ns = state.run_ns < 1000000000000000u ? state.run_ns : 1000000000000000u;
  const uint64_t scaled = switches_now * 1000000000u;
  const bool busy = scaled >= thresholds.to_timer * cpu_ns;
  const bool calm = scaled < thresholds.to_perf * cpu_ns;
  state.run_ns = 0;
  state.switches = 0;
  if (!state.on_timer) {
    state.on_timer = busy;
    state.calm = 0;
  } else if (calm) {
    if (++state.calm >= SwitchRule::kCalmWindows) {
      state.on_timer = false;
      state.calm = 0;
    }
  } else {
    state.calm = 0;
  }
  return state.on_timer;
}

}  // namespace whatif::sampling
