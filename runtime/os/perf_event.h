// perf_event_open wrappers: per-thread task-clock samplers with an mmap ring, and hardware
// execution-breakpoint counters. Opening happens on the sampled thread or the profiler thread;
// reading the ring happens on the profiler thread only (single consumer).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "base/signal_safe.h"

namespace whatif::os {

/// One sample read from a ring: the IP and up to kMaxCallchain user return addresses.
struct RawSample {
  static constexpr int kMaxCallchain = 32;
  uint64_t ip = 0;
  uint32_t tid = 0;
  uint32_t weight = 1;  ///< sampling periods this sample stands for (timer overruns make it > 1)
  uint32_t callchain_length = 0;
  uint64_t callchain[kMaxCallchain];
};

/// A task-clock sampling event on one thread, with its ring buffer. Move-only.
class PerfSampler {
 public:
  PerfSampler() = default;
  PerfSampler(const PerfSampler&) = delete;
  PerfSampler& operator=(const PerfSampler&) = delete;
  ~PerfSampler() { close(); }

  /// Opens a sampler on thread `tid` with the given period; samples carry IP + user callchain.
  /// Every `wakeup_samples` samples the kernel sends `signal` to that thread (0: no signal).
  /// Returns 0 or -errno (EACCES/EPERM when perf is denied, ENOENT/ENODEV when unsupported).
  int open(pid_t tid, uint64_t period_ns, int signal, uint32_t wakeup_samples);
  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int enable();
  int disable();

  /// Reads every complete record in the ring; calls visit(const RawSample&) for samples and
  /// counts lost records. Single consumer. Returns the number of samples read.
  template <typename Visitor>
  std::size_t drain(Visitor&& visit);
  uint64_t lost() const { return lost_; }
  void close();

 private:
  bool next_record(RawSample& sample, bool& is_sample);

  int fd_ = -1;
  void* ring_ = nullptr;
  std::size_t ring_bytes_ = 0;   // data area size (power of two)
  std::size_t mapping_bytes_ = 0;
  uint64_t lost_ = 0;
};

template <typename Visitor>
std::size_t PerfSampler::drain(Visitor&& visit) {
  std::size_t count = 0;
  RawSample sample;
  bool is_sample = false;
  while (next_record(sample, is_sample)) {
    if (is_sample) {
      visit(static_cast<const RawSample&>(sample));
      ++count;
    }
  }
  return count;
}

/// A counting hardware execution breakpoint at `address` on thread `tid` (no signals: the kernel
/// counts hits). Returns an fd or -errno.
int open_breakpoint_counter(pid_t tid, uint64_t address);
/// Closes a descriptor from open_breakpoint_counter (or a sampler's).
void close_counter(int fd);
/// Reads a counting event's value; returns false on error.
bool read_counter(int fd, uint64_t& value);

/// Whether perf_event_open is allowed at all here (tries a task-clock counter on this thread).
/// Returns 0 or -errno.
int probe_perf_events();
/// perf_event_paranoid's value, or -100 if unreadable.
int perf_event_paranoid();

}  // namespace whatif::os
