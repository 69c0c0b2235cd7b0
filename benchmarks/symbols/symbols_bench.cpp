// Symbol-layer benchmark: time and peak RSS to open a large binary (unit index only), answer the
// first lookup (one unit parsed), build the whole map, and run many warm lookups. Single-threaded.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <random>
#include <string>

#include "symbols/symbol_map.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

long current_rss_kib() {
  long pages = 0, resident = 0;
  if (FILE* f = std::fopen("/proc/self/statm", "r")) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return resident * 4;
}

void report(const char* phase, double ms) {
  fmt::print("{:<28} {:>10.2f} ms   peak RSS {:>8} KiB   RSS {:>8} KiB\n", phase, ms, peak_rss_kib(), current_rss_kib());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: {} BINARY ADDRESS_HEX [LOOKUPS]\n", argv[0]);
    return 2;
  }
  const std::string path = argv[1];
  const uintptr_t first_address = std::strtoull(argv[2], nullptr, 16);
  const long lookups = argc > 3 ? std::atol(argv[3]) : 1000000;
  using whatif::symbols::SymbolMap;
  report("baseline", 0);

  auto start = Clock::now();
  auto opened = SymbolMap::for_file(path);
  if (!opened.ok()) {
    fmt::print(stderr, "error: {}\n", opened.error());
    return 1;
  }
  auto& map = *opened.value();
  report("open (unit index)", ms_since(start));

  start = Clock::now();
  auto info = map.lookup(first_address);
  report("first lookup", ms_since(start));
  if (!info) {
    fmt::print(stderr, "error: no line for {:#x}\n", first_address);
    return 1;
  }
  fmt::print("  {:#x} -> {}:{} {}\n", first_address, info->frames[0].file, info->frames[0].line,
             info->frames[0].function);

  start = Clock::now();
  auto summary = map.summarize(map.objects()[0]);
  report("whole map (all units)", ms_since(start));
  fmt::print("  {} units, {} files, {} line rows\n", summary.compilation_units, summary.files, summary.line_rows);

  const auto& ranges = map.objects()[0].executable_ranges;
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<uintptr_t> pick(ranges.front().begin, ranges.front().end - 1);
  long found = 0;
  start = Clock::now();
  for (long i = 0; i < lookups; ++i) found += map.lookup(pick(rng)).has_value();
  double ms = ms_since(start);
  report("warm random lookups", ms);
  fmt::print("  {} lookups, {} found, {:.0f} ns/lookup\n", lookups, found, ms * 1e6 / static_cast<double>(lookups));

  // Samples cluster in hot code: the same lookups within a 64 KiB window around the first address.
  std::uniform_int_distribution<uintptr_t> hot(first_address - 32768, first_address + 32767);
  found = 0;
  start = Clock::now();
  for (long i = 0; i < lookups; ++i) found += map.lookup(hot(rng)).has_value();
  ms = ms_since(start);
  report("warm hot-window lookups", ms);
  fmt::print("  {} lookups, {} found, {:.0f} ns/lookup\n", lookups, found, ms * 1e6 / static_cast<double>(lookups));

  // In-process start-up, as the runtime does it: default scope (MAIN), then every loaded object
  // (last, so that its memory does not inflate the figures above).
  for (bool everything : {false, true}) {
    whatif::symbols::Scope scope;
    if (everything) scope.binary_patterns = {"%"};
    auto start = Clock::now();
    auto process = SymbolMap::for_current_process(scope);
    double ms = ms_since(start);
    if (!process.ok()) {
      fmt::print(stderr, "error: {}\n", process.error());
      return 1;
    }
    std::size_t with_debug = 0;
    for (const auto& o : process.value()->objects()) with_debug += o.has_debug_info;
    report(everything ? "for_current_process (%)" : "for_current_process (MAIN)", ms);
    fmt::print("  {} objects, {} with debug info\n", process.value()->objects().size(), with_debug);
  }

  return 0;
}
