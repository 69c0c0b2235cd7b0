// `whatif run --counters CONFIG`: the configuration file's parser (functions and events to count,
// docs/counters.md) and `whatif report --counters`' tables. Launcher process, one thread.
#pragma once
#include <string>
#include <vector>

#include "analysis/profile/profile.h"
#include "base/result.h"

namespace whatif::counters {

struct FunctionConfig {
  std::vector<std::string> functions;  ///< in file order, without duplicates
  std::vector<std::string> events;     ///< in file order, without duplicates
};

/// Parses CONFIG's text: `function NAME` and `events A,B,...` lines, `#` comments, blank lines.
/// The error names the line and what is wrong. `source` names the file in messages.
Result<FunctionConfig> parse_function_config(const std::string& text, const std::string& source);
/// Reads and parses the file at `path`.
Result<FunctionConfig> read_function_config(const std::string& path);

/// `whatif report --counters`: per function (all threads and processes summed) calls, inclusive and
/// exclusive time per call and each event per call; then the same per thread.
std::string render_function_counters(const analysis::Profile& profile);

}  // namespace whatif::counters
