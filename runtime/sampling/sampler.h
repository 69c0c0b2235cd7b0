// Per-thread samplers behind one interface: perf_event task-clock (default) or a CPU-time timer
// (fallback when perf_event_open is denied). start/stop run on the sampled thread; drain runs on
// the profiler thread; on_signal runs in the sampled thread's signal handler; scan_own runs on
// the sampled thread in either context.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/signal_safe.h"
#include "os/cpu_timer.h"
#include "os/perf_event.h"
#include "sampling/sample_ring.h"

namespace whatif::sampling {

using SampleVisitor = void (*)(void* context, const os::RawSample& sample);

class ThreadSampler {
 public:
  virtual ~ThreadSampler() = default;
  /// Starts sampling the calling thread `tid`. Every kSamplesPerSignal samples the thread receives
  /// `signal`. Returns 0 or -errno.
  virtual int start(pid_t tid, uint64_t period_ns, int signal) = 0;
  /// Stops sampling (samples already taken stay drainable).
  virtual void stop() = 0;
  /// Profiler thread: hands every pending sample to `visit`. Returns how many.
  virtual std::size_t drain(SampleVisitor visit, void* context) = 0;
  virtual uint64_t lost() const = 0;
  /// The sampled thread (normal or signal context, never re-entered): visits its samples that
  /// neither it nor the profiler has scanned yet; drain then reports them owner_scanned.
  WHATIF_SIGNAL_SAFE virtual void scan_own(os::OwnSampleVisitor visit, void* context) = 0;
  /// Signal handler on the sampled thread: records a sample if this signal is this backend's
  /// tick. Returns true when the thread should now run its delay check.
  WHATIF_SIGNAL_SAFE virtual bool on_signal(const siginfo_t* info, void* ucontext) = 0;

  /// 1: a thread credits its own samples and pays what it owes at every sample, close to the
  /// paper's immediate pauses (every 10th sample delayed both by up to 10 ms of its CPU time).
  static constexpr uint32_t kSamplesPerSignal = 1;
};

class PerfThreadSampler final : public ThreadSampler {
 public:
  /// `with_kernel`: also sample time the thread spends in the kernel, charged to its user IP, with a
  /// second, signal-less event drained by the profiler thread (its selected-line samples are
  /// credited there, a tick later).
  explicit PerfThreadSampler(bool with_kernel) : with_kernel_(with_kernel) {}
  int start(pid_t tid, uint64_t period_ns, int signal) override;
  void stop() override;
  std::size_t drain(SampleVisitor visit, void* context) override;
  uint64_t lost() const override { return perf_.lost() + kernel_.lost(); }
  WHATIF_SIGNAL_SAFE void scan_own(os::OwnSampleVisitor visit, void* context) override {
    perf_.scan_own(visit, context);
  }
  WHATIF_SIGNAL_SAFE bool on_signal(const siginfo_t* info, void* ucontext) override;
  /// Whether kernel-mode time is sampled on this thread (the second event opened).
  bool samples_kernel() const { return kernel_.is_open(); }
  /// Kernel-mode samples dropped because the thread was not in a system call (profiler thread).
  uint64_t outside_system_calls() const { return outside_system_calls_; }

 private:
  os::PerfSampler perf_;
  os::PerfSampler kernel_;  // kernel-mode samples, no signal; may stay closed (memory-lock limit)
  bool with_kernel_;
  uint64_t outside_system_calls_ = 0;
};

class TimerThreadSampler final : public ThreadSampler {
 public:
  int start(pid_t tid, uint64_t period_ns, int signal) override;
  void stop() override;
  std::size_t drain(SampleVisitor visit, void* context) override;
  uint64_t lost() const override { return ring_.lost(); }
  WHATIF_SIGNAL_SAFE void scan_own(os::OwnSampleVisitor visit, void* context) override {
    ring_.scan_own(visit, context);
  }
  WHATIF_SIGNAL_SAFE bool on_signal(const siginfo_t* info, void* ucontext) override;

 private:
  os::CpuTimer timer_;
  SampleRing ring_;
  pid_t tid_ = 0;
  uintptr_t stack_low_ = 0;   // frame-pointer walks stay inside [stack_low_, stack_high_)
  uintptr_t stack_high_ = 0;
  uint32_t ticks_ = 0;
};

/// Whether the instruction before `user_ip` is a `syscall`: where a thread in a system call entered the
/// kernel (read with a fault-safe load; profiler thread).
bool after_system_call(uint64_t user_ip);

/// kPerfEvent samples user and kernel time (system calls count for the line that made them);
/// kPerfEventUser only user time (perf_event_paranoid >= 2 without CAP_PERFMON, or WHATIF_SAMPLER=user).
enum class SamplerKind { kPerfEvent, kPerfEventUser, kTimer };
const char* sampler_name(SamplerKind kind);
std::unique_ptr<ThreadSampler> make_sampler(SamplerKind kind);

}  // namespace whatif::sampling
