// Progress points at FILE:LINE (-p): resolving each to an address, then counting its visits either
// by a code patch (a jmp to a counting trampoline, installed at start-up while the program's only
// thread waits) or, where a patch is unsafe or disabled, by one hardware breakpoint counter per
// point in every thread, with the counts of exited threads. Profiler thread only.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "patch/patcher.h"
#include "profile/profile_writer.h"
#include "symbols/symbol_map.h"
#include "threads/threads.h"

namespace whatif::experiment {

/// How one -p point is counted.
enum class PointMechanism { kUnresolved, kPatch, kBreakpoint };
const char* mechanism_name(PointMechanism mechanism);

/// The -p points: their addresses, how each is counted, per-thread counters and the counts of
/// exited threads.
class BreakpointPoints {
 public:
  /// `specs` (the -p points) must outlive this object.
  explicit BreakpointPoints(const std::vector<config::LineSpec>& specs);

  /// Resolves each point to the lowest address of its in-scope code. Returns a warning for each
  /// point that matches no code (that point is then never counted).
  std::vector<std::string> resolve(symbols::SymbolMap& symbols);
  /// After resolve(): patches each resolved point's first instruction when `allowed` (patching is
  /// on and no other program thread can run), else, or when the patch is unsafe there, leaves it
  /// to a hardware breakpoint. Returns a warning for each point left to a breakpoint, with why.
  std::vector<std::string> install_patches(symbols::SymbolMap& symbols, bool allowed, const std::string& why_not);
  /// Some point needs a hardware breakpoint counter in every thread.
  bool any() const;
  /// The breakpoint points' addresses (samples there are whatif's trap time).
  std::vector<uint64_t> addresses() const;
  /// The trampolines' code ranges (samples there are whatif's counting time).
  std::vector<symbols::AddressRange> trampolines() const;
  /// Per point (in -p order): its name, mechanism, address and, for a breakpoint, why.
  struct Description {
    std::string name;
    PointMechanism mechanism = PointMechanism::kUnresolved;
    uint64_t address = 0;
    std::string reason;
  };
  std::vector<Description> describe() const;

  /// Opens the breakpoint counters of a thread (once; marks it opened). Warns once when perf refuses.
  void open(threads::ThreadState& thread);
  /// An exiting thread: adds its counts to the retired totals and closes its counters.
  void close(threads::ThreadState& thread);
  /// Per point: patch counters, or retired totals plus the live counts of the threads in `snapshot`.
  std::vector<uint64_t> read(const std::vector<threads::ThreadState*>& snapshot) const;
  /// One result per resolved point visited at least once in the run: its visits since `at_start`
  /// (an earlier read()).
  std::vector<profile::PointResult> deltas(const std::vector<uint64_t>& now, const std::vector<uint64_t>& at_start) const;

 private:
  bool uses_breakpoint(std::size_t i) const { return mechanisms_[i] == PointMechanism::kBreakpoint; }

  const std::vector<config::LineSpec>& specs_;
  std::vector<uint64_t> addresses_;       // one per point (0: unresolved)
  std::vector<PointMechanism> mechanisms_;
  std::vector<std::optional<patch::Installed>> patches_;
  std::vector<std::string> reasons_;      // why a resolved point uses a breakpoint
  std::vector<uint64_t> retired_counts_;  // per point, summed over exited threads
};

}  // namespace whatif::experiment
