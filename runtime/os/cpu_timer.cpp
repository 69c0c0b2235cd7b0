// CPU-time timers for the timer sampler (used when perf_event_open is denied).
#include "os/cpu_timer.h"

#include <signal.h>

#include <cerrno>

namespace whatif::os {

int CpuTimer::open(pid_t tid, uint64_t period_ns, int signal) {
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = signal;
  event._sigev_un._tid = tid;
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &timer_) != 0) return -errno;
  open_ = true;
  itimerspec spec{};
  spec.it_interval.tv_sec = static_cast<time_t>(period_ns / 1000000000ull);
  spec.it_interval.tv_nsec = static_cast<long>(period_ns % 1000000000ull);
  spec.it_value = spec.it_interval;
  if (timer_settime(timer_, 0, &spec, nullptr) != 0) {
    int error = errno;
    close();
    return -error;
  }
  return 0;
}

void CpuTimer::close() {
  if (open_) timer_delete(timer_);
  open_ = false;
}

}  // namespace whatif::os
