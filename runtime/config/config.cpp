// Reads the WHATIF_* environment variables (whatif/environment.h, defined in format/environment.json)
// into a Config; runs once during runtime start-up.
#include "config/config.h"

#include <cstdlib>
#include <string_view>
#include <nlohmann/json.hpp>

#include "whatif/environment.h"

namespace whatif::config {
namespace {

namespace names = whatif::environment;

std::vector<std::string> split_list(const char* text) {
  return names::split(text, names::kListSeparator, /*keep_empty=*/false);
}


const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

bool parse_u64(const char* text, uint64_t& out) {
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0') return false;
  out = value;
  return true;
}

}  // namespace

std::optional<LineSpec> parse_line_spec(const std::string& text) {
  auto colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= text.size()) return std::nullopt;
  uint64_t line = 0;
  std::string number = text.substr(colon + 1);
  if (!parse_u64(number.c_str(), line) || line == 0 || line > UINT32_MAX) return std::nullopt;
  return LineSpec{text.substr(0, colon), static_cast<uint32_t>(line)};
}

Config Config::from_environment() {
  Config config;
  if (const char* value = env(names::kOutput)) config.output = value;
  if (const char* value = env(names::kFormat)) {
    std::string format = value;
    if (format == "coz") config.coz_format = true;
    else if (format != "whatif" && format != "jsonl") config.errors.push_back(std::string("unknown ") + names::kFormat + " '" + format + "': use whatif or coz");
  }
  if (const char* value = env(names::kBinaryScope)) config.binary_scope = split_list(value);
  if (const char* value = env(names::kSourceScope)) config.source_scope = split_list(value);
  auto parse_points = [&](const char* name, std::vector<LineSpec>& out) {
    if (const char* value = env(name)) {
      for (const std::string& part : split_list(value)) {
        if (auto spec = parse_line_spec(part)) out.push_back(*spec);
        else config.errors.push_back("progress point '" + part + "' is not FILE:LINE");
      }
    }
  };
  parse_points(names::kProgressPoints, config.breakpoint_points);
  parse_points(names::kSampledPoints, config.sampled_points);
  if (const char* value = env(names::kProgressPatch)) config.patch_points = std::string(value) != "off";
  config.end_to_end = env(names::kEndToEnd) != nullptr && std::string(env(names::kEndToEnd)) == "1";
  if (const char* value = env(names::kFixedLine)) {
    config.fixed_line = parse_line_spec(value);
    if (!config.fixed_line) config.errors.push_back(std::string("--fixed-line '") + value + "' is not FILE:LINE");
  }
  if (const char* value = env(names::kFixedSpeedup)) {
    uint64_t percent = 0;
    if (parse_u64(value, percent) && percent <= 100) config.fixed_speedup_percent = static_cast<int>(percent);
    else config.errors.push_back(std::string("--fixed-speedup '") + value + "' must be 0 to 100");
  }
  if (const char* value = env(names::kSamplingPeriodNs)) {
    uint64_t period = 0;
    if (parse_u64(value, period) && period >= 100000) config.sampling_period_ns = period;
    else config.errors.push_back(std::string("sampling period '") + value + "' must be at least 100000 ns");
  }
  if (const char* value = env(names::kFirstPeriodNs)) {
    uint64_t first = 0;
    if (parse_u64(value, first) && first >= 1 && first <= config.sampling_period_ns) config.first_period_ns = first;
    else config.errors.push_back(std::string(names::kFirstPeriodNs) + " '" + value + "' must be 1 to the sampling period in ns");
  }
  if (const char* value = env(names::kSwitchCostNs)) {
    uint64_t cost = 0;
    if (parse_u64(value, cost) && cost >= 1 && cost <= 1000000) config.switch_cost_ns = cost;
    else config.errors.push_back(std::string(names::kSwitchCostNs) + " '" + value + "' must be 1 to 1000000 ns");
  }
  if (const char* value = env(names::kExperimentLengthNs)) {
    uint64_t length = 0;
    if (parse_u64(value, length) && length >= 1000000) config.experiment_length_ns = length;
    else config.errors.push_back(std::string("experiment length '") + value + "' must be at least 1 ms");
  }
  if (const char* value = env(names::kSeed)) config.seed_given = parse_u64(value, config.seed);
  if (const char* value = env(names::kAllocation)) config.adaptive_allocation = std::string(value) != "samples";
  if (const char* value = env(names::kSampler)) {
    config.force_timer_sampler = std::string(value) == "timer";
    config.user_only_sampler = std::string(value) == "user";
    config.perf_only_sampler = std::string(value) == "perf";
  }
  config.follow_children = env(names::kFollowChildren) != nullptr;
  if (const char* value = env(names::kInstructions)) config.instruction_counts = std::string(value) != "off";
  if (const char* value = env(names::kContention)) config.contention = std::string(value) != "off";
  if (const char* value = env(names::kPeriodJitter)) config.period_jitter = std::string(value) != "off";
  if (const char* value = env(names::kSampleTrap)) config.sample_trap = std::string(value) != "off";
  if (const char* value = env(names::kPause)) config.spin_pauses = std::string(value) != "sleep";
  config.lbr = env(names::kLbr) != nullptr && std::string(env(names::kLbr)) == "1";
  if (const char* value = env(names::kLbrDepth)) {
    uint64_t depth = 0;
    if (parse_u64(value, depth) && depth >= 1 && depth <= 1024) config.lbr_depth = static_cast<uint32_t>(depth);
    else config.errors.push_back(std::string("--lbr-depth '") + value + "' must be 1 to 1024; using 16");
  }
  if (const char* value = env(names::kLbrEvery)) {
    uint64_t every = 0;
    if (parse_u64(value, every) && every >= 1 && every <= 1000000) config.lbr_every = static_cast<uint32_t>(every);
    else config.errors.push_back(std::string("--lbr-every '") + value + "' must be 1 to 1000000; using 10");
  }
  config.lbr_no_sigtrap = env(names::kLbrNoSigtrap) != nullptr;
  config.lbr_naive = env(names::kLbrNaive) != nullptr;
  if (const char* value = env(names::kLbrRegisters)) {
    uint64_t registers = 0;
    if (parse_u64(value, registers) && registers >= 1 && registers <= 4) config.lbr_registers = static_cast<uint32_t>(registers);
    else config.errors.push_back(std::string("WHATIF_LBR_REGISTERS '") + value + "' must be 1 to 4; using 4");
  }
  if (const char* value = env(names::kCounterFunctions)) {
    config.counter_functions = names::split(value, names::kCommandSeparator, /*keep_empty=*/false);
  }
  if (const char* value = env(names::kCounterEvents)) {
    for (const std::string& item : names::split(value, names::kCommandSeparator, /*keep_empty=*/false)) {
      if (auto event = parse_counter_event(item)) config.counter_events.push_back(*event);
      else config.errors.push_back("--counters: malformed event encoding '" + item + "' from the launcher");
    }
  }
  if (const char* value = env(names::kCounterSets)) {
    std::vector<std::string> sets = names::split(value, names::kListSeparator, /*keep_empty=*/false);
    for (std::size_t i = 0; i < sets.size() && i < config.counter_events.size(); ++i) {
      uint64_t set = 0;
      if (sets[i] == "*") config.counter_events[i].set = -1;
      else if (parse_u64(sets[i].c_str(), set) && set < 64) config.counter_events[i].set = static_cast<int>(set);
      else config.errors.push_back("--counters: malformed event set '" + sets[i] + "' from the launcher");
    }
  }
  if (const char* value = env(names::kCounterCycle)) {
    uint64_t cycle = 0;
    if (parse_u64(value, cycle) && cycle >= 1 && cycle <= 1000000000) config.counter_cycle = static_cast<uint32_t>(cycle);
    else config.errors.push_back(std::string("--counters cycle '") + value + "' must be 1 to 1000000000; using 10");
  }
  if (const char* value = env(names::kCounterIntervalMs)) {
    uint64_t ms = 0;
    if (parse_u64(value, ms) && ms <= 60000) config.counter_interval_ns = ms * 1000000ull;
    else config.errors.push_back(std::string("--counters interval '") + value + "' must be 0 to 60000 ms; using 100");
  }
  if (const char* value = env(names::kIntervalEvents)) {
    for (const std::string& item : names::split(value, names::kCommandSeparator, /*keep_empty=*/false)) {
      if (auto event = parse_counter_event(item)) config.interval_events.push_back(*event);
      else config.errors.push_back("--counters: malformed interval event encoding '" + item + "' from the launcher");
    }
  }
  if (const char* value = env(names::kRdpmc)) config.rdpmc = std::string_view(value) != "off";
  if (const char* value = env(names::kKallsyms); value != nullptr && *value != '\0') config.kallsyms = value;
  if (const char* value = env(names::kCountersLivePatch)) config.live_patch = std::string_view(value) != "off";
  // Empty arguments are kept: `prog "" x` is three words in the header, as the program saw them.
  if (const char* value = env(names::kCommand)) config.command = names::split(value, names::kCommandSeparator, /*keep_empty=*/true);
  return config;
}

std::optional<CounterEvent> parse_counter_event(const std::string& text) {
  CounterEvent event;
  uint64_t fields[6] = {};
  std::size_t start = 0;
  for (uint64_t& field : fields) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string::npos || !parse_u64(text.substr(start, comma - start).c_str(), field)) return std::nullopt;
    start = comma + 1;
  }
  if (fields[0] > UINT32_MAX || fields[4] > 1 || fields[5] > 1 || start >= text.size()) return std::nullopt;
  event.encoding.type = static_cast<uint32_t>(fields[0]);
  event.encoding.config = fields[1];
  event.encoding.config1 = fields[2];
  event.encoding.config2 = fields[3];
  event.encoding.exclude_kernel = fields[4] == 1;
  event.forced_unavailable = fields[5] == 1;
  event.name = text.substr(start);
  return event;
}

std::string Config::options_json() const {
  nlohmann::json points = nlohmann::json::array();
  for (const LineSpec& point : breakpoint_points) points.push_back(point.text());
  nlohmann::json sampled = nlohmann::json::array();
  for (const LineSpec& point : sampled_points) sampled.push_back(point.text());
  nlohmann::json options = {
      {"fixed_line", fixed_line ? nlohmann::json(fixed_line->text()) : nlohmann::json(nullptr)},
      {"fixed_speedup", fixed_speedup_percent ? nlohmann::json(*fixed_speedup_percent / 100.0) : nlohmann::json(nullptr)},
      {"end_to_end", end_to_end},
      {"seed", seed},
      {"experiment_length_ns", experiment_length_ns},
      {"progress_points", points},
      {"sampled_points", sampled},
      {"format", coz_format ? "coz" : "whatif"},
      {"instructions", instruction_counts},
      {"contention", contention},
      {"spin_pauses", spin_pauses},
      {"period_jitter", period_jitter},
      {"sample_trap", sample_trap},
      {"lbr", lbr},
      {"lbr_depth", lbr_depth},
      {"lbr_every", lbr_every},
      {"counter_functions", counter_functions},
  };
  return options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace whatif::config
