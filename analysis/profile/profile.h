// Profiles as the analysis sees them: one in-memory model for whatif's JSON Lines format (v1) and
// for Coz's legacy text and JSON Lines formats, plus the readers that fill it. Pure code, any thread.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace whatif::analysis {

enum class PointKind { throughput, latency };
enum class ProfileFormat { whatif, coz_text, coz_json };

/// "whatif", "coz-text" or "coz-json".
const char* format_name(ProfileFormat format);
const char* kind_name(PointKind kind);

/// One progress point's result in one experiment. Throughput uses `delta`; latency uses `arrivals`,
/// `departures` and `in_flight_avg`: the in-flight count averaged over the experiment's effective time
/// (`in_flight_effective_avg`), over its real time in profiles that lack that, and for Coz profiles the
/// count at the experiment's end.
struct PointObservation {
  std::string name;
  PointKind kind = PointKind::throughput;
  double delta = 0;
  double arrivals = 0;
  double departures = 0;
  double in_flight_avg = 0;
  double in_flight_real_avg = -1;  ///< the average over real time, as written (whatif only), or -1
  double in_flight_end = -1;  ///< requests in flight at the experiment's end (whatif only), or -1
};

struct Experiment {
  long id = -1;                      ///< sequence number in its process (whatif only), or -1
  std::string selected;              ///< FILE:LINE virtually sped up
  double speedup = 0;                ///< 0.0 .. 1.0
  double effective_duration_ns = 0;  ///< duration minus inserted delay: for progress periods
  /// Real (wall-clock) duration: t_obs for phase correction. Coz profiles only carry the effective
  /// duration, and so do whatif records without `duration_ns`: then it equals that.
  double duration_ns = 0;
  double selected_samples = -1;      ///< s_obs, or -1 when the profile lacks it
  double line_samples_total = -1;    ///< s so far (whatif only), or -1
  double elapsed_ns = -1;            ///< real T so far (whatif only), or -1
  double delay_ns = -1;              ///< delay inserted during it (whatif only), or -1
  double total_samples = -1;         ///< all in-scope samples during it (whatif only), or -1
  double paused_ns = -1;             ///< real time threads slept paying delays during it, or -1
  double cpu_ns = -1;                ///< the program's CPU time during it (whatif's spins not), or -1
  double spin_wait_ns = -1;          ///< of it, sampled at spin-waits, or -1
  int cpus = -1;                     ///< the CPUs the program could use, or -1
  double sample_scale = 1;           ///< periods of CPU time a selected sample's delay stood for (1: absent)
  /// The `effective_duration_ns` field as written (clamped at 0), or -1: effective_duration_ns above
  /// keeps its sign. Whatif only.
  double written_effective_duration_ns = -1;
  std::vector<PointObservation> points;
  long record = -1;  ///< its index in Profile::activity (whatif only), or -1
};

/// One experiment record as it came, in file order, kept, set aside or idle alike: its process and
/// the visits (throughput) or arrivals (latency) of each point seen. Where a point's activity starts
/// and stops (analysis: edges of activity).
struct ExperimentActivity {
  std::size_t process = 0;
  std::vector<std::pair<std::string, double>> visits;
};

struct SourceSnippet {
  std::string file;
  long first_line = 1;
  std::vector<std::string> lines;
};

/// What one `header` record says: a profile holds one per process that wrote to it (--append runs,
/// --follow-children programs). Numbers are -1 when absent.
struct Header {
  long pid = 0;
  std::vector<std::string> command;  ///< the first header's: the profiled program and its arguments
  std::string sampler;
  double sampling_period_ns = -1;
  std::string fixed_line;            ///< empty without --fixed-line
  double fixed_speedup = -1;         ///< 0.0 .. 1.0, or -1 without --fixed-speedup
  bool end_to_end = false;
  double seed = -1;
  double experiment_length_ns = -1;
  std::vector<std::string> progress_points;  ///< from -p
  std::string cpu_model;             ///< machine.cpu_model, or empty
  double cpu_mhz = -1;               ///< machine.cpu_mhz: the nominal clock, or -1
};

/// An `object` record: a loaded object and whether its lines may be chosen.
struct LoadedObject {
  std::string path;
  bool in_scope = false;
  std::string build_id;  ///< hex, or empty
  double bias = 0;       ///< load bias
};

/// An `instructions` record: one object's cumulative samples per instruction, by ELF virtual
/// address. The last record of an object (path and build id) wins; --append runs each add theirs.
struct InstructionSamples {
  std::size_t process = 0;  ///< index of the header (process) that wrote it
  std::string path;
  std::string build_id;
  std::map<uint64_t, double> counts;
};

/// A `branches` record (software or hardware branch records, issue #11): taken-branch edges and
/// the straight-line ranges executed between them, with how often each was seen, by ELF virtual
/// address. The last record of an object wins.
struct BranchSamples {
  struct Edge {
    uint64_t from = 0, to = 0;
    double count = 0;
  };
  struct Range {
    uint64_t start = 0, end = 0;  ///< first and last instruction's address, both inclusive
    double count = 0;
  };
  std::size_t process = 0;  ///< index of the header (process) that wrote it
  std::string path;
  std::string build_id;
  std::vector<Edge> edges;
  std::vector<Range> ranges;
};

/// A `runtime` record: a process that ended normally.
/// A `counters` record (`whatif run --counters`): one selected function's cumulative totals on one
/// thread of one process; the reader keeps the last record of each (process, tid, function).
struct FunctionCounters {
  std::size_t process = 0;  ///< index into Profile::headers
  long tid = 0;
  std::string function;
  uint64_t calls = 0;
  double inclusive_ns = 0, exclusive_ns = 0;
  struct Event {
    std::string name;
    double inclusive = 0, exclusive = 0;
    /// Calls in which it counted (event sets cycled by call count); -1: every call.
    double measured = -1;
  };
  std::vector<Event> events;  ///< by name
};

struct RuntimeEnd {
  double elapsed_ns = -1;
  double experiments = -1;
  long exit_status = -1;  ///< -1 where unknown
};

/// A whole profile file, normalised. Counts and times are doubles: they feed ratios only.
struct Profile {
  std::string path;
  ProfileFormat format = ProfileFormat::whatif;
  std::vector<std::string> command;  ///< the first header's: the profiled program and its arguments
  std::string sampler;
  /// Run with --fixed-line: its experiments ran in every phase of the program, not only while
  /// the line was running.
  bool fixed_line = false;
  std::vector<Experiment> experiments;
  int set_aside = 0;  ///< whatif only: experiments the runtime set aside (`set_aside`), not in `experiments`
  int idle = 0;       ///< whatif only: experiments through which the program was idle (format::idle_experiment), not in `experiments`
  std::vector<ExperimentActivity> activity;  ///< whatif only: every experiment record, in file order
  /// The last cumulative per-line sample counts and the real time they were taken (-1 if unknown).
  std::map<std::string, double> sample_counts;
  double samples_elapsed_ns = -1;
  double runtime_ns = -1;  ///< total elapsed time at exit, -1 if the run did not finish cleanly
  std::vector<std::string> warnings;  ///< `warning` records, verbatim
  std::vector<std::string> notes;     ///< what the reader noticed (e.g. a truncated last line)
  std::vector<SourceSnippet> sources;
  bool has_lbr = false;
  bool has_stalls = false;
  /// The effective core clock the launcher measured after the run (`clock` record), or -1.
  double measured_mhz = -1;
  std::vector<Header> headers;        ///< whatif only: one per process, in file order
  std::vector<LoadedObject> objects;  ///< whatif only
  /// whatif only: per process and object, the last record (merged_instructions() sums processes)
  std::vector<InstructionSamples> instructions;
  std::vector<BranchSamples> branches;  ///< whatif only: per process and object, the last record
  std::vector<RuntimeEnd> runtimes;   ///< whatif only: one per process that ended normally
  std::vector<FunctionCounters> function_counters;  ///< whatif only: the last record per process, thread, function
  std::vector<std::string> record_types;  ///< every record's type, in file order
  bool truncated = false;  ///< an incomplete last line was ignored (also in `notes`)
};

/// Parses profile text. `name` is used in messages. Rejects empty input, text that is no profile,
/// and a whatif header with another format name or version (the message names both versions).
/// Coz numbers printed unsigned that are >= 2^63 are wrapped negatives: Coz experiments without a
/// positive duration are dropped and latency observations with a negative `difference` skipped
/// (each counted in a note).
Result<Profile> parse_profile(std::string_view text, const std::string& name);

/// The per-instruction samples of each object (path and build id), summed over the processes that
/// wrote them (--append runs, followed children).
std::vector<InstructionSamples> merged_instructions(const Profile& profile);
/// The branch records of each object, summed over processes.
std::vector<BranchSamples> merged_branches(const Profile& profile);

/// Reads and parses the file at `path`.
Result<Profile> read_profile(const std::string& path);

/// Reads a profile while it is being written (the launcher's progress line): each poll() parses the
/// lines completed since the last one, with the same rules as parse_profile; a line still being
/// written waits for the next poll. One thread.
class ProfileFollower {
 public:
  explicit ProfileFollower(std::string path);
  ~ProfileFollower();
  ProfileFollower(const ProfileFollower&) = delete;
  ProfileFollower& operator=(const ProfileFollower&) = delete;
  /// Parses what was appended since the last poll. A record that does not parse is skipped (and
  /// noted); a header of another format or version stops the reading (error() says why).
  void poll();
  /// Everything read so far.
  const Profile& profile() const;
  /// Why the file is not being read (not a profile, another version), or empty.
  const std::string& error() const;

 private:
  struct State;
  std::string path_;
  long long offset_ = 0;
  std::unique_ptr<State> state_;
};

// ---- Records the launcher appends after a run (names from whatif/profile_format.h) -------------

/// A `warning` record, one JSON line with its newline.
std::string warning_record(const std::string& message);
/// A `source` record, one JSON line with its newline (invalid UTF-8 replaced).
std::string source_record(const SourceSnippet& snippet);
/// A `clock` record: the effective core clock in MHz and how it was measured.
std::string clock_record(double measured_mhz, const std::string& method);

}  // namespace whatif::analysis
