// One hardware execution breakpoint that signals its own thread with SIGTRAP (perf_event
// attr.sigtrap, Linux 5.13+), moved from address to address by the branch tracer. open/close run
// on the owning thread in normal context; move_to/disarm run in its signal handlers.
#pragma once
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/types.h>

#include <cstdint>

#include "base/signal_safe.h"

namespace whatif::os {

/// si_code of a SIGTRAP sent by a perf event with attr.sigtrap (asm-generic/siginfo.h).
inline constexpr int kTrapPerf = 6;
/// si_perf_flags bit: the SIGTRAP was blocked when the event fired and arrives late.
inline constexpr uint32_t kTrapPerfFlagAsync = 1u << 0;

/// The perf fields of a TRAP_PERF siginfo, which glibc's siginfo_t does not name.
struct TrapPerfInfo {
  uint64_t address = 0;  ///< si_addr: the breakpoint's address
  uint64_t data = 0;     ///< si_perf_data: the event's attr.sig_data
  uint32_t type = 0;     ///< si_perf_type: PERF_TYPE_BREAKPOINT
  uint32_t flags = 0;    ///< si_perf_flags: kTrapPerfFlagAsync
};
/// Reads them from a SIGTRAP's siginfo; false unless si_code is TRAP_PERF.
WHATIF_SIGNAL_SAFE bool trap_perf_info(const siginfo_t* info, TrapPerfInfo& out);

class TrapBreakpoint {
 public:
  TrapBreakpoint() = default;
  TrapBreakpoint(const TrapBreakpoint&) = delete;
  TrapBreakpoint& operator=(const TrapBreakpoint&) = delete;
  ~TrapBreakpoint() { close(); }

  /// Opens a disabled breakpoint on thread `tid` (per thread, not inherited, removed on exec)
  /// whose SIGTRAP carries `cookie` as si_perf_data; `park` is any executable user address.
  /// Returns 0 or -errno: EINVAL/E2BIG on kernels without attr.sigtrap (before 5.13), EACCES or
  /// EPERM when perf is denied, ENOSPC when the debug registers are taken.
  int open(pid_t tid, uint64_t cookie, uint64_t park);
  bool is_open() const { return fd_ >= 0; }
  /// Enables the breakpoint at `address` (PERF_EVENT_IOC_MODIFY_ATTRIBUTES). Returns 0 or -errno.
  WHATIF_SIGNAL_SAFE int move_to(uint64_t address);
  /// Disables it (PERF_EVENT_IOC_DISABLE) when armed. Returns 0 or -errno.
  WHATIF_SIGNAL_SAFE int disarm();
  bool armed() const { return armed_; }
  uint64_t address() const { return attr_.bp_addr; }
  int fd() const { return fd_; }
  void close();

 private:
  int fd_ = -1;
  bool armed_ = false;
  perf_event_attr attr_{};
};

}  // namespace whatif::os
