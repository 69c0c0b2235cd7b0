// The runtime's signal handler, alone in a *_signal.cpp file: everything it reaches is checked by
// tests/unit/runtime/signal_callgraph_check.py. Runs in signal context on any sampled thread
// (publish_signal_delays runs once at start-up, before the handler is installed).
#include "facade/runtime_signal.h"

#include <atomic>
#include <cerrno>
#include <ucontext.h>

#include "os/os.h"
#include "os/trap_breakpoint.h"
#include "sampling/sampler.h"
#include "threads/settle.h"
#include "threads/threads.h"

namespace whatif::facade {
namespace {
std::atomic<delays::GlobalDelays*> g_signal_delays{nullptr};  // set once, never freed

// The program's SIGTRAP action, double-buffered: the shim writes the slot handlers do not read
// and then flips the index, so a handler always reads a whole action.
struct sigaction g_trap_actions[2];
std::atomic<int> g_trap_current{0};
}  // namespace

void set_program_trap_action(const struct sigaction& action) {
  int next = 1 - g_trap_current.load(std::memory_order_relaxed);
  g_trap_actions[next] = action;
  g_trap_current.store(next, std::memory_order_release);
}

struct sigaction program_trap_action() { return g_trap_actions[g_trap_current.load(std::memory_order_acquire)]; }

WHATIF_SIGNAL_SAFE void on_trap_signal(int signal, siginfo_t* info, void* ucontext) {
  int saved_errno = errno;
  os::TrapPerfInfo trap;
  if (os::trap_perf_info(info, trap)) {
    if (trap.data == sampling::kSampleTrapCookie) {  // a trapping sampler's sample
      errno = saved_errno;
      on_runtime_signal(signal, info, ucontext);
      return;
    }
    threads::ThreadState* thread = threads::current_thread();
    // Ours also when no tracer claims it: a stop queued before the thread's tracer closed.
    if ((thread != nullptr && thread->tracer && thread->tracer->on_trap(trap, ucontext)) || is_tracer_cookie(trap.data)) {
      errno = saved_errno;
      return;
    }
  }
  errno = saved_errno;
  const struct sigaction& action = g_trap_actions[g_trap_current.load(std::memory_order_acquire)];
  if ((action.sa_flags & SA_SIGINFO) != 0) {
    if (action.sa_sigaction != nullptr) action.sa_sigaction(signal, info, ucontext);
    return;
  }
  if (action.sa_handler == SIG_IGN) return;
  if (action.sa_handler != SIG_DFL && action.sa_handler != nullptr) {
    action.sa_handler(signal);
    return;
  }
  // SIG_DFL: the trap would have ended the process with a core dump; let it.
  os::die_by_signal(signal);
}

void publish_signal_delays(delays::GlobalDelays* delays) {
  g_signal_delays.store(delays, std::memory_order_release);  // pairs with the handler's acquire
}

WHATIF_SIGNAL_SAFE void on_runtime_signal(int, siginfo_t* info, void* ucontext) {
  int saved_errno = errno;
  threads::ThreadState* thread = threads::current_thread();
  delays::GlobalDelays* delays = g_signal_delays.load(std::memory_order_acquire);
  if (thread != nullptr && delays != nullptr && thread->sampler && thread->sampler->on_signal(info, ucontext)) {
    // The sampler's own signals (perf's POLL_IN/POLL_HUP, the timer's SI_TIMER), not a nudge (SI_TKILL).
    const uint64_t now = os::monotonic_ns();
    uint64_t nudge_ns = 0;
    const bool nudge = info->si_code == SI_TKILL;
    if (!nudge) {
      thread->delays.last_sample_ns.store(now, std::memory_order_relaxed);
    } else if (uint64_t sent = thread->delays.nudged_at_ns.exchange(0, std::memory_order_relaxed); sent != 0 && now > sent) {
      nudge_ns = now - sent;
    }
    const auto* context = static_cast<const ucontext_t*>(ucontext);
    threads::settle_delays(*delays, *thread, static_cast<uint64_t>(context->uc_mcontext.gregs[REG_RIP]), nudge_ns,
                           nudge ? now : 0);
  }
  if (thread != nullptr && thread->tracer) thread->tracer->on_sample(ucontext);
  errno = saved_errno;
}

}  // namespace whatif::facade
