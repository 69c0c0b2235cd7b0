// Encodes `whatif run`'s options as the WHATIF_* environment libwhatif.so reads (format/environment.json).
// Launcher process, single-threaded; also compiled into the config round-trip unit test.
#include "run_options.h"

#include <cmath>

#include "whatif/environment.h"

namespace whatif::cli {

SplitCommandLine split_at_separator(const std::vector<std::string>& arguments) {
  SplitCommandLine out;
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] == "--" || arguments[i] == "---") {
      out.separated = true;
      out.separator = arguments[i];
      out.program.assign(arguments.begin() + static_cast<std::ptrdiff_t>(i) + 1, arguments.end());
      return out;
    }
    out.own.push_back(arguments[i]);
  }
  return out;
}

std::string encode_counter_event(const CounterEventOption& event) {
  return std::to_string(event.encoding.type) + "," + std::to_string(event.encoding.config) + "," +
         std::to_string(event.encoding.config1) + "," + std::to_string(event.encoding.config2) + "," +
         (event.encoding.exclude_kernel ? "1" : "0") + "," + (event.forced_unavailable ? "1" : "0") + "," + event.name;
}

Environment runtime_environment(const RunOptions& options, const std::string& absolute_output) {
  namespace env = whatif::environment;
  auto nanoseconds = [](double ms) { return std::to_string(std::llround(ms * 1e6)); };
  Environment out = {
      {env::kOutput, absolute_output},
      {env::kFormat, options.format},
      {env::kSamplingPeriodNs, nanoseconds(options.sampling_period_ms)},
      {env::kExperimentLengthNs, nanoseconds(options.experiment_length_ms)},
      {env::kCommand, env::join(options.command, env::kCommandSeparator)},
  };
  auto list = [&](const char* name, const std::vector<std::string>& items) {
    if (!items.empty()) out.emplace_back(name, env::join(items, env::kListSeparator));
  };
  list(env::kBinaryScope, options.binary_scope);
  list(env::kSourceScope, options.source_scope);
  list(env::kProgressPoints, options.progress_points);
  list(env::kSampledPoints, options.sampled_points);
  if (options.end_to_end) out.emplace_back(env::kEndToEnd, "1");
  if (!options.fixed_line.empty()) out.emplace_back(env::kFixedLine, options.fixed_line);
  if (options.fixed_speedup >= 0) out.emplace_back(env::kFixedSpeedup, std::to_string(options.fixed_speedup));
  if (options.seed >= 0) out.emplace_back(env::kSeed, std::to_string(options.seed));
  if (options.sampler == "timer" || options.sampler == "user" || options.sampler == "perf") out.emplace_back(env::kSampler, options.sampler);
  if (options.allocation == "samples") out.emplace_back(env::kAllocation, "samples");
  if (options.follow_children) out.emplace_back(env::kFollowChildren, "1");
  if (options.no_instructions) out.emplace_back(env::kInstructions, "off");
  if (options.no_contention) out.emplace_back(env::kContention, "off");
  if (options.pause == "sleep") out.emplace_back(env::kPause, "sleep");
  if (options.lbr) {
    out.emplace_back(env::kLbr, "1");
    out.emplace_back(env::kLbrDepth, std::to_string(options.lbr_depth));
    out.emplace_back(env::kLbrEvery, std::to_string(options.lbr_every));
  }
  if (!options.counter_functions.empty()) {
    out.emplace_back(env::kCounterFunctions, env::join(options.counter_functions, env::kCommandSeparator));
    std::vector<std::string> events;
    for (const CounterEventOption& event : options.counter_events) events.push_back(encode_counter_event(event));
    if (!events.empty()) out.emplace_back(env::kCounterEvents, env::join(events, env::kCommandSeparator));
    bool cycled = false;
    std::vector<std::string> sets;
    for (const CounterEventOption& event : options.counter_events) {
      sets.push_back(event.set < 0 ? "*" : std::to_string(event.set));
      cycled = cycled || event.set >= 0;
    }
    if (cycled) {
      out.emplace_back(env::kCounterSets, env::join(sets, env::kListSeparator));
      out.emplace_back(env::kCounterCycle, std::to_string(options.counter_cycle));
    }
    out.emplace_back(env::kCounterIntervalMs, std::to_string(options.counter_interval_ms));
    std::vector<std::string> interval;
    for (const CounterEventOption& event : options.interval_events) interval.push_back(encode_counter_event(event));
    if (!interval.empty()) out.emplace_back(env::kIntervalEvents, env::join(interval, env::kCommandSeparator));
  }
  return out;
}

}  // namespace whatif::cli
