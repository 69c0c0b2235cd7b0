// Integration test of DWARF unwinding: a program whose hot line calls glibc's memset (a leaf with
// no frame) runs under `whatif run`, and that line must get its share of the samples. Runs in the
// test process; the program is a child process. Self-contained helpers (integration_test.cpp's
// are being split into themed files).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// The line number of `/* @marker */` in a test program's source.
int line_of(const std::string& file, const std::string& marker) {
  std::ifstream in(std::string(ITEST_SOURCES_DIR) + "/" + file);
  std::string text;
  for (int number = 1; std::getline(in, text); ++number) {
    if (text.find("/* @" + marker + " */") != std::string::npos) return number;
  }
  ADD_FAILURE() << "no marker @" << marker << " in " << file;
  return -1;
}

struct Outcome {
  int status = -1;  ///< exit status, 128 + signal, -1 on timeout
  std::string out, err;
};

/// Runs argv with LD_PRELOAD unset and output captured in `dir`, killing it after `timeout`.
Outcome run(const std::vector<std::string>& argv, const std::string& dir, std::chrono::seconds timeout) {
  std::string out_path = dir + "/stdout", err_path = dir + "/stderr";
  pid_t pid = fork();
  if (pid == 0) {
    dup2(open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
    dup2(open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 2);
    setpgid(0, 0);
    unsetenv("LD_PRELOAD");
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(126);
  }
  Outcome result;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      result.err = slurp(err_path) + "\n[test: killed after timeout]";
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

/// The last cumulative per-line sample counts of a profile, and its warnings.
struct Samples {
  std::map<std::string, double> counts;
  std::vector<std::string> warnings;
  double total() const {
    double sum = 0;
    for (const auto& [line, count] : counts) sum += count;
    return sum;
  }
  double of_line(const std::string& file, int line) const {
    std::string suffix = "/" + file + ":" + std::to_string(line);
    double sum = 0;
    for (const auto& [name, count] : counts) {
      if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) sum += count;
    }
    return sum;
  }
};

Samples read_samples(const std::string& path) {
  Samples samples;
  std::istringstream in(slurp(path));
  std::string text;
  while (std::getline(in, text)) {
    json record = json::parse(text, nullptr, false);
    if (!record.is_object()) continue;
    std::string type = record.value("type", "");
    if (type == "samples") {
      samples.counts.clear();
      for (const auto& [line, count] : record["counts"].items()) samples.counts[line] = count.get<double>();
    } else if (type == "warning") {
      samples.warnings.push_back(record.dump());
    }
  }
  return samples;
}

class Unwind : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string base = (fs::temp_directory_path() / "whatif-unwind-XXXXXX").string();
    ASSERT_NE(mkdtemp(base.data()), nullptr);
    dir_ = base;
  }
  void TearDown() override {
    if (HasFailure()) {
      std::printf("kept %s for inspection\n", dir_.c_str());
    } else {
      std::error_code ignored;
      fs::remove_all(dir_, ignored);
    }
  }
  std::string dir_;
};

TEST_F(Unwind, TimeInMemsetGoesToTheCallingLine) {
  // ~55% of the time is in memset called from one line, built without frame pointers; a
  // frame-pointer callchain skips that line (2 of 545 samples before DWARF unwinding).
  std::string out = dir_ + "/memset.jsonl";
  Outcome r = run({ITEST_LAUNCHER, "run", "-q", "-o", out, "--experiment-length", "20", "---",
               std::string(ITEST_PROGRAMS_DIR) + "/memset_line", "1500"},
              dir_, std::chrono::seconds(60));
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  ASSERT_NE(r.out.find("rounds="), std::string::npos) << r.out;
  Samples samples = read_samples(out);
  for (const std::string& warning : samples.warnings) {
    EXPECT_EQ(warning.find("libunwind"), std::string::npos) << warning;
  }
  double total = samples.total();
  double in_memset = samples.of_line("memset_line.c", line_of("memset_line.c", "memset"));
  double in_loop = samples.of_line("memset_line.c", line_of("memset_line.c", "loop"));
  ASSERT_GT(total, 300) << "a 1.5 s run at 1 ms";
  EXPECT_GE(in_memset / total, 0.40) << in_memset << " of " << total << " samples in the memset line";
  EXPECT_GE(in_loop / total, 0.25) << in_loop << " of " << total << " samples in the loop line";
  EXPECT_LE(in_memset / total, 0.75) << in_memset << " of " << total;
}

}  // namespace
