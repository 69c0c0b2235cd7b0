// Integration tests: What the user is told: --format coz for Coz's viewer, and the error paths (no program, no
// debug info, no progress point, a line that matches no code).
// Runs in the gtest process through the harness (harness.h); each program is a child process.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "harness.h"

namespace itest {
namespace {

TEST_F(Integration, CozFormatFollowsCozViewerParsingRules) {
  std::string out = path("p.coz");
  Exit e = whatif(out, {"--experiment-length", "20", "--format", "coz"}, {program("two_threads"), "2000"});
  ASSERT_EQ(e.status, 0) << e;
  std::string text = read_file(out);
  ASSERT_FALSE(text.empty());
  ASSERT_EQ(text.back(), '\n');
  // Mirrors parseLine() and the Profile constructor in Coz's viewer/js/profile.js: split on '\n',
  // skip empty lines, split each on '\t'; parts[0] is the type; every other part is key=value
  // (split at the first '='); delta/time/duration/arrivals/departures/difference go through
  // parseInt, speedup through parseFloat; any other type is "Invalid Profile"; a point line
  // needs an experiment line before it; no experiment at all is "Empty Profile".
  const std::set<std::string> types = {"startup", "shutdown", "samples", "runtime", "experiment", "throughput-point",
                                       "progress-point", "latency-point"};
  // When Coz's viewer is installed, make sure it still parses the way mirrored here.
  if (std::string viewer = read_file(ITEST_COZ_VIEWER_JS); !viewer.empty()) {
    for (const char* needle : {"s.split('\\t')", "parts[i].indexOf('=')", "case 'duration':", "parseFloat(value)"}) {
      EXPECT_NE(viewer.find(needle), std::string::npos) << ITEST_COZ_VIEWER_JS << " no longer has " << needle;
    }
    for (const std::string& type : types) {
      EXPECT_NE(viewer.find("'" + type + "'"), std::string::npos) << ITEST_COZ_VIEWER_JS << " does not know " << type;
    }
  }
  const std::set<std::string> integer_keys = {"delta", "time", "duration", "arrivals", "departures", "difference"};
  const std::regex integer(R"(-?[0-9]+)"), floating(R"([0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)");
  std::istringstream lines(text);
  std::string line, first_type, last_type;
  int experiments = 0, throughput = 0, samples = 0;
  bool saw_experiment = false;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    ASSERT_NE(line[0], '{') << "a JSON line in a --format coz profile: " << line;
    std::vector<std::string> parts;
    std::size_t start = 0, tab;
    while ((tab = line.find('\t', start)) != std::string::npos) {
      parts.push_back(line.substr(start, tab - start));
      start = tab + 1;
    }
    parts.push_back(line.substr(start));
    const std::string& type = parts[0];
    ASSERT_TRUE(types.count(type)) << "Coz's viewer rejects the line: " << line;
    if (first_type.empty()) first_type = type;
    last_type = type;
    std::map<std::string, std::string> fields;
    for (std::size_t i = 1; i < parts.size(); ++i) {
      auto equals = parts[i].find('=');
      ASSERT_NE(equals, std::string::npos) << "field without '=': " << line;
      std::string key = parts[i].substr(0, equals), value = parts[i].substr(equals + 1);
      ASSERT_FALSE(key.empty()) << line;
      EXPECT_FALSE(fields.count(key)) << "duplicate key " << key << ": " << line;
      if (integer_keys.count(key)) {
        EXPECT_TRUE(std::regex_match(value, integer)) << key << " is no integer: " << line;
      }
      if (key == "speedup") {
        EXPECT_TRUE(std::regex_match(value, floating)) << "speedup is no number: " << line;
      }
      fields[key] = value;
    }
    if (type == "experiment") {
      saw_experiment = true;
      ++experiments;
      for (const char* key : {"selected", "speedup", "duration", "selected-samples"}) {
        EXPECT_TRUE(fields.count(key)) << "experiment without " << key << ": " << line;
      }
      double speedup = std::stod(fields["speedup"]);
      EXPECT_GE(speedup, 0);
      EXPECT_LE(speedup, 1);
      EXPECT_GE(std::stoll(fields["duration"]), 0) << "Coz's viewer discards negative durations";
      EXPECT_NE(fields["selected"].find(':'), std::string::npos) << line;
    } else if (type == "throughput-point" || type == "latency-point") {
      ASSERT_TRUE(saw_experiment) << "a point before any experiment crashes Coz's viewer: " << line;
      EXPECT_TRUE(fields.count("name")) << line;
      if (type == "throughput-point") {
        ++throughput;
        EXPECT_TRUE(fields.count("delta")) << line;
      } else {
        for (const char* key : {"arrivals", "departures", "difference"}) EXPECT_TRUE(fields.count(key)) << line;
      }
    } else if (type == "samples") {
      ++samples;
      EXPECT_TRUE(fields.count("location") && fields.count("count")) << line;
    } else if (type == "startup" || type == "runtime") {
      EXPECT_TRUE(fields.count("time")) << line;
    }
  }
  EXPECT_EQ(first_type, "startup");
  EXPECT_EQ(last_type, "runtime");
  EXPECT_GE(experiments, 3) << "Coz's viewer shows 'Empty Profile'";
  EXPECT_GE(throughput, experiments);
  EXPECT_GT(samples, 0);
  // Coz's own parser, as the launcher's reader implements it.
  auto parsed = whatif::analysis::read_profile(out);
  ASSERT_TRUE(parsed) << parsed.error();
  EXPECT_EQ(parsed->format, whatif::analysis::ProfileFormat::coz_text);
  EXPECT_EQ(static_cast<int>(parsed->experiments.size()), experiments);
}

TEST_F(Integration, ExperimentsWhoseCpuTimeWentUnsampledAreSetAside) {
  // In the middle of the run two threads whatif cannot see (raw clone()) spin for 250 ms: the
  // experiments then count that CPU time without its samples. In this VM 1 experiment in ~700
  // looked like that (samples lost or the machine stalled) and moved its line by 20-30 points;
  // such experiments are set aside. The first phase's experiments are kept, and a phase that lasts
  // is taken for the program's new normal after kCoverageMaxInARow (5) in a row.
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--fixed-line", marker_spec("unseen.c", "pass"), "--fixed-speedup", "50"},
                  {program("unseen"), "2200", "800"});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.out.find("spinners=2"), std::string::npos) << e;
  EXPECT_NE(e.err.find(" set aside: whatif could not measure them faithfully"), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GE(p.set_aside, 1) << e;
  EXPECT_LE(p.set_aside, 4) << e;
  EXPECT_GE(p.experiments.size(), 8u);
  // What is kept measured the program as it runs outside the phase (those in it made a quarter to
  // a half of their speedup's usual progress), but for an experiment at either edge of the phase,
  // which overlaps it in part: too little evidence to set aside under load.
  std::map<double, std::vector<double>> rates;
  for (const Experiment& x : p.experiments) {
    const PointObservation* pass = point(x, "pass");
    ASSERT_NE(pass, nullptr);
    rates[x.speedup].push_back(pass->delta / x.effective_duration_ns);
  }
  int slow = 0;
  for (auto& [speedup, values] : rates) {
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    double median = sorted[sorted.size() / 2];
    slow += static_cast<int>(std::count_if(values.begin(), values.end(), [&](double rate) { return rate < 0.5 * median; }));
  }
  EXPECT_LE(slow, 2) << "kept experiments at under half their speedup's usual rate";
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes.back().find("set aside"), std::string::npos) << p.notes.back();
  // The report says it too.
  Exit report = Child({kLauncher, "report", out}, {}, dir_).wait();
  ASSERT_EQ(report.status, 0) << report;
  EXPECT_NE(report.out.find("set aside"), std::string::npos) << report;
}

TEST_F(Integration, ProgramNotFound) {
  Exit e = whatif(path("p.jsonl"), {}, {"/nonexistent/whatif-itest-program"});
  EXPECT_EQ(e.status, 127) << e;
  EXPECT_NE(e.err.find("not found"), std::string::npos) << e;
  Exit e2 = whatif(path("p.jsonl"), {}, {"whatif-itest-no-such-program"});
  EXPECT_EQ(e2.status, 127) << e2;
  EXPECT_NE(e2.err.find("whatif-itest-no-such-program"), std::string::npos) << e2;
  EXPECT_NE(e2.err.find("not found"), std::string::npos) << e2;
}

TEST_F(Integration, NoDebugInfoNamesTheObjectAndTheProgramStillRuns) {
  // Without debug info the program runs (profiled by function, see real_programs_test.cpp) and
  // the user is told once which object lacks it and how to get lines.
  Exit e = whatif(path("p.jsonl"), {}, {program("no_debug"), "300"});
  EXPECT_EQ(e.status, 0) << e;
  EXPECT_EQ(e.out, "done\n") << e;
  EXPECT_NE(e.err.find("no debug info"), std::string::npos) << e;
  EXPECT_NE(e.err.find("no_debug"), std::string::npos) << "the message should name the object: " << e;
  EXPECT_NE(e.err.find("-g"), std::string::npos) << "the message should say how to fix it: " << e;
}

TEST_F(Integration, NoProgressPointSuggestsEndToEndOrBreakpoint) {
  std::string out = path("p.jsonl");
  Exit e = whatif(out, {"--experiment-length", "20"}, {program("no_progress"), "1200"});
  EXPECT_EQ(e.out.find("done"), 0u) << e;
  EXPECT_NE(e.err.find("no progress point"), std::string::npos) << e;
  EXPECT_NE(e.err.find("--end-to-end"), std::string::npos) << e;
  EXPECT_NE(e.err.find("-p"), std::string::npos) << e;
  Profile p = load_profile(out);
  check_well_formed(p);
  EXPECT_GE(p.experiments.size(), 1u);
}

TEST_F(Integration, FixedLineOrProgressPointMatchingNoCodeWarns) {
  for (const char* option : {"--fixed-line", "-p"}) {
    SCOPED_TRACE(option);
    std::string out = path(std::string("p") + option + ".jsonl");
    Exit e = whatif(out, {"--experiment-length", "20", option, "two_threads.c:9999"}, {program("two_threads"), "300"});
    ASSERT_EQ(e.status, 0) << e;
    EXPECT_NE(e.err.find("matches no code"), std::string::npos) << e;
    Profile p = load_profile(out);
    check_well_formed(p);
    bool warned = false;
    for (const std::string& w : p.warnings) warned = warned || w.find("two_threads.c:9999") != std::string::npos;
    EXPECT_TRUE(warned) << "no warning record names the spec that matches no code";
    EXPECT_EQ(p.runtimes.size(), 1u);
  }
}

TEST_F(Integration, FixedLineThatIsNeverSampledWarns) {
  // Bug: a --fixed-line with code of its own but no samples (a one-instruction call, a typo that hits
  // the neighbouring line) ran silently: every experiment was a disguised baseline and the report
  // said 0% with a confident interval.
  std::string quiet = path("never.jsonl");
  Exit e = whatif(quiet, {"--experiment-length", "20", "--fixed-line", marker_spec("two_threads.c", "progress"),
                          "--fixed-speedup", "50"},
                  {program("two_threads"), "400"});
  ASSERT_EQ(e.status, 0) << e;
  EXPECT_NE(e.err.find("was never sampled"), std::string::npos) << e;
  Profile p = load_profile(quiet);
  bool warned = false;
  for (const std::string& w : p.warnings) warned = warned || w.find("never sampled") != std::string::npos;
  EXPECT_TRUE(warned) << "the profile keeps the warning for report and view";

  std::string hot = path("hot.jsonl");
  Exit sampled = whatif(hot, {"--experiment-length", "20", "--fixed-line", marker_spec("two_threads.c", "fb"),
                              "--fixed-speedup", "50"},
                        {program("two_threads"), "400"});
  ASSERT_EQ(sampled.status, 0) << sampled;
  EXPECT_EQ(sampled.err.find("never sampled"), std::string::npos) << sampled;
}

TEST_F(Integration, FixedLineOrProgressPointMatchingNoCodeDoesNotStallTheProgram) {
  // Bug: SymbolMap::ranges_for falls back to indexing every out-of-scope object's DWARF (libc's
  // /usr/lib/debug file among them) on the profiler thread: ~0.6 s of CPU, no experiment meanwhile,
  // and exit() waits for it, so a 400 ms program takes 2-4 s.
  constexpr long kProgramMs = 400;
  const Strings command = {program("two_threads"), std::to_string(kProgramMs)};
  Exit matching = whatif(path("matching.jsonl"), {"--experiment-length", "20", "--fixed-line",
                                                  marker_spec("two_threads.c", "fa")}, command);
  ASSERT_EQ(matching.status, 0) << matching;
  for (const char* option : {"--fixed-line", "-p"}) {
    SCOPED_TRACE(option);
    std::string out = path(std::string("p") + option + ".jsonl");
    Exit e = whatif(out, {"--experiment-length", "20", option, "two_threads.c:9999"}, command);
    ASSERT_EQ(e.status, 0) << e;
    Profile p = load_profile(out);
    auto runtimes = p.runtimes;
    ASSERT_EQ(runtimes.size(), 1u);
    // Looking for a line that is nowhere must cost about what finding one does (CPU time is
    // robust to a loaded machine), and must not keep the program alive past its own end.
    EXPECT_LT(e.cpu_seconds, matching.cpu_seconds + 0.3)
        << "CPU time " << e.cpu_seconds << " s, against " << matching.cpu_seconds << " s with a line that exists";
    double elapsed_ms = runtimes[0].elapsed_ns / 1e6;
    EXPECT_LT(elapsed_ms, kProgramMs + 1000) << "the runtime kept a " << kProgramMs << " ms program alive for "
                                             << elapsed_ms << " ms";
  }
}

}  // namespace
}  // namespace itest
