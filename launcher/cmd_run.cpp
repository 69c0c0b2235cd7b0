// `whatif run [options] --- program args`: launches the program with libwhatif.so preloaded, shows
// progress, then finishes the profile (source snippets, clear diagnostics) and returns the
// program's exit status. Runs in the launcher process, single-threaded.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <fmt/format.h>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "analysis/branches/branches.h"
#include "analysis/branches/flow_record.h"
#include "analysis/causal/analysis.h"
#include "analysis/counters/events.h"
#include "analysis/counters/function_config.h"
#include "analysis/profile/profile.h"
#include "analysis/stalls/clock.h"
#include "analysis/stalls/stalls_report.h"
#include "commands.h"
#include "launcher_paths.h"
#include "run_options.h"
#include "whatif/environment.h"

namespace whatif::cli {
namespace {


void fail(const std::string& message) { std::fprintf(stderr, "whatif: error: %s\n", message.c_str()); }
void note(const std::string& message) { std::fprintf(stderr, "whatif: %s\n", message.c_str()); }

/// Finds `name` like execvp would; empty when not found. Sets `why` on failure.
std::string resolve_program(const std::string& name, std::string& why) {
  auto check = [&](const std::string& path) -> bool {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) return false;
    if (S_ISDIR(info.st_mode)) {
      why = path + " is a directory";
      return false;
    }
    if (access(path.c_str(), X_OK) != 0) {
      why = path + " is not executable: chmod +x it, or check the path";
      return false;
    }
    return true;
  };
  if (name.find('/') != std::string::npos) {
    if (check(name)) return name;
    if (why.empty()) why = "program " + name + " not found";
    return {};
  }
  const char* path = std::getenv("PATH");
  std::string directories = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= directories.size()) {
    std::size_t end = directories.find(':', start);
    if (end == std::string::npos) end = directories.size();
    std::string directory = directories.substr(start, end - start);
    std::string candidate = (directory.empty() ? "." : directory) + "/" + name;
    if (check(candidate)) return candidate;
    start = end + 1;
  }
  if (why.empty()) why = "program '" + name + "' not found in PATH: give its path, e.g. ./" + name;
  return {};
}

/// Progress visits of all experiments: throughput deltas and latency arrivals.
double progress_visits(const analysis::Profile& profile) {
  double visits = 0;
  for (const auto& experiment : profile.experiments) {
    for (const auto& point : experiment.points) visits += point.kind == analysis::PointKind::latency ? point.arrivals : point.delta;
  }
  return visits;
}

/// A --fixed-line --fixed-speedup run's answer, one message per progress point: the prediction at
/// that speedup and its interval, from the run's own pairs (the table `whatif report` prints first).
std::vector<std::string> fixed_speedup_answers(const analysis::Profile& profile) {
  analysis::Report report = analysis::analyse({profile}, analysis::Options{});
  std::vector<std::string> answers;
  if (report.fixed_speedup <= 0 || report.lines.empty()) return answers;
  const analysis::LineResult& line = report.lines.front();
  for (const analysis::PointResult& point : line.points) {
    const analysis::CurvePoint* sped = analysis::curve_point_at(point, report.fixed_speedup);
    const analysis::CurvePoint* base = analysis::curve_point_at(point, 0);
    if (sped == nullptr || base == nullptr) continue;
    std::string interval = sped->has_ci ? fmt::format(" (95% CI {:+.1f}% to {:+.1f}%)", sped->ci_low * 100, sped->ci_high * 100)
                                        : " (too few experiments for an interval)";
    // Wider than +-10 points: say how to narrow it (the pairs of the same command add up).
    const bool wide = !sped->has_ci || sped->ci_high - sped->ci_low > 0.2;
    answers.push_back(fmt::format("if {} ran {:.0f}% faster, the program would speed up by {:+.1f}%{} at progress "
                                  "point '{}', from {} experiments at {:.0f}% and {} baselines",
                                  line.line, report.fixed_speedup * 100, sped->program_speedup * 100, interval,
                                  point.name, sped->n_experiments, report.fixed_speedup * 100, base->n_experiments) +
                      (wide ? "; run it again with --append (or on a longer input) for a narrower interval" : ""));
  }
  return answers;
}

/// Appends `source` records with a few lines around each profiled line whose file is readable.
void embed_sources(const std::string& path, const analysis::Profile& profile) {
  constexpr long kContext = 3;
  constexpr std::size_t kMaxLines = 400;
  std::map<std::string, std::set<long>> wanted;
  std::size_t count = 0;
  auto want = [&](const std::string& location) {
    auto colon = location.rfind(':');
    if (colon == std::string::npos || count >= kMaxLines) return;
    long line = std::atol(location.c_str() + colon + 1);
    if (line > 0 && wanted[location.substr(0, colon)].insert(line).second) ++count;
  };
  for (const auto& experiment : profile.experiments) want(experiment.selected);
  std::vector<std::pair<double, std::string>> by_samples;
  for (const auto& [location, samples] : profile.sample_counts) by_samples.emplace_back(-samples, location);
  std::sort(by_samples.begin(), by_samples.end());
  for (const auto& entry : by_samples) want(entry.second);

  std::ofstream out(path, std::ios::app);
  for (const auto& [file, lines] : wanted) {
    std::ifstream source(file);
    if (!source) continue;
    std::vector<std::string> text;
    for (std::string row; std::getline(source, row);) text.push_back(row);
    long shown_until = 0;
    for (long line : lines) {
      long first = std::max(1L, line - kContext);
      long last = std::min(static_cast<long>(text.size()), line + kContext);
      if (first <= shown_until) first = shown_until + 1;
      if (first > last) continue;
      out << analysis::source_record({file, first, std::vector<std::string>(text.begin() + first - 1, text.begin() + last)});
      shown_until = last;
    }
  }
}

/// Appends the stall analysis of the procedures with at least 1% of the per-instruction samples
/// (`stalls` records), so the viewer shows them without disassembling. After the run: it never
/// inflates the program's time.
void embed_stalls(const std::string& path, const analysis::Profile& profile) {
  if (profile.instructions.empty()) return;
  std::vector<std::string> notes;
  auto results = stalls::analyse_profile(profile, 0.01, &notes);
  std::ofstream out(path, std::ios::app);
  constexpr std::size_t kMaxProcedures = 20;
  for (std::size_t i = 0; i < results.size() && i < kMaxProcedures; ++i) out << stalls::stalls_record(results[i]);
  for (const std::string& note : notes) out << analysis::warning_record(note);
}

/// Appends a `branch_flow` record for each of the functions with the most taken branches of each
/// object in the profile's branch records (`--lbr`), and the source lines those functions span,
/// so the viewer draws their hot paths beside the source. After the run, like embed_stalls.
void embed_branch_flows(const std::string& path) {
  constexpr std::size_t kFunctions = 8;
  constexpr long kMaxSpan = 150;  // source lines per function
  auto branches = analysis::read_branches(path);
  if (!branches || branches->objects.empty()) return;
  std::ofstream out(path, std::ios::app);
  std::map<std::string, std::pair<long, long>> spans;  // file -> [first, last] line
  for (const analysis::ObjectBranches& object : branches->objects) {
    auto object_code = code::ElfCode::read(object.path);
    if (!object_code) continue;
    auto map = symbols::SymbolMap::for_file(object.path);
    symbols::SymbolMap* symbols = map ? map->get() : nullptr;
    for (const analysis::FunctionFlow& flow : analysis::function_flows(object, *object_code, kFunctions)) {
      out << analysis::branch_flow_record(flow, object.path, symbols);
      if (symbols == nullptr) continue;
      std::string file;
      long first = 0, last = 0;
      for (const analysis::FlowBlock& block : flow.blocks) {
        auto info = symbols->lookup(block.start);
        if (!info || info->frames.front().line == 0) continue;
        const symbols::SourceLine& line = info->frames.front();
        if (file.empty()) file = std::string(line.file);
        if (line.file != file) continue;
        long number = static_cast<long>(line.line);
        first = first == 0 ? number : std::min(first, number);
        last = std::max(last, number);
      }
      if (file.empty()) continue;
      last = std::min(last, first + kMaxSpan);
      auto [known, added] = spans.emplace(file, std::make_pair(first, last));
      if (!added) known->second = {std::min(known->second.first, first), std::max(known->second.second, last)};
    }
  }
  for (const auto& [file, span] : spans) {
    std::ifstream source(file);
    if (!source) continue;
    std::vector<std::string> text;
    for (std::string row; std::getline(source, row);) text.push_back(row);
    long first = std::max(1L, span.first - 1), last = std::min(static_cast<long>(text.size()), span.second + 1);
    if (first > last) continue;
    out << analysis::source_record({file, first, std::vector<std::string>(text.begin() + first - 1, text.begin() + last)});
  }
}

void append_warning(const std::string& path, const std::string& message) {
  std::ofstream out(path, std::ios::app);
  out << analysis::warning_record(message);
}

volatile sig_atomic_t g_child_pid = 0;
void forward_signal(int sig) {
  if (g_child_pid > 0) ::kill(g_child_pid, sig);
}

}  // namespace

std::string resolve_counter_events(const counters::FunctionConfig& config, const std::string& file,
                                   std::vector<CounterEventOption>& events) {
  std::vector<std::string> forced = counters::forced_unavailable_events();
  std::map<std::string, os::EventEncoding> resolved;
  auto resolve = [&](const std::string& name) -> std::string {
    if (resolved.count(name)) return "";
    auto event = counters::resolve_event(name);
    if (!event) return "--counters " + file + ": " + event.error();
    resolved[name] = event->encoding;
    return "";
  };
  for (const std::string& name : config.events) {
    if (std::string error = resolve(name); !error.empty()) return error;
  }
  for (const auto& set : config.event_sets) {
    for (const std::string& name : set) {
      if (std::string error = resolve(name); !error.empty()) return error;
    }
  }
  auto hardware = [&](const std::string& name) { return counters::needs_pmu_counter(resolved.at(name)); };
  for (const counters::EventPlacement& placed : counters::place_events(config, hardware)) {
    events.push_back(
        {placed.name, resolved.at(placed.name), counters::is_forced_unavailable(placed.name, forced), placed.set});
  }
  return "";
}

namespace {

/// --counters CONFIG: reads the file and resolves its events (libpfm4) for the runtime. False after
/// telling the user what is wrong.
bool resolve_counters(RunOptions& options) {
  auto config = counters::read_function_config(options.counters);
  if (!config) {
    fail(config.error());
    return false;
  }
  options.counter_functions = config->functions;
  if (std::string error = resolve_counter_events(*config, options.counters, options.counter_events); !error.empty()) {
    fail(error);
    return false;
  }
  options.counter_cycle = config->cycle;
  options.counter_interval_ms = config->interval_ms;
  // CPI and utilisation over time (Gregg's first questions): the process's task-clock, instructions and cycles.
  std::vector<std::string> forced = counters::forced_unavailable_events();
  for (const char* name : {"task-clock", "instructions", "cycles"}) {
    auto event = counters::resolve_event(name);
    if (!event) continue;  // libpfm4 knows these three on every machine; nothing to count otherwise
    options.interval_events.push_back({name, event->encoding, counters::is_forced_unavailable(name, forced), -1});
  }
  return true;
}

int run(RunOptions options) {
  if (options.command.empty()) {
    fail("no program given: whatif run [options] --- PROGRAM [ARGS...]");
    return 2;
  }
  if (!options.counters.empty() && !resolve_counters(options)) return 2;
  std::string why;
  std::string program = resolve_program(options.command[0], why);
  if (program.empty()) {
    fail(why);
    return 127;
  }
  std::string runtime = find_runtime_library();
  if (runtime.empty()) {
    fail("cannot find libwhatif.so next to the whatif launcher (looked in ../lib and its own directory): rebuild with `make`");
    return 2;
  }
  bool coz = options.format == "coz";
  if (!coz && options.format != "whatif") {
    fail("--format must be whatif or coz, not '" + options.format + "'");
    return 2;
  }
  std::string output = !options.output.empty() ? options.output : coz ? "profile.coz" : "profile.jsonl";

  if (!options.append) std::filesystem::remove(output);
  std::string absolute_output = std::filesystem::absolute(output).string();

  Environment variables = runtime_environment(options, absolute_output);
  // Our format records warnings, which the launcher relays once; Coz's format cannot hold them.
  if (!coz && std::getenv(environment::kLog) == nullptr) variables.emplace_back(environment::kLog, "error");
  const char* existing = std::getenv("LD_PRELOAD");
  variables.emplace_back("LD_PRELOAD", existing && *existing ? runtime + ":" + existing : runtime);

  pid_t launcher = getpid();
  pid_t child = fork();
  if (child < 0) {
    fail(std::string("fork failed: ") + std::strerror(errno));
    return 2;
  }
  if (child == 0) {
    // The program must not outlive its launcher (kill -9, `timeout -s KILL`): an orphan would run
    // on, still paying virtual-speedup delays, with nobody to finish its profile. The death signal
    // survives execve. The launcher may have died before prctl: then the parent is already another.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != launcher) _exit(128 + SIGKILL);
    for (const auto& [name, value] : variables) setenv(name.c_str(), value.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& argument : options.command) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    execv(program.c_str(), argv.data());
    std::fprintf(stderr, "whatif: error: cannot run %s: %s\n", program.c_str(), std::strerror(errno));
    _exit(127);
  }
  g_child_pid = child;
  // Ctrl-C reaches the program through the terminal; the launcher stays to finish the profile.
  signal(SIGINT, SIG_IGN);
  signal(SIGQUIT, SIG_IGN);
  signal(SIGTERM, forward_signal);
  signal(SIGHUP, forward_signal);

  bool tty = isatty(STDERR_FILENO) && !options.quiet;
  auto started = std::chrono::steady_clock::now();
  auto last_report = started;
  auto last_scan = started;
  analysis::ProfileFollower progress(absolute_output);
  std::size_t warnings_shown = 0;
  auto relay_warnings = [&] {
    const auto& warnings = progress.profile().warnings;
    for (; warnings_shown < warnings.size(); ++warnings_shown) {
      std::fprintf(stderr, "%swhatif: warning: %s\n", tty ? "\r\033[K" : "", warnings[warnings_shown].c_str());
    }
  };
  int status = 0;
  while (true) {
    pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto now = std::chrono::steady_clock::now();
    auto interval = tty ? std::chrono::milliseconds(500) : std::chrono::milliseconds(10000);
    if (now - last_scan >= std::chrono::milliseconds(500)) {
      last_scan = now;
      progress.poll();
      relay_warnings();
    }
    if (!options.quiet && now - last_report >= interval) {
      last_report = now;
      double seconds = std::chrono::duration<double>(now - started).count();
      std::fprintf(stderr, "%swhatif: %.0fs, %zu experiments, %.0f progress visits -> %s%s", tty ? "\r" : "", seconds,
                   progress.profile().experiments.size(), progress_visits(progress.profile()), output.c_str(),
                   tty ? "   " : "\n");
    }
  }
  if (tty) std::fprintf(stderr, "\n");
  g_child_pid = 0;

  int exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
  auto profile = analysis::read_profile(absolute_output);
  if (!profile) {
    fail("the program wrote no usable profile (" + profile.error() +
         "): did it run at all? Check that it is dynamically linked (LD_PRELOAD cannot enter a static binary)");
    return exit_status != 0 ? exit_status : 1;
  }
  if (WIFSIGNALED(status) && !coz) {
    append_warning(absolute_output, std::string("the program was terminated by ") + strsignal(WTERMSIG(status)) +
                                        "; the profile keeps every experiment completed before that");
  }
  if (!coz) embed_sources(absolute_output, *profile);
  if (!coz && !profile->instructions.empty()) {
    // The stall analysis needs cycles per sampling period: measure the core's clock now, on the same
    // machine just after the run, rather than trust the nominal one (boost and power states move it).
    stalls::ClockMeasurement clock = stalls::measure_clock();
    if (clock.mhz > 0) {
      std::ofstream(absolute_output, std::ios::app) << analysis::clock_record(clock.mhz, clock.method);
      profile->measured_mhz = clock.mhz;
    }
  }
  if (!coz) embed_stalls(absolute_output, *profile);
  if (!coz) embed_branch_flows(absolute_output);

  progress.poll();
  relay_warnings();
  std::size_t experiments = profile->experiments.size();
  double visits = progress_visits(*profile);
  // The runtime records exit status -1 when the program replaced itself with exec.
  const bool execed = !profile->runtimes.empty() && profile->runtimes.front().exit_status == -1 && !coz;
  if (experiments == 0 && execed && !options.follow_children) {
    note(fmt::format("no experiment completed: the program replaced itself with exec {:.2f} s in; --follow-children "
                     "profiles the program it execs",
                     profile->runtimes.front().elapsed_ns / 1e9));
  } else if (experiments == 0) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    note(fmt::format("no experiment completed in {:.1f} s: run the program longer (e.g. a bigger input), or shorten "
                     "experiments with --experiment-length", seconds));
  } else if (visits == 0) {
    std::string message = "no progress point was reached: add COZ_PROGRESS (include/whatif.h or coz.h) where a unit of "
                          "work completes, or use --end-to-end, or -p FILE:LINE for a progress point without a source edit";
    fail(message);
    if (!coz) append_warning(absolute_output, message);
  }
  if (!options.fixed_line.empty() && experiments > 0) {
    // A line that no sample ever landed in is never sped up: every experiment is a baseline in
    // disguise and the prediction is 0 by construction. Usually a typo, or a line that compiles to no
    // code of its own (a declaration, a macro's call site whose code carries other lines).
    double selected = 0;
    bool known = true;
    for (const auto& experiment : profile->experiments) {
      if (experiment.selected_samples < 0) known = false;
      selected += std::max(0.0, experiment.selected_samples);
    }
    if (known && selected == 0) {
      std::string message = fmt::format(
          "--fixed-line {} was never sampled in {} experiments, so it was never sped up and its prediction is 0 "
          "by construction: check the line (a sampled FILE:LINE from `whatif report` or `whatif lines`); the body of "
          "a function inlined into it carries the function's own line numbers, not the call's",
          options.fixed_line, experiments);
      std::fprintf(stderr, "whatif: warning: %s\n", message.c_str());
      if (!coz) append_warning(absolute_output, message);
    }
  }
  if (!options.fixed_line.empty() && options.fixed_speedup > 0 && !options.end_to_end && experiments > 0) {
    for (const std::string& answer : fixed_speedup_answers(*profile)) note(answer);
  }
  std::string set_aside = profile->set_aside > 0 ? fmt::format(", {} set aside: whatif could not measure them "
                                                               "faithfully (samples lost, or its own work took a CPU)",
                                                               profile->set_aside)
                                                 : "";
  note(fmt::format("profile: {} ({} experiments, {:.0f} progress visits{})", output, experiments, visits, set_aside));
  if (!coz && experiments > 0) {
    note(fmt::format("see the answer: whatif report {}   |   whatif view {}", output, output));
  }
  return exit_status;
}

}  // namespace

void register_run(CLI::App& app, Commands& commands) {
  auto options = std::make_shared<RunOptions>();
  CLI::App* run_command = app.add_subcommand(
      "run", "Profile a program: whatif run [options] --- PROGRAM [ARGS...] (a plain -- works too)");
  run_command->add_option("-b,--binary-scope", options->binary_scope,
                          "Objects whose lines may be chosen: MAIN (the executable), OWN (its shared libraries from outside the "
                          "system's library directories), %-wildcards, !exclusions (default: MAIN OWN)")
      ->take_all();
  run_command->add_option("-s,--source-scope", options->source_scope,
                          "Source files whose lines may be chosen: %-wildcards, !exclusions (default: all of "
                          "the in-scope objects' own sources)")
      ->take_all();
  run_command->add_option("-p,--progress", options->progress_points,
                          "A progress point FILE:LINE in an unmodified binary: its first instruction is patched to count "
                          "visits (a hardware breakpoint where a patch is unsafe) (repeatable)");
  run_command->add_option("--sampled-progress", options->sampled_points,
                          "A sampled progress point FILE:LINE: samples in that line count as progress");
  run_command->add_option("-o,--output", options->output, "Profile file (default profile.jsonl, or profile.coz with --format coz)");
  run_command->add_flag("--end-to-end", options->end_to_end, "One experiment per run, measured by total runtime");
  run_command->add_option("--fixed-line", options->fixed_line, "Only speed up this FILE:LINE");
  run_command->add_option("--fixed-speedup", options->fixed_speedup, "Only use this virtual speedup, in percent, paired with speedup-0 baselines so one run carries its own baseline")
      ->check(CLI::Range(0, 100));
  run_command->add_option("--sampling-period", options->sampling_period_ms, "Sampling period in milliseconds (default 1)")
      ->check(CLI::Range(0.1, 1000.0));
  run_command->add_option("--experiment-length", options->experiment_length_ms,
                          "Minimum experiment length in milliseconds (default 100; grows until progress points see "
                          "enough visits)")
      ->check(CLI::Range(1.0, 100000.0));
  run_command->add_option("--seed", options->seed, "Random seed for line and speedup choice")->check(CLI::NonNegativeNumber);
  run_command->add_option("--format", options->format, "Profile format: whatif (JSON Lines, default) or coz (Coz's text)");
  run_command->add_option("--sampler", options->sampler,
                          "Sampling backend: auto (perf_event with kernel time when allowed, moving threads that "
                          "block more often than their perf events' switches can be paid for with 3% of their CPU "
                          "time, 4000-10000 times per CPU-second by what a switch costs here, to a CPU-time timer; "
                          "else timer), perf "
                          "(perf_event on every thread), user (perf_event, user mode only) or timer")
      ->check(CLI::IsMember({"auto", "perf", "user", "timer"}));
  run_command->add_option("--allocation", options->allocation,
                          "Which lines experiments go to: adaptive (default: lines whose effect is uncertain and "
                          "could rank at the top) or samples (in proportion to samples, as Coz)")
      ->check(CLI::IsMember({"adaptive", "samples"}));
  run_command->add_flag("--append", options->append, "Append to the profile instead of replacing it");
  run_command->add_flag("--no-instructions", options->no_instructions,
                        "Keep no per-instruction sample counts (the stall analysis's input)");
  run_command->add_flag("--no-contention", options->no_contention,
                        "Do not scale virtual speedups for CPU time other processes take from the program's "
                        "threads (by default a sample under outside load stands for the longer wall time it took)");
  run_command->add_option("--pause", options->pause,
                          "How threads pause for a virtual speedup: spin (default: while the program wants more "
                          "CPUs than it has, a paused thread keeps its CPU share, as the working thread it stands for "
                          "would; otherwise it sleeps) or sleep (always, as Coz: the CPU goes to other threads "
                          "meanwhile, which biases programs with more runnable threads than CPUs)")
      ->check(CLI::IsMember({"spin", "sleep"}));
  run_command->add_option("--counters", options->counters,
                          "Count calls, time and events of the functions CONFIG names (programs built with "
                          "-finstrument-functions; format in docs/counters.md)");
  run_command->add_flag("--follow-children", options->follow_children,
                        "Also preload the runtime into programs it execs (forked children are always profiled)");
  run_command->add_flag("-q,--quiet", options->quiet, "No progress line");
  run_command->add_flag("--lbr", options->lbr,
                        "Also record software branch records: bursts of taken branches traced with hardware "
                        "breakpoints from samples (for `whatif report --branches` and `whatif export`)");
  run_command->add_option("--lbr-depth", options->lbr_depth, "Taken branches per --lbr burst (default 16)")
      ->check(CLI::Range(1, 1024));
  run_command->add_option("--lbr-every", options->lbr_every,
                          "Samples between --lbr bursts (default 10: one burst per 10 ms of CPU time at the default period)")
      ->check(CLI::Range(1, 1000000));
  run_command->add_option("command", options->command, "The program and its arguments, after --- or --");
  run_command->prefix_command();
  run_command->callback([&commands, run_command, options] {
    std::vector<std::string> rest = run_command->remaining();
    options->command.insert(options->command.end(), rest.begin(), rest.end());
    if (commands.program_given) {
      // `whatif run PROGRAM ARGS -- MORE` (no separator before the program): the `--` is the program's.
      if (!options->command.empty()) options->command.push_back(commands.separator);
      options->command.insert(options->command.end(), commands.program.begin(), commands.program.end());
    }
    commands.run = [options] { return run(*options); };
  });
}

}  // namespace whatif::cli
