// Signal-handler halves of the samplers: run in the sampled thread's handler for the runtime's
// signal. Signal-safe only: no allocation, locks, stdio or exceptions.
#include <ucontext.h>

#include "sampling/sampler.h"

namespace whatif::sampling {

WHATIF_SIGNAL_SAFE bool PerfThreadSampler::on_signal(const siginfo_t* info, void*) {
  // The kernel signals after kSamplesPerSignal samples (si_code POLL_IN/POLL_HUP from O_ASYNC).
  return info->si_code != SI_TIMER;
}

WHATIF_SIGNAL_SAFE bool TimerThreadSampler::on_signal(const siginfo_t* info, void* ucontext) {
  if (info->si_code != SI_TIMER) return true;  // a wake-up from the runtime: just check delays
  auto* context = static_cast<ucontext_t*>(ucontext);
  os::RawSample sample;
  sample.ip = static_cast<uint64_t>(context->uc_mcontext.gregs[REG_RIP]);
  sample.tid = static_cast<uint32_t>(tid_);
  // CPU-time timers fire at most once per kernel tick (4 ms at HZ=250): a 1 ms timer then reports
  // the periods it skipped as overruns, and the sample stands for all of them.
  sample.weight = 1 + static_cast<uint32_t>(info->si_overrun > 0 ? info->si_overrun : 0);
  sample.callchain[0] = sample.ip;
  uint32_t length = 1;
  // Walk frame pointers, reading only inside this thread's stack: a frame without a frame pointer
  // ends the chain early rather than faulting.
  uintptr_t frame = static_cast<uintptr_t>(context->uc_mcontext.gregs[REG_RBP]);
  while (length < os::RawSample::kMaxCallchain && frame >= stack_low_ && frame + 16 <= stack_high_ &&
         (frame & 7) == 0) {
    auto* words = reinterpret_cast<const uintptr_t*>(frame);
    uintptr_t return_address = words[1];
    uintptr_t next = words[0];
    if (return_address == 0) break;
    sample.callchain[length++] = return_address;
    if (next <= frame) break;
    frame = next;
  }
  sample.callchain_length = length;
  ring_.push(sample);
  return ++ticks_ % kSamplesPerSignal == 0;
}

}  // namespace whatif::sampling
