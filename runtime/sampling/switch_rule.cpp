// The sampler switching rule (profiler thread; pure arithmetic).
#include "sampling/switch_rule.h"

namespace whatif::sampling {

bool next_on_timer(SwitchState& state, uint64_t run_ns, uint64_t switches) {
  state.run_ns += run_ns;
  state.switches += switches;
  if (state.run_ns < SwitchRule::kMinRunNs && state.switches < SwitchRule::kMinSwitches) return state.on_timer;
  // switches per CPU-second >= threshold  <=>  switches * 1e9 >= threshold * run_ns: no division by
  // zero CPU time. Clamped, both sides stay far inside 64 bits (1e9 switches, 1e6 s of CPU time).
  const uint64_t switches_now = state.switches < 1000000000u ? state.switches : 1000000000u;
  const uint64_t cpu_ns = state.run_ns < 1000000000000000u ? state.run_ns : 1000000000000000u;
  const uint64_t scaled = switches_now * 1000000000u;
  const bool busy = scaled >= SwitchRule::kToTimerPerCpuSecond * cpu_ns;
  const bool calm = scaled < SwitchRule::kToPerfPerCpuSecond * cpu_ns;
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
