// The adaptive sampler's switching for one thread of this process: its voluntary context switches
// (read here from /proc) and the CPU time its caller read from schedstat go through
// sampling::next_on_timer, and the thread's sampler moves to the timer or back. Run every schedstat
// window by the root's profiler thread and by a forked child's forwarder thread, never in a handler.
#pragma once
#include <cstdint>

#include "threads/threads.h"

namespace whatif::threads {

/// Applies the switch rule to `thread`, whose schedstat CPU time is `run_ns` now (the rule keeps
/// its own previous reading, apart from the contention window's). Returns true when this moved the
/// thread to the timer for the first time in the run.
bool apply_switch_rule(ThreadState& thread, uint64_t run_ns);

/// A forked child's thread starts afresh: no readings, no window, never moved.
void forget_switch_readings(ThreadState& thread);

}  // namespace whatif::threads
