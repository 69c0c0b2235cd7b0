// Runtime options, read once from the environment the launcher sets (WHATIF_*). Parsed at start-up
// on the initialising thread; read-only afterwards.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "os/perf_counter.h"

namespace whatif::config {

struct LineSpec {
  std::string file;
  uint32_t line = 0;
  std::string text() const { return file + ":" + std::to_string(line); }
};

/// Parses "FILE:LINE"; nullopt when malformed.
std::optional<LineSpec> parse_line_spec(const std::string& text);

/// An event `--counters` counts per thread in the selected functions, as the launcher resolved it.
struct CounterEvent {
  std::string name;
  os::EventEncoding encoding;
  bool forced_unavailable = false;  ///< WHATIF_UNAVAILABLE_EVENTS names it: behave as if it could not open
  int set = -1;  ///< its event set (WHATIF_COUNTER_SETS; sets cycle by call count); -1: counted in every call
};

/// Parses one WHATIF_COUNTER_EVENTS item, "TYPE,CONFIG,CONFIG1,CONFIG2,EXCLUDE_KERNEL,FORCED,NAME"
/// (numbers in decimal; NAME last, so it may hold commas); nullopt when malformed.
std::optional<CounterEvent> parse_counter_event(const std::string& text);

struct Config {
  std::string output = "profile.jsonl";
  bool coz_format = false;
  std::vector<std::string> binary_scope;   // empty: the symbol layer's default (MAIN)
  std::vector<std::string> source_scope;   // empty: default (%)
  std::vector<LineSpec> breakpoint_points;  // -p FILE:LINE
  bool patch_points = true;                 // -p by code patch where safe; WHATIF_PROGRESS_PATCH=off: breakpoints
  std::vector<LineSpec> sampled_points;     // --sampled-point FILE:LINE
  bool end_to_end = false;
  std::optional<LineSpec> fixed_line;
  std::optional<int> fixed_speedup_percent;
  uint64_t sampling_period_ns = 1000000;
  uint64_t first_period_ns = 0;  // WHATIF_FIRST_PERIOD_NS (tests): every thread's first period; 0: random
  bool period_jitter = true;     // WHATIF_PERIOD_JITTER=off: every perf_event period a whole period
  bool sample_trap = true;       // WHATIF_SAMPLE_TRAP=off: O_ASYNC samplers (two events a thread) even where SIGTRAP works
  uint64_t switch_cost_ns = 0;   // WHATIF_SWITCH_COST_NS: a sampling event's switch cost, given (0: measured)
  uint64_t experiment_length_ns = 100000000;   // minimum; grows until enough visits
  uint64_t seed = 0;
  bool seed_given = false;
  bool force_timer_sampler = false;  // WHATIF_SAMPLER=timer (tests cover both backends)
  bool adaptive_allocation = true;   // WHATIF_ALLOCATION=samples: lines in proportion to samples
  bool user_only_sampler = false;    // WHATIF_SAMPLER=user: perf_event without kernel-mode samples
  bool perf_only_sampler = false;    // WHATIF_SAMPLER=perf: perf_event on every thread, never the timer
  bool follow_children = false;
  bool instruction_counts = true;  // WHATIF_INSTRUCTIONS=off: no per-instruction histogram
  bool contention = true;          // WHATIF_CONTENTION=off: delay per sample ignores outside CPU load
  bool spin_pauses = true;         // WHATIF_PAUSE=sleep: pause by sleeping (Coz) instead of spinning
  bool lbr = false;                  // --lbr: software branch records
  uint32_t lbr_depth = 16;           // --lbr-depth: taken branches per burst
  uint32_t lbr_every = 10;           // --lbr-every: samples between bursts
  bool lbr_no_sigtrap = false;       // WHATIF_LBR_NO_SIGTRAP: act as on a kernel before 5.13
  bool lbr_naive = false;            // WHATIF_LBR_NAIVE: no data-flow resolution (benchmarks)
  uint32_t lbr_registers = 4;        // WHATIF_LBR_REGISTERS: debug registers per traced thread (benchmarks)
  std::vector<std::string> counter_functions;  // --counters: functions to count (ScALPEL)
  std::vector<CounterEvent> counter_events;     // --counters: events counted in them, besides time
  uint32_t counter_cycle = 10;                  // --counters: outermost calls per event set before the next
  uint64_t counter_interval_ns = 100000000;     // --counters: counter_interval records (0: none)
  std::vector<CounterEvent> interval_events;    // --counters: process-wide events per interval
  bool rdpmc = true;                            // WHATIF_RDPMC=off: read(2) only
  std::string kallsyms = "/proc/kallsyms";      // WHATIF_KALLSYMS: where the page-fault entry is looked up
  bool live_patch = true;                       // WHATIF_COUNTERS_LIVE_PATCH=off: entries patched at start-up only
  std::vector<std::string> command;
  std::vector<std::string> errors;  // malformed options, reported once the writer is open

  static Config from_environment();
  /// The options as a JSON object for the profile header.
  std::string options_json() const;
};

}  // namespace whatif::config
