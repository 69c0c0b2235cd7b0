// `whatif stat`'s arithmetic and text: scaling, per-thread subtraction, CPI and utilisation, tables.
// Pure code, any thread.
#include "analysis/counters/stat.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>

namespace whatif::counters {
namespace {

int column_of(const std::vector<EventColumn>& columns, const char* name) {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].available && columns[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool is_clock(const std::string& name) { return name == "task-clock" || name == "cpu-clock"; }

std::string format_value(const std::string& name, double value) {
  if (is_clock(name)) return fmt::format("{:.3f} ms", value / 1e6);
  return format_count(value);
}

std::string scaling_note(double fraction) {
  if (fraction >= 0.9995) return "";
  return fmt::format("  (scaled: counted {:.1f}% of the time)", 100 * fraction);
}

std::vector<Scaled> scale_all(const Counts& counts) {
  std::vector<Scaled> values;
  for (const auto& reading : counts.readings) values.push_back(scale(reading));
  return values;
}

double wall_of(const Counts& counts, double fallback) { return counts.wall_ns > 0 ? counts.wall_ns : fallback; }

}  // namespace

Scaled scale(const os::CounterReading& reading) { return {os::scaled_value(reading), os::running_fraction(reading)}; }

Scaled scale_delta(const os::CounterReading& before, const os::CounterReading& after) {
  os::CounterReading delta{after.value - before.value, after.time_enabled - before.time_enabled,
                           after.time_running - before.time_running};
  if (delta.time_enabled == 0) return {static_cast<double>(delta.value), 1};
  return scale(delta);
}

std::vector<Counts> with_unattributed(uint32_t root_pid, const std::vector<os::CounterReading>& totals,
                                      std::vector<Counts> threads) {
  Counts rest;
  rest.pid = root_pid;
  rest.tid = 0;
  rest.name = "(unattributed)";
  rest.readings = totals;
  for (const auto& thread : threads) {
    for (std::size_t column = 0; column < totals.size() && column < thread.readings.size(); ++column) {
      auto& left = rest.readings[column];
      const auto& own = thread.readings[column];
      left.value -= std::min(left.value, own.value);
      left.time_running -= std::min(left.time_running, own.time_running);
      left.time_enabled -= std::min(left.time_enabled, own.time_enabled);
    }
  }
  // Counted work no thread row holds, beyond rounding: a thread shorter than the poll, a child process.
  bool any = false;
  for (std::size_t column = 0; column < totals.size(); ++column) {
    any |= rest.readings[column].value * 1000 > totals[column].value && rest.readings[column].value > 0;
  }
  if (any) threads.push_back(rest);
  return threads;
}

std::vector<Counts> per_process(const std::vector<Counts>& threads) {
  std::vector<Counts> processes;
  for (const auto& thread : threads) {
    auto found = std::find_if(processes.begin(), processes.end(), [&](const Counts& p) { return p.pid == thread.pid; });
    if (found == processes.end()) {
      Counts process;
      process.pid = process.tid = thread.pid;
      process.name = thread.name;
      process.readings.assign(thread.readings.size(), {});
      processes.push_back(process);
      found = processes.end() - 1;
    }
    for (std::size_t i = 0; i < thread.readings.size(); ++i) {
      found->readings[i].value += thread.readings[i].value;
      found->readings[i].time_running += thread.readings[i].time_running;
      found->readings[i].time_enabled += thread.readings[i].time_enabled;
    }
  }
  return processes;
}

Derived derive(const std::vector<EventColumn>& columns, const std::vector<Scaled>& values, double wall_ns) {
  Derived derived;
  int instructions = column_of(columns, "instructions");
  int cycles = column_of(columns, "cycles");
  if (instructions >= 0 && cycles >= 0 && values[instructions].value > 0) {
    derived.cpi = values[cycles].value / values[instructions].value;
  }
  int clock = column_of(columns, "task-clock");
  if (clock >= 0 && wall_ns > 0) derived.utilisation = values[clock].value / wall_ns;
  return derived;
}

std::string format_count(double value) {
  auto digits = fmt::format("{:.0f}", std::round(value));
  std::string out;
  int count = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (count > 0 && count % 3 == 0 && *it != '-') out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++count;
  }
  return out;
}

std::string render_stat(const StatTable& table) {
  std::string out;
  std::string command;
  for (const auto& word : table.command) command += (command.empty() ? "" : " ") + word;
  out += fmt::format("\n Counter stats for '{}' ({:.3f} s elapsed):\n", command, table.elapsed_ns / 1e9);
  for (const auto& process : table.processes) {
    out += fmt::format("\n process {}{}:\n", process.pid, process.name.empty() ? "" : " (" + process.name + ")");
    auto values = scale_all(process);
    double wall = table.elapsed_ns;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      const auto& column = table.columns[i];
      if (!column.available) {
        out += fmt::format(" {:>20}  {:<22} not available on this machine ({})\n", "", column.name, column.reason);
        continue;
      }
      out += fmt::format(" {:>20}  {:<22}{}\n", format_value(column.name, values[i].value), column.name,
                         scaling_note(values[i].fraction));
    }
    Derived derived = derive(table.columns, values, wall);
    if (derived.cpi) out += fmt::format(" {:>20}  {:<22} cycles per instruction\n", fmt::format("{:.2f}", *derived.cpi), "CPI");
    else out += fmt::format(" {:>20}  {:<22} not available on this machine (needs instructions and cycles)\n", "", "CPI");
    if (derived.utilisation) {
      out += fmt::format(" {:>20}  {:<22} CPUs utilised (task-clock / elapsed)\n",
                         fmt::format("{:.3f}", *derived.utilisation), "utilisation");
    } else {
      out += fmt::format(" {:>20}  {:<22} not available (needs task-clock)\n", "", "utilisation");
    }
  }
  out += "\n per thread:\n";
  std::string header = fmt::format(" {:>7} {:>7} {:<16}", "pid", "tid", "name");
  for (const auto& column : table.columns) header += fmt::format(" {:>16}", column.name);
  header += fmt::format(" {:>7} {:>7}", "CPI", "util");
  out += header + "\n";
  for (const auto& thread : table.threads) {
    auto values = scale_all(thread);
    std::string row = fmt::format(" {:>7} {:>7} {:<16}", thread.pid, thread.tid, thread.name.substr(0, 16));
    bool scaled = false;
    for (std::size_t i = 0; i < table.columns.size(); ++i) {
      if (!table.columns[i].available) {
        row += fmt::format(" {:>16}", "n/a");
        continue;
      }
      std::string value = format_value(table.columns[i].name, values[i].value);
      if (values[i].fraction < 0.9995) {
        value += "*";
        scaled = true;
      }
      row += fmt::format(" {:>16}", value);
    }
    Derived derived = derive(table.columns, values, wall_of(thread, table.elapsed_ns));
    row += fmt::format(" {:>7} {:>7}", derived.cpi ? fmt::format("{:.2f}", *derived.cpi) : "n/a",
                       derived.utilisation ? fmt::format("{:.3f}", *derived.utilisation) : "n/a");
    out += row + (scaled ? "   * scaled (multiplexed)" : "") + "\n";
  }
  std::vector<std::string> missing;
  for (const auto& column : table.columns) {
    if (!column.available) missing.push_back(column.name);
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& name : missing) names += (names.empty() ? "" : ", ") + name;
    out += fmt::format("\n not available on this machine: {} (n/a above)\n", names);
  }
  return out;
}

std::string render_interval_header(const std::vector<EventColumn>& columns) {
  std::string out = fmt::format("# {:>10} {:>9}", "time(s)", "util");
  for (const auto& column : columns) out += fmt::format(" {:>18}", column.name);
  out += fmt::format(" {:>7}  (process; then each live thread's row, indented, named after its CPI)\n", "CPI");
  for (const auto& column : columns) {
    if (!column.available) out += fmt::format("# {}: not available on this machine ({})\n", column.name, column.reason);
  }
  return out;
}

std::string render_interval_row(const std::vector<EventColumn>& columns, double at_ns, double interval_ns,
                                const std::vector<Scaled>& deltas, const std::string& thread) {
  Derived derived = derive(columns, deltas, interval_ns);
  std::string out = fmt::format("{}{:>10.3f} {:>9}", thread.empty() ? "  " : "   ", at_ns / 1e9,
                                derived.utilisation ? fmt::format("{:.3f}", *derived.utilisation) : "n/a");
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (!columns[i].available) {
      out += fmt::format(" {:>18}", "n/a");
      continue;
    }
    std::string value = format_value(columns[i].name, deltas[i].value);
    if (deltas[i].fraction < 0.9995) value += fmt::format(" ({:.0f}%)", 100 * deltas[i].fraction);
    out += fmt::format(" {:>18}", value);
  }
  out += fmt::format(" {:>7}", derived.cpi ? fmt::format("{:.2f}", *derived.cpi) : "n/a");
  if (!thread.empty()) out += "  " + thread;
  return out + "\n";
}

}  // namespace whatif::counters
