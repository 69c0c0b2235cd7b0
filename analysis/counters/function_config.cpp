// `--counters` configuration parsing and the report's function tables. Launcher process, one thread.
#include "analysis/counters/function_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "analysis/counters/events.h"

namespace whatif::counters {
namespace {

std::string trim(const std::string& text) {
  std::size_t begin = text.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  std::size_t end = text.find_last_not_of(" \t\r");
  return text.substr(begin, end - begin + 1);
}

void add_unique(std::vector<std::string>& items, const std::string& item) {
  if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
}

std::string per_call(double total, uint64_t calls, bool time) {
  if (calls == 0) return "-";
  double value = total / static_cast<double>(calls);
  if (!time) return fmt::format("{:.1f}", value);
  if (value >= 1e6) return fmt::format("{:.3f} ms", value / 1e6);
  if (value >= 1e3) return fmt::format("{:.3f} us", value / 1e3);
  return fmt::format("{:.0f} ns", value);
}

struct Row {
  std::string function;
  std::string thread;  // empty in the per-function table
  uint64_t calls = 0;
  double inclusive_ns = 0, exclusive_ns = 0;
  struct EventSum {
    double inclusive = 0, exclusive = 0;
    double measured = 0;  ///< calls in which it counted (all of them unless event sets cycled)
  };
  std::map<std::string, EventSum> events;
};

void add(Row& row, const analysis::FunctionCounters& record) {
  row.calls += record.calls;
  row.inclusive_ns += record.inclusive_ns;
  row.exclusive_ns += record.exclusive_ns;
  for (const auto& event : record.events) {
    Row::EventSum& sum = row.events[event.name];
    sum.inclusive += event.inclusive;
    sum.exclusive += event.exclusive;
    sum.measured += event.measured >= 0 ? event.measured : static_cast<double>(record.calls);
  }
}

/// An event's count per call, scaled to every call when it counted in only some (cycled event
/// sets: per call = count / calls counted), with `*` then; "n/a" when it counted in none.
std::string event_per_call(double total, const Row::EventSum& sum, uint64_t calls) {
  if (sum.measured <= 0) return calls == 0 ? "-" : "n/a";
  std::string text = per_call(total * static_cast<double>(calls) / sum.measured, calls, false);
  return sum.measured < static_cast<double>(calls) ? text + "*" : text;
}

std::string render_table(const std::vector<Row>& rows, const std::vector<std::string>& events,
                         const std::vector<std::string>& unavailable, bool threads) {
  std::vector<std::vector<std::string>> cells;
  std::vector<std::string> head = {"function"};
  if (threads) head.push_back("thread");
  for (const char* name : {"calls", "incl/call", "excl/call"}) head.push_back(name);
  for (const std::string& event : events) {
    head.push_back(event + " incl/call");
    head.push_back(event + " excl/call");
  }
  cells.push_back(head);
  for (const Row& row : rows) {
    std::vector<std::string> line = {row.function};
    if (threads) line.push_back(row.thread);
    line.push_back(std::to_string(row.calls));
    line.push_back(per_call(row.inclusive_ns, row.calls, true));
    line.push_back(per_call(row.exclusive_ns, row.calls, true));
    for (const std::string& event : events) {
      auto found = row.events.find(event);
      bool absent = found == row.events.end() ||
                    std::find(unavailable.begin(), unavailable.end(), event) != unavailable.end();
      line.push_back(absent ? "n/a" : event_per_call(found->second.inclusive, found->second, row.calls));
      line.push_back(absent ? "n/a" : event_per_call(found->second.exclusive, found->second, row.calls));
    }
    cells.push_back(line);
  }
  std::vector<std::size_t> widths(head.size(), 0);
  for (const auto& line : cells)
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  std::string out;
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) {
      out += i == 0 ? fmt::format("{:<{}}", line[i], widths[i]) : fmt::format("  {:>{}}", line[i], widths[i]);
    }
    out += "\n";
  }
  return out;
}

}  // namespace

Result<FunctionConfig> parse_function_config(const std::string& text, const std::string& source) {
  FunctionConfig config;
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (std::size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    std::size_t space = line.find_first_of(" \t");
    std::string keyword = line.substr(0, space);
    std::string value = space == std::string::npos ? "" : trim(line.substr(space));
    auto where = [&] { return fmt::format("--counters {}:{}", source, number); };
    if (keyword == "function") {
      if (value.empty()) return Error{where() + ": `function` needs a name, e.g. `function compute`"};
      add_unique(config.functions, value);
    } else if (keyword == "events") {
      std::vector<std::string> names;
      for (const std::string& name : split_event_list({value})) {
        if (std::string trimmed = trim(name); !trimmed.empty()) names.push_back(trimmed);  // "a, b"
      }
      if (names.empty()) return Error{where() + ": `events` needs names, e.g. `events task-clock,page-faults`"};
      for (const std::string& name : names) add_unique(config.events, name);
    } else if (keyword == "eventset") {
      std::vector<std::string> names;
      for (const std::string& name : split_event_list({value})) {
        if (std::string trimmed = trim(name); !trimmed.empty()) add_unique(names, trimmed);
      }
      if (names.empty()) return Error{where() + ": `eventset` needs names, e.g. `eventset cycles,instructions`"};
      config.event_sets.push_back(names);
    } else if (keyword == "counters" || keyword == "cycle" || keyword == "interval") {
      char* end = nullptr;
      unsigned long number = value.empty() ? 0 : std::strtoul(value.c_str(), &end, 10);
      bool zero_ok = keyword == "interval";
      unsigned long most = keyword == "interval" ? 60000 : keyword == "counters" ? 64 : 1000000000;
      if (value.empty() || *end != '\0' || (number == 0 && !zero_ok) || number > most) {
        return Error{where() + fmt::format(": `{}` needs a whole number from {} to {}, e.g. `{} {}`", keyword,
                                           zero_ok ? 0 : 1, most, keyword,
                                           keyword == "interval" ? 100 : keyword == "counters" ? 4 : 10)};
      }
      uint32_t& field = keyword == "counters" ? config.counters : keyword == "cycle" ? config.cycle : config.interval_ms;
      field = static_cast<uint32_t>(number);
    } else {
      return Error{where() + ": unknown keyword '" + keyword +
                   "': each line is `function NAME`, `events A,B,...`, `eventset A,B,...`, `counters N`, "
                   "`cycle N` or `interval MS` (`#` starts a comment)"};
    }
  }
  if (config.functions.empty()) {
    return Error{"--counters " + source + ": names no function: add a line `function NAME` for each function to count"};
  }
  return config;
}

std::vector<EventPlacement> place_events(const FunctionConfig& config,
                                         const std::function<bool(const std::string&)>& hardware) {
  std::vector<EventPlacement> out;
  int sets = static_cast<int>(config.event_sets.size());
  std::vector<std::string> pool;  // `events`' hardware events, split into sets after the explicit ones
  for (const std::string& name : config.events) {
    if (hardware(name)) pool.push_back(name);
    else out.push_back({name, -1});
  }
  for (int set = 0; set < sets; ++set) {
    for (const std::string& name : config.event_sets[static_cast<std::size_t>(set)]) out.push_back({name, set});
  }
  uint32_t per_set = std::max<uint32_t>(1, config.counters);
  // Hardware events that fit the counters with no explicit set need no cycling: every call counts them.
  bool cycle_pool = sets > 0 || pool.size() > per_set;
  for (std::size_t i = 0; i < pool.size(); ++i) {
    out.push_back({pool[i], cycle_pool ? sets + static_cast<int>(i / per_set) : -1});
  }
  return out;
}

Result<FunctionConfig> read_function_config(const std::string& path) {
  std::ifstream file(path);
  if (!file) return Error{"--counters " + path + ": cannot read the file: check the path"};
  std::ostringstream text;
  text << file.rdbuf();
  return parse_function_config(text.str(), path);
}

std::string render_function_counters(const analysis::Profile& profile) {
  std::vector<std::string> events;
  std::map<std::string, Row> functions;
  std::map<std::pair<std::string, std::pair<std::size_t, long>>, Row> threads;
  for (const analysis::FunctionCounters& record : profile.function_counters) {
    for (const auto& event : record.events) add_unique(events, event.name);
    Row& function = functions[record.function];
    function.function = record.function;
    add(function, record);
    Row& thread = threads[{record.function, {record.process, record.tid}}];
    thread.function = record.function;
    long pid = record.process < profile.headers.size() ? profile.headers[record.process].pid : 0;
    thread.thread = pid != 0 ? fmt::format("{}/{}", pid, record.tid) : std::to_string(record.tid);
    add(thread, record);
  }
  std::vector<Row> by_function, by_thread;
  for (auto& [name, row] : functions) by_function.push_back(row);
  for (auto& [key, row] : threads) by_thread.push_back(row);
  // The runtime's one warning per event it could not open: those columns are n/a, not zero.
  std::vector<std::string> unavailable;
  for (const std::string& event : events) {
    for (const std::string& warning : profile.warnings) {
      if (warning.find("event " + event + " not available") != std::string::npos) unavailable.push_back(event);
    }
  }
  std::string out = "Function counters (per call; exclusive excludes selected callees; time is thread CPU time):\n\n";
  out += render_table(by_function, events, unavailable, false);
  out += "\nPer thread (pid/tid):\n\n";
  out += render_table(by_thread, events, unavailable, true);
  // Events that counted in only some calls (event sets cycled by call count, or events a reload
  // added or dropped): their share.
  for (const auto& [name, row] : functions) {
    for (const auto& [event, sum] : row.events) {
      if (sum.measured < static_cast<double>(row.calls) && sum.measured > 0) {
        out += fmt::format("\n* {} in {}: counted in {:.0f} of {} calls (event sets cycle by call count, or a reload changed the "
                           "events); per call = "
                           "count / calls counted",
                           event, name, sum.measured, row.calls);
      }
    }
  }
  for (const std::string& event : unavailable) out += "\n" + event + ": not available on this machine (see the profile's warning)";
  if (out.back() != '\n') out += "\n";
  return out;
}

}  // namespace whatif::counters
