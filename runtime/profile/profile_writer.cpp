// Serialises profile records with nlohmann::json (ours) or Coz's text format and appends each with
// a single raw write syscall, so a crash loses at most the record being written. Profiler thread /
// exit path.
#include "profile/profile_writer.h"

#include <fcntl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <nlohmann/json.hpp>

#include "os/fd_guard.h"
#include "whatif/profile_format.h"
#include "os/os.h"
#include "whatif/profile_format.h"

namespace whatif::profile {
namespace {

std::string iso8601(uint64_t realtime_ns) {
  time_t seconds = static_cast<time_t>(realtime_ns / 1000000000ull);
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buffer[32];
  strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buffer;
}

/// The header's `machine` object. `cpu_model` and `cpu_mhz` (the nominal clock: the "@ N.NNGHz" of
/// the model name when it has one, else the first "cpu MHz" of /proc/cpuinfo) let the offline stall
/// analysis turn sampled time into cycles.
nlohmann::json machine(const utsname& system) {
  nlohmann::json out = {{"hostname", system.nodename}, {"kernel", system.release}, {"cpus", sysconf(_SC_NPROCESSORS_ONLN)}};
  std::string cpuinfo = os::read_text("/proc/cpuinfo", 16384);
  auto field = [&](const char* name) -> std::string {
    std::size_t at = cpuinfo.find(name);
    if (at == std::string::npos) return {};
    std::size_t colon = cpuinfo.find(':', at), end = cpuinfo.find('\n', at);
    if (colon == std::string::npos || colon > end) return {};
    std::size_t begin = cpuinfo.find_first_not_of(' ', colon + 1);
    return begin == std::string::npos || begin >= end ? std::string() : cpuinfo.substr(begin, end - begin);
  };
  std::string model = field("model name");
  double mhz = std::strtod(field("cpu MHz").c_str(), nullptr);
  if (std::size_t at = model.rfind('@'); at != std::string::npos) {
    char* end = nullptr;
    double ghz = std::strtod(model.c_str() + at + 1, &end);
    if (ghz > 0 && end != nullptr && std::strncmp(end, "GHz", 3) == 0) mhz = ghz * 1000.0;
  }
  if (!model.empty()) out["cpu_model"] = model;
  if (mhz > 0) out["cpu_mhz"] = mhz;
  return out;
}

}  // namespace

ProfileWriter::~ProfileWriter() { abandon(); }

Result<void> ProfileWriter::open(const std::string& path, Format format) {
  format_ = format;
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) return Error{"cannot write profile " + path + ": " + std::strerror(errno)};
  os::protect_fd(fd_);
  return {};
}

void ProfileWriter::write_line(const std::string& line) {
  if (fd_ < 0) return;
  std::string out = line;
  out.push_back('\n');
  os::write_all(fd_, out.data(), out.size());  // the raw syscall, never our own write shim
}

void ProfileWriter::header(const Header& header) {
  if (format_ == Format::kCoz) {
    write_line("startup\ttime=" + std::to_string(header.start_realtime_ns));
    return;
  }
  utsname system{};
  uname(&system);
  nlohmann::json record = {
      {"type", "header"},
      {"format", format::kProfileFormat},
      {"version", format::kProfileVersion},
      {"command", header.command},
      {"start_time", iso8601(header.start_realtime_ns)},
      {"pid", header.pid},
      {"sampling_period_ns", header.sampling_period_ns},
      {"sampler", header.sampler},
      {"options", nlohmann::json::parse(header.options_json, nullptr, false)},
      {"machine", machine(system)},
      {"scope", {{"binary", header.binary_scope}, {"source", header.source_scope}}},
  };
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::object(const ObjectRecord& object) {
  if (format_ == Format::kCoz) return;
  nlohmann::json record = {{"type", "object"}, {"path", object.path}, {"build_id", object.build_id},
                           {"bias", object.bias}, {"in_scope", object.in_scope}, {"debug_file", object.debug_file}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::experiment(const ExperimentRecord& e) {
  uint64_t effective = e.duration_ns > e.delay_ns ? e.duration_ns - e.delay_ns : 0;
  if (format_ == Format::kCoz) {
    if (e.set_aside) return;  // no field for it, and Coz's readers would average it in
    std::string text = "experiment\tselected=" + e.selected + "\tspeedup=" + std::to_string(e.speedup) +
                       "\tduration=" + std::to_string(effective) + "\tselected-samples=" + std::to_string(e.selected_samples);
    for (const PointResult& point : e.points) {
      if (point.latency) {
        text += "\nlatency-point\tname=" + point.name + "\tarrivals=" + std::to_string(point.delta) +
                "\tdepartures=" + std::to_string(point.departures) + "\tdifference=" + std::to_string(point.in_flight_end);
      } else {
        text += "\nthroughput-point\tname=" + point.name + "\tdelta=" + std::to_string(point.delta);
      }
    }
    write_line(text);
    return;
  }
  nlohmann::json points = nlohmann::json::array();
  for (const PointResult& point : e.points) {
    if (point.latency) {
      points.push_back({{"name", point.name}, {"kind", "latency"}, {"arrivals", point.delta},
                        {"departures", point.departures}, {"in_flight_avg", point.in_flight_avg},
                        {"in_flight_effective_avg", point.in_flight_effective_avg},
                        {"in_flight_end", point.in_flight_end}});
    } else {
      points.push_back({{"name", point.name}, {"kind", "throughput"}, {"delta", point.delta}});
    }
  }
  nlohmann::json record = {{"type", "experiment"},
                           {"id", e.id},
                           {"selected", e.selected},
                           {"speedup", e.speedup},
                           {"start_ns", e.start_ns},
                           {"duration_ns", e.duration_ns},
                           {"delay_ns", e.delay_ns},
                           {"effective_duration_ns", effective},
                           {"selected_samples", e.selected_samples},
                           {"total_samples", e.total_samples},
                           {"line_samples_total", e.line_samples_total},
                           {"elapsed_ns", e.elapsed_ns},
                           {"paused_ns", e.paused_ns},
                           {"cpu_ns", e.cpu_ns},
                           {"spin_wait_ns", e.spin_wait_ns},
                           {"cpus", e.cpus},
                           {"sample_scale", e.sample_scale},
                           {"own_samples", e.own_samples},
                           {"unscoped_samples", e.unscoped_samples},
                           {"set_aside", e.set_aside},
                           {"points", points}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::samples(const std::vector<std::pair<std::string, uint64_t>>& counts, uint64_t elapsed_ns) {
  if (format_ == Format::kCoz) {
    std::string text;
    for (const auto& [line, count] : counts) {
      if (!text.empty()) text += '\n';
      text += "samples\tlocation=" + line + "\tcount=" + std::to_string(count);
    }
    if (!text.empty()) write_line(text);
    return;
  }
  nlohmann::json map = nlohmann::json::object();
  for (const auto& [line, count] : counts) map[line] = count;
  nlohmann::json record = {{"type", "samples"}, {"counts", map}, {"elapsed_ns", elapsed_ns}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::counters(const CountersRecord& counters, uint64_t elapsed_ns) {
  if (format_ == Format::kCoz) return;  // Coz's format has no counters
  namespace f = format::record::counters;
  nlohmann::json events = nlohmann::json::object();
  for (const CountersRecord::Event& event : counters.events) {
    if (event.measured >= 0) events[event.name] = {event.inclusive, event.exclusive, event.measured};
    else events[event.name] = {event.inclusive, event.exclusive};
  }
  nlohmann::json record = {{format::kTypeField, f::kName},
                           {f::tid, counters.tid},
                           {f::function, counters.function},
                           {f::calls, counters.calls},
                           {f::inclusive_ns, counters.inclusive_ns},
                           {f::exclusive_ns, counters.exclusive_ns},
                           {f::events, events},
                           {f::elapsed_ns, elapsed_ns}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::counter_interval(const CounterIntervalRecord& interval, uint64_t elapsed_ns) {
  if (format_ == Format::kCoz) return;  // Coz's format has no counters
  namespace f = format::record::counter_interval;
  nlohmann::json values = nlohmann::json::object();
  for (const CounterIntervalRecord::Value& value : interval.values) values[value.name] = {value.value, value.running_fraction};
  nlohmann::json unavailable = nlohmann::json::object();
  for (const auto& [name, reason] : interval.unavailable) unavailable[name] = reason;
  nlohmann::json record = {{format::kTypeField, f::kName},    {f::elapsed_ns, elapsed_ns}, {f::interval_ns, interval.interval_ns},
                           {f::values, values}, {f::unavailable, unavailable}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::instructions(const std::string& path, const std::string& build_id,
                                 const std::vector<std::pair<uint64_t, uint64_t>>& counts) {
  if (format_ == Format::kCoz) return;  // Coz's format has no per-instruction record
  nlohmann::json pairs = nlohmann::json::array();
  for (const auto& [address, samples] : counts) pairs.push_back({address, samples});
  nlohmann::json record = {{"type", "instructions"}, {"path", path}, {"build_id", build_id}, {"counts", pairs}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::warning(const std::string& message) {
  if (format_ == Format::kCoz) return;
  nlohmann::json record = {{"type", "warning"}, {"message", message}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::progress_point(const std::string& name, const std::string& mechanism, uint64_t address,
                                   const std::string& reason) {
  if (format_ == Format::kCoz) return;
  namespace r = format::record::progress_point;
  nlohmann::json record = {{format::kTypeField, r::kName}, {r::name, name}, {r::mechanism, mechanism},
                           {r::address, address}, {r::reason, reason}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::branches(const BranchesRecord& branches) {
  if (format_ == Format::kCoz) return;
  namespace names = format::record::branches;
  nlohmann::json record = {{format::kTypeField, names::kName}, {names::path, branches.path}, {names::build_id, branches.build_id},
                           {names::edges, branches.edges}, {names::ranges, branches.ranges},
                           {names::paths, branches.paths}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::branch_stats(const BranchStatsRecord& stats) {
  if (format_ == Format::kCoz) return;
  namespace names = format::record::branch_stats;
  nlohmann::json ended = nlohmann::json::object();
  for (const auto& [reason, count] : stats.ended) ended[reason] = count;
  nlohmann::json record = {{format::kTypeField, names::kName},
                           {names::depth, stats.depth},
                           {names::every, stats.every},
                           {names::bursts, stats.bursts},
                           {names::completed, stats.completed},
                           {names::taken, stats.taken},
                           {names::breakpoints, stats.breakpoints},
                           {names::static_branches, stats.static_branches},
                           {names::dynamic_branches, stats.dynamic_branches},
                           {names::flow_resolved, stats.flow_resolved},
                           {names::decoded_blocks, stats.decoded_blocks},
                           {names::breakpoints_per_taken,
                            stats.taken > 0 ? static_cast<double>(stats.breakpoints) / static_cast<double>(stats.taken) : 0.0},
                           {names::ended, ended},
                           {names::lookahead_settled, stats.lookahead_settled},
                           {names::breakpoint_moves, stats.breakpoint_moves},
                           {names::registers, stats.registers}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::runtime(uint64_t elapsed_ns, uint64_t experiments, int exit_status) {
  if (format_ == Format::kCoz) {
    write_line("runtime\ttime=" + std::to_string(elapsed_ns));
    return;
  }
  nlohmann::json record = {{"type", "runtime"}, {"elapsed_ns", elapsed_ns}, {"experiments", experiments},
                           {"exit_status", exit_status}};
  write_line(record.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void ProfileWriter::abandon() {
  if (fd_ >= 0) {
    os::unprotect_fd(fd_);
    ::close(fd_);
  }
  fd_ = -1;
}

}  // namespace whatif::profile
