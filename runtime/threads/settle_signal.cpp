// Settling delays on the owning thread (see settle.h). Signal-safe only: atomics, reads of the
// thread's own sample ring and the raw nanosleep syscall.
#include "threads/settle.h"
#include "os/os.h"
#include "progress/progress_points.h"
#include "x86/spin_loop.h"

#include <algorithm>

namespace whatif::threads {

namespace {
/// A code range the profiler thread sets once before experiments start; handlers test IPs against it.
class CodeRange {
 public:
  void set(uint64_t begin, uint64_t end) {
    begin_.store(begin, std::memory_order_relaxed);
    end_.store(end, std::memory_order_release);
  }
  WHATIF_SIGNAL_SAFE bool contains(uint64_t ip) const {
    return ip < end_.load(std::memory_order_acquire) && ip >= begin_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<uint64_t> begin_{0};
  std::atomic<uint64_t> end_{0};
};
CodeRange g_own;    // the runtime's own code
CodeRange g_shims;  // within it, the shims' bodies: the program's library calls
CodeRange g_yield;  // libc's sched_yield
const x86::Decoder g_decoder;  // constructed before main: spin_wait_at runs in signal handlers
}  // namespace

void set_own_code(uint64_t begin, uint64_t end) { g_own.set(begin, end); }

void set_shim_code(uint64_t begin, uint64_t end) { g_shims.set(begin, end); }

namespace {
WHATIF_SIGNAL_SAFE bool in_own_code(uint64_t ip) { return g_own.contains(ip) && !g_shims.contains(ip); }
}  // namespace

void set_yield_code(uint64_t begin, uint64_t end) { g_yield.set(begin, end); }

WHATIF_SIGNAL_SAFE bool in_yield_code(uint64_t ip) { return g_yield.contains(ip); }

WHATIF_SIGNAL_SAFE uint32_t NudgeTable::nudge_owing(const ThreadState* self, uint64_t target) const {
  readers_.fetch_add(1, std::memory_order_seq_cst);  // pairs with quiesce
  uint32_t sent = 0;
  const uint32_t end = std::min(end_.load(std::memory_order_acquire), kSlots);
  const pid_t pid = pid_.load(std::memory_order_relaxed);
  const int signal = signal_.load(std::memory_order_relaxed);
  const uint64_t now = os::monotonic_ns();
  for (uint32_t i = 0; i < end; ++i) {
    ThreadState* other = slots_[i].load(std::memory_order_seq_cst);
    if (other == nullptr || other == self || !delays::owes_while_running(other->delays, target)) continue;
    // One that runs the line itself is credited by its own next sample there, as Coz's threads
    // catch up at their samples. Nudged, it paused for this sample and then raised the global clock
    // by its own: twice the pauses, each costing its thread time no clock counts (~50 us of CPU for
    // the sleep's system calls and context switches here). Two threads running a line at once, 0.7
    // ms of 1.4 an item: 26.0% predicted for 29.7% with the nudge, 27.3% without.
    if (other->delays.in_selected_line.load(std::memory_order_relaxed)) continue;
    // Only a thread sampled lately runs user code: one in a system call that whatif does not
    // interpose (epoll_wait, a raw futex, nanosleep through syscall()) would return EINTR.
    if (now - other->delays.last_sample_ns.load(std::memory_order_relaxed) > kRecentSampleNs) continue;
    // The first nudge still pending stands for them all (one delivery). Stamped right before its own
    // send: each send before it took ~20 us here, which is not this thread's delivery.
    uint64_t pending = 0;
    const uint64_t sending = os::monotonic_ns();
    const bool first = other->delays.nudged_at_ns.compare_exchange_strong(pending, sending, std::memory_order_relaxed);
    if (os::tgkill(pid, other->tid, signal) == 0) {
      ++sent;
    } else if (first) {
      uint64_t mine = sending;
      other->delays.nudged_at_ns.compare_exchange_strong(mine, 0, std::memory_order_relaxed);
    }
  }
  readers_.fetch_sub(1, std::memory_order_seq_cst);
  return sent;
}

WHATIF_SIGNAL_SAFE void credit_selected(delays::GlobalDelays& global, ThreadState& thread, uint32_t periods, bool by_owner) {
  uint64_t raised = delays::credit_selected_sample(global, thread.delays, periods);
  progress::counters().on_delay_inserted(raised);
  // Outside an oversubscribed program's rules, the threads that owe pause now, while the line runs,
  // as Coz's model has them, not at their own next sample up to a period later: a spin lock's
  // holder paid a debt raised while the other thread ran the line outside the lock after it had
  // released it, in its own spin, for free (that line: +5% to +18% predicted for -0.4%).
  if (raised > 0 && !global.oversubscribed.load(std::memory_order_relaxed) &&
      !delays::runnable_threads().more_than_cpus()) {
    const uint64_t start = os::monotonic_ns();
    if (nudge_table().nudge_owing(&thread, global.global_ns.load(std::memory_order_acquire)) == 0 || !by_owner) return;
    // Sending took this thread, which runs the line, that long (a signal to a thread on another CPU
    // costs its sender ~20 us in this nested VM, an interprocessor interrupt; far less on bare
    // metal), and the baselines never send one: inside a critical section, or in the stage that
    // limits a pipeline, the line ran that much slower only while it was sped up. Delaying every
    // other thread as long takes it back out, as a virtual speedup does.
    const uint64_t cost = os::monotonic_ns() - start;
    const uint64_t mine = thread.delays.local_ns.fetch_add(cost, std::memory_order_acq_rel) + cost;
    progress::counters().on_delay_inserted(global.raise_to(mine));
  }
}

WHATIF_SIGNAL_SAFE bool spin_wait_at(uint64_t ip) {
  // A spin-wait loop is a few instructions around its pause (the lock's exchange or the flag's
  // load, a test, the branch back), and an interrupt lands on any of them: look for the pause up to
  // kBefore bytes back and kAfter ahead; without a pause, for a loop that only waits around ip
  // (x86::spin_loop_at). Within ip's page, the only page known mapped, and read through the kernel:
  // code may be mapped execute-only, and a fault here would kill the program.
  if (in_yield_code(ip)) return true;
  constexpr uint64_t kBefore = 24, kAfter = 8, kPage = 4096;
  constexpr uint64_t kLoop = x86::kMaxSpinLoopBytes, kLongest = 15;  // an instruction's longest encoding
  constexpr uint8_t kRep = 0xF3, kNop = 0x90;  // pause = rep nop
  const uint64_t page = ip & ~(kPage - 1);
  const uint64_t begin = ip - page >= kLoop ? ip - kLoop : page;
  const uint64_t end = ip + kLoop + kLongest <= page + kPage ? ip + kLoop + kLongest : page + kPage;
  uint8_t code[kLoop + kLoop + kLongest];
  if (end <= begin || !os::read_memory(begin, code, end - begin)) return false;
  const uint64_t pause_begin = ip - begin >= kBefore ? ip - kBefore : begin;
  const uint64_t pause_end = ip + kAfter + 2 <= end ? ip + kAfter + 2 : end;
  for (uint64_t at = pause_begin; at + 1 < pause_end; ++at) {
    if (code[at - begin] == kRep && code[at - begin + 1] == kNop) return true;
  }
  return x86::spin_loop_at(g_decoder, code, end - begin, begin, ip);
}

WHATIF_SIGNAL_SAFE void settle_delays(delays::GlobalDelays& global, ThreadState& thread, uint64_t interrupted_ip,
                                      uint64_t nudge_ns, uint64_t nudge_entry_ns) {
  delays::BusyScope busy(thread.delays.busy);
  if (!busy.held()) return;  // re-entered from the handler: the interrupted call settles
  // A nudge is part of the virtual speedup: the baselines have none. Its delivery (an interrupt of
  // the running thread, then the signal's frame) took that long from the thread's work; it pays as a
  // pause would, or the pause that follows it lasts that much longer than it pays for. Uncounted,
  // a mutex's holder lost 15-25 us a nudge inside its critical section, and a line that does not
  // matter came out at -1.5% to -2%.
  // Longer, it waited for a CPU: the thread was not running, and nothing counts.
  const uint64_t delivery = nudge_ns <= NudgeTable::kMaxNudgeDeliveryNs ? nudge_ns : 0;
  thread.delays.excess_ns += delivery;
  struct Scan {
    delays::RangesSnapshot ranges;
    uint32_t selected = 0;
    bool any = false;
    bool newest_in_line = false;
  } scan;
  bool running = thread.sampler && delays::snapshot_selected_ranges(global, scan.ranges);
  if (running) {
    thread.sampler->scan_own(
        [](void* context, const os::RawSample& sample) {
          auto* scan = static_cast<Scan*>(context);
          if (in_own_code(sample.ip)) return;  // spinning in a pause
          if (!sampling::counts_as_program(sample)) return;  // the kernel's time, not a system call's
          bool in_line = scan->ranges.contains(sample.ip);
          if (in_line) scan->selected += sample.weight;
          // In the line in any frame (return addresses point after their call): such a thread
          // earns credit itself and must not wait for the others to leave the line. Not one that
          // the line made yield: it waits.
          const uint32_t frames = in_yield_code(sample.ip) ? 0 : sample.callchain_length;
          for (uint32_t i = 1; i < frames && !in_line; ++i) {
            in_line = scan->ranges.contains(sample.callchain[i] - 1);
          }
          scan->any = true;
          scan->newest_in_line = in_line;
        },
        &scan);
    if (scan.any) {
      thread.delays.in_selected_line.store(scan.newest_in_line, std::memory_order_relaxed);
      delays::measure_burst(thread.delays);  // before crediting: the samples' period is what it measures
    }
  }
  bool blocked = thread.delays.blocked.load(std::memory_order_acquire);
  // No sample of the line to credit and nothing owed: what follows would absorb, credit and pay
  // nothing. Every waking call (a mutex's unlock) comes here; most owe nothing.
  if (scan.selected == 0 &&
      thread.delays.local_ns.load(std::memory_order_acquire) >= global.global_ns.load(std::memory_order_acquire)) {
    return;
  }
  // A sleeping pause takes its thread longer than its sleep: a nudge's whole handler (the scan, the
  // reads of the thread's clocks and code), and from here on any handler's or call's spin-wait test,
  // timer-slack and sleep system calls, none of which the baselines run: ~17 us a nudged pause here
  // beside the sleep, uncounted before. A thread nudged at each of another thread's samples lost it
  // from its work on top of the delay it paid (holdout `indep`, whose helper's line came out at -5%
  // to -11% for 0, with the CPU bound below).
  uint64_t pause_from = nudge_entry_ns != 0 ? nudge_entry_ns : os::monotonic_ns();
  // Its CPU time is whatif's too (GlobalDelays::paused_cpu_ns): counted in the program's, it raised
  // the CPU bound of the experiments that paused (experiment::delay_within_cpu_bound) by ~5 ms in
  // 100, and a program as busy as its CPUs had up to 4 ms of delay cut from each of them.
  const uint64_t cpu_from = os::thread_cpu_ns();
  // A wait for a CPU settles the debt once, before the thread's own samples credit and before it
  // pays: with the global clock a maximum, a thread behind it raises it only by what its credit
  // exceeds its debt (a fan-out's third task, queued behind the first two, added 3% of its own line
  // time instead of all of it).
  if (!blocked || scan.selected > 0) delays::absorb_cpu_wait(global, thread.delays);
  if (scan.selected > 0) {
    credit_selected(global, thread, scan.selected, /*by_owner=*/true);
    pause_from = os::monotonic_ns();  // the nudges it sent were counted as delay (credit_selected)
  }
  // Inside a blocking call (a sample that lands while libgomp's or glibc's waits spin in user space
  // before they sleep): the model has the thread waiting, so it owes nothing now; it is credited or
  // pays when the call returns (after_blocking). Paying here charged OpenMP workers the serial
  // line's delays while they spun at the end of a region.
  if (blocked) return;
  // Interrupted in a spin-wait, outside the line: the thread waits for another thread (the lock's
  // holder, a barrier's last arrival), which runs the line or pays its own debts, as a thread
  // blocked in a mutex does; Coz credits such a waiter when it is woken. Pausing here instead made
  // the pause fall past the hand-off or inside the waiter's next critical section: a spin lock's
  // critical line came out at 10% for 44%. So for a thread in a loop of sched_yield calls (it
  // polls, yields, polls again): a yield ping-pong's `ping` came out at 13-19% for 37.5%.
  // Only a thread that owes reads its code (two system calls).
  const bool in_line = thread.delays.in_selected_line.load(std::memory_order_relaxed);
  if (running && !in_line &&
      thread.delays.local_ns.load(std::memory_order_acquire) < global.global_ns.load(std::memory_order_acquire) &&
      (delays::waiting_in_yield(thread.delays, os::monotonic_ns()) ||
       (interrupted_ip != 0 && !in_own_code(interrupted_ip) &&
        spin_wait_at(interrupted_ip)))) {
    delays::credit_to_global(global, thread.delays);
    return;
  }
  // A CPU-time timer that expires while this handler spins fires again as soon as it returns, and
  // that tick would record the interrupted program IP for the spinning's CPU time: a thread sampled
  // by the timer sleeps off what it owes here (it blocks often, so its CPU is seldom contended).
  bool may_spin = !(thread.sampler && thread.sampler->on_timer());
  const uint64_t asleep =
      delays::catch_up_held(global, thread.delays, /*keep_up=*/running && !in_line, may_spin, /*working=*/true);
  // It was on its CPU for the nudge's delivery too.
  delays::count_sleeping_pause(global, thread.delays, asleep, pause_from, cpu_from, delivery);
}

WHATIF_SIGNAL_SAFE void before_blocking(delays::GlobalDelays& global, ThreadState& thread) {
  settle_delays(global, thread);
  delays::mark_blocked(thread.delays);
}

WHATIF_SIGNAL_SAFE void before_yield(delays::GlobalDelays& global, ThreadState& thread) {
  const uint64_t returned = thread.delays.yield_returned_ns.load(std::memory_order_relaxed);
  const bool loop = delays::continues_yield_loop(returned, os::monotonic_ns());
  // Crediting a first call would forgive what the thread owed before it began to wait (a debt of
  // its work): a yield loop that waited for the selected line's thread came out at 24% for 0%.
  if (!loop) settle_delays(global, thread);
  delays::before_yield(global, thread.delays, loop);
}

}  // namespace whatif::threads
