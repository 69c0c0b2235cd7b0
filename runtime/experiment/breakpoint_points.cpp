// Hardware-breakpoint progress points (see breakpoint_points.h). Profiler thread only.
#include "experiment/breakpoint_points.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "os/log.h"
#include "os/perf_event.h"

namespace whatif::experiment {

BreakpointPoints::BreakpointPoints(const std::vector<config::LineSpec>& specs)
    : specs_(specs), retired_counts_(specs.size(), 0) {}

std::vector<std::string> BreakpointPoints::resolve(symbols::SymbolMap& symbols) {
  std::vector<std::string> warnings;
  addresses_.assign(specs_.size(), 0);
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const config::LineSpec& spec = specs_[i];
    auto ranges = symbols.ranges_for(spec.file, spec.line, /*in_scope_only=*/true);
    if (ranges.empty()) {
      warnings.push_back("progress point " + spec.text() + " matches no code in scope: check the file and line with "
                         "`whatif lines PROGRAM " + spec.text() + "`, or add its library with -b");
      continue;
    }
    uint64_t first = ranges.front().begin;
    for (const auto& range : ranges) first = std::min<uint64_t>(first, range.begin);
    addresses_[i] = first;
  }
  return warnings;
}

void BreakpointPoints::open(threads::ThreadState& thread) {
  thread.breakpoints_opened = true;
  for (std::size_t i = 0; i < addresses_.size() && i < threads::ThreadState::kMaxBreakpoints; ++i) {
    if (addresses_[i] == 0) continue;
    int fd = os::open_breakpoint_counter(thread.tid, addresses_[i]);
    if (fd == -ESRCH) return;  // the thread exited before the profiler reached it: it has nothing to count
    if (fd < 0) {
      static log::WarnOnce warn_once;
      warn_once("cannot set a hardware breakpoint for progress point {}: {} (breakpoint progress points need "
                "perf_event breakpoints; use COZ_PROGRESS in the source instead)",
                specs_[i].text(), std::strerror(-fd));
      continue;
    }
    thread.breakpoint_fds[i] = fd;
  }
}

void BreakpointPoints::close(threads::ThreadState& thread) {
  for (std::size_t i = 0; i < retired_counts_.size() && i < threads::ThreadState::kMaxBreakpoints; ++i) {
    int& fd = thread.breakpoint_fds[i];
    if (fd < 0) continue;
    uint64_t value = 0;
    if (os::read_counter(fd, value)) retired_counts_[i] += value;
    os::close_counter(fd);
    fd = -1;
  }
}

std::vector<uint64_t> BreakpointPoints::read(const std::vector<threads::ThreadState*>& snapshot) const {
  std::vector<uint64_t> totals = retired_counts_;
  for (threads::ThreadState* thread : snapshot) {
    for (std::size_t i = 0; i < totals.size() && i < threads::ThreadState::kMaxBreakpoints; ++i) {
      uint64_t value = 0;
      if (thread->breakpoint_fds[i] >= 0 && os::read_counter(thread->breakpoint_fds[i], value)) totals[i] += value;
    }
  }
  return totals;
}

std::vector<profile::PointResult> BreakpointPoints::deltas(const std::vector<uint64_t>& now,
                                                           const std::vector<uint64_t>& at_start) const {
  std::vector<profile::PointResult> results;
  for (std::size_t i = 0; i < now.size(); ++i) {
    if (addresses_.size() <= i || addresses_[i] == 0) continue;
    profile::PointResult result;
    result.name = specs_[i].text();
    result.delta = now[i] - (i < at_start.size() ? at_start[i] : 0);
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace whatif::experiment
