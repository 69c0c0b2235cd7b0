// Signal-handler halves of the samplers: run in the sampled thread's handler for the runtime's
// signal. Signal-safe only: no allocation, locks, stdio or exceptions.
#include <ucontext.h>

#include <asm/perf_regs.h>

#include "os/os.h"
#include "os/trap_breakpoint.h"
#include "sampling/sampler.h"

namespace whatif::sampling {

WHATIF_SIGNAL_SAFE bool after_system_call(uint64_t user_ip) {
  unsigned char bytes[2] = {0, 0};
  // x86-64's `syscall` is 0F 05; the user IP at kernel entry for a system call points just past it.
  return user_ip >= 2 && os::read_memory(user_ip - 2, bytes, sizeof(bytes)) && bytes[0] == 0x0f && bytes[1] == 0x05;
}

WHATIF_SIGNAL_SAFE bool counts_as_program(const os::RawSample& sample) {
  // Only time in the program's own system calls and page faults stands for its user IP. Kernel time
  // entered any other way is mostly the profiler's: the interrupts of the samplers' timers, the
  // sample signals' delivery, perf's work at each context switch. Charged to the interrupted line,
  // it gave a thread 140-200 samples a line in 100 ms of one CPU, and inflated that line's delays.
  // A fault is told by its entry stub, the kernel callchain's last frame: first-touch faults of a
  // line that maps fresh memory were 40% of a program's time, and that line got 3.7% for 35%.
  return !sample.kernel_mode || after_system_call(sample.ip) || os::in_page_fault_entry(sample.kernel_entry);
}

WHATIF_SIGNAL_SAFE bool PerfThreadSampler::on_signal(const siginfo_t* info, void*) {
  // The kernel signals after kSamplesPerSignal samples (si_code POLL_IN/POLL_HUP from O_ASYNC), or
  // at each sample by SIGTRAP (TRAP_PERF; the trap handler passes only the sampler's cookie here).
  if (info->si_code == SI_TIMER) return false;
  // The first sample was at a random phase; each next one a random period later (or a whole period
  // without jitter). Only perf's own signal: a wake-up from the runtime (a drain's tgkill) before
  // that sample would restart the count.
  const bool own = trapping_ ? info->si_signo == SIGTRAP && info->si_code == os::kTrapPerf
                             : info->si_code == POLL_IN || info->si_code == POLL_HUP;
  if (own) perf_.next_period();
  return true;
}

WHATIF_SIGNAL_SAFE bool AdaptiveThreadSampler::on_signal(const siginfo_t* info, void* ucontext) {
  // A timer tick records a sample whichever backend is on now: one queued before a switch back to
  // perf still stands for CPU time the thread spent. Anything else (perf's POLL_IN, a wake-up from
  // the runtime) just checks delays.
  if (info->si_code == SI_TIMER) return timer_.on_signal(info, ucontext);
  return perf_.on_signal(info, ucontext);
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
  sample.user = nullptr;
  // The slot of this position is free once fewer than kSnapshots samples wait: the one kSnapshots
  // before it was visited (pending's acquire), and no waiting one shares its slot.
  if (Snapshot* snapshots = snapshots_.load(std::memory_order_acquire); snapshots != nullptr && ring_.pending() < kSnapshots) {
    Snapshot& snapshot = snapshots[ring_.next_position() % kSnapshots];
    if (take_snapshot(ucontext, snapshot)) sample.user = &snapshot.user;
  }
  ring_.push(sample);
  return ++ticks_ % kSamplesPerSignal == 0;
}

WHATIF_SIGNAL_SAFE bool TimerThreadSampler::take_snapshot(const void* ucontext, Snapshot& snapshot) const {
  const auto* context = static_cast<const ucontext_t*>(ucontext);
  const greg_t* g = context->uc_mcontext.gregs;
  uint64_t sp = static_cast<uint64_t>(g[REG_RSP]);
  if (sp < stack_low_ || sp >= stack_high_) return false;  // an alternate or foreign stack
  // perf's register numbering (asm/perf_regs.h), as unwinding reads the perf sampler's.
  uint64_t* regs = snapshot.user.regs;
  for (int i = 0; i < os::UserStack::kRegisterCount; ++i) regs[i] = 0;
  regs[PERF_REG_X86_AX] = static_cast<uint64_t>(g[REG_RAX]);
  regs[PERF_REG_X86_BX] = static_cast<uint64_t>(g[REG_RBX]);
  regs[PERF_REG_X86_CX] = static_cast<uint64_t>(g[REG_RCX]);
  regs[PERF_REG_X86_DX] = static_cast<uint64_t>(g[REG_RDX]);
  regs[PERF_REG_X86_SI] = static_cast<uint64_t>(g[REG_RSI]);
  regs[PERF_REG_X86_DI] = static_cast<uint64_t>(g[REG_RDI]);
  regs[PERF_REG_X86_BP] = static_cast<uint64_t>(g[REG_RBP]);
  regs[PERF_REG_X86_SP] = sp;
  regs[PERF_REG_X86_IP] = static_cast<uint64_t>(g[REG_RIP]);
  const int general[] = {REG_R8, REG_R9, REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
  for (int i = 0; i < 8; ++i) regs[PERF_REG_X86_R8 + i] = static_cast<uint64_t>(g[general[i]]);
  uint64_t size = stack_high_ - sp < sizeof(snapshot.bytes) ? stack_high_ - sp : sizeof(snapshot.bytes);
  // process_vm_readv, not memcpy: never faults, and a sanitizer does not read the other frames'
  // red zones as an overflow.
  if (!os::read_memory(sp, snapshot.bytes, static_cast<std::size_t>(size))) return false;
  snapshot.user.stack_start = sp;
  snapshot.user.size = static_cast<uint32_t>(size);
  snapshot.user.bytes = snapshot.bytes;
  return true;
}

}  // namespace whatif::sampling
