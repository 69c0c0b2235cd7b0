// Counting perf events: perf_event_open for counting and read(2). The launcher's one thread.
#include "os/perf_counter.h"

#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "os/os.h"
#include "os/raw_syscall.h"

namespace whatif::os {
namespace {

long perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return whatif::os::invoke_syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

constexpr uint64_t kReadFormat = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

}  // namespace

CountingEvent::CountingEvent(CountingEvent&& other) noexcept { *this = std::move(other); }

CountingEvent& CountingEvent::operator=(CountingEvent&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

int CountingEvent::open(const EventEncoding& encoding, pid_t pid, int cpu, const Options& options) {
  close();
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = encoding.type;
  attr.config = encoding.config;
  attr.config1 = encoding.config1;
  attr.config2 = encoding.config2;
  attr.exclude_kernel = encoding.exclude_kernel;
  attr.exclude_hv = encoding.exclude_hv;
  attr.read_format = kReadFormat;
  attr.inherit = options.inherit;
  attr.disabled = options.enable_on_exec;
  attr.enable_on_exec = options.enable_on_exec;
  long fd = perf_event_open(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EPERM) && !attr.exclude_kernel) {
    attr.exclude_kernel = 1;  // perf_event_paranoid >= 2: user mode only is still allowed
    fd = perf_event_open(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  }
  if (fd < 0) return -errno;
  fd_ = static_cast<int>(fd);
  return 0;
}

bool CountingEvent::read(CounterReading& reading) const {
  uint64_t values[3] = {};
  if (fd_ < 0 || read_raw(fd_, values, sizeof(values)) != static_cast<long>(sizeof(values))) return false;
  reading = {values[0], values[1], values[2]};
  return true;
}

void CountingEvent::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

double scaled_value(const CounterReading& reading) {
  if (reading.time_running == 0) return 0;
  if (reading.time_running >= reading.time_enabled) return static_cast<double>(reading.value);
  return static_cast<double>(reading.value) * static_cast<double>(reading.time_enabled) /
         static_cast<double>(reading.time_running);
}

double running_fraction(const CounterReading& reading) {
  if (reading.time_enabled == 0) return 1;
  double fraction = static_cast<double>(reading.time_running) / static_cast<double>(reading.time_enabled);
  return fraction > 1 ? 1 : fraction;
}

}  // namespace whatif::os
