// `whatif stat [-e EVENTS] [-I MS] --- program args`: counts events over a program's whole process
// tree, as perf stat and Gregg's amd64cpiu do: per process and per thread, instructions, cycles, CPI,
// CPU utilisation and the events asked for, with multiplex scaling shown and absent events named.
// Runs in the launcher process, single-threaded; the program runs unmodified (no runtime preloaded):
// one inherited event per column gives the process tree's totals, and per-thread events opened on
// the threads the launcher finds in /proc give the thread rows.
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "analysis/counters/events.h"
#include "analysis/counters/stat.h"
#include "commands.h"
#include "os/perf_counter.h"

namespace whatif::cli {
namespace {

struct StatOptions {
  std::vector<std::string> events;
  double interval_ms = 0;
  bool kernel = false;
  std::string output;
  std::vector<std::string> command;
};

/// The events every run counts, before those asked for: Gregg's first two questions (CPI and
/// utilisation) need exactly these.
const char* const kDefaultEvents[] = {"task-clock", "instructions", "cycles"};

/// The program's threads, found by polling /proc/PID/task, each counted by its own events (not
/// inherited). A thread that lives shorter than the poll is not found: its counts stay in the
/// process total and show as "(unattributed)".
class ThreadTable {
 public:
  ThreadTable(uint32_t pid, const std::vector<counters::ResolvedEvent>& events,
              const std::vector<counters::EventColumn>& columns)
      : pid_(pid), events_(events), columns_(columns), started_(std::chrono::steady_clock::now()) {
    open_thread(pid, true);  // the first thread, before it execs
  }

  void poll() {
    auto now = std::chrono::steady_clock::now();
    std::set<uint32_t> alive;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid_), error)) {
      uint32_t tid = static_cast<uint32_t>(std::strtoul(entry.path().filename().c_str(), nullptr, 10));
      if (tid == 0) continue;
      alive.insert(tid);
      if (threads_.find(tid) == threads_.end()) open_thread(tid, false);
      auto& thread = threads_[tid];
      thread.last_seen = now;
      std::ifstream comm(entry.path() / "comm");
      std::string name;
      if (std::getline(comm, name) && !name.empty()) thread.name = name;
    }
    for (auto& [tid, thread] : threads_) {
      if (!thread.gone && !alive.count(tid) && thread.seen) thread.gone = true;
      thread.seen |= alive.count(tid) != 0;
    }
  }

  /// The current readings of the threads still alive, in order of discovery (for -I's thread rows).
  std::vector<counters::Counts> live() {
    std::vector<counters::Counts> rows;
    for (uint32_t tid : order_) {
      if (!threads_[tid].gone) rows.push_back(read(tid));
    }
    return rows;
  }

  /// Final readings (an event of an exited thread keeps its last count), in order of discovery.
  std::vector<counters::Counts> finish() {
    std::vector<counters::Counts> rows;
    for (uint32_t tid : order_) {
      auto& thread = threads_[tid];
      counters::Counts counts = read(tid);
      auto end = thread.gone ? thread.last_seen : std::chrono::steady_clock::now();
      counts.wall_ns = std::chrono::duration<double, std::nano>(end - thread.first_seen).count();
      rows.push_back(std::move(counts));
    }
    return rows;
  }

 private:
  struct Thread {
    std::string name;
    std::vector<os::CountingEvent> events;
    std::chrono::steady_clock::time_point first_seen, last_seen;
    bool seen = false, gone = false;
  };

  /// A thread's readings now (an exited thread's events keep their last count).
  counters::Counts read(uint32_t tid) {
    auto& thread = threads_[tid];
    counters::Counts counts;
    counts.pid = pid_;
    counts.tid = tid;
    counts.name = thread.name;
    counts.readings.assign(columns_.size(), {});
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (thread.events[i].is_open()) thread.events[i].read(counts.readings[i]);
      if (events_[i].encoding.type == PERF_TYPE_SOFTWARE) counts.readings[i].time_running = counts.readings[i].time_enabled;
    }
    return counts;
  }

  void open_thread(uint32_t tid, bool before_exec) {
    Thread& thread = threads_[tid];
    thread.first_seen = thread.last_seen = std::chrono::steady_clock::now();
    thread.events.resize(columns_.size());
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      if (!columns_[i].available) continue;
      os::CountingEvent::Options open_options;
      open_options.enable_on_exec = before_exec;
      thread.events[i].open(events_[i].encoding, static_cast<pid_t>(tid), -1, open_options);  // a gone thread: none
    }
    order_.push_back(tid);
  }

  uint32_t pid_;
  const std::vector<counters::ResolvedEvent>& events_;
  const std::vector<counters::EventColumn>& columns_;
  std::chrono::steady_clock::time_point started_;
  std::map<uint32_t, Thread> threads_;
  std::vector<uint32_t> order_;
};

int stat(const StatOptions& options) {
  if (options.command.empty()) {
    fmt::print(stderr, "whatif stat: no program given: whatif stat [-e EVENTS] [-I MS] --- PROGRAM [ARGS...]\n");
    return 2;
  }
  std::vector<std::string> names(std::begin(kDefaultEvents), std::end(kDefaultEvents));
  for (const auto& name : counters::split_event_list(options.events)) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::vector<counters::ResolvedEvent> resolved;
  for (const auto& name : names) {
    auto event = counters::resolve_event(name, options.kernel);
    if (!event) {
      fmt::print(stderr, "whatif stat: {}\n", event.error());
      return 2;
    }
    resolved.push_back(*event);
  }

  // go: the launcher tells the child to exec once the counters are open. exec_error: the child
  // reports a failed exec (errno); a successful exec closes it (O_CLOEXEC) with nothing written.
  int go[2], exec_error[2];
  if (pipe2(go, O_CLOEXEC) != 0 || pipe2(exec_error, O_CLOEXEC) != 0) {
    fmt::print(stderr, "whatif stat: pipe failed: {}\n", std::strerror(errno));
    return 2;
  }
  pid_t child = fork();
  if (child < 0) {
    fmt::print(stderr, "whatif stat: fork failed: {}\n", std::strerror(errno));
    return 2;
  }
  if (child == 0) {
    // Wait until the counters are open on this process; they start counting at exec.
    ::close(go[1]);
    char byte;
    while (::read(go[0], &byte, 1) < 0 && errno == EINTR) {
    }
    std::vector<char*> argv;
    for (const std::string& argument : options.command) argv.push_back(const_cast<char*>(argument.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    int error = errno;
    (void)!::write(exec_error[1], &error, sizeof(error));
    _exit(127);
  }
  ::close(go[0]);
  ::close(exec_error[1]);

  auto forced = counters::forced_unavailable_events();
  std::vector<counters::EventColumn> columns;
  std::vector<os::CountingEvent> events(resolved.size());  // the process tree's totals (inherit)
  for (std::size_t i = 0; i < resolved.size(); ++i) {
    counters::EventColumn column;
    column.name = resolved[i].name;
    if (counters::is_forced_unavailable(column.name, forced)) {
      column.reason = counters::open_failure_reason(-ENOENT) + "; forced by WHATIF_UNAVAILABLE_EVENTS";
    } else {
      os::CountingEvent::Options open_options;
      open_options.inherit = true;
      open_options.enable_on_exec = true;
      int error = events[i].open(resolved[i].encoding, child, -1, open_options);
      if (error == 0) column.available = true;
      else column.reason = counters::open_failure_reason(error);
    }
    columns.push_back(column);
  }
  // Per thread: the launcher finds the program's threads in /proc and counts each on its own.
  ThreadTable threads(static_cast<uint32_t>(child), resolved, columns);
  ::close(go[1]);  // the child execs now
  int exec_errno = 0;
  ssize_t got;
  while ((got = ::read(exec_error[0], &exec_errno, sizeof(exec_errno))) < 0 && errno == EINTR) {
  }
  ::close(exec_error[0]);
  if (got == static_cast<ssize_t>(sizeof(exec_errno))) {
    int status = 0;
    waitpid(child, &status, 0);
    std::string hint = options.command[0].find('/') == std::string::npos
                           ? "; give its path (e.g. ./" + options.command[0] + ") or check PATH"
                           : "; check the path and that it is executable";
    fmt::print(stderr, "whatif stat: cannot run {}: {}{}\n", options.command[0], std::strerror(exec_errno), hint);
    return 127;
  }
  auto started = std::chrono::steady_clock::now();

  signal(SIGINT, SIG_IGN);  // Ctrl-C stops the program; we stay to print what it counted
  signal(SIGQUIT, SIG_IGN);

  auto read_totals = [&] {
    std::vector<os::CounterReading> totals(events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (events[i].is_open()) events[i].read(totals[i]);
    }
    return totals;
  };

  std::FILE* out = stderr;
  if (!options.output.empty()) {
    out = std::fopen(options.output.c_str(), "w");
    if (out == nullptr) {
      fmt::print(stderr, "whatif stat: -o {}: cannot write: {}\n", options.output, std::strerror(errno));
      out = stderr;
    }
  }
  auto interval = std::chrono::duration<double, std::milli>(options.interval_ms);
  auto next_row = started + std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
  std::vector<os::CounterReading> previous(events.size());
  std::map<uint32_t, std::vector<os::CounterReading>> thread_previous;
  auto previous_at = started;
  if (options.interval_ms > 0) fmt::print(out, "{}", counters::render_interval_header(columns));
  auto print_row = [&](std::chrono::steady_clock::time_point now) {
    auto totals = read_totals();
    std::vector<counters::Scaled> deltas;
    for (std::size_t i = 0; i < totals.size(); ++i) deltas.push_back(counters::scale_delta(previous[i], totals[i]));
    double at = std::chrono::duration<double, std::nano>(now - started).count();
    double length = std::chrono::duration<double, std::nano>(now - previous_at).count();
    fmt::print(out, "{}", counters::render_interval_row(columns, at, length, deltas));
    // Per thread: each live thread's change since its previous row (since it was found, if new).
    for (const counters::Counts& thread : threads.live()) {
      auto& before = thread_previous[thread.tid];
      before.resize(thread.readings.size());
      std::vector<counters::Scaled> thread_deltas;
      for (std::size_t i = 0; i < thread.readings.size(); ++i) {
        thread_deltas.push_back(counters::scale_delta(before[i], thread.readings[i]));
      }
      fmt::print(out, "{}", counters::render_interval_row(columns, at, length, thread_deltas,
                                                          fmt::format("tid {} {}", thread.tid, thread.name)));
      before = thread.readings;
    }
    std::fflush(out);
    previous = totals;
    previous_at = now;
  };

  int status = 0;
  while (true) {
    pid_t done = waitpid(child, &status, WNOHANG);
    if (done == child) break;
    if (done < 0 && errno != EINTR) break;
    auto now = std::chrono::steady_clock::now();
    auto sleep = std::chrono::milliseconds(20);
    if (options.interval_ms > 0) {
      if (now >= next_row) {
        print_row(now);
        next_row += std::chrono::duration_cast<std::chrono::steady_clock::duration>(interval);
      }
      sleep = std::min(sleep, std::chrono::duration_cast<std::chrono::milliseconds>(next_row - now) +
                                  std::chrono::milliseconds(1));
    }
    threads.poll();
    std::this_thread::sleep_for(sleep);
  }
  auto ended = std::chrono::steady_clock::now();
  if (options.interval_ms > 0 && ended > previous_at) print_row(ended);

  counters::StatTable table;
  table.command = options.command;
  table.columns = columns;
  table.elapsed_ns = std::chrono::duration<double, std::nano>(ended - started).count();
  table.threads = counters::with_unattributed(static_cast<uint32_t>(child), read_totals(), threads.finish());
  table.processes = counters::per_process(table.threads);
  if (!table.threads.empty()) table.processes.front().name = table.threads.front().name;
  fmt::print(out, "{}", counters::render_stat(table));
  if (out != stderr) std::fclose(out);
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

}  // namespace

void register_stat(CLI::App& app, Commands& commands) {
  auto options = std::make_shared<StatOptions>();
  CLI::App* command = app.add_subcommand(
      "stat", "Count events over a run, per process and per thread: instructions, cycles, CPI, utilisation "
              "(whatif stat [-e EVENTS] [-I MS] --- PROGRAM [ARGS...])");
  command->add_option("-e,--events", options->events,
                      "Events to count besides task-clock, instructions and cycles: perf names (cache-misses, "
                      "page-faults...) or this CPU's libpfm4 names, comma-separated or repeated");
  command->add_option("-I,--interval", options->interval_ms, "Also print one row per interval of this many ms")
      ->check(CLI::Range(10.0, 3600000.0));
  command->add_flag("--kernel", options->kernel, "Count kernel mode too (default: user mode only, :u)");
  command->add_option("-o,--output", options->output, "Write the counts to this file instead of stderr");
  command->add_option("command", options->command, "The program and its arguments, after --- or --");
  command->prefix_command();
  command->callback([&commands, command, options] {
    std::vector<std::string> rest = command->remaining();
    options->command.insert(options->command.end(), rest.begin(), rest.end());
    if (commands.program_given) {  // main() kept everything after the first `---`/`--` verbatim
      if (!options->command.empty()) options->command.push_back(commands.separator);
      options->command.insert(options->command.end(), commands.program.begin(), commands.program.end());
    }
    commands.run = [options] { return stat(*options); };
  });
}

}  // namespace whatif::cli
