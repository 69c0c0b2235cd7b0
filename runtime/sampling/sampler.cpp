// Sampler backends' set-up and draining (sampled thread / profiler thread). Their signal-handler
// halves live in sampler_signal.cpp.
#include "sampling/sampler.h"

#include <pthread.h>

#include "os/os.h"

namespace whatif::sampling {

bool after_system_call(uint64_t user_ip) {
  unsigned char bytes[2] = {0, 0};
  // x86-64's `syscall` is 0F 05; the user IP at kernel entry for a system call points just past it.
  return user_ip >= 2 && os::read_memory(user_ip - 2, bytes, sizeof(bytes)) && bytes[0] == 0x0f && bytes[1] == 0x05;
}

int PerfThreadSampler::start(pid_t tid, uint64_t period_ns, int signal) {
  int result = perf_.open(tid, period_ns, signal, kSamplesPerSignal);
  if (result != 0) return result;
  // Best effort: without it (locked-memory limit) the thread is sampled in user mode only.
  if (with_kernel_ && kernel_.open(tid, period_ns, 0, kSamplesPerSignal, /*with_stack=*/true, /*kernel_only=*/true) == 0) {
    kernel_.enable();
  }
  return perf_.enable();
}

void PerfThreadSampler::stop() {
  if (perf_.is_open()) perf_.disable();
  if (kernel_.is_open()) kernel_.disable();
}

std::size_t PerfThreadSampler::drain(SampleVisitor visit, void* context) {
  std::size_t count = perf_.drain([&](const os::RawSample& sample) { visit(context, sample); });
  if (kernel_.is_open()) {
    // Only time in the program's own system calls stands for its user IP. Kernel time entered any
    // other way is mostly the profiler's: the interrupts of the samplers' timers, the sample
    // signals' delivery, perf's work at each context switch. Charged to the interrupted line, it
    // gave a thread 140-200 samples a line in 100 ms of one CPU, and inflated that line's delays.
    count += kernel_.drain([&](const os::RawSample& sample) {
      if (after_system_call(sample.ip)) visit(context, sample);
      else ++outside_system_calls_;
    });
  }
  return count;
}

int TimerThreadSampler::start(pid_t tid, uint64_t period_ns, int signal) {
  tid_ = tid;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* base = nullptr;
    size_t size = 0;
    if (pthread_attr_getstack(&attr, &base, &size) == 0) {
      stack_low_ = reinterpret_cast<uintptr_t>(base);
      stack_high_ = stack_low_ + size;
    }
    pthread_attr_destroy(&attr);
  }
  return timer_.open(tid, period_ns, signal);
}

void TimerThreadSampler::stop() { timer_.close(); }

std::size_t TimerThreadSampler::drain(SampleVisitor visit, void* context) {
  return ring_.drain([&](const os::RawSample& sample) { visit(context, sample); });
}

std::unique_ptr<ThreadSampler> make_sampler(SamplerKind kind) {
  if (kind == SamplerKind::kTimer) return std::make_unique<TimerThreadSampler>();
  return std::make_unique<PerfThreadSampler>(kind == SamplerKind::kPerfEvent);
}

const char* sampler_name(SamplerKind kind) {
  switch (kind) {
    case SamplerKind::kPerfEvent: return "perf_event";
    case SamplerKind::kPerfEventUser: return "perf_event_user";
    case SamplerKind::kTimer: return "timer";
  }
  return "timer";
}

}  // namespace whatif::sampling
