// The effective core clock, measured: the cycles one nanosecond of task clock (thread CPU time)
// holds, from a chain of dependent adds (one cycle each on every x86-64 core). The stall analysis
// turns its sampling period into cycles with it. Run by the launcher after the program; one thread.
#pragma once
#include <string>

namespace whatif::stalls {

struct ClockMeasurement {
  double mhz = 0;      ///< cycles per microsecond of thread CPU time; 0 when it could not be measured
  std::string method;  ///< how, for the `clock` record
};

/// Times `rounds` runs of a chain of dependent register adds against CLOCK_THREAD_CPUTIME_ID (the
/// clock task-clock samples count) and keeps the median rate. About 4 ms per round.
ClockMeasurement measure_clock(int rounds = 5);

}  // namespace whatif::stalls
