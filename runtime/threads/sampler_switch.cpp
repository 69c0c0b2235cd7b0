// The adaptive sampler's switching for one thread (see sampler_switch.h). The root's profiler thread
// or a forked child's forwarder thread.
#include "threads/sampler_switch.h"

#include "os/os.h"
#include "sampling/switch_rule.h"

namespace whatif::threads {

bool apply_switch_rule(ThreadState& thread, uint64_t run_ns) {
  if (!thread.sampler || !thread.sampler->switchable()) return false;
  // A thread that has not run since the last reading cannot have switched: no evidence, and no
  // second /proc read for each of a thousand idle threads.
  if (thread.switches_known && run_ns == thread.switch_run_ns) return false;
  uint64_t switches = 0;
  if (!read_task_switches(thread, switches)) return false;
  bool first_move = false;
  // The first reading, or counters that went backwards (a reused tid), only set the baseline.
  if (thread.switches_known && run_ns >= thread.switch_run_ns && switches >= thread.voluntary_switches) {
    bool want = sampling::next_on_timer(thread.sampler_switch, run_ns - thread.switch_run_ns,
                                        switches - thread.voluntary_switches, sampling::switch_thresholds());
    if (want != thread.sampler->on_timer() && thread.sampler->use_timer(want) && !thread.used_timer) {
      thread.used_timer = true;
      first_move = true;
    }
  }
  thread.switch_run_ns = run_ns;
  thread.voluntary_switches = switches;
  thread.switches_known = true;
  return first_move;
}

void forget_switch_readings(ThreadState& thread) {
  thread.switch_run_ns = 0;
  thread.voluntary_switches = 0;
  thread.switches_known = false;
  thread.sampler_switch = sampling::SwitchState{};
  thread.used_timer = false;
}

}  // namespace whatif::threads
