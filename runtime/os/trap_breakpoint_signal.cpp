// The signal-handler half of a thread's SIGTRAP breakpoint: moving and disarming it with raw
// ioctls, and reading the perf fields of a TRAP_PERF siginfo. Runs in the owning thread's
// handlers (and its normal context); signal-safe only.
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include "os/raw_syscall.h"
#include "os/trap_breakpoint.h"

namespace whatif::os {
namespace {

// The kernel's siginfo (asm-generic/siginfo.h) for SIGTRAP: si_signo, si_errno, si_code, padding,
// then _sigfault { void* addr; union { short addr_lsb; ...; struct { unsigned long data; u32 type;
// u32 flags; } perf } } (x86-64 has no trapno): the perf fields follow the address.
constexpr std::size_t kAddrOffset = 16;
constexpr std::size_t kPerfDataOffset = 24;
constexpr std::size_t kPerfTypeOffset = 32;
constexpr std::size_t kPerfFlagsOffset = 36;
static_assert(sizeof(siginfo_t) >= kPerfFlagsOffset + 4);

}  // namespace

WHATIF_SIGNAL_SAFE bool trap_perf_info(const siginfo_t* info, TrapPerfInfo& out) {
  if (info == nullptr || info->si_signo != SIGTRAP || info->si_code != kTrapPerf) return false;
  const auto* raw = reinterpret_cast<const unsigned char*>(info);
  std::memcpy(&out.address, raw + kAddrOffset, sizeof(out.address));
  std::memcpy(&out.data, raw + kPerfDataOffset, sizeof(out.data));
  std::memcpy(&out.type, raw + kPerfTypeOffset, sizeof(out.type));
  std::memcpy(&out.flags, raw + kPerfFlagsOffset, sizeof(out.flags));
  return true;
}

WHATIF_SIGNAL_SAFE int TrapBreakpoint::move_to(uint64_t address) {
  if (fd_ < 0) return -EBADF;
  int saved = errno;
  attr_.bp_addr = address;
  attr_.disabled = 0;
  long result = whatif::os::invoke_syscall(SYS_ioctl, fd_, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &attr_);
  int error = result == 0 ? 0 : -errno;
  attr_.disabled = 1;  // the attr the next modification starts from
  armed_ = result == 0;
  errno = saved;
  return error;
}

WHATIF_SIGNAL_SAFE int TrapBreakpoint::disarm() {
  if (fd_ < 0 || !armed_) return 0;
  int saved = errno;
  long result = whatif::os::invoke_syscall(SYS_ioctl, fd_, PERF_EVENT_IOC_DISABLE, 0);
  int error = result == 0 ? 0 : -errno;
  armed_ = false;
  errno = saved;
  return error;
}

}  // namespace whatif::os
