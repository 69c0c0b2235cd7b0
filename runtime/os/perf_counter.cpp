// Counting perf events: perf_event_open for counting, read(2) and rdpmc reads. The launcher's one
// thread, or the runtime's application threads for their own counters.
#include "os/perf_counter.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <utility>

#include "os/os.h"

namespace whatif::os {
namespace {

long perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return ::syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

constexpr uint64_t kReadFormat = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;

}  // namespace

CountingEvent::CountingEvent(CountingEvent&& other) noexcept { *this = std::move(other); }

CountingEvent& CountingEvent::operator=(CountingEvent&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_bytes_ = std::exchange(other.mapping_bytes_, 0);
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
  attr.disabled = options.disabled || options.enable_on_exec;
  attr.enable_on_exec = options.enable_on_exec;
  long fd = perf_event_open(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0 && (errno == EACCES || errno == EPERM) && !attr.exclude_kernel) {
    attr.exclude_kernel = 1;  // perf_event_paranoid >= 2: user mode only is still allowed
    fd = perf_event_open(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  }
  if (fd < 0) return -errno;
  fd_ = static_cast<int>(fd);
  if (options.map_user_page) {
    std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* mapping = mmap(nullptr, page, PROT_READ, MAP_SHARED, fd_, 0);
    if (mapping != MAP_FAILED) {  // without it, read_fast falls back to read(2)
      mapping_ = mapping;
      mapping_bytes_ = page;
    }
  }
  return 0;
}

int CountingEvent::enable() { return ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : -errno; }
int CountingEvent::disable() { return ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0) == 0 ? 0 : -errno; }

bool CountingEvent::read(CounterReading& reading) const {
  uint64_t values[3] = {};
  if (fd_ < 0 || read_raw(fd_, values, sizeof(values)) != static_cast<long>(sizeof(values))) return false;
  reading = {values[0], values[1], values[2]};
  return true;
}

bool CountingEvent::rdpmc_allowed() const {
  if (mapping_ == nullptr) return false;
  const auto* page = static_cast<const perf_event_mmap_page*>(mapping_);
  return page->cap_user_rdpmc && page->index != 0;
}

bool CountingEvent::read_fast(CounterReading& reading) const {
  if (mapping_ != nullptr) {
    // The seqlock protocol of include/uapi/linux/perf_event.h: retry while the kernel updates it.
    const auto* page = static_cast<const volatile perf_event_mmap_page*>(mapping_);
    for (int attempt = 0; attempt < 16; ++attempt) {
      uint32_t seq = page->lock;
      std::atomic_signal_fence(std::memory_order_seq_cst);
      uint32_t index = page->index;
      if (!page->cap_user_rdpmc || index == 0) break;
      uint64_t enabled = page->time_enabled;
      uint64_t running = page->time_running;
      int64_t count = page->offset;
      uint32_t low = 0, high = 0;
      asm volatile("rdpmc" : "=a"(low), "=d"(high) : "c"(index - 1));
      uint64_t pmc = (static_cast<uint64_t>(high) << 32) | low;
      uint16_t width = page->pmc_width;
      pmc <<= 64 - width;  // sign-extend the counter's width
      count += static_cast<int64_t>(pmc) >> (64 - width);
      std::atomic_signal_fence(std::memory_order_seq_cst);
      if (page->lock == seq) {
        reading = {static_cast<uint64_t>(count), enabled, running};
        return true;
      }
    }
  }
  uint64_t values[3] = {};
  if (fd_ < 0 || read_raw(fd_, values, sizeof(values)) != static_cast<long>(sizeof(values))) return false;
  reading = {values[0], values[1], values[2]};
  return true;
}

void CountingEvent::close() {
  if (mapping_ != nullptr) munmap(mapping_, mapping_bytes_);
  mapping_ = nullptr;
  mapping_bytes_ = 0;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

double scaled_value(const CounterReading& reading) {
  if (reading.time_running == 0) return 0;
  if (reading.time_running >= reading.time_enabled) return static_cast<double>(reading.value);
  return static_cast<double>(reading.value) * static_cast<double>(reading.time_enabled) /
         static_cast<double>(reading.time_running);
}

CounterReading merge_cpus(const CounterReading& a, const CounterReading& b) {
  return {a.value + b.value, a.time_enabled > b.time_enabled ? a.time_enabled : b.time_enabled,
          a.time_running + b.time_running};
}

double running_fraction(const CounterReading& reading) {
  if (reading.time_enabled == 0) return 1;
  double fraction = static_cast<double>(reading.time_running) / static_cast<double>(reading.time_enabled);
  return fraction > 1 ? 1 : fraction;
}

}  // namespace whatif::os
