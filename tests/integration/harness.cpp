// The integration tests' harness (harness.h): child processes, test-program markers and strict
// profile loading through analysis/profile. Runs in the gtest process, on the test's thread.
#include "harness.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "whatif/environment.h"
#include "whatif/profile_format.h"

namespace itest {

namespace fs = std::filesystem;

const std::string kLauncher = ITEST_LAUNCHER;
const std::string kRuntime = ITEST_RUNTIME;

std::string program(const std::string& name) { return std::string(ITEST_PROGRAMS_DIR) + "/" + name; }
std::string source(const std::string& name) { return std::string(ITEST_SOURCES_DIR) + "/" + name; }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

int marker_line(const std::string& file, const std::string& marker) {
  std::ifstream in(source(file));
  std::string line;
  std::string needle = "/* @" + marker + " */";
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find(needle) != std::string::npos) return number;
  }
  ADD_FAILURE() << "no marker " << needle << " in " << file;
  return -1;
}

std::string marker_spec(const std::string& file, const std::string& marker) {
  return file + ":" + std::to_string(marker_line(file, marker));
}

namespace {
bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

bool same_line(const std::string& location, const std::string& spec) {
  return location == spec || ends_with(location, "/" + spec);
}

std::ostream& operator<<(std::ostream& os, const Exit& e) {
  return os << "status " << e.status << "\n--- stdout:\n" << e.out << "\n--- stderr:\n" << e.err;
}

Child::Child(const Strings& argv, const Environment& env, const std::string& dir, const Strings& unset) {
  static int serial = 0;
  std::string tag = std::to_string(++serial);
  out_path_ = dir + "/stdout." + tag;
  err_path_ = dir + "/stderr." + tag;
  pid_ = fork();
  if (pid_ == 0) {
    int out = open(out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(err, 2);
    int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    setpgid(0, 0);  // a runaway program can be killed with its children
    for (const auto& name : unset) unsetenv(name.c_str());
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    dprintf(2, "cannot exec %s: %s\n", args[0], strerror(errno));
    _exit(126);
  }
}

Exit Child::wait(std::chrono::seconds timeout) {
  Exit result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  struct rusage usage {};
  while (true) {
    pid_t done = wait4(pid_, &status, WNOHANG, &usage);
    if (done == pid_) break;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      result.out = read_file(out_path_);
      result.err = read_file(err_path_) + "\n[test: killed after timeout, deadlock?]";
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  result.out = read_file(out_path_);
  result.err = read_file(err_path_);
  return result;
}

Profile load_profile(const std::string& path, bool allow_truncated) {
  std::string text = read_file(path);
  EXPECT_FALSE(text.empty()) << path << " is empty";
  auto parsed = whatif::analysis::parse_profile(text, path);
  if (!parsed) {
    ADD_FAILURE() << parsed.error();
    return Profile{};
  }
  if (!allow_truncated) {
    EXPECT_FALSE(parsed->truncated) << path << ": the last line is not a whole record";
    EXPECT_TRUE(text.empty() || text.back() == '\n') << path << ": the last record has no newline";
  }
  return std::move(*parsed);
}

void check_well_formed(const Profile& profile) {
  EXPECT_EQ(profile.format, whatif::analysis::ProfileFormat::whatif);  // its header's name and version checked
  ASSERT_FALSE(profile.headers.empty());
  ASSERT_FALSE(profile.record_types.empty());
  EXPECT_EQ(profile.record_types.front(), whatif::format::record::header::kName);
  EXPECT_GT(profile.headers.front().pid, 0);
  EXPECT_FALSE(profile.headers.front().command.empty());
  long expected_id = 0, skipped = 0;
  for (const Experiment& e : profile.experiments) {
    SCOPED_TRACE("experiment " + std::to_string(e.id) + " on " + e.selected);
    // Ids count every experiment; the reader skips those the runtime set aside.
    EXPECT_GE(e.id, expected_id);
    skipped += e.id - expected_id;
    expected_id = e.id + 1;
    EXPECT_GE(e.speedup, 0.0);
    EXPECT_LE(e.speedup, 1.0);
    EXPECT_NEAR(e.speedup * 20, std::round(e.speedup * 20), 1e-6) << "speedups are multiples of 5%";
    EXPECT_FALSE(e.selected.empty());
    ASSERT_GE(e.delay_ns, 0) << "no delay_ns";
    EXPECT_GT(e.duration_ns, 0);
    EXPECT_EQ(e.written_effective_duration_ns, e.duration_ns > e.delay_ns ? e.duration_ns - e.delay_ns : 0);
    EXPECT_GE(e.selected_samples, 0);
    EXPECT_LE(e.selected_samples, e.total_samples);
    if (e.speedup == 0) {
      EXPECT_EQ(e.delay_ns, 0) << "a baseline inserts no delay";
    }
    // Its CPU time and visits are read when its duration is stamped. Bug: a tick stamped the end
    // with the clock read before a 270-ms drain of samples, and a Rust program's first experiment
    // had 752 ms of CPU in "102 ms" on 2 CPUs. The slack is for the children's reports.
    if (e.cpu_ns >= 0 && e.cpus > 0) {
      EXPECT_LE(e.cpu_ns, 1.25 * e.cpus * static_cast<double>(e.duration_ns) + 10e6) << "more CPU time than its CPUs had";
    }
  }
  EXPECT_LE(skipped, profile.set_aside + profile.idle) << "experiment ids skip only those set aside or idle";
}

double samples_for(const Profile& profile, const std::string& spec) {
  double total = 0;
  for (const auto& [line, count] : profile.sample_counts) {
    if (same_line(line, spec)) total += count;
  }
  return total;
}

PausedAndDelay paused_and_delay(const Profile& profile) {
  PausedAndDelay out;
  for (const Experiment& x : profile.experiments) {
    if (x.speedup <= 0) continue;
    out.recorded = out.recorded && x.paused_ns >= 0;
    out.paused += x.paused_ns;
    out.delay += x.delay_ns;
  }
  return out;
}

const PointObservation* point(const Experiment& experiment, const std::string& name) {
  for (const PointObservation& p : experiment.points) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::size_t count_records(const Profile& profile, const std::string& type) {
  return static_cast<std::size_t>(std::count(profile.record_types.begin(), profile.record_types.end(), type));
}

long wait_for_experiments(const std::string& path, long count, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  whatif::analysis::ProfileFollower follower(path);
  long seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    follower.poll();
    seen = static_cast<long>(follower.profile().experiments.size());
    if (seen >= count) return seen;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return seen;
}

void Integration::SetUp() {
  std::string base = (fs::temp_directory_path() / "whatif-itest-XXXXXX").string();
  ASSERT_NE(mkdtemp(base.data()), nullptr);
  dir_ = base;
}

void Integration::TearDown() {
  if (HasFailure()) {
    std::printf("kept %s for inspection\n", dir_.c_str());
  } else {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
}

Exit Integration::whatif(const std::string& output, const Strings& options, const Strings& command,
                         const Environment& env) {
  return start_whatif(output, options, command, env).wait();
}

Child Integration::start_whatif(const std::string& output, const Strings& options, const Strings& command,
                                const Environment& env) {
  Strings argv = {kLauncher, "run", "-q", "-o", output};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("---");
  argv.insert(argv.end(), command.begin(), command.end());
  return Child(argv, env, dir_, {"LD_PRELOAD"});
}

Profile Integration::run_half_speedup_of(const std::string& name, const std::string& marker,
                                         const std::string& argument, const std::string& source) {
  std::string out = path(name + ".jsonl");
  // Delays sized in CPU time (WHATIF_CONTENTION=off): these tests check crediting and pausing, which
  // a busy test machine must not blur by scaling samples for its load (tested on its own).
  const std::string file = source.empty() ? name + ".c" : source;
  Exit e = whatif(out, {"--experiment-length", "50", "--fixed-line", marker_spec(file, marker), "--fixed-speedup", "50"},
                  {program(name), argument}, {{"WHATIF_CONTENTION", "off"}});
  EXPECT_EQ(e.status, 0) << e;
  if (e.status != 0) return Profile{};
  Profile profile = load_profile(out);
  check_well_formed(profile);
  return profile;
}

Child Integration::start_preloaded(const std::string& output, const Strings& command, Environment env) {
  env.insert(env.begin(), {{"LD_PRELOAD", kRuntime}, {whatif::environment::kOutput, output},
                           {whatif::environment::kExperimentLengthNs, "20000000"}});
  return Child(command, env, dir_);
}

}  // namespace itest
