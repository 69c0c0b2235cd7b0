// The runtime's signal handler (os::sample_signal()) and the one pointer it reads. Installed at
// start-up on the starting thread; the handler runs in signal context on any sampled thread.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <cstdint>

#include "base/signal_safe.h"
#include "delays/delays.h"

namespace whatif::facade {

/// Start-up, before the handler is installed: the process's delay state the handler settles.
void publish_signal_delays(delays::GlobalDelays* delays);

/// The program's own SIGTRAP disposition, which on_trap_signal passes every SIGTRAP that is not
/// the runtime's (a trapping sampler's, the branch tracer's). Application threads (the sigaction shim), normal context.
void set_program_trap_action(const struct sigaction& action);
struct sigaction program_trap_action();

/// The si_perf_data of thread `tid`'s tracer breakpoint, and whether a stop carries one of ours.
constexpr uint64_t kTracerCookieTag = 0x57484946ull << 32;  // "WHIF"
constexpr uint64_t tracer_cookie(pid_t tid) { return kTracerCookieTag | static_cast<uint32_t>(tid); }
constexpr bool is_tracer_cookie(uint64_t data) { return (data & ~0xffffffffull) == kTracerCookieTag; }

/// The runtime's SIGTRAP handler (--lbr, trapping samplers): a trapping sampler's sample
/// (sampling::kSampleTrapCookie) goes to on_runtime_signal, a TRAP_PERF stop of the current
/// thread's tracer to the tracer; anything else (int3, a debugger's trap, another perf event's) to
/// the program's handler, or to SIGTRAP's default action. Signal context only.
WHATIF_SIGNAL_SAFE void on_trap_signal(int signal, siginfo_t* info, void* ucontext);

/// The SA_SIGINFO handler for the runtime's signal: records the sample (timer sampler) and, when
/// the sampler says so, settles the interrupted thread's delays. Signal context only.
WHATIF_SIGNAL_SAFE void on_runtime_signal(int signal, siginfo_t* info, void* ucontext);

}  // namespace whatif::facade
