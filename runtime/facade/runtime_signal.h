// The runtime's signal handler (os::sample_signal()) and the one pointer it reads. Installed at
// start-up on the starting thread; the handler runs in signal context on any sampled thread.
#pragma once
#include <signal.h>

#include "base/signal_safe.h"
#include "delays/delays.h"

namespace whatif::facade {

/// Start-up, before the handler is installed: the process's delay state the handler settles.
void publish_signal_delays(delays::GlobalDelays* delays);

/// The SA_SIGINFO handler for the runtime's signal: records the sample (timer sampler) and, when
/// the sampler says so, settles the interrupted thread's delays. Signal context only.
WHATIF_SIGNAL_SAFE void on_runtime_signal(int signal, siginfo_t* info, void* ucontext);

}  // namespace whatif::facade
