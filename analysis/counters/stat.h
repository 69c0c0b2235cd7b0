// `whatif stat`'s arithmetic and tables, apart from the process that counts: per-thread counts from
// an inherited event's total and its exit counts, multiplex scaling, CPI and utilisation, interval
// deltas, and the text perf stat users expect. Pure code, any thread.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "os/perf_counter.h"

namespace whatif::counters {

/// One column of the table: an event the user asked for (or a default one) and whether it counts.
struct EventColumn {
  std::string name;
  bool available = false;
  std::string reason;  ///< why not, when unavailable
};

/// One thread's (or process's) readings, one per column (unavailable columns hold zeros).
struct Counts {
  uint32_t pid = 0, tid = 0;
  std::string name;
  std::vector<os::CounterReading> readings;
  double wall_ns = 0;  ///< the thread's observed life (found to gone), 0 when unknown (then: the run's)
};

/// A reading's scaled value and how much of its enabled time it counted.
struct Scaled {
  double value = 0;
  double fraction = 1;  ///< running / enabled: below 1 when multiplexed
};
Scaled scale(const os::CounterReading& reading);

/// The change between two cumulative readings, scaled by the change in running over enabled time:
/// an interval's own multiplexing, not the run's so far.
Scaled scale_delta(const os::CounterReading& before, const os::CounterReading& after);

/// The thread rows plus, when the process tree's totals hold more than the rows (over 0.1% of a
/// column), a row tid 0 "(unattributed)" with the rest: threads that lived shorter than the poll
/// that finds threads, and child processes' threads.
std::vector<Counts> with_unattributed(uint32_t root_pid, const std::vector<os::CounterReading>& totals,
                                      std::vector<Counts> threads);
/// Sums threads into one Counts per process (pid), in first-seen order.
std::vector<Counts> per_process(const std::vector<Counts>& threads);

/// The figures a row shows, computed from one Counts (or one interval's deltas).
struct Derived {
  std::optional<double> cpi;           ///< cycles / instructions, when both count and instructions > 0
  std::optional<double> utilisation;   ///< CPUs used: task-clock ns / wall ns, when task-clock counts
};
/// `wall_ns` is the thread's (or interval's) wall time; columns are found by name.
Derived derive(const std::vector<EventColumn>& columns, const std::vector<Scaled>& values, double wall_ns);

/// The final table: a process block, then one row per thread.
struct StatTable {
  std::vector<std::string> command;
  std::vector<EventColumn> columns;
  double elapsed_ns = 0;
  std::vector<Counts> processes;
  std::vector<Counts> threads;
};
std::string render_stat(const StatTable& table);

/// -I: the header line and one row per interval.
std::string render_interval_header(const std::vector<EventColumn>& columns);
/// `thread`: empty for the process row; else the thread it is (e.g. "tid 1234 worker"), printed after
/// the row's CPI, the row indented under its process row.
std::string render_interval_row(const std::vector<EventColumn>& columns, double at_ns, double interval_ns,
                                const std::vector<Scaled>& deltas, const std::string& thread = "");

/// "1,234,567" for counts, "12.345" ms for clocks.
std::string format_count(double value);

}  // namespace whatif::counters
