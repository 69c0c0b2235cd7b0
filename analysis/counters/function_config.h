// `whatif run --counters CONFIG`: the configuration file's parser (functions and events to count,
// docs/counters.md) and `whatif report --counters`' tables. Launcher process, one thread.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "analysis/profile/profile.h"
#include "base/result.h"

namespace whatif::counters {

struct FunctionConfig {
  std::vector<std::string> functions;  ///< in file order, without duplicates
  std::vector<std::string> events;     ///< `events` lines: in file order, without duplicates
  std::vector<std::vector<std::string>> event_sets;  ///< `eventset` lines: sets cycled by call count
  uint32_t counters = 4;     ///< `counters N`: hardware counters a set may use (splits `events`)
  uint32_t cycle = 10;       ///< `cycle N`: outermost calls per set before a thread switches sets
  uint32_t interval_ms = 100;  ///< `interval MS`: counter_interval records (0: none)
};

/// Parses CONFIG's text: `function NAME`, `events A,B,...`, `eventset A,B,...`, `counters N`,
/// `cycle N` and `interval MS` lines, `#` comments, blank lines.
/// The error names the line and what is wrong. `source` names the file in messages.
Result<FunctionConfig> parse_function_config(const std::string& text, const std::string& source);
/// Every event to count, in order (`events` first, then each `eventset`'s), and its set: -1 for an
/// event counted in every call (software events of `events`, which need no hardware counter), else
/// the index of the set it cycles in. `events`' hardware events fill sets of `counters` each, after
/// the `eventset`s. `hardware(name)` says whether an event needs a PMU counter. Pure.
struct EventPlacement {
  std::string name;
  int set = -1;
};
std::vector<EventPlacement> place_events(const FunctionConfig& config, const std::function<bool(const std::string&)>& hardware);

/// Reads and parses the file at `path`.
Result<FunctionConfig> read_function_config(const std::string& path);

/// `whatif report --counters`: per function (all threads and processes summed) calls, inclusive and
/// exclusive time per call and each event per call; then the same per thread.
std::string render_function_counters(const analysis::Profile& profile);

}  // namespace whatif::counters
