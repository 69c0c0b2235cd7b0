// The profile writer: appends one record per write(2) to the profile file, in our JSON Lines
// format (docs/profile-format.md) or Coz's legacy text format. Runs on the profiler thread, and at
// exit on whichever thread ends the process.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace whatif::profile {

enum class Format { kWhatif, kCoz };

struct Header {
  std::vector<std::string> command;
  uint64_t start_realtime_ns = 0;
  int pid = 0;
  uint64_t sampling_period_ns = 0;
  std::string sampler;  // "perf_event" or "timer"
  std::string options_json;  // a JSON object, already serialised
  std::vector<std::string> binary_scope;
  std::vector<std::string> source_scope;
};

struct ObjectRecord {
  std::string path;
  std::string build_id;
  uint64_t bias = 0;
  bool in_scope = false;
  std::string debug_file;
};

struct PointResult {
  std::string name;
  bool latency = false;
  uint64_t delta = 0;         // throughput visits, or arrivals
  uint64_t departures = 0;    // latency only
  double in_flight_avg = 0;   // latency only: time average over the experiment
  int64_t in_flight_end = 0;  // latency only
  double in_flight_effective_avg = 0;  // latency only: time average over its effective time
};

struct ExperimentRecord {
  uint64_t id = 0;
  std::string selected;  // FILE:LINE
  double speedup = 0;
  uint64_t start_ns = 0;
  uint64_t duration_ns = 0;
  uint64_t delay_ns = 0;
  uint64_t selected_samples = 0;
  uint64_t total_samples = 0;
  uint64_t line_samples_total = 0;
  uint64_t elapsed_ns = 0;
  uint64_t paused_ns = 0;  ///< real time threads slept paying delays during it
  uint64_t cpu_ns = 0;        ///< the program's CPU time during it, its pauses' not (experiment::CpuWork)
  uint64_t spin_wait_ns = 0;  ///< of it, sampled at spin-waits
  double sample_scale = 1;    ///< periods of the program's CPU time a kept sample stood for
  int cpus = 0;               ///< the CPUs the program may use
  uint64_t own_samples = 0;       ///< samples in whatif's own code during the measured part
  uint64_t unscoped_samples = 0;  ///< samples in no in-scope line (and not whatif's) during it
  bool set_aside = false;         ///< its samples fell far short of its CPU time (experiment::SampleCoverage)
  std::vector<PointResult> points;
};

/// Software branch records of one object (--lbr): ELF virtual addresses, cumulative counts.
struct BranchesRecord {
  std::string path;
  std::string build_id;
  std::vector<std::array<uint64_t, 3>> edges;   ///< [from, to, count] taken branches
  std::vector<std::array<uint64_t, 3>> ranges;  ///< [start, end, count] fall-through runs
  std::vector<std::vector<uint64_t>> paths;     ///< [count, start, from1, to1, ...] the hottest paths
};

/// The branch tracer's counters over all threads, cumulative.
struct BranchStatsRecord {
  uint32_t depth = 0;
  uint32_t every = 0;
  uint64_t bursts = 0, completed = 0, taken = 0, breakpoints = 0, static_branches = 0, dynamic_branches = 0;
  uint64_t flow_resolved = 0, decoded_blocks = 0;
  uint64_t lookahead_settled = 0, breakpoint_moves = 0;
  uint32_t registers = 0;
  std::vector<std::pair<std::string, uint64_t>> ended;  ///< bursts ended early, by reason
};

/// One selected function's cumulative totals on one thread (`--counters`).
struct CountersRecord {
  int tid = 0;
  std::string function;
  uint64_t calls = 0;
  uint64_t inclusive_ns = 0;
  uint64_t exclusive_ns = 0;
  struct Event {
    std::string name;
    uint64_t inclusive = 0;
    uint64_t exclusive = 0;
    int64_t measured = -1;  ///< calls it counted in (event sets cycled by call count); -1: every call
  };
  std::vector<Event> events;
};

/// One interval of the process-wide counters (`--counters`): each event's scaled delta and the share
/// of the interval it counted; the events that could not count, with why.
struct CounterIntervalRecord {
  uint64_t interval_ns = 0;
  struct Value {
    std::string name;
    double value = 0;
    double running_fraction = 1;
  };
  std::vector<Value> values;
  std::vector<std::pair<std::string, std::string>> unavailable;
};

class ProfileWriter {
 public:
  ProfileWriter() = default;
  ProfileWriter(const ProfileWriter&) = delete;
  ProfileWriter& operator=(const ProfileWriter&) = delete;
  ~ProfileWriter();

  /// Opens (appending) `path`. Coz's format appends like Coz does; ours too, one header per run.
  Result<void> open(const std::string& path, Format format);
  bool is_open() const { return fd_ >= 0; }
  Format format() const { return format_; }

  void header(const Header& header);
  void object(const ObjectRecord& object);
  void experiment(const ExperimentRecord& experiment);
  /// Cumulative per-line sample counts.
  void samples(const std::vector<std::pair<std::string, uint64_t>>& counts, uint64_t elapsed_ns);
  /// Cumulative per-instruction sample counts of one object: (ELF virtual address, samples), sorted.
  void instructions(const std::string& path, const std::string& build_id,
                    const std::vector<std::pair<uint64_t, uint64_t>>& counts);
  /// Cumulative per-thread function counters (`--counters`); the last record of a (tid, function) holds its totals.
  void counters(const CountersRecord& record, uint64_t elapsed_ns);
  /// One interval of the process-wide counters (`--counters`), ending `elapsed_ns` after the start.
  void counter_interval(const CounterIntervalRecord& record, uint64_t elapsed_ns);
  void warning(const std::string& message);
  /// How a -p point is counted: mechanism "patch", "breakpoint" or "unresolved"; why not patched.
  void progress_point(const std::string& name, const std::string& mechanism, uint64_t address, const std::string& reason);
  void branches(const BranchesRecord& record);
  void branch_stats(const BranchStatsRecord& record);
  void runtime(uint64_t elapsed_ns, uint64_t experiments, int exit_status);
  /// Closes the descriptor in a forked child without writing (signal-safe).
  void abandon();

 private:
  void write_line(const std::string& line);
  int fd_ = -1;
  Format format_ = Format::kWhatif;
};

}  // namespace whatif::profile
