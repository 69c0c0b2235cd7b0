// Settling delays on the owning thread (see settle.h). Signal-safe only: atomics, reads of the
// thread's own sample ring and the raw nanosleep syscall.
#include "threads/settle.h"
#include "progress/progress_points.h"

namespace whatif::threads {

namespace {
std::atomic<uint64_t> g_own_begin{0};
std::atomic<uint64_t> g_own_end{0};
}  // namespace

void set_own_code(uint64_t begin, uint64_t end) {
  g_own_begin.store(begin, std::memory_order_relaxed);
  g_own_end.store(end, std::memory_order_release);
}

WHATIF_SIGNAL_SAFE void credit_selected(delays::GlobalDelays& global, ThreadState& thread, uint32_t periods) {
  progress::counters().on_delay_inserted(delays::credit_selected_sample(global, thread.delays, periods));
}

WHATIF_SIGNAL_SAFE void settle_delays(delays::GlobalDelays& global, ThreadState& thread) {
  delays::BusyScope busy(thread.delays.busy);
  if (!busy.held()) return;  // re-entered from the handler: the interrupted call settles
  struct Scan {
    delays::RangesSnapshot ranges;
    uint32_t selected = 0;
    bool any = false;
    bool newest_in_line = false;
    uint64_t own_begin = 0;
    uint64_t own_end = 0;
  } scan;
  scan.own_end = g_own_end.load(std::memory_order_acquire);
  scan.own_begin = g_own_begin.load(std::memory_order_relaxed);
  bool running = thread.sampler && delays::snapshot_selected_ranges(global, scan.ranges);
  if (running) {
    thread.sampler->scan_own(
        [](void* context, const os::RawSample& sample) {
          auto* scan = static_cast<Scan*>(context);
          if (sample.ip >= scan->own_begin && sample.ip < scan->own_end) return;  // spinning in a pause
          if (!sampling::counts_as_program(sample)) return;  // the kernel's time, not a system call's
          bool in_line = scan->ranges.contains(sample.ip);
          if (in_line) scan->selected += sample.weight;
          // In the line in any frame (return addresses point after their call): such a thread
          // earns credit itself and must not wait for the others to leave the line.
          for (uint32_t i = 1; i < sample.callchain_length && !in_line; ++i) {
            in_line = scan->ranges.contains(sample.callchain[i] - 1);
          }
          scan->any = true;
          scan->newest_in_line = in_line;
        },
        &scan);
    if (scan.any) {
      thread.delays.in_selected_line = scan.newest_in_line;
      delays::measure_burst(thread.delays);  // before crediting: the samples' period is what it measures
    }
  }
  bool blocked = thread.delays.blocked.load(std::memory_order_acquire);
  // A wait for a CPU settles the debt once, before the thread's own samples credit and before it
  // pays: with the global clock a maximum, a thread behind it raises it only by what its credit
  // exceeds its debt (a fan-out's third task, queued behind the first two, added 3% of its own line
  // time instead of all of it).
  if (!blocked || scan.selected > 0) delays::absorb_cpu_wait(global, thread.delays);
  if (scan.selected > 0) credit_selected(global, thread, scan.selected);
  // Inside a blocking call (a sample that lands while libgomp's or glibc's waits spin in user space
  // before they sleep): the model has the thread waiting, so it owes nothing now; it is credited or
  // pays when the call returns (after_blocking). Paying here charged OpenMP workers the serial
  // line's delays while they spun at the end of a region.
  if (blocked) return;
  // A CPU-time timer that expires while this handler spins fires again as soon as it returns, and
  // that tick would record the interrupted program IP for the spinning's CPU time: a thread sampled
  // by the timer sleeps off what it owes here (it blocks often, so its CPU is seldom contended).
  bool may_spin = !(thread.sampler && thread.sampler->on_timer());
  delays::catch_up_held(global, thread.delays, /*keep_up=*/running && !thread.delays.in_selected_line, may_spin);
}

WHATIF_SIGNAL_SAFE void before_blocking(delays::GlobalDelays& global, ThreadState& thread) {
  settle_delays(global, thread);
  delays::mark_blocked(thread.delays);
}

}  // namespace whatif::threads
