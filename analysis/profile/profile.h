// Profiles as the analysis sees them: one in-memory model for whatif's JSON Lines format (v1) and
// for Coz's legacy text and JSON Lines formats, plus the readers that fill it. Pure code, any thread.
#pragma once
#include <map>
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
};

struct Experiment {
  std::string selected;              ///< FILE:LINE virtually sped up
  double speedup = 0;                ///< 0.0 .. 1.0
  double effective_duration_ns = 0;  ///< duration minus inserted delay: for progress periods
  /// Real (wall-clock) duration: t_obs for phase correction. Coz profiles only carry the effective
  /// duration, and so do whatif records without `duration_ns`: then it equals that.
  double duration_ns = 0;
  double selected_samples = -1;      ///< s_obs, or -1 when the profile lacks it
  double line_samples_total = -1;    ///< s so far (whatif only), or -1
  double elapsed_ns = -1;            ///< real T so far (whatif only), or -1
  std::vector<PointObservation> points;
};

struct SourceSnippet {
  std::string file;
  long first_line = 1;
  std::vector<std::string> lines;
};

/// A whole profile file, normalised. Counts and times are doubles: they feed ratios only.
struct Profile {
  std::string path;
  ProfileFormat format = ProfileFormat::whatif;
  std::vector<std::string> command;
  std::string sampler;
  /// Run with --fixed-line: its experiments ran in every phase of the program, not only while
  /// the line was running.
  bool fixed_line = false;
  std::vector<Experiment> experiments;
  /// The last cumulative per-line sample counts and the real time they were taken (-1 if unknown).
  std::map<std::string, double> sample_counts;
  double samples_elapsed_ns = -1;
  double runtime_ns = -1;  ///< total elapsed time at exit, -1 if the run did not finish cleanly
  std::vector<std::string> warnings;  ///< `warning` records, verbatim
  std::vector<std::string> notes;     ///< what the reader noticed (e.g. a truncated last line)
  std::vector<SourceSnippet> sources;
  bool has_lbr = false;
  bool has_stalls = false;
};

/// Parses profile text. `name` is used in messages. Rejects empty input, text that is no profile,
/// and a whatif header with another format name or version (the message names both versions).
/// Coz numbers printed unsigned that are >= 2^63 are wrapped negatives: Coz experiments without a
/// positive duration are dropped and latency observations with a negative `difference` skipped
/// (each counted in a note).
Result<Profile> parse_profile(std::string_view text, const std::string& name);

/// Reads and parses the file at `path`.
Result<Profile> read_profile(const std::string& path);

}  // namespace whatif::analysis
