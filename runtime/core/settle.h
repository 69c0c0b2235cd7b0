// Settling a thread's delays on the thread itself: credit its own samples in the selected line
// (so a thread it is about to wake sees the raised global clock), then pause for what it owes.
// Runs on the owning thread, in its signal handler or interposed calls.
#pragma once
#include "base/signal_safe.h"
#include "core/threads.h"
#include "delays/delays.h"

namespace whatif::core {

/// Owning thread, normal or signal context: scans and credits its unscanned samples whose IP is
/// in the published selected ranges, then catches up. Does nothing when re-entered.
WHATIF_SIGNAL_SAFE void settle_delays(delays::GlobalDelays& global, ThreadState& thread);

}  // namespace whatif::core
