// Clocks, thread ids and sleeping through raw syscalls; used from any thread and signal handlers.
#include "os/os.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>

namespace whatif::os {

WHATIF_SIGNAL_SAFE uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t realtime_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

WHATIF_SIGNAL_SAFE pid_t gettid() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

WHATIF_SIGNAL_SAFE int tgkill(pid_t pid, pid_t tid, int sig) {
  return ::syscall(SYS_tgkill, pid, tid, sig) == 0 ? 0 : -errno;
}

WHATIF_SIGNAL_SAFE uint64_t sleep_ns(uint64_t ns) {
  int saved_errno = errno;
  uint64_t start = monotonic_ns();
  timespec request{static_cast<time_t>(ns / 1000000000ull), static_cast<long>(ns % 1000000000ull)};
  timespec remaining{};
  // The raw syscall, so the program's (and our) nanosleep interposition is bypassed.
  while (::syscall(SYS_nanosleep, &request, &remaining) != 0 && errno == EINTR) request = remaining;
  errno = saved_errno;
  return monotonic_ns() - start;
}

int sample_signal() { return SIGRTMIN + 4; }

void raise_fd_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
}

}  // namespace whatif::os
