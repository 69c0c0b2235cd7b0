// Settling delays on the owning thread (see settle.h). Signal-safe only: atomics, reads of the
// thread's own sample ring and the raw nanosleep syscall.
#include "core/settle.h"
#include "progress/progress_points.h"

namespace whatif::core {

WHATIF_SIGNAL_SAFE void settle_delays(delays::GlobalDelays& global, ThreadState& thread) {
  delays::BusyScope busy(thread.delays.busy);
  if (!busy.held()) return;  // re-entered from the handler: the interrupted call settles
  struct Scan {
    delays::RangesSnapshot ranges;
    uint32_t selected = 0;
  } scan;
  if (thread.sampler && delays::snapshot_selected_ranges(global, scan.ranges)) {
    thread.sampler->scan_own(
        [](void* context, const os::RawSample& sample) {
          auto* scan = static_cast<Scan*>(context);
          if (scan->ranges.contains(sample.ip)) scan->selected += sample.weight;
        },
        &scan);
    if (scan.selected > 0) {
      progress::counters().on_delay_inserted(delays::credit_selected_sample(global, thread.delays, scan.selected));
    }
  }
  delays::catch_up_held(global, thread.delays);
}

}  // namespace whatif::core
