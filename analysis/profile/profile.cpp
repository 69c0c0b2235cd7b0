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

/// The program was idle through the experiment: no progress point visited, and under a tenth of a
/// CPU of its time (or, where the profile lacks `cpu_ns`, no sample of its code in scope or not),
/// so it measured no line at any speedup. A server's idle tail after its load, one experiment in
/// one cell, stretched that cell's period: +72.5% [+49.6, +95.3] on top of memcached's report for a
/// line seen in 5 experiments.
bool idle_experiment(const Experiment& experiment, double unscoped_samples) {
  double visits = 0;
  for (const PointObservation& p : experiment.points) visits += p.delta + p.arrivals;
  if (experiment.cpu_ns >= 0 && experiment.duration_ns > 0)
    return format::idle_experiment(visits, experiment.cpu_ns, experiment.duration_ns);
  return visits == 0 && experiment.total_samples == 0 && unscoped_samples == 0;
}

std::size_t current_process(const Profile& profile) { return profile.headers.empty() ? 0 : profile.headers.size() - 1; }

/// The points an experiment record saw visited, kept or not: Profile::activity.
void record_activity(const json& record, Profile& profile) {
  ExperimentActivity activity;
  activity.process = current_process(profile);
  if (auto points = record.find("points"); points != record.end() && points->is_array()) {
    for (const json& point : *points) {
      if (!point.is_object()) continue;
      std::string kind = string_or(point, "kind", "throughput");
      if (kind != "throughput" && kind != "latency") continue;
      activity.visits.emplace_back(string_or(point, "name"),
                                   number_or(point, kind == "latency" ? "arrivals" : "delta", 0));
    }
  }
  profile.activity.push_back(std::move(activity));
}

void read_whatif_experiment(const json& record, Profile& profile) {
  record_activity(record, profile);
  // The runtime set it aside: it could not measure it faithfully (experiment::SampleCoverage, RingLosses, ProfilerLoad).
  if (auto aside = record.find("set_aside"); aside != record.end() && aside->is_boolean() && aside->get<bool>()) {
    ++profile.set_aside;
    return;
  }
  Experiment experiment;
  experiment.record = static_cast<long>(profile.activity.size()) - 1;
  experiment.id = static_cast<long>(number_or(record, "id", -1));
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
  experiment.delay_ns = delay;
  experiment.paused_ns = number_or(record, "paused_ns", -1);
  experiment.cpu_ns = number_or(record, "cpu_ns", -1);
  experiment.spin_wait_ns = number_or(record, "spin_wait_ns", -1);
  experiment.cpus = static_cast<int>(number_or(record, "cpus", -1));
  experiment.sample_scale = number_or(record, "sample_scale", 1);
  experiment.total_samples = number_or(record, "total_samples", -1);
  experiment.written_effective_duration_ns = number_or(record, "effective_duration_ns", -1);
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
        observation.in_flight_end = number_or(point, "in_flight_end", -1);
        observation.in_flight_real_avg = number_or(point, "in_flight_avg", -1);
      } else if (kind == "throughput") {
        observation.delta = number_or(point, "delta", 0);
      } else {
        continue;  // a point kind from a later minor revision: skip it
      }
      experiment.points.push_back(std::move(observation));
    }
  }
  if (idle_experiment(experiment, number_or(record, "unscoped_samples", 0))) {
    ++profile.idle;
    return;
  }
  profile.experiments.push_back(std::move(experiment));
}

/// The entry of `records` for this process and object, replaced by a newer record (counts are
/// cumulative: the last one wins).
template <typename Records>
typename Records::value_type& entry_for(Records& records, const Profile& profile, const json& record) {
  std::size_t process = current_process(profile);
  std::string path = string_or(record, "path"), build_id = string_or(record, "build_id");
  for (auto& entry : records) {
    if (entry.process == process && entry.path == path && entry.build_id == build_id) {
      entry = {};
      entry.process = process, entry.path = path, entry.build_id = build_id;
      return entry;
    }
  }
  records.emplace_back();
  records.back().process = process, records.back().path = path, records.back().build_id = build_id;
  return records.back();
}

bool unsigned_at(const json& array, std::size_t i, uint64_t& out) {
  if (i >= array.size() || !array[i].is_number()) return false;
  double value = array[i].get<double>();
  if (value < 0) return false;
  out = array[i].is_number_unsigned() ? array[i].get<uint64_t>() : static_cast<uint64_t>(value);
  return true;
}

void read_instructions(const json& record, Profile& profile) {
  auto counts = record.find(format::record::instructions::counts);
  if (counts == record.end() || !counts->is_array()) return;
  InstructionSamples& entry = entry_for(profile.instructions, profile, record);
  for (const json& pair : *counts) {
    uint64_t address = 0;
    if (pair.is_array() && pair.size() == 2 && unsigned_at(pair, 0, address) && pair[1].is_number())
      entry.counts[address] += pair[1].get<double>();
  }
}

void read_branches(const json& record, Profile& profile) {
  BranchSamples& entry = entry_for(profile.branches, profile, record);
  if (auto edges = record.find("edges"); edges != record.end() && edges->is_array()) {
    for (const json& edge : *edges) {
      BranchSamples::Edge e;
      if (edge.is_array() && edge.size() == 3 && unsigned_at(edge, 0, e.from) && unsigned_at(edge, 1, e.to) && edge[2].is_number()) {
        e.count = edge[2].get<double>();
        entry.edges.push_back(e);
      }
    }
  }
  if (auto ranges = record.find("ranges"); ranges != record.end() && ranges->is_array()) {
    for (const json& range : *ranges) {
      BranchSamples::Range r;
      if (range.is_array() && range.size() == 3 && unsigned_at(range, 0, r.start) && unsigned_at(range, 1, r.end) && range[2].is_number()) {
        r.count = range[2].get<double>();
        entry.ranges.push_back(r);
      }
    }
  }
}

void read_function_counters(const json& record, Profile& profile) {
  namespace f = format::record::counters;
  FunctionCounters entry;
  entry.process = current_process(profile);
  entry.tid = static_cast<long>(number_or(record, f::tid, 0));
  entry.function = string_or(record, f::function);
  double calls = number_or(record, f::calls, 0);
  entry.calls = calls > 0 ? static_cast<uint64_t>(calls) : 0;
  entry.inclusive_ns = number_or(record, f::inclusive_ns, 0);
  entry.exclusive_ns = number_or(record, f::exclusive_ns, 0);
  if (auto events = record.find(f::events); events != record.end() && events->is_object()) {
    for (auto& [name, pair] : events->items()) {
      if (!pair.is_array() || pair.size() < 2 || !pair[0].is_number() || !pair[1].is_number()) continue;
      // A third number where the event counted in some calls only (event sets cycled by call count,
      // or a reload added or dropped it): the calls in which it counted.
      double measured = pair.size() >= 3 && pair[2].is_number() ? pair[2].get<double>() : -1;
      entry.events.push_back({name, pair[0].get<double>(), pair[1].get<double>(), measured});
    }
  }
  for (FunctionCounters& existing : profile.function_counters) {
    if (existing.process == entry.process && existing.tid == entry.tid && existing.function == entry.function) {
      existing = std::move(entry);  // cumulative: the last record wins
      return;
    }
  }
  profile.function_counters.push_back(std::move(entry));
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
    profile.runtimes.push_back({profile.runtime_ns, number_or(record, "experiments", -1),
                                static_cast<long>(number_or(record, "exit_status", -1))});
  } else if (type == "object") {
    auto in_scope = record.find("in_scope");
    profile.objects.push_back({string_or(record, "path"), in_scope != record.end() && in_scope->is_boolean() && in_scope->get<bool>(),
                               string_or(record, "build_id"), number_or(record, "bias", 0)});
  } else if (type == format::record::instructions::kName) {
    read_instructions(record, profile);
  } else if (type == format::record::counters::kName) {
    read_function_counters(record, profile);
  } else if (type == "branches") {
    read_branches(record, profile);
  } else if (type == "warning") {
    profile.warnings.push_back(string_or(record, "message"));
  } else if (type == "source") {
    SourceSnippet snippet;
    snippet.file = string_or(record, "file");
    snippet.first_line = static_cast<long>(number_or(record, "first_line", 1));
    if (auto lines = record.find("lines"); lines != record.end() && lines->is_array())
      for (const json& line : *lines) snippet.lines.push_back(line.is_string() ? line.get<std::string>() : "");
    profile.sources.push_back(std::move(snippet));
  } else if (type == format::record::branches::kName) {
    profile.has_lbr = true;
  } else if (type == "stalls") {
    profile.has_stalls = true;
  } else if (type == format::record::clock::kName) {
    profile.measured_mhz = number_or(record, format::record::clock::measured_mhz, -1);
  }
  // header handled by the caller; unknown types carry nothing the analysis uses.
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
  Header process;
  process.pid = static_cast<long>(number_or(header, "pid", 0));
  if (auto command = header.find("command"); command != header.end() && command->is_array())
    for (const json& argument : *command)
      if (argument.is_string()) process.command.push_back(argument.get<std::string>());
  process.sampler = string_or(header, "sampler");
  process.sampling_period_ns = number_or(header, "sampling_period_ns", -1);
  if (auto options = header.find("options"); options != header.end() && options->is_object()) {
    process.fixed_line = string_or(*options, "fixed_line");
    process.fixed_speedup = number_or(*options, "fixed_speedup", -1);
    auto end_to_end = options->find("end_to_end");
    process.end_to_end = end_to_end != options->end() && end_to_end->is_boolean() && end_to_end->get<bool>();
    process.seed = number_or(*options, "seed", -1);
    process.experiment_length_ns = number_or(*options, "experiment_length_ns", -1);
    if (auto points = options->find("progress_points"); points != options->end() && points->is_array())
      for (const json& point : *points)
        if (point.is_string()) process.progress_points.push_back(point.get<std::string>());
  }
  if (auto machine = header.find("machine"); machine != header.end() && machine->is_object()) {
    process.cpu_model = string_or(*machine, "cpu_model");
    process.cpu_mhz = number_or(*machine, "cpu_mhz", -1);
  }
  // The first process's command is the profiled program; a second header (--append, an exec'd
  // program) must not extend it.
  if (profile.headers.empty()) profile.command = process.command;
  profile.sampler = process.sampler;
  profile.fixed_line = !process.fixed_line.empty();
  profile.headers.push_back(std::move(process));
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

/// Reads a profile line by line: the first non-blank line decides the format, every line (the first
/// included) is a record. Shared by parse_profile (a whole text) and ProfileFollower (a growing file).
class LineParser {
 public:
  enum class Status { read, invalid, rejected };

  explicit LineParser(const std::string& name) : name_(name) { profile_.path = name; }

  /// Parses line `index` (0-based, for messages); `complete` tells whether it ended with a newline.
  /// `invalid`: this record does not parse (error()); `rejected`: the file is no profile this
  /// reader accepts, and every later line is rejected too.
  Status add(std::string_view line, long index, bool complete) {
    if (rejected_) return Status::rejected;
    if (blank(line)) return Status::read;
    if (!started_) {
      if (auto detected = detect(line, index); !detected) {
        rejected_ = true;
        error_ = detected.error();
        return Status::rejected;
      }
      started_ = true;
      first_ = index;
    }
    if (profile_.format == ProfileFormat::coz_text) {
      CozRecord coz;
      if (!parse_coz_text(line, coz)) return invalid(fmt::format("{}:{}: invalid Coz record", name_, index + 1));
      if (!complete) return invalid(fmt::format("{}:{}: incomplete Coz record", name_, index + 1));  // Coz ends every record with a newline
      profile_.record_types.push_back(coz.type);
      read_coz_record(coz, profile_, coz_state_);
      return Status::read;
    }
    json record;
    try {
      record = json::parse(line);
    } catch (const json::exception& error) {
      return invalid(fmt::format("{}:{}: invalid profile record: {}", name_, index + 1, error.what()));
    }
    if (!record.is_object())
      return invalid(fmt::format("{}:{}: invalid profile record: not a JSON object", name_, index + 1));
    if (profile_.format == ProfileFormat::whatif) {
      std::string type = string_or(record, format::kTypeField);
      profile_.record_types.push_back(type);
      if (index != first_ && type == format::record::header::kName) {
        // A second process (fork/exec, --append) appended its own header: it must match too.
        if (auto checked = check_header(record, name_, profile_); !checked) {
          rejected_ = true;
          error_ = checked.error();
          return Status::rejected;
        }
        return Status::read;
      }
      read_whatif_record(record, profile_);
    } else {
      CozRecord coz;
      coz_from_json(record, coz);
      profile_.record_types.push_back(coz.type);
      read_coz_record(coz, profile_, coz_state_);
    }
    return Status::read;
  }

  bool rejected() const { return rejected_; }
  const std::string& error() const { return error_; }
  Profile& profile() { return profile_; }
  /// The profile with the notes only the whole file can tell.
  Profile finish() {
    add_coz_notes(coz_state_, profile_);
    if (profile_.set_aside > 0)
      profile_.notes.push_back(fmt::format(
          "set aside {} experiment(s) that measured a disturbed program: their samples covered far less of its "
          "CPU time than the run's others (samples lost, the machine stalled, or whatif's own code took the "
          "time), or whatif's profiler thread took a CPU from it",
          profile_.set_aside));
    if (profile_.idle > 0)
      profile_.notes.push_back(fmt::format(
          "left out {} experiment(s) through which the program was idle (no sample of its code, no progress "
          "point visited): they measured no line",
          profile_.idle));
    return std::move(profile_);
  }
  void note_truncated(long index) {
    profile_.truncated = true;
    profile_.notes.push_back(fmt::format("ignored an incomplete last line (line {})", index + 1));
  }

 private:
  Status invalid(std::string message) {
    error_ = std::move(message);
    return Status::invalid;
  }

  /// Decides the format from the first non-blank line (and checks a whatif header).
  Result<void> detect(std::string_view head, long index) {
    size_t lead = head.find_first_not_of(" \t");
    if (lead == std::string_view::npos || head[lead] != '{') {
      CozRecord record;
      if (!parse_coz_text(head, record) || !known_coz_type(record.type)) {
        return Error{fmt::format("{}: not a profile: line {} is neither JSON nor a record of Coz's text "
                                 "format (startup, experiment, throughput-point, ...)",
                                 name_, index + 1)};
      }
      profile_.format = ProfileFormat::coz_text;
      return {};
    }
    json header;
    try {
      header = json::parse(head);
    } catch (const json::exception&) {
      return Error{fmt::format("{}: not a profile: line {} is not valid JSON", name_, index + 1)};
    }
    std::string type = string_or(header, format::kTypeField);
    if (type == format::record::header::kName) {
      profile_.format = ProfileFormat::whatif;
      return check_header(header, name_, profile_);
    }
    if (known_coz_type(type) || type == "throughput_point" || type == "latency_point") {
      profile_.format = ProfileFormat::coz_json;
      return {};
    }
    if (header.contains("format") || header.contains("version")) {
      profile_.format = ProfileFormat::whatif;
      return check_header(header, name_, profile_);
    }
    return Error{fmt::format("{}: not a profile: the first record has type '{}', expected a whatif "
                             "'header' or a Coz record",
                             name_, type)};
  }

  std::string name_;
  Profile profile_;
  CozState coz_state_;
  bool started_ = false;
  bool rejected_ = false;
  long first_ = 0;
  std::string error_;
};

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
  // The last line may be cut short by a crash: it is ignored when it does not parse.
  LineParser parser(name);
  for (long i = 0; i <= last; ++i) {
    switch (parser.add(lines[i], i, i != last || complete_last)) {
      case LineParser::Status::read: break;
      case LineParser::Status::rejected: return Error{parser.error()};
      case LineParser::Status::invalid:
        if (i != last) return Error{parser.error()};
        parser.note_truncated(i);
        break;
    }
  }
  return parser.finish();
}

struct ProfileFollower::State {
  explicit State(const std::string& path) : parser(path) {}
  LineParser parser;
  long line = 0;
  int skipped = 0;
};

ProfileFollower::ProfileFollower(std::string path) : path_(std::move(path)), state_(std::make_unique<State>(path_)) {}
ProfileFollower::~ProfileFollower() = default;

void ProfileFollower::poll() {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;
  in.seekg(offset_);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline yet: the line is still being written, read it next time
    offset_ = static_cast<long long>(in.tellg());
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (state_->parser.add(line, state_->line++, true) == LineParser::Status::invalid) {
      state_->parser.profile().notes.push_back(state_->parser.error());
    }
  }
}

const Profile& ProfileFollower::profile() const { return state_->parser.profile(); }
const std::string& ProfileFollower::error() const {
  static const std::string none;
  return state_->parser.rejected() ? state_->parser.error() : none;
}

std::vector<InstructionSamples> merged_instructions(const Profile& profile) {
  std::vector<InstructionSamples> merged;
  for (const InstructionSamples& record : profile.instructions) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](const InstructionSamples& m) {
      return m.path == record.path && m.build_id == record.build_id;
    });
    if (it == merged.end()) {
      merged.push_back(record);
      merged.back().process = 0;
      continue;
    }
    for (const auto& [address, count] : record.counts) it->counts[address] += count;
  }
  return merged;
}

std::vector<BranchSamples> merged_branches(const Profile& profile) {
  std::vector<BranchSamples> merged;
  for (const BranchSamples& record : profile.branches) {
    auto it = std::find_if(merged.begin(), merged.end(), [&](const BranchSamples& m) {
      return m.path == record.path && m.build_id == record.build_id;
    });
    if (it == merged.end()) {
      merged.push_back(record);
      merged.back().process = 0;
      continue;
    }
    it->edges.insert(it->edges.end(), record.edges.begin(), record.edges.end());
    it->ranges.insert(it->ranges.end(), record.ranges.begin(), record.ranges.end());
  }
  return merged;
}

Result<Profile> read_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot open profile: {}", path, std::strerror(errno))};
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_profile(buffer.str(), path);
}

// ---- Records the launcher appends ---------------------------------------------------------------

std::string warning_record(const std::string& message) {
  namespace warning = format::record::warning;
  json record = {{format::kTypeField, warning::kName}, {warning::message, message}};
  return record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string source_record(const SourceSnippet& snippet) {
  namespace source = format::record::source;
  json record = {{format::kTypeField, source::kName}, {source::file, snippet.file},
                 {source::first_line, snippet.first_line}, {source::lines, snippet.lines}};
  return record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string clock_record(double measured_mhz, const std::string& method) {
  namespace clk = format::record::clock;
  json record = {{format::kTypeField, clk::kName}, {clk::measured_mhz, measured_mhz}, {clk::method, method}};
  return record.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace whatif::analysis
