// Per-thread samplers behind one interface: perf_event task-clock, a CPU-time timer (when
// perf_event_open is denied, or asked for), or the adaptive pair of both (default) that the profiler
// switches per thread. start/stop run on the sampled thread; drain and use_timer on the profiler
// thread; on_signal in the sampled thread's signal handler; scan_own on the sampled thread in either context.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/signal_safe.h"
#include "os/cpu_timer.h"
#include "os/perf_event.h"
#include "sampling/sample_ring.h"

namespace whatif::sampling {

using SampleVisitor = void (*)(void* context, const os::RawSample& sample);

/// A thread's first sampling period, uniform in [1, period_ns]: its samples then fall at a random
/// phase of its CPU time, so one that lives less than a period is still sampled in proportion to
/// its CPU time (a task of 0.9 ms was never sampled at a 1-ms period). Normal context.
uint64_t first_period_ns(uint64_t period_ns, pid_t tid);
/// Start-up, before any thread samples (WHATIF_FIRST_PERIOD_NS): every thread's first period is
/// `first_ns` instead of a random one (0: random again).
void set_first_period(uint64_t first_ns);
/// Start-up, before any thread samples (WHATIF_PERIOD_JITTER): whether perf_event samplers draw
/// each period at random (os::PerfSampler::next_period). On by default.
void set_period_jitter(bool jitter);
/// Start-up, before any thread samples (WHATIF_SAMPLE_TRAP, and the kernel's answer to
/// os::probe_trapping_sampler): whether perf_event samplers open one event per thread that signals
/// by SIGTRAP (os::PerfSampler::open_trapping) instead of an O_ASYNC user-mode event and a
/// signal-less kernel-mode one. The runtime's SIGTRAP handler must be installed first.
void set_trap_sampling(bool on);
bool trap_sampling();
/// The si_perf_data of a sampler's SIGTRAP: the runtime's trap handler passes such a signal to the
/// sample handler. Distinct from the branch tracer's cookies (facade::kTracerCookieTag).
inline constexpr uint64_t kSampleTrapCookie = 0x57484953ull << 32 | 1;  // "WHIS"
/// A thread whose random first period (first_period_ns) is shorter than this samples user mode
/// with the trapping event and kernel mode with the signal-less companion: a period shorter than
/// the interrupt and the signal's set-up (~40 us here) kept a trapping event that samples kernel
/// mode in the kernel taking samples (PerfThreadSampler::start). That is 10% of threads at a 1-ms
/// period; every thread's first sample keeps its uniform phase.
inline constexpr uint64_t kShortestTrappingFirstPeriodNs = 100000;

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
  /// Profiler thread: moves the thread to the timer (true) or back to perf_event (false), where the
  /// backend can switch (the adaptive sampler). Returns whether the thread now samples with the timer.
  virtual bool use_timer(bool) { return on_timer(); }
  /// Whether the thread samples with a CPU-time timer now (any thread, signal context included; a
  /// relaxed reading).
  WHATIF_SIGNAL_SAFE virtual bool on_timer() const { return false; }
  /// Whether use_timer can switch this backend.
  virtual bool switchable() const { return false; }
  /// The events a spinning pause stops (os::SamplingPause), or nullptr: a timer-sampled thread
  /// never spins. Valid from start until the sampler is destroyed.
  virtual os::SamplingPause* sampling_pause() { return nullptr; }

  /// 1: a thread credits its own samples and pays what it owes at every sample, close to the
  /// paper's immediate pauses (every 10th sample delayed both by up to 10 ms of its CPU time).
  static constexpr uint32_t kSamplesPerSignal = 1;
};

class PerfThreadSampler final : public ThreadSampler {
 public:
  /// `with_kernel`: also sample time the thread spends in the kernel, charged to its user IP: with
  /// trap_sampling, by the one event; otherwise with a second, signal-less event writing into the
  /// first one's ring (the thread's own scan credits its selected-line samples at the next user
  /// sample or blocking call; else the drain does).
  explicit PerfThreadSampler(bool with_kernel) : with_kernel_(with_kernel) {}
  int start(pid_t tid, uint64_t period_ns, int signal) override;
  void stop() override;
  std::size_t drain(SampleVisitor visit, void* context) override;
  uint64_t lost() const override { return perf_.lost(); }
  WHATIF_SIGNAL_SAFE void scan_own(os::OwnSampleVisitor visit, void* context) override {
    perf_.scan_own(visit, context);
  }
  WHATIF_SIGNAL_SAFE bool on_signal(const siginfo_t* info, void* ucontext) override;
  WHATIF_SIGNAL_SAFE bool on_timer() const override { return false; }
  /// Disables (false) or re-enables (true) the thread's events without closing them: a disabled
  /// event costs its thread nothing at context switches; its ring stays drainable.
  void set_enabled(bool enabled);
  os::SamplingPause* sampling_pause() override { return &pause_; }
  /// Whether kernel-mode time is sampled on this thread (the second event opened).
  bool samples_kernel() const { return kernel_.is_open() || trapping_kernel_; }
  /// Whether the thread's samples signal by SIGTRAP (one event, set_trap_sampling).
  bool trapping() const { return trapping_; }
  /// Kernel-mode samples dropped because the thread was not in a system call (profiler thread).
  uint64_t outside_system_calls() const { return outside_system_calls_; }

 private:
  os::PerfSampler perf_;
  os::PerfSampler kernel_;  // kernel-mode samples into perf_'s ring, no signal; may stay closed
  os::SamplingPause pause_;  // both events, once opened
  bool with_kernel_;
  bool trapping_ = false;         // perf_ signals by SIGTRAP; kernel_ stays closed
  bool trapping_kernel_ = false;  // and perf_ samples kernel mode too
  uint64_t outside_system_calls_ = 0;
};

class TimerThreadSampler final : public ThreadSampler {
 public:
  int start(pid_t tid, uint64_t period_ns, int signal) override;
  void stop() override;
  /// The sampled thread: notes its stack's bounds (frame-pointer walks stay inside), without a timer.
  void prepare(pid_t tid);
  /// Any thread but a handler, after prepare: creates the timer on first use and arms it (period_ns)
  /// or disarms it (0). Returns 0 or -errno.
  int arm(uint64_t period_ns, int signal);
  /// Any thread but a handler, before the timer is armed: from now on samples carry the thread's
  /// registers and the top of its stack (as perf's do) while fewer than kSnapshots wait to be
  /// drained, so the profiler unwinds them with DWARF CFI: time in a library or a system call goes to
  /// the line that called it, where frame-pointer chains break (code built without frame pointers).
  void keep_stacks();
  std::size_t drain(SampleVisitor visit, void* context) override;
  uint64_t lost() const override { return ring_.lost(); }
  WHATIF_SIGNAL_SAFE void scan_own(os::OwnSampleVisitor visit, void* context) override {
    ring_.scan_own(visit, context);
  }
  WHATIF_SIGNAL_SAFE bool on_signal(const siginfo_t* info, void* ucontext) override;
  WHATIF_SIGNAL_SAFE bool on_timer() const override { return true; }

 private:
  /// The timer fires at most once a scheduler tick and the profiler drains every millisecond: 16
  /// snapshots are tens of ms of slack (a sample taken with more pending goes without a stack).
  static constexpr uint32_t kSnapshots = 16;
  struct Snapshot {
    os::UserStack user;
    unsigned char bytes[os::PerfSampler::kStackBytes];
  };
  /// Signal handler: fills `snapshot` from the interrupted context; false when its sp is off this
  /// thread's stack.
  WHATIF_SIGNAL_SAFE bool take_snapshot(const void* ucontext, Snapshot& snapshot) const;

  os::CpuTimer timer_;
  SampleRing ring_;
  std::unique_ptr<Snapshot[]> snapshot_storage_;  // kSnapshots, once keep_stacks ran
  std::atomic<Snapshot*> snapshots_{nullptr};    // published to the handler (release/acquire)
  pid_t tid_ = 0;
  uintptr_t stack_low_ = 0;   // frame-pointer walks stay inside [stack_low_, stack_high_)
  uintptr_t stack_high_ = 0;
  uint32_t ticks_ = 0;
};

/// perf_event first; the profiler moves a thread to the CPU-time timer while it switches contexts too
/// often for per-thread perf events (switch_rule.h), and back. Both backends' rings are drained and
/// scanned whichever is on: samples taken just before a switch are kept.
class AdaptiveThreadSampler final : public ThreadSampler {
 public:
  explicit AdaptiveThreadSampler(bool with_kernel) : perf_(with_kernel) {}
  int start(pid_t tid, uint64_t period_ns, int signal) override;
  void stop() override;
  std::size_t drain(SampleVisitor visit, void* context) override;
  uint64_t lost() const override { return perf_.lost() + timer_.lost(); }
  WHATIF_SIGNAL_SAFE void scan_own(os::OwnSampleVisitor visit, void* context) override {
    perf_.scan_own(visit, context);
    timer_.scan_own(visit, context);
  }
  WHATIF_SIGNAL_SAFE bool on_signal(const siginfo_t* info, void* ucontext) override;
  bool use_timer(bool on) override;
  WHATIF_SIGNAL_SAFE bool on_timer() const override { return on_timer_.load(std::memory_order_relaxed); }
  bool switchable() const override { return true; }
  os::SamplingPause* sampling_pause() override { return perf_.sampling_pause(); }

 private:
  void lock();
  void unlock() { lock_.clear(std::memory_order_release); }

  PerfThreadSampler perf_;
  TimerThreadSampler timer_;
  std::atomic_flag lock_ = ATOMIC_FLAG_INIT;  // stop (sampled thread) against use_timer (profiler)
  std::atomic<bool> on_timer_{false};
  bool stopped_ = false;  // under lock_
  uint64_t period_ns_ = 0;
  int signal_ = 0;
};

/// Whether the instruction before `user_ip` is a `syscall`: where a thread in a system call entered the
/// kernel (read with a fault-safe load; any thread, signal context too).
WHATIF_SIGNAL_SAFE bool after_system_call(uint64_t user_ip);
/// Whether a sample stands for the program's time: user mode, or kernel mode inside a system call
/// (after_system_call). The owning thread's scan and the drain apply the same test.
WHATIF_SIGNAL_SAFE bool counts_as_program(const os::RawSample& sample);

/// kPerfEvent samples user and kernel time (system calls count for the line that made them);
/// kPerfEventUser only user time (perf_event_paranoid >= 2 without CAP_PERFMON, or WHATIF_SAMPLER=user).
enum class SamplerKind { kPerfEvent, kPerfEventUser, kTimer };
const char* sampler_name(SamplerKind kind);
/// `adaptive`: a perf_event kind inside an AdaptiveThreadSampler (the default; WHATIF_SAMPLER=perf
/// keeps perf_event on every thread).
std::unique_ptr<ThreadSampler> make_sampler(SamplerKind kind, bool adaptive = false);

}  // namespace whatif::sampling
