// What `whatif run` was asked for (its command line) and how it reaches libwhatif.so: the WHATIF_*
// environment of format/environment.json. Launcher process, single-threaded.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "os/perf_counter.h"

namespace whatif::cli {

/// An event `--counters` counts, resolved by the launcher (libpfm4) for the runtime.
struct CounterEventOption {
  std::string name;
  os::EventEncoding encoding;
  bool forced_unavailable = false;  ///< WHATIF_UNAVAILABLE_EVENTS names it
  int set = -1;                     ///< its event set (cycled by call count); -1: counted in every call
};

struct RunOptions {
  std::vector<std::string> binary_scope;
  std::vector<std::string> source_scope;
  std::vector<std::string> progress_points;
  std::vector<std::string> sampled_points;
  std::string output;
  bool end_to_end = false;
  std::string fixed_line;
  int fixed_speedup = -1;
  double sampling_period_ms = 1.0;
  double experiment_length_ms = 100.0;
  long long seed = -1;
  std::string format = "whatif";
  std::string sampler = "auto";
  std::string allocation = "adaptive";
  bool append = false;
  bool follow_children = false;
  bool no_instructions = false;
  bool no_contention = false;
  std::string pause = "spin";  ///< --pause: spin or sleep
  bool quiet = false;
  bool lbr = false;
  int lbr_depth = 16;
  int lbr_every = 10;
  std::string counters;  ///< --counters CONFIG (the file; parsed into the two fields below)
  std::vector<std::string> counter_functions;
  std::vector<CounterEventOption> counter_events;
  uint32_t counter_cycle = 10;        ///< `cycle N`
  uint32_t counter_interval_ms = 100;  ///< `interval MS`
  std::vector<CounterEventOption> interval_events;  ///< task-clock, instructions, cycles per interval
  std::vector<std::string> command;
};

/// One WHATIF_COUNTER_EVENTS item: TYPE,CONFIG,CONFIG1,CONFIG2,EXCLUDE_KERNEL,FORCED,NAME.
std::string encode_counter_event(const CounterEventOption& event);

using Environment = std::vector<std::pair<std::string, std::string>>;

/// A command line cut at its first `---` or `--`: what comes before belongs to whatif, everything
/// after to the profiled program, verbatim and in order (its own `-p`, `--`, ... included).
struct SplitCommandLine {
  std::vector<std::string> own;
  std::vector<std::string> program;
  bool separated = false;  ///< a separator was found (program may still be empty)
  std::string separator;   ///< the separator as typed
};
SplitCommandLine split_at_separator(const std::vector<std::string>& arguments);

/// The launcher->runtime variables for `options`, writing to `absolute_output` (names and encodings
/// from whatif/environment.h; the runtime's config::Config::from_environment decodes them). Not
/// LD_PRELOAD or WHATIF_LOG, which depend on the launcher's own environment.
Environment runtime_environment(const RunOptions& options, const std::string& absolute_output);

}  // namespace whatif::cli
