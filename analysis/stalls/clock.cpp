// Measures the effective core clock with dependent adds over thread CPU time (see clock.h). Offline:
// the launcher's thread, after the program ended.
#include "analysis/stalls/clock.h"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <vector>

namespace whatif::stalls {
namespace {

double thread_cpu_ns() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e9 + static_cast<double>(t.tv_nsec);
}

/// 10 * n dependent adds: each waits for the previous one's result (latency 1), so the chain takes
/// 10 * n cycles; the loop's own 3 micro-ops per 10 cycles issue beside it. Register operands, not
/// immediates: Golden Cove and later Intel cores fold `add $imm, reg` chains at rename, and an
/// immediate chain read 13000-15000 MHz on a 2.3-GHz Xeon of that family.
__attribute__((noinline)) uint64_t add_chain(uint64_t n) {
  uint64_t x = 0;
  uint64_t one = 1;
  __asm__ volatile("" : "+r"(one));  // not a constant the compiler could turn back into an immediate
  for (uint64_t i = 0; i < n; ++i) {
#if defined(__x86_64__)
    __asm__ volatile(
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
        : "+r"(x)
        : "r"(one));
#else
    __asm__ volatile("" : "+r"(x));
    x += 10;
#endif
  }
  return x;
}

}  // namespace

ClockMeasurement measure_clock(int rounds) {
  ClockMeasurement out;
#if defined(__x86_64__)
  constexpr uint64_t kIterations = 1000000;  // 10 M cycles: about 4 ms at 2.5 GHz
  add_chain(kIterations / 10);               // wake the core up to its running clock
  std::vector<double> rates;
  for (int r = 0; r < rounds; ++r) {
    double begin = thread_cpu_ns();
    uint64_t adds = add_chain(kIterations);
    double ns = thread_cpu_ns() - begin;
    if (ns > 0 && adds == 10 * kIterations) rates.push_back(static_cast<double>(adds) / ns * 1000.0);
  }
  if (rates.empty()) return out;
  std::sort(rates.begin(), rates.end());
  out.mhz = rates[rates.size() / 2];
  out.method = "dependent adds (1 cycle each) over thread CPU time, median of " + std::to_string(rates.size());
#else
  (void)rounds;
#endif
  return out;
}

}  // namespace whatif::stalls
