// -p progress points, patched or counted by hardware breakpoints (see breakpoint_points.h).
// Profiler thread only.
#include "experiment/breakpoint_points.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "os/log.h"
#include "os/perf_event.h"
#include "symbols/function_bounds.h"

namespace whatif::experiment {

namespace {

std::vector<std::pair<uint64_t, uint64_t>> fragments_of(const symbols::FunctionExtent& extent, uint64_t bias) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const symbols::AddressRange& range : extent.fragments) out.emplace_back(range.begin + bias, range.end + bias);
  return out;
}

}  // namespace

const char* mechanism_name(PointMechanism mechanism) {
  switch (mechanism) {
    case PointMechanism::kPatch: return "patch";
    case PointMechanism::kBreakpoint: return "breakpoint";
    case PointMechanism::kUnresolved: return "unresolved";
  }
  return "unresolved";
}

BreakpointPoints::BreakpointPoints(const std::vector<config::LineSpec>& specs)
    : specs_(specs),
      addresses_(specs.size(), 0),
      mechanisms_(specs.size(), PointMechanism::kUnresolved),
      patches_(specs.size()),
      reasons_(specs.size()),
      retired_counts_(specs.size(), 0) {}

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
    mechanisms_[i] = PointMechanism::kBreakpoint;
  }
  return warnings;
}

std::vector<std::string> BreakpointPoints::install_patches(symbols::SymbolMap& symbols, bool allowed,
                                                           const std::string& why_not) {
  std::vector<std::string> warnings;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (addresses_[i] == 0) continue;
    std::string reason;
    if (!allowed) {
      reason = why_not;
    } else if (const symbols::LoadedObject* object = symbols.object_at(addresses_[i]); object == nullptr) {
      reason = "its address is in no loaded object";
    } else if (auto bounds = symbols::function_bounds(object->path, addresses_[i] - object->bias); !bounds) {
      reason = "its function's bounds are unknown (" + bounds.error() + ")";
    } else if (auto installed = patch::install(addresses_[i], bounds->body.begin + object->bias,
                                               bounds->body.end + object->bias, fragments_of(*bounds, object->bias));
               !installed) {
      reason = "patching its code is unsafe: " + installed.error();
    } else {
      patches_[i] = *installed;
      mechanisms_[i] = PointMechanism::kPatch;
      log::info("progress point {} is counted by a code patch at 0x{:x} ({} instruction(s) moved)", specs_[i].text(),
                addresses_[i], installed->displaced_instructions);
      continue;
    }
    reasons_[i] = reason;
    warnings.push_back(fmt::format("progress point {} is counted by a hardware breakpoint, a trap per visit (about "
                                   "20 us each): {}. A COZ_PROGRESS in the source costs far less on a hot line",
                                   specs_[i].text(), reason));
  }
  return warnings;
}

bool BreakpointPoints::any() const {
  for (std::size_t i = 0; i < mechanisms_.size(); ++i) {
    if (uses_breakpoint(i)) return true;
  }
  return false;
}

std::vector<uint64_t> BreakpointPoints::addresses() const {
  std::vector<uint64_t> traps;
  for (std::size_t i = 0; i < addresses_.size(); ++i) {
    if (uses_breakpoint(i)) traps.push_back(addresses_[i]);
  }
  return traps;
}

std::vector<symbols::AddressRange> BreakpointPoints::trampolines() const {
  std::vector<symbols::AddressRange> ranges;
  for (const auto& installed : patches_) {
    if (installed) ranges.push_back({installed->trampoline_begin, installed->trampoline_end});
  }
  return ranges;
}

std::vector<BreakpointPoints::Description> BreakpointPoints::describe() const {
  std::vector<Description> out;
  for (std::size_t i = 0; i < specs_.size(); ++i) out.push_back({specs_[i].text(), mechanisms_[i], addresses_[i], reasons_[i]});
  return out;
}

void BreakpointPoints::open(threads::ThreadState& thread) {
  thread.breakpoints_opened = true;
  for (std::size_t i = 0; i < addresses_.size() && i < threads::ThreadState::kMaxBreakpoints; ++i) {
    if (!uses_breakpoint(i)) continue;
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
  for (std::size_t i = 0; i < totals.size(); ++i) {
    if (patches_[i]) totals[i] = patches_[i]->visits();
  }
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
    // Not visited yet in the run: absent, as a COZ_PROGRESS point is until its first visit. A busy
    // phase before it (memcached's set phase under -p on its get path: the first 20 of 40
    // experiments) otherwise wrote zero visits into random cells, and a report cell of those
    // stretched to -31084% at its interval's end where the source point's was sane.
    if (now[i] == 0) continue;
    profile::PointResult result;
    result.name = specs_[i].text();
    result.delta = now[i] - (i < at_start.size() ? at_start[i] : 0);
    results.push_back(std::move(result));
  }
  return results;
}

}  // namespace whatif::experiment
