// The runtime's signal handler, alone in a *_signal.cpp file: everything it reaches is checked by
// tests/unit/runtime/signal_callgraph_check.py. Runs in signal context on any sampled thread
// (publish_signal_delays runs once at start-up, before the handler is installed).
#include "facade/runtime_signal.h"

#include <atomic>
#include <cerrno>

#include "threads/settle.h"
#include "threads/threads.h"

namespace whatif::facade {
namespace {
std::atomic<delays::GlobalDelays*> g_signal_delays{nullptr};  // set once, never freed
}  // namespace

void publish_signal_delays(delays::GlobalDelays* delays) {
  g_signal_delays.store(delays, std::memory_order_release);  // pairs with the handler's acquire
}

WHATIF_SIGNAL_SAFE void on_runtime_signal(int, siginfo_t* info, void* ucontext) {
  int saved_errno = errno;
  threads::ThreadState* thread = threads::current_thread();
  delays::GlobalDelays* delays = g_signal_delays.load(std::memory_order_acquire);
  if (thread != nullptr && delays != nullptr && thread->sampler && thread->sampler->on_signal(info, ucontext)) {
    threads::settle_delays(*delays, *thread);
  }
  errno = saved_errno;
}

}  // namespace whatif::facade
