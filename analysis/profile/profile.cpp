// Readers for the three profile formats the analysis accepts: whatif JSON Lines (v1, checked against
// the generated whatif/profile_format.h), Coz's tab-separated text and Coz's JSON Lines variant.
#include "analysis/profile/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "whatif/profile_format.h"

namespace whatif::analysis {
namespace {

using nlohmann::json;

double number_or(const json& object, const char* key, double fallback) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return fallback;
  return it->get<double>();
}

std::string string_or(const json& object, const char* key, std::string fallback = {}) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return fallback;
  return it->get<std::string>();
}

/// The lines of `text`; `complete_last` tells whether the final line ended with a newline.
std::vector<std::string_view> split_lines(std::string_view text, bool& complete_last) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.push_back(text.substr(start));
      complete_last = false;
      return lines;
    }
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  complete_last = true;
  return lines;
}

bool blank(std::string_view line) {
  return line.find_first_not_of(" \t\r") == std::string_view::npos;
}

/// Index of the last non-blank line, or -1.
long last_content_line(const std::vector<std::string_view>& lines) {
  for (long i = static_cast<long>(lines.size()) - 1; i >= 0; --i)
    if (!blank(lines[i])) return i;
  return -1;
}

// ---- whatif JSON Lines ------------------------------------------------------------------------

void read_whatif_experiment(const json& record, Profile& profile) {
  Experiment experiment;
  experiment.selected = string_or(record, "selected");
  experiment.speedup = number_or(record, "speedup", 0);
  double duration = number_or(record, "duration_ns", -1);
  // duration - delay with its sign: the field is clamped at zero, but an experiment whose line ran
  // all the time at a 100% speedup is worth about zero, a little either side, and must add as such.
  double delay = number_or(record, "delay_ns", -1);
  experiment.effective_duration_ns = duration >= 0 && delay >= 0 ? duration - delay
                                                                 : number_or(record, "effective_duration_ns", duration);
  experiment.duration_ns = duration >= 0 ? duration : experiment.effective_duration_ns;
  experiment.selected_samples = number_or(record, "selected_samples", -1);
  experiment.line_samples_total = number_or(record, "line_samples_total", -1);
  experiment.elapsed_ns = number_or(record, "elapsed_ns", -1);
  if (auto points = record.find("points"); points != record.end() && points->is_array()) {
    for (const json& point : *points) {
      if (!point.is_object()) continue;
      PointObservation observation;
      observation.name = string_or(point, "name");
      std::string kind = string_or(point, "kind", "throughput");
      if (kind == "latency") {
        observation.kind = PointKind::latency;
        observation.arrivals = number_or(point, "arrivals", 0);
        observation.departures = number_or(point, "departures", 0);
        // Over effective time where recorded (the in-flight count of the sped-up program); older
        // profiles have only the real-time average.
        observation.in_flight_avg = number_or(point, "in_flight_effective_avg", number_or(point, "in_flight_avg", 0));
      } else if (kind == "throughput") {
        observation.delta = number_or(point, "delta", 0);
      } else {
        continue;  // a point kind from a later minor revision: skip it
      }
      experiment.points.push_back(std::move(observation));
    }
  }
  profile.experiments.push_back(std::move(experiment));
}

void read_whatif_record(const json& record, Profile& profile) {
  std::string type = string_or(record, "type");
  if (type == "experiment") {
    read_whatif_experiment(record, profile);
  } else if (type == "samples") {
    profile.sample_counts.clear();
    if (auto counts = record.find("counts"); counts != record.end() && counts->is_object())
      for (auto& [line, count] : counts->items())
        if (count.is_number()) profile.sample_counts[line] = count.get<double>();
    profile.samples_elapsed_ns = number_or(record, "elapsed_ns", -1);
  } else if (type == "runtime") {
    profile.runtime_ns = number_or(record, "elapsed_ns", -1);
  } else if (type == "warning") {
    profile.warnings.push_back(string_or(record, "message"));
  } else if (type == "source") {
    SourceSnippet snippet;
    snippet.file = string_or(record, "file");
    snippet.first_line = static_cast<long>(number_or(record, "first_line", 1));
    if (auto lines = record.find("lines"); lines != record.end() && lines->is_array())
      for (const json& line : *lines) snippet.lines.push_back(line.is_string() ? line.get<std::string>() : "");
    profile.sources.push_back(std::move(snippet));
  } else if (type == "lbr") {
    profile.has_lbr = true;
  } else if (type == "stalls") {
    profile.has_stalls = true;
  }
  // header handled by the caller; object and unknown types carry nothing the analysis uses.
}

Result<void> check_header(const json& header, const std::string& name, Profile& profile) {
  std::string format = string_or(header, "format", "?");
  auto version_it = header.find("version");
  std::string version = version_it == header.end() ? "none" : version_it->dump();
  if (format != format::kProfileFormat || version != std::to_string(format::kProfileVersion)) {
    return Error{fmt::format(
        "{}: unsupported profile: format '{}' version {}; this whatif reads format '{}' version {}. "
        "Use the whatif release that wrote it, or re-run the profile with this one.",
        name, format, version, format::kProfileFormat, format::kProfileVersion)};
  }
  if (auto command = header.find("command"); command != header.end() && command->is_array())
    for (const json& argument : *command)
      if (argument.is_string()) profile.command.push_back(argument.get<std::string>());
  profile.sampler = string_or(header, "sampler");
  if (auto options = header.find("options"); options != header.end() && options->is_object()) {
    auto fixed = options->find("fixed_line");
    profile.fixed_line = fixed != options->end() && fixed->is_string() && !fixed->get<std::string>().empty();
  }
  return {};
}

// ---- Coz (text and JSON Lines) ----------------------------------------------------------------

/// A Coz record as key/value strings, from either syntax.
struct CozRecord {
  std::string type;
  std::map<std::string, std::string, std::less<>> fields;
  double number(std::string_view key, double fallback) const {
    auto it = fields.find(key);
    if (it == fields.end()) return fallback;
    try {
      return std::stod(it->second);
    } catch (const std::exception&) {
      return fallback;
    }
  }
  /// A number Coz prints as an unsigned 64-bit integer that may have wrapped below zero: values of
  /// 2^63 and above are read as negative, value - 2^64 in double arithmetic like the viewer's (whose
  /// JSON numbers are doubles), and at most -1: a double cannot tell 2^64 - 2 from 2^64.
  double signed_number(std::string_view key, double fallback) const {
    double value = number(key, fallback);
    constexpr double kTwo63 = 9223372036854775808.0, kTwo64 = 18446744073709551616.0;
    return value >= kTwo63 ? std::min(value - kTwo64, -1.0) : value;
  }
  std::string text(std::string_view key) const {
    auto it = fields.find(key);
    return it == fields.end() ? std::string() : it->second;
  }
};

bool parse_coz_text(std::string_view line, CozRecord& record) {
  size_t tab = line.find('\t');
  record.type = std::string(line.substr(0, tab));
  if (record.type.empty() || record.type.find('=') != std::string::npos ||
      record.type.find(' ') != std::string::npos)
    return false;
  while (tab != std::string_view::npos) {
    size_t start = tab + 1;
    tab = line.find('\t', start);
    std::string_view field = line.substr(start, tab == std::string_view::npos ? tab : tab - start);
    size_t equals = field.find('=');
    if (equals == std::string_view::npos) continue;
    std::string key(field.substr(0, equals));
    for (char& c : key)
      if (c == '-') c = '_';  // selected-samples and selected_samples alike
    record.fields[key] = std::string(field.substr(equals + 1));
  }
  return true;
}

void coz_from_json(const json& object, CozRecord& record) {
  record.type = string_or(object, "type");
  for (auto& [key, value] : object.items()) {
    std::string normalised = key;
    for (char& c : normalised)
      if (c == '-') c = '_';
    if (value.is_string()) record.fields[normalised] = value.get<std::string>();
    else if (value.is_number()) record.fields[normalised] = value.dump();
  }
  for (char& c : record.type)
    if (c == '_') c = '-';  // throughput_point -> throughput-point
}

/// What the Coz reader carries from record to record, and counts for its notes.
struct CozState {
  bool dropping = false;     ///< the current experiment was dropped: skip its point records
  int dropped = 0;           ///< experiments without a positive duration
  int unusable_latency = 0;  ///< latency observations with a negative (wrapped) difference
};

void read_coz_record(const CozRecord& record, Profile& profile, CozState& state) {
  const std::string& type = record.type;
  if (type == "experiment") {
    Experiment experiment;
    experiment.selected = record.text("selected");
    experiment.speedup = record.number("speedup", 0);
    // Coz subtracts the delays already, and prints the result unsigned: it wraps when the inserted
    // delay exceeds the elapsed time (at high speedups). Such an experiment measured nothing usable.
    experiment.effective_duration_ns = record.signed_number("duration", 0);
    experiment.duration_ns = experiment.effective_duration_ns;  // the only duration Coz records
    experiment.selected_samples = record.number("selected_samples", -1);
    state.dropping = !(experiment.effective_duration_ns > 0);
    if (state.dropping) {
      ++state.dropped;
      return;
    }
    profile.experiments.push_back(std::move(experiment));
  } else if (type == "throughput-point" || type == "progress-point") {
    if (profile.experiments.empty() || state.dropping) return;
    PointObservation observation;
    observation.name = record.text("name");
    observation.delta = record.number("delta", 0);
    profile.experiments.back().points.push_back(std::move(observation));
  } else if (type == "latency-point") {
    if (profile.experiments.empty() || state.dropping) return;
    PointObservation observation;
    observation.name = record.text("name");
    observation.kind = PointKind::latency;
    observation.arrivals = record.number("arrivals", 0);
    observation.departures = record.number("departures", 0);
    observation.in_flight_avg = record.signed_number("difference", 0);
    if (observation.in_flight_avg < 0) {  // a wrapped count: the in-flight value is unusable
      ++state.unusable_latency;
      return;
    }
    profile.experiments.back().points.push_back(std::move(observation));
  } else if (type == "samples") {
    std::string location = record.text("location");
    if (!location.empty()) profile.sample_counts[location] = record.number("count", 0);
    profile.samples_elapsed_ns = profile.runtime_ns;
  } else if (type == "runtime") {
    profile.runtime_ns = record.number("time", -1);
  }
}

void add_coz_notes(const CozState& state, Profile& profile) {
  if (state.dropped > 0)
    profile.notes.push_back(fmt::format(
        "dropped {} experiment(s) without a positive duration: Coz prints the duration minus the inserted "
        "delay unsigned, and it wraps when the delay exceeds the elapsed time",
        state.dropped));
  if (state.unusable_latency > 0)
    profile.notes.push_back(fmt::format(
        "skipped {} latency observation(s) with a negative (wrapped) in-flight count, Coz's `difference`: "
        "unusable",
        state.unusable_latency));
}

bool known_coz_type(const std::string& type) {
  return type == "startup" || type == "experiment" || type == "throughput-point" ||
         type == "progress-point" || type == "latency-point" || type == "samples" ||
         type == "runtime" || type == "shutdown";
}

}  // namespace

const char* format_name(ProfileFormat format) {
  switch (format) {
    case ProfileFormat::whatif: return "whatif";
    case ProfileFormat::coz_text: return "coz-text";
    case ProfileFormat::coz_json: return "coz-json";
  }
  return "?";
}

const char* kind_name(PointKind kind) {
  return kind == PointKind::latency ? "latency" : "throughput";
}

Result<Profile> parse_profile(std::string_view text, const std::string& name) {
  bool complete_last = true;
  std::vector<std::string_view> lines = split_lines(text, complete_last);
  long last = last_content_line(lines);
  if (last < 0) {
    return Error{fmt::format("{}: empty profile: it holds no records. The profiled program may have "
                             "exited before the profiler started; run it longer or check its output.",
                             name)};
  }
  long first = 0;
  while (blank(lines[first])) ++first;

  Profile profile;
  profile.path = name;
  std::string_view head = lines[first];
  size_t lead = head.find_first_not_of(" \t");
  bool is_json = lead != std::string_view::npos && head[lead] == '{';

  // The last line may be cut short by a crash: it is ignored when it does not parse.
  auto truncated = [&](long index) {
    profile.notes.push_back(fmt::format("ignored an incomplete last line (line {})", index + 1));
  };

  CozState coz_state;
  if (is_json) {
    json header;
    try {
      header = json::parse(head);
    } catch (const json::exception&) {
      return Error{fmt::format("{}: not a profile: line {} is not valid JSON", name, first + 1)};
    }
    std::string type = string_or(header, "type");
    if (type == "header") {
      profile.format = ProfileFormat::whatif;
      if (auto checked = check_header(header, name, profile); !checked) return Error{checked.error()};
    } else if (known_coz_type(type) || type == "throughput_point" || type == "latency_point") {
      profile.format = ProfileFormat::coz_json;
    } else if (header.contains("format") || header.contains("version")) {
      if (auto checked = check_header(header, name, profile); !checked) return Error{checked.error()};
    } else {
      return Error{fmt::format("{}: not a profile: the first record has type '{}', expected a whatif "
                               "'header' or a Coz record",
                               name, type)};
    }
    for (long i = first; i <= last; ++i) {
      if (blank(lines[i])) continue;
      json record;
      try {
        record = json::parse(lines[i]);
      } catch (const json::exception& error) {
        if (i == last) {
          truncated(i);
          break;
        }
        return Error{fmt::format("{}:{}: invalid profile record: {}", name, i + 1, error.what())};
      }
      if (!record.is_object()) {
        if (i == last) {
          truncated(i);
          break;
        }
        return Error{fmt::format("{}:{}: invalid profile record: not a JSON object", name, i + 1)};
      }
      if (profile.format == ProfileFormat::whatif) {
        if (i != first && string_or(record, "type") == "header") {
          // A second process (fork/exec) appended its own header: it must match too.
          if (auto checked = check_header(record, name, profile); !checked) return Error{checked.error()};
          continue;
        }
        read_whatif_record(record, profile);
      } else {
        CozRecord coz;
        coz_from_json(record, coz);
        read_coz_record(coz, profile, coz_state);
      }
    }
  } else {
    CozRecord record;
    if (!parse_coz_text(head, record) || !known_coz_type(record.type)) {
      return Error{fmt::format("{}: not a profile: line {} is neither JSON nor a record of Coz's text "
                               "format (startup, experiment, throughput-point, ...)",
                               name, first + 1)};
    }
    profile.format = ProfileFormat::coz_text;
    for (long i = first; i <= last; ++i) {
      if (blank(lines[i])) continue;
      CozRecord coz;
      if (!parse_coz_text(lines[i], coz)) {
        if (i == last) {
          truncated(i);
          break;
        }
        return Error{fmt::format("{}:{}: invalid Coz record", name, i + 1)};
      }
      if (i == last && !complete_last) {  // Coz ends every record with a newline
        truncated(i);
        break;
      }
      read_coz_record(coz, profile, coz_state);
    }
  }
  add_coz_notes(coz_state, profile);
  return profile;
}

Result<Profile> read_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot open profile: {}", path, std::strerror(errno))};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_profile(buffer.str(), path);
}

}  // namespace whatif::analysis
