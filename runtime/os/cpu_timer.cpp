// CPU-time timers for the timer sampler (when perf_event_open is denied, when asked for, and for
// threads that switch contexts too often for per-thread perf events).
#include "os/cpu_timer.h"

#include <signal.h>

#include <cerrno>

namespace whatif::os {
namespace {

/// The kernel's clock id of thread `tid`'s CPU time (what glibc's pthread_getcpuclockid computes:
/// MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED)); valid for any thread of the calling process.
clockid_t thread_cpu_clock(pid_t tid) {
  constexpr unsigned kPerThread = 4, kSched = 2;
  return static_cast<clockid_t>((~static_cast<unsigned>(tid) << 3) | kPerThread | kSched);
}

}  // namespace

int CpuTimer::create(pid_t tid, int signal) {
  close();
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = signal;
  event._sigev_un._tid = tid;
  if (timer_create(thread_cpu_clock(tid), &event, &timer_) != 0) return -errno;
  open_ = true;
  return 0;
}

int CpuTimer::arm(uint64_t period_ns, uint64_t first_ns) {
  if (!open_) return -EBADF;
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(period_ns / 1000000000ull);
  spec.it_interval.tv_nsec = static_cast<long>(period_ns % 1000000000ull);
  spec.it_value = spec.it_interval;
  if (period_ns != 0 && first_ns != 0 && first_ns < period_ns) {
    spec.it_value.tv_sec = 0;
    spec.it_value.tv_nsec = static_cast<long>(first_ns);
  }
  return timer_settime(timer_, 0, &spec, nullptr) == 0 ? 0 : -errno;
}

int CpuTimer::open(pid_t tid, uint64_t period_ns, int signal, uint64_t first_ns) {
  if (int result = create(tid, signal); result != 0) return result;
  if (int result = arm(period_ns, first_ns); result != 0) {
    close();
    return result;
  }
  return 0;
}

void CpuTimer::close() {
  if (open_) timer_delete(timer_);
  open_ = false;
}

}  // namespace whatif::os
