// Sampler backends' set-up and draining (sampled thread / profiler thread). Their signal-handler
// halves live in sampler_signal.cpp.
#include "sampling/sampler.h"

#include <pthread.h>

namespace whatif::sampling {

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
  if (kernel_.is_open()) count += kernel_.drain([&](const os::RawSample& sample) { visit(context, sample); });
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
