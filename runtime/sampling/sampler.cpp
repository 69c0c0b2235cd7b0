// Sampler backends' set-up and draining (sampled thread / profiler thread). Their signal-handler
// halves live in sampler_signal.cpp.
#include "sampling/sampler.h"

#include <pthread.h>
#include <sched.h>

#include <cerrno>

#include "base/mix.h"
#include "os/os.h"

namespace whatif::sampling {

namespace {
std::atomic<uint64_t> g_first_period_ns{0};
std::atomic<bool> g_period_jitter{true};
std::atomic<bool> g_trap_sampling{false};
}  // namespace

void set_first_period(uint64_t first_ns) { g_first_period_ns.store(first_ns, std::memory_order_relaxed); }
void set_period_jitter(bool jitter) { g_period_jitter.store(jitter, std::memory_order_relaxed); }
void set_trap_sampling(bool on) { g_trap_sampling.store(on, std::memory_order_relaxed); }
bool trap_sampling() { return g_trap_sampling.load(std::memory_order_relaxed); }

uint64_t first_period_ns(uint64_t period_ns, pid_t tid) {
  if (period_ns < 2) return period_ns;
  if (uint64_t fixed = g_first_period_ns.load(std::memory_order_relaxed); fixed != 0) return fixed < period_ns ? fixed : period_ns;
  // Threads started together get unrelated phases.
  return 1 + mix_seed(os::monotonic_ns(), static_cast<uint64_t>(tid)) % period_ns;
}

int PerfThreadSampler::start(pid_t tid, uint64_t period_ns, int signal) {
  // User-mode samples start at a random phase; kernel-mode ones at a whole period (their event
  // sends no signal, so nothing would set the whole period right after the first sample).
  const uint64_t first = first_period_ns(period_ns, tid);
  int result = -EINVAL;
  // A first period shorter than the kernel's way back to user mode would not end while the event
  // samples kernel mode: each expiry there (in the interrupt's exit, where the trap's signal is set
  // up) queued the trap again, and a thread drawn 20 us spun in the kernel for a ring's worth of
  // samples (~40 us an interrupt here). Such a thread's trapping event samples user mode only, and
  // the signal-less kernel-mode companion below, which starts at a whole period, the kernel.
  const bool short_first = first < kShortestTrappingFirstPeriodNs;
  if (g_trap_sampling.load(std::memory_order_relaxed)) {
    result = perf_.open_trapping(tid, period_ns, kSampleTrapCookie, with_kernel_ && !short_first, first);
    trapping_ = result == 0;
    trapping_kernel_ = trapping_ && with_kernel_ && !short_first;
  }
  if (!trapping_) {
    result = perf_.open(tid, period_ns, signal, kSamplesPerSignal, /*with_stack=*/true, /*kernel_only=*/false, first);
  }
  if (result != 0) return result;
  perf_.set_jitter(g_period_jitter.load(std::memory_order_relaxed), os::monotonic_ns() ^ (static_cast<uint64_t>(tid) << 40));
  pause_.add(perf_.fd());
  // Best effort: without it the thread is sampled in user mode only. Its records go to the user
  // sampler's ring: one mapping per thread, not two.
  if (with_kernel_ && !trapping_kernel_ &&
      kernel_.open_into(perf_, tid, period_ns, kSamplesPerSignal, /*kernel_only=*/true) == 0) {
    pause_.add(kernel_.fd());
  }
  return perf_.enable();
}

void PerfThreadSampler::stop() { set_enabled(false); }

void PerfThreadSampler::set_enabled(bool enabled) {
  for (os::PerfSampler* sampler : {&perf_, &kernel_}) {
    if (!sampler->is_open()) continue;
    if (enabled) sampler->enable();
    else sampler->disable();
  }
}

std::size_t PerfThreadSampler::drain(SampleVisitor visit, void* context) {
  std::size_t user_samples = 0;
  std::size_t count = perf_.drain([&](const os::RawSample& sample) {
    if (!sample.kernel_mode) {
      ++user_samples;
    } else if (!counts_as_program(sample)) {
      ++outside_system_calls_;
      return;
    }
    visit(context, sample);
  });
  // The thread's handler has not run yet (signals blocked); a kernel-mode sample says nothing of
  // the user event's first period.
  if (user_samples > 0) perf_.settle_first_period();
  return count;
}

int TimerThreadSampler::start(pid_t tid, uint64_t period_ns, int signal) {
  prepare(tid);
  keep_stacks();
  return timer_.open(tid, period_ns, signal, first_period_ns(period_ns, tid));
}

void TimerThreadSampler::keep_stacks() {
  if (snapshot_storage_) return;
  // Not zeroed: take_snapshot writes a slot whole before the drainer reads it. Zeroing 128 KiB (and
  // faulting in every page) cost each new thread of the timer sampler ~35 us.
  snapshot_storage_ = std::make_unique_for_overwrite<Snapshot[]>(kSnapshots);
  // Release pairs with the handler's acquire: it sees the storage allocated.
  snapshots_.store(snapshot_storage_.get(), std::memory_order_release);
}

void TimerThreadSampler::prepare(pid_t tid) {
  tid_ = tid;
  // Kept per thread: a forked child's thread has the stack (and the thread-local copy) of the
  // parent's thread that forked. For the main thread pthread_getattr_np reads /proc/self/maps,
  // which every forked child did again (about 0.2 ms of each child's start).
  thread_local uintptr_t known_low = 0, known_high = 0;
  if (known_high == 0) {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* base = nullptr;
      size_t size = 0;
      if (pthread_attr_getstack(&attr, &base, &size) == 0) {
        known_low = reinterpret_cast<uintptr_t>(base);
        known_high = known_low + size;
      }
      pthread_attr_destroy(&attr);
    }
  }
  stack_low_ = known_low;
  stack_high_ = known_high;
}

int TimerThreadSampler::arm(uint64_t period_ns, int signal) {
  if (!timer_.is_open()) {
    if (period_ns == 0) return 0;
    if (int result = timer_.create(tid_, signal); result != 0) return result;
  }
  return timer_.arm(period_ns);
}

void TimerThreadSampler::stop() { timer_.close(); }

int AdaptiveThreadSampler::start(pid_t tid, uint64_t period_ns, int signal) {
  period_ns_ = period_ns;
  signal_ = signal;
  timer_.prepare(tid);  // on this thread: its stack bounds; the timer itself only if it is needed
  return perf_.start(tid, period_ns, signal);
}

void AdaptiveThreadSampler::lock() {
  while (lock_.test_and_set(std::memory_order_acquire)) sched_yield();  // pthread mutexes are interposed
}

void AdaptiveThreadSampler::stop() {
  lock();
  stopped_ = true;
  perf_.stop();
  timer_.arm(0, signal_);
  unlock();
}

bool AdaptiveThreadSampler::use_timer(bool on) {
  lock();
  if (!stopped_ && on != on_timer()) {
    // The old backend stops before the new one starts: for a moment neither samples, rather than both.
    if (on) {
      timer_.keep_stacks();
      perf_.sampling_pause()->set_wanted(false);  // a pause ending now must not enable perf again
      perf_.set_enabled(false);
      if (timer_.arm(period_ns_, signal_) == 0) {
        on_timer_.store(true, std::memory_order_relaxed);
      } else {
        perf_.set_enabled(true);  // no timer to be had (the process's limit): it stays on perf
        perf_.sampling_pause()->set_wanted(true);
      }
    } else {
      timer_.arm(0, signal_);
      perf_.set_enabled(true);
      perf_.sampling_pause()->set_wanted(true);
      on_timer_.store(false, std::memory_order_relaxed);
    }
  }
  unlock();
  return on_timer();
}

std::size_t AdaptiveThreadSampler::drain(SampleVisitor visit, void* context) {
  return perf_.drain(visit, context) + timer_.drain(visit, context);
}

std::size_t TimerThreadSampler::drain(SampleVisitor visit, void* context) {
  return ring_.drain([&](const os::RawSample& sample) { visit(context, sample); });
}

std::unique_ptr<ThreadSampler> make_sampler(SamplerKind kind, bool adaptive) {
  if (kind == SamplerKind::kTimer) return std::make_unique<TimerThreadSampler>();
  if (adaptive) return std::make_unique<AdaptiveThreadSampler>(kind == SamplerKind::kPerfEvent);
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
