// Settling a thread's delays on the thread itself: credit its own samples in the selected line
// (so a thread it is about to wake sees the raised global clock), then pause for what it owes.
// Runs on the owning thread, in its signal handler or interposed calls.
#pragma once
#include "base/signal_safe.h"
#include "threads/threads.h"
#include "delays/delays.h"

namespace whatif::threads {

/// Credits `periods` samples of `thread` in the selected line (delays::credit_selected_sample) and
/// weights the rise of the global clock by the requests in flight (latency points). Every credit
/// goes through here: the owning thread for samples it scanned (`by_owner`: the time its nudges
/// took it is then delay too), the profiler thread for the rest.
WHATIF_SIGNAL_SAFE void credit_selected(delays::GlobalDelays& global, ThreadState& thread, uint32_t periods,
                                        bool by_owner = false);

/// Owning thread, normal or signal context: scans and credits its unscanned samples whose IP is
/// in the published selected ranges, then catches up. Does nothing when re-entered.
/// `interrupted_ip` (signal context: where the handler interrupted the program; 0 elsewhere): a
/// thread interrupted in a spin-wait is waiting for another thread, as a blocked one is, so it is
/// credited what it owes instead of pausing (spin_wait_at), as is one waiting in a loop of
/// sched_yield calls (delays::waiting_in_yield). `nudge_ns` (signal context, a nudge's handler:
/// from the nudge's send to the handler's entry; 0 otherwise) is time the nudge took from the
/// thread, counted as paid when it is at most NudgeTable::kMaxNudgeDeliveryNs. `nudge_entry_ns`
/// (a nudge's handler: when it was entered; 0 otherwise): all of that handler's time beside its
/// sleeps is the nudge's too, and counts as paid when it pauses.
WHATIF_SIGNAL_SAFE void settle_delays(delays::GlobalDelays& global, ThreadState& thread, uint64_t interrupted_ip = 0,
                                      uint64_t nudge_ns = 0, uint64_t nudge_entry_ns = 0);

/// Whether `ip` is in a spin-wait: x86's `pause` (F3 90) within a few instructions of it (on its
/// page), the spin-wait hint of user-space spin locks, barriers and flags (C11 atomics, glibc's
/// pthread_spin_lock, TBB's waits); or, without one, a small loop around it that only loads,
/// compares and exchanges atomically (x86::spin_loop_at: `while (!flag) ;`); or inside libc's
/// sched_yield (set_yield_code: a sample in its system call has its IP there). Reads the code
/// through the kernel (os::read_memory): any `ip` is safe, and an unreadable one is no spin-wait.
WHATIF_SIGNAL_SAFE bool spin_wait_at(uint64_t ip);

/// Profiler thread: whether it must credit a drained sample of the selected line. The owning thread
/// already credited the samples it scanned itself whose IP is in the published ranges
/// (settle_delays); the rest (in the line through the callchain, or not scanned by their thread)
/// are the profiler's, so each sample is credited exactly once.
inline bool profiler_credits(const os::RawSample& sample, const delays::RangesSnapshot& published) {
  return !sample.owner_scanned || !published.contains(sample.ip);
}

/// Profiler thread, before experiments start: the runtime's own code, [begin, end). A thread's
/// samples there (taken while it spun in a pause) say nothing about where the program is.
void set_own_code(uint64_t begin, uint64_t end);
/// Profiler thread, before experiments start: the interposed shims' bodies, [begin, end), inside
/// the own code: the program's library calls (a putc the stdio shim runs inline), not whatif's time.
void set_shim_code(uint64_t begin, uint64_t end);

/// Profiler thread, before experiments start: libc's sched_yield, [begin, end). A thread in it gives
/// its CPU away to wait: its samples there are spin-waits.
void set_yield_code(uint64_t begin, uint64_t end);

/// Whether `ip` is inside libc's sched_yield (set_yield_code): a thread there waits, whichever line
/// called it, so its sample is no sample of that line running (a line that polls and yields gains
/// nothing from running faster).
WHATIF_SIGNAL_SAFE bool in_yield_code(uint64_t ip);

/// Owning thread, before a call that may block (paper table 2): settles (credits its own samples,
/// pays what it owes), then marks the thread blocked so the profiler stops waiting for it.
WHATIF_SIGNAL_SAFE void before_blocking(delays::GlobalDelays& global, ThreadState& thread);

/// Owning thread, entering sched_yield: a call that begins a wait (not right after another) first
/// settles, as before a blocking call, so that only what accrues during the wait is credited; one
/// that continues a loop of yields is credited (delays::before_yield).
WHATIF_SIGNAL_SAFE void before_yield(delays::GlobalDelays& global, ThreadState& thread);

}  // namespace whatif::threads
