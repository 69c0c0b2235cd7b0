// The integration tests' harness: runs test programs through `whatif run` or with libwhatif.so
// preloaded, captures their output, and reads the profiles they leave through the one profile
// reader (analysis/profile). Runs in the gtest process; each program is a child process.
#pragma once
#include <gtest/gtest.h>
#include <sys/types.h>

#include <chrono>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "analysis/profile/profile.h"

namespace itest {

using Strings = std::vector<std::string>;
using Environment = std::vector<std::pair<std::string, std::string>>;
using whatif::analysis::Experiment;
using whatif::analysis::PointKind;
using whatif::analysis::PointObservation;
using whatif::analysis::Profile;

inline constexpr auto kRunTimeout = std::chrono::seconds(60);  // a deadlocked program fails, not hangs
extern const std::string kLauncher;
extern const std::string kRuntime;

/// A built test program / its source, by file name.
std::string program(const std::string& name);
std::string source(const std::string& name);
/// The whole file, or "" when it cannot be read.
std::string read_file(const std::string& path);

/// The line number of the `/* @marker */` comment in a test program's source.
int marker_line(const std::string& file, const std::string& marker);
/// "file.c:LINE" for a marker, the form users pass to --fixed-line and -p.
std::string marker_spec(const std::string& file, const std::string& marker);
/// True when a profile's FILE:LINE names the same line as `spec` ("two_threads.c:12").
bool same_line(const std::string& location, const std::string& spec);

struct Exit {
  int status = -1;  ///< exit status, 128 + signal when killed, -1 on timeout
  std::string out, err;
  double cpu_seconds = 0;  ///< user + system time of the child and the descendants it waited for
};
std::ostream& operator<<(std::ostream& os, const Exit& e);

/// A running child with stdout/stderr captured to files in `dir`.
class Child {
 public:
  Child(const Strings& argv, const Environment& env, const std::string& dir, const Strings& unset = {});
  pid_t pid() const { return pid_; }
  /// Waits for the child (killing its process group after the timeout).
  Exit wait(std::chrono::seconds timeout = kRunTimeout);

 private:
  pid_t pid_ = -1;
  std::string out_path_, err_path_;
};

/// The profile at `path`, read strictly: the reader must accept it, and its last record must end
/// with a newline unless `allow_truncated` (a killed program may leave half a line). A failure is
/// a test failure; the profile is then empty.
Profile load_profile(const std::string& path, bool allow_truncated = false);
/// Checks what every whatif profile must satisfy (docs/profile-format.md).
void check_well_formed(const Profile& profile);

/// The last cumulative sample count of the line `spec`.
double samples_for(const Profile& profile, const std::string& spec);
/// Over the sped-up experiments: the real time threads slept paying delays, and the delay asked.
struct PausedAndDelay {
  double paused = 0, delay = 0;
  bool recorded = true;  ///< every such experiment carries paused_ns
};
PausedAndDelay paused_and_delay(const Profile& profile);
/// The point named `name` in an experiment, or nullptr.
const PointObservation* point(const Experiment& experiment, const std::string& name);
/// How many records of `type` the profile holds.
std::size_t count_records(const Profile& profile, const std::string& type);
/// Waits until `path` holds at least `count` complete experiment records; returns how many it saw.
long wait_for_experiments(const std::string& path, long count, std::chrono::seconds timeout);

class Integration : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  /// `whatif run -q -o <output> <options> --- <command>`.
  Exit whatif(const std::string& output, const Strings& options, const Strings& command, const Environment& env = {});
  Child start_whatif(const std::string& output, const Strings& options, const Strings& command,
                     const Environment& env = {});
  /// `whatif run` of test program `name` with the line at `marker` (in `source`, by default
  /// `name`.c) sped up by 50% in every 50 ms experiment; the profile, checked to be well formed
  /// (empty after a failed run).
  Profile run_half_speedup_of(const std::string& name, const std::string& marker, const std::string& argument,
                              const std::string& source = "");
  /// The program with the runtime preloaded directly, as the launcher would start it.
  Child start_preloaded(const std::string& output, const Strings& command, Environment env = {});

  std::string dir_;
};

}  // namespace itest
