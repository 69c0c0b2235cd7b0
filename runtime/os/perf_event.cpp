// perf_event_open, ring mapping and record parsing for samplers and breakpoint counters.
// open/close run on the sampled thread or the profiler thread; drain on the profiler thread only.
#include "os/perf_event.h"
#include "os/fd_guard.h"
#include "os/os.h"
#include "os/raw_syscall.h"

#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <asm/perf_regs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace whatif::os {
namespace {

constexpr std::size_t kRingPages = 8;  // data pages per sampler (32 KiB: ~150 samples of deep stacks)
// Data pages when samples carry kStackBytes of stack (~8.5 KiB a record): 128 KiB hold 14 samples,
// 14 ms at the default 1 ms period, against a drain every 1 ms; the kernel counts what overflows
// in PERF_RECORD_LOST.
constexpr std::size_t kRingPagesWithStack = 32;
// The general registers unwinding reads (perf's numbers): AX..IP and R8..R15; segment registers
// are rejected for 64-bit tasks and flags are not needed.
constexpr uint64_t kUserRegsMask = ((1ull << PERF_REG_X86_IP) * 2 - 1) |
                                   (((1ull << (PERF_REG_X86_R15 - PERF_REG_X86_R8 + 1)) - 1) << PERF_REG_X86_R8);
static_assert(PERF_REG_X86_64_MAX == UserStack::kRegisterCount);

long perf_event_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return whatif::os::invoke_syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/// A task-clock event's attributes, the base of the samplers, the probe and the switch-cost probe.
perf_event_attr task_clock_attr() {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_TASK_CLOCK;
  return attr;
}

}  // namespace

int PerfSampler::open(pid_t tid, uint64_t period_ns, int signal, uint32_t wakeup_samples, bool with_stack,
                      bool kernel_only, uint64_t first_period_ns) {
  const Modes modes{.user = !kernel_only, .kernel = kernel_only, .trap_cookie = 0};
  if (int result = open_first(tid, period_ns, wakeup_samples, with_stack, modes, first_period_ns); result != 0) {
    return result;
  }

  if (signal > 0 && !kernel_only) {
    f_owner_ex owner{F_OWNER_TID, tid};
    if (fcntl(fd_, F_SETFL, O_ASYNC) != 0 || fcntl(fd_, F_SETSIG, signal) != 0 ||
        fcntl(fd_, F_SETOWN_EX, &owner) != 0) {
      int error = errno;
      close();
      return -error;
    }
  }
  return 0;
}

int PerfSampler::open_trapping(pid_t tid, uint64_t period_ns, uint64_t cookie, bool with_kernel, uint64_t first_period_ns) {
  const Modes modes{.user = true, .kernel = with_kernel, .trap_cookie = cookie};
  return open_first(tid, period_ns, 1, /*with_stack=*/true, modes, first_period_ns);
}

int PerfSampler::open_first(pid_t tid, uint64_t period_ns, uint32_t wakeup_samples, bool with_stack, Modes modes,
                            uint64_t first_period_ns) {
  period_ns = std::max(period_ns, kShortestPeriodNs);
  uint64_t first = first_period_ns != 0 && first_period_ns < period_ns ? std::max(first_period_ns, kShortestPeriodNs) : period_ns;
  int result = open_with(tid, first, wakeup_samples, with_stack, modes);
  // The larger ring may exceed the locked-memory budget (perf_event_mlock_kb + RLIMIT_MEMLOCK, per
  // user): keep sampling with frame-pointer callchains only.
  if (with_stack && (result == -EPERM || result == -ENOMEM)) result = open_with(tid, first, wakeup_samples, false, modes);
  if (result != 0) return result;
  period_ns_ = period_ns;
  first_period_pending_.store(first != period_ns, std::memory_order_release);
  return 0;
}

int PerfSampler::open_event(pid_t tid, uint64_t period_ns, uint32_t wakeup_samples, bool with_stack, Modes modes,
                            bool enabled) {
  perf_event_attr attr = task_clock_attr();
  attr.sample_period = std::max(period_ns, kShortestPeriodNs);
  attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
  attr.disabled = enabled ? 0 : 1;
  // One sampler sees user mode, another (kernel_only) the kernel: exclude_kernel alone drops the
  // task-clock samples of system calls and page faults, and the time of a line that mostly reads or
  // writes was lost.
  attr.exclude_kernel = modes.kernel ? 0 : 1;
  attr.exclude_user = modes.user ? 0 : 1;
  attr.exclude_hv = 1;
  // Kernel callchains only where they tell a page fault from an interrupt (the last kernel frame
  // is the entry stub), on a kernel-mode sampler: the user part still starts with the user IP.
  attr.exclude_callchain_kernel = modes.kernel && page_fault_entry_known() ? 0 : 1;
  if (modes.trap_cookie != 0) {
    attr.sigtrap = 1;
    attr.remove_on_exec = 1;
    attr.sig_data = modes.trap_cookie;
    // No wake-ups: the profiler drains on its tick and nobody polls (the kernel caps the watermark
    // at the ring's size).
    attr.watermark = 1;
    attr.wakeup_watermark = std::numeric_limits<uint32_t>::max();
  } else {
    // 1 for every event that may share a ring: the kernel counts wake-ups per ring, and with larger
    // values one event's samples would use up the other's.
    attr.wakeup_events = wakeup_samples > 0 ? wakeup_samples : 1;
  }
  if (with_stack) {
    attr.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
    attr.sample_regs_user = kUserRegsMask;
    attr.sample_stack_user = kStackBytes;
  }
  long fd = perf_event_open(&attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return -errno;
  fd_ = static_cast<int>(fd);
  protect_fd(fd_);
  return 0;
}

int PerfSampler::open_into(const PerfSampler& ring, pid_t tid, uint64_t period_ns, uint32_t wakeup_samples,
                           bool kernel_only) {
  if (!ring.is_open() || ring.ring_ == nullptr) return -EBADF;
  // Counting from the start: it sends no signal, and its first sample, a whole period away, can only
  // come after SET_OUTPUT below (before it, a record would have no ring and be dropped). An ioctl
  // to enable it cost a new thread about 5 us.
  const Modes modes{.user = !kernel_only, .kernel = kernel_only, .trap_cookie = 0};
  if (int result = open_event(tid, period_ns, wakeup_samples, ring.has_stack(), modes, /*enabled=*/true);
      result != 0) {
    return result;
  }
  if (ioctl(fd_, PERF_EVENT_IOC_SET_OUTPUT, ring.fd_) != 0) {
    int error = errno;
    close();
    return -error;
  }
  return 0;
}

int PerfSampler::open_with(pid_t tid, uint64_t period_ns, uint32_t wakeup_samples, bool with_stack, Modes modes) {
  if (int result = open_event(tid, period_ns, wakeup_samples, with_stack, modes, /*enabled=*/false); result != 0) {
    return result;
  }

  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t pages = with_stack ? kRingPagesWithStack : kRingPages;
  mapping_bytes_ = page * (1 + pages);
  ring_bytes_ = page * pages;
  void* mapping = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (mapping == MAP_FAILED) {
    int error = errno;
    close();
    return -error;
  }
  ring_ = mapping;
  if (with_stack) stack_ = std::make_unique<unsigned char[]>(kStackBytes);
  return 0;
}

int PerfSampler::enable() { return ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0) == 0 ? 0 : -errno; }
int PerfSampler::disable() { return ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0) == 0 ? 0 : -errno; }

void PerfSampler::close() {
  if (ring_ != nullptr) munmap(ring_, mapping_bytes_);
  ring_ = nullptr;
  if (fd_ >= 0) close_counter(fd_);
  fd_ = -1;
  stack_.reset();
}

bool PerfSampler::next_record(RawSample& sample, bool& is_sample, uint64_t limit, uint64_t owner_scanned_until) {
  auto* meta = static_cast<perf_event_mmap_page*>(ring_);
  uint64_t tail = meta->data_tail;
  if (tail >= limit) return false;

  perf_event_header header;
  uint64_t word = header_at(tail);
  std::memcpy(&header, &word, sizeof(header));
  if (header.size < sizeof(header)) {  // cannot happen with a sane kernel; resynchronise
    __atomic_store_n(&meta->data_tail, limit, __ATOMIC_RELEASE);
    return false;
  }
  is_sample = false;
  if (header.type == PERF_RECORD_SAMPLE) {
    uint64_t after_callchain = decode_sample(tail, sample);
    sample.user = nullptr;
    if (stack_ != nullptr) decode_user(after_callchain, sample);
    sample.owner_scanned = ScanCursor<uint64_t>::ahead(owner_scanned_until, tail);
    is_sample = true;
  } else if (header.type == PERF_RECORD_LOST) {
    struct {
      uint64_t id, lost;
    } lost_record;
    copy_out(tail + sizeof(header), &lost_record, sizeof(lost_record));
    lost_ += lost_record.lost;
  }
  // Release: the kernel may overwrite the record only after we finished reading it.
  __atomic_store_n(&meta->data_tail, tail + header.size, __ATOMIC_RELEASE);
  return true;
}

void PerfSampler::decode_user(uint64_t position, RawSample& sample) {
  // After the callchain: u64 abi; u64 regs[popcount(mask)] if abi != 0; u64 size; u8 data[size];
  // u64 dyn_size if size != 0 (the bytes actually copied; the rest of data is zero). The record
  // may wrap around the ring's end, so everything is copied out.
  uint64_t abi = 0;
  copy_out(position, &abi, sizeof(abi));
  position += sizeof(abi);
  if (abi == PERF_SAMPLE_REGS_ABI_NONE) return;  // e.g. a kernel thread: nothing to unwind
  for (int reg = 0; reg < UserStack::kRegisterCount; ++reg) {
    if ((kUserRegsMask >> reg & 1) == 0) {
      user_.regs[reg] = 0;
      continue;
    }
    copy_out(position, &user_.regs[reg], sizeof(uint64_t));
    position += sizeof(uint64_t);
  }
  uint64_t size = 0;
  copy_out(position, &size, sizeof(size));
  position += sizeof(size);
  uint64_t copied = 0;
  if (size != 0) copy_out(position + size, &copied, sizeof(copied));
  if (copied > size || copied > kStackBytes) copied = 0;  // malformed: unwind nothing
  copy_out(position, stack_.get(), static_cast<std::size_t>(copied));
  user_.stack_start = user_.regs[PERF_REG_X86_SP];
  user_.size = static_cast<uint32_t>(copied);
  user_.bytes = stack_.get();
  sample.user = &user_;
}

void SamplingPause::add(int fd) {
  for (int& slot : fds_) {
    if (slot < 0) {
      slot = fd;
      return;
    }
  }
}

int open_breakpoint_counter(pid_t tid, uint64_t address) {
  perf_event_attr attr{};
  attr.size = sizeof(attr);
  attr.type = PERF_TYPE_BREAKPOINT;
  attr.bp_type = HW_BREAKPOINT_X;
  attr.bp_addr = address;
  attr.bp_len = sizeof(long);
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = perf_event_open(&attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return -errno;
  protect_fd(static_cast<int>(fd));
  return static_cast<int>(fd);
}

void close_counter(int fd) {
  unprotect_fd(fd);
  ::close(fd);
}

bool read_counter(int fd, uint64_t& value) { return read_raw(fd, &value, sizeof(value)) == static_cast<long>(sizeof(value)); }

KernelRange find_page_fault_entry(const char* text, std::size_t length) {
  // "ffffffff81000c60 T asm_exc_page_fault\n": the stub ends where the next symbol starts.
  KernelRange found;
  const char* end = text + length;
  bool want_next = false;
  for (const char* line = text; line < end;) {
    const char* stop = static_cast<const char*>(std::memchr(line, '\n', static_cast<std::size_t>(end - line)));
    if (stop == nullptr) break;  // a partial last line
    char* after_address = nullptr;
    uint64_t address = std::strtoull(line, &after_address, 16);
    const char* name = after_address;
    while (name < stop && *name == ' ') ++name;
    while (name < stop && *name != ' ') ++name;  // the symbol type
    while (name < stop && *name == ' ') ++name;
    std::size_t name_length = 0;
    while (name + name_length < stop && name[name_length] != ' ' && name[name_length] != '\t') ++name_length;
    if (want_next && address > found.begin) {
      found.end = address;
      return found;
    }
    auto is = [&](const char* symbol) {
      return name_length == std::strlen(symbol) && std::memcmp(name, symbol, name_length) == 0;
    };
    if (!want_next && after_address != line && (is("asm_exc_page_fault") || is("page_fault"))) {
      if (address == 0) return {};  // kptr_restrict hides the addresses
      found.begin = address;
      want_next = true;
    }
    line = stop + 1;
  }
  return {};
}

bool load_page_fault_entry(const char* path) {
  // The entry text comes first in kallsyms (address order); 256 KiB is ample and reads in ~1 ms,
  // where the whole file (~120000 symbols) takes ~50.
  constexpr std::size_t kMaxBytes = 256 * 1024;
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::unique_ptr<char[]> text(new char[kMaxBytes]);
  std::size_t length = 0;
  KernelRange range;
  while (length < kMaxBytes) {
    long n = read_raw(fd, text.get() + length, kMaxBytes - length);
    if (n <= 0) break;
    length += static_cast<std::size_t>(n);
    range = find_page_fault_entry(text.get(), length);
    if (range.end != 0) break;
  }
  ::close(fd);
  if (range.end == 0) return false;
  publish_page_fault_entry(range);
  return true;
}

int probe_perf_events(bool with_kernel) {
  perf_event_attr attr = task_clock_attr();
  attr.disabled = 1;
  attr.exclude_kernel = with_kernel ? 0 : 1;
  long fd = perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return -errno;
  ::close(static_cast<int>(fd));
  return 0;
}

int probe_trapping_sampler(bool with_kernel) {
  perf_event_attr attr = task_clock_attr();
  attr.disabled = 1;
  attr.sample_period = 1000000;
  attr.exclude_kernel = with_kernel ? 0 : 1;
  attr.sigtrap = 1;
  attr.remove_on_exec = 1;
  long fd = perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return -errno;
  ::close(static_cast<int>(fd));
  return 0;
}

int SwitchCostProbe::open(uint64_t period_ns) {
  close();
  perf_event_attr attr = task_clock_attr();
  attr.sample_period = std::max(period_ns, PerfSampler::kShortestPeriodNs);  // a sampler's hrtimer
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  long fd = perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return -errno;
  fd_ = static_cast<int>(fd);
  protect_fd(fd_);  // from a program that closes every descriptor
  return 0;
}

uint64_t SwitchCostProbe::round(int pairs) {
  if (fd_ < 0 || pairs <= 0) return 0;
  auto time_pairs = [&](unsigned long second) {
    const uint64_t start = monotonic_ns();
    for (int i = 0; i < pairs; ++i) {
      ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
      ioctl(fd_, second, 0);
    }
    return monotonic_ns() - start;
  };
  const uint64_t restarted = time_pairs(PERF_EVENT_IOC_ENABLE);
  const uint64_t ioctls_only = time_pairs(PERF_EVENT_IOC_DISABLE);
  return restarted > ioctls_only ? (restarted - ioctls_only) / static_cast<uint64_t>(pairs) : 0;
}

void SwitchCostProbe::close() {
  if (fd_ < 0) return;
  unprotect_fd(fd_);
  ::close(fd_);
  fd_ = -1;
}

int perf_event_paranoid() {
  int fd = ::open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -100;
  char buffer[16] = {};
  long n = read_raw(fd, buffer, sizeof(buffer) - 1);
  ::close(fd);
  if (n <= 0) return -100;
  return std::atoi(buffer);
}

}  // namespace whatif::os
