// Event names to perf_event encodings: libpfm4 first (generic names such as `cycles`, perf's software
// names, and the CPU's own, e.g. `RETIRED_INSTRUCTIONS` or `INST_RETIRED:ANY_P`), then perf's
// software-event table when libpfm4 lacks a name. Offline/launcher code, one thread.
#pragma once
#include <string>
#include <vector>

#include "base/result.h"
#include "os/perf_counter.h"

namespace whatif::counters {

/// An event name and what opens it.
struct ResolvedEvent {
  std::string name;       ///< as the user wrote it
  std::string canonical;  ///< libpfm4's full name (with modifiers), or perf's software name
  os::EventEncoding encoding;
};

/// Resolves one name for counting in user space (`:u`; kernel too with `include_kernel`). The error
/// names the event and says how to list the names this machine knows.
Result<ResolvedEvent> resolve_event(const std::string& name, bool include_kernel = false);

/// Splits `-e` text ("a,b" or repeated flags) into names; empty items dropped. Modifiers after ':'
/// and libpfm4's PMU prefixes (`perf::cycles`) stay part of a name.
std::vector<std::string> split_event_list(const std::vector<std::string>& arguments);

/// Whether an event occupies a hardware PMU counter (not a software, tracepoint or breakpoint event).
bool needs_pmu_counter(const os::EventEncoding& encoding);

/// Why an event could not be opened, from perf_event_open's -errno, in words a user can act on.
std::string open_failure_reason(int negative_errno);

/// Events the user forces to be unavailable (WHATIF_UNAVAILABLE_EVENTS, ';' or ',' separated):
/// lets tests take the "not available on this machine" path on a machine that has the event.
std::vector<std::string> forced_unavailable_events();
bool is_forced_unavailable(const std::string& name, const std::vector<std::string>& forced);

}  // namespace whatif::counters
