// The CPU-time sampling clock: a per-thread CPU-time POSIX timer delivering a signal to its thread.
// Created, armed, disarmed and deleted on any thread of the process (the owning thread or the
// profiler thread), never in a signal handler.
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

  /// Creates and arms a timer on thread `tid`'s CPU clock (a thread of this process) that sends
  /// `signal` to it every `period_ns` of its CPU time. Returns 0 or -errno.
  /// `first_ns` (0: a whole period) is the first expiry: a random phase, so a thread that runs
  /// less than a period is sampled with the probability its CPU time says.
  int open(pid_t tid, uint64_t period_ns, int signal, uint64_t first_ns = 0);
  /// Creates the timer disarmed (no cost to the thread until armed). Returns 0 or -errno.
  int create(pid_t tid, int signal);
  /// Arms a created timer with `period_ns`, or disarms it with 0. Returns 0 or -errno.
  int arm(uint64_t period_ns, uint64_t first_ns = 0);
  void close();
  bool is_open() const { return open_; }

 private:
  timer_t timer_{};
  bool open_ = false;
};

}  // namespace whatif::os
