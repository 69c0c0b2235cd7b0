// Opening and closing a thread's SIGTRAP breakpoint (normal context, the owning thread). Its
// signal-handler half (moving, disarming, reading the siginfo) is trap_breakpoint_signal.cpp.
#include "os/trap_breakpoint.h"

#include <linux/hw_breakpoint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "os/fd_guard.h"
#include "os/raw_syscall.h"

namespace whatif::os {

int TrapBreakpoint::open(pid_t tid, uint64_t cookie, uint64_t park) {
  close();
  attr_ = {};
  attr_.size = sizeof(attr_);
  attr_.type = PERF_TYPE_BREAKPOINT;
  attr_.bp_type = HW_BREAKPOINT_X;
  attr_.bp_addr = park;
  attr_.bp_len = sizeof(long);
  attr_.sample_period = 1;  // every hit overflows, and an overflow sends the SIGTRAP
  attr_.disabled = 1;
  attr_.exclude_kernel = 1;
  attr_.exclude_hv = 1;
  attr_.inherit = 0;
  attr_.remove_on_exec = 1;  // required by sigtrap: a new image must not inherit our SIGTRAPs
  attr_.sigtrap = 1;
  attr_.sig_data = cookie;
  long fd = whatif::os::invoke_syscall(SYS_perf_event_open, &attr_, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return -errno;
  fd_ = static_cast<int>(fd);
  protect_fd(fd_);
  armed_ = false;
  return 0;
}

void TrapBreakpoint::close() {
  if (fd_ < 0) return;
  unprotect_fd(fd_);
  ::close(fd_);
  fd_ = -1;
  armed_ = false;
}

}  // namespace whatif::os
