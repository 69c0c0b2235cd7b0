// Progress points at FILE:LINE counted by hardware breakpoints (-p): resolving each to an address,
// one breakpoint counter per point in every thread, and the counts of exited threads. Profiler
// thread only (it opens, reads and closes the counters of all threads).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/config.h"
#include "profile/profile_writer.h"
#include "symbols/symbol_map.h"
#include "threads/threads.h"

namespace whatif::experiment {

/// The -p points: their addresses, per-thread counters and the counts of exited threads.
class BreakpointPoints {
 public:
  /// `specs` (the -p points) must outlive this object.
  explicit BreakpointPoints(const std::vector<config::LineSpec>& specs);

  /// Resolves each point to the lowest address of its in-scope code. Returns a warning for each
  /// point that matches no code (that point is then never counted).
  std::vector<std::string> resolve(symbols::SymbolMap& symbols);
  /// Any point given (resolved or not): threads need their counters opened.
  bool any() const { return !addresses_.empty(); }
  /// The resolved points' addresses (after resolve()).
  std::vector<uint64_t> addresses() const {
    std::vector<uint64_t> resolved;
    for (uint64_t address : addresses_) if (address != 0) resolved.push_back(address);
    return resolved;
  }

  /// Opens the counters of a thread (once; marks it opened). Warns once when perf refuses.
  void open(threads::ThreadState& thread);
  /// An exiting thread: adds its counts to the retired totals and closes its counters.
  void close(threads::ThreadState& thread);
  /// Per point: retired totals plus the live counts of the threads in `snapshot`.
  std::vector<uint64_t> read(const std::vector<threads::ThreadState*>& snapshot) const;
  /// One result per resolved point: its visits since `at_start` (an earlier read()).
  std::vector<profile::PointResult> deltas(const std::vector<uint64_t>& now, const std::vector<uint64_t>& at_start) const;

 private:
  const std::vector<config::LineSpec>& specs_;
  std::vector<uint64_t> addresses_;       // one per point (0: unresolved)
  std::vector<uint64_t> retired_counts_;  // per point, summed over exited threads
};

}  // namespace whatif::experiment
