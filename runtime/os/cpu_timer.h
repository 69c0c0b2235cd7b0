// The fallback sampling clock: a per-thread CPU-time POSIX timer delivering a signal to its thread.
// Created and deleted on the owning thread or the profiler thread.
#pragma once
#include <sys/types.h>
#include <time.h>

#include <cstdint>

namespace whatif::os {

class CpuTimer {
 public:
  CpuTimer() = default;
  CpuTimer(const CpuTimer&) = delete;
  CpuTimer& operator=(const CpuTimer&) = delete;
  ~CpuTimer() { close(); }

  /// Arms a CLOCK_THREAD_CPUTIME_ID timer for thread `tid` that sends `signal` to it every
  /// `period_ns` of its CPU time. Must be called on thread `tid` (its CPU clock is the caller's).
  /// Returns 0 or -errno.
  int open(pid_t tid, uint64_t period_ns, int signal);
  void close();
  bool is_open() const { return open_; }

 private:
  timer_t timer_{};
  bool open_ = false;
};

}  // namespace whatif::os
