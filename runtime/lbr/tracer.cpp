// A thread's branch tracer: allocation of its burst buffers and block cache, and opening and
// closing its breakpoint. The owning thread, normal context. The handlers' half is
// tracer_signal.cpp.
#include "lbr/tracer.h"

#include <algorithm>

#include "os/os.h"

namespace whatif::lbr {

const char* end_reason_name(EndReason reason) {
  switch (reason) {
    case EndReason::kOutsideCode: return "outside_code";
    case EndReason::kRseq: return "rseq";
    case EndReason::kUnsupported: return "unsupported_instruction";
    case EndReason::kUnreadable: return "unreadable_target";
    case EndReason::kBreakpointFailed: return "breakpoint_failed";
    case EndReason::kStepLimit: return "step_limit";
    case EndReason::kLate: return "late_sigtrap";
    case EndReason::kWrongPc: return "wrong_pc";
    case EndReason::kWrongStack: return "other_context";
    case EndReason::kStale: return "stale";
    case EndReason::kThreadExit: return "thread_exit";
    case EndReason::kRingFull: return "buffers_full";
    case EndReason::kCount: break;
  }
  return "unknown";
}

int ThreadTracer::open(pid_t tid, const Settings& settings, uint64_t cookie) {
  settings_ = settings;
  settings_.depth = std::clamp<uint32_t>(settings_.depth, 1, kMaxDepth);
  settings_.every = std::max<uint32_t>(settings_.every, 1);
  cookie_ = cookie;
  buffers_ = std::make_unique<Edge[]>(static_cast<std::size_t>(kSlots) * settings_.depth);
  counts_ = std::make_unique<uint32_t[]>(kSlots);
  cache_ = std::make_unique<Block[]>(kCacheEntries);
  uint64_t park = reinterpret_cast<uint64_t>(&end_reason_name);
  int result = breakpoints_[0].open(tid, cookie, park);
  registers_ = result == 0 ? 1 : 0;
  // More debug registers when allowed and free (a debugger or -p breakpoints may hold some), and
  // while descriptors are plentiful: each costs one per thread, and the program's come first.
  uint32_t wanted = std::clamp<uint32_t>(settings_.registers, 1, kRegisters);
  uint64_t spare = os::fd_soft_limit() / 4;
  while (result == 0 && registers_ < wanted && breakpoints_[registers_].open(tid, cookie, park) == 0) {
    if (static_cast<uint64_t>(breakpoints_[registers_].fd()) > spare) {
      breakpoints_[registers_].close();
      break;
    }
    ++registers_;
  }
  state_ = result == 0 ? State::kIdle : State::kClosed;
  return result;
}

void ThreadTracer::close() {
  if (state_ == State::kWaiting) end_burst(EndReason::kThreadExit);
  state_ = State::kClosed;
  for (os::TrapBreakpoint& breakpoint : breakpoints_) breakpoint.close();
  registers_ = 0;
}

}  // namespace whatif::lbr
