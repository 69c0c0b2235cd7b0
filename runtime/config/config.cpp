// Reads WHATIF_* environment variables into a Config; runs once during runtime start-up.
#include "config/config.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace whatif::config {
namespace {

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::string current;
  for (char c : text) {
    if (c == separator) {
      if (!current.empty()) parts.push_back(current);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (!current.empty()) parts.push_back(current);
  return parts;
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
  if (const char* value = env("WHATIF_OUTPUT")) config.output = value;
  if (const char* value = env("WHATIF_FORMAT")) {
    std::string format = value;
    if (format == "coz") config.coz_format = true;
    else if (format != "whatif" && format != "jsonl") config.errors.push_back("unknown WHATIF_FORMAT '" + format + "': use whatif or coz");
  }
  if (const char* value = env("WHATIF_BINARY_SCOPE")) config.binary_scope = split(value, ';');
  if (const char* value = env("WHATIF_SOURCE_SCOPE")) config.source_scope = split(value, ';');
  auto parse_points = [&](const char* name, std::vector<LineSpec>& out) {
    if (const char* value = env(name)) {
      for (const std::string& part : split(value, ';')) {
        if (auto spec = parse_line_spec(part)) out.push_back(*spec);
        else config.errors.push_back("progress point '" + part + "' is not FILE:LINE");
      }
    }
  };
  parse_points("WHATIF_PROGRESS_POINTS", config.breakpoint_points);
  parse_points("WHATIF_SAMPLED_POINTS", config.sampled_points);
  config.end_to_end = env("WHATIF_END_TO_END") != nullptr && std::string(env("WHATIF_END_TO_END")) == "1";
  if (const char* value = env("WHATIF_FIXED_LINE")) {
    config.fixed_line = parse_line_spec(value);
    if (!config.fixed_line) config.errors.push_back(std::string("--fixed-line '") + value + "' is not FILE:LINE");
  }
  if (const char* value = env("WHATIF_FIXED_SPEEDUP")) {
    uint64_t percent = 0;
    if (parse_u64(value, percent) && percent <= 100) config.fixed_speedup_percent = static_cast<int>(percent);
    else config.errors.push_back(std::string("--fixed-speedup '") + value + "' must be 0 to 100");
  }
  if (const char* value = env("WHATIF_SAMPLING_PERIOD_NS")) {
    uint64_t period = 0;
    if (parse_u64(value, period) && period >= 100000) config.sampling_period_ns = period;
    else config.errors.push_back(std::string("sampling period '") + value + "' must be at least 100000 ns");
  }
  if (const char* value = env("WHATIF_EXPERIMENT_LENGTH_NS")) {
    uint64_t length = 0;
    if (parse_u64(value, length) && length >= 1000000) config.experiment_length_ns = length;
    else config.errors.push_back(std::string("experiment length '") + value + "' must be at least 1 ms");
  }
  if (const char* value = env("WHATIF_SEED")) config.seed_given = parse_u64(value, config.seed);
  if (const char* value = env("WHATIF_SAMPLER")) config.force_timer_sampler = std::string(value) == "timer";
  config.follow_children = env("WHATIF_FOLLOW_CHILDREN") != nullptr;
  if (const char* value = env("WHATIF_COMMAND")) config.command = split(value, '\x1f');
  return config;
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
  };
  return options.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace whatif::config
