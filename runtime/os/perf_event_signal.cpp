// The sampled thread's side of a perf ring: decoding and scanning its newest samples. Runs on the
// sampled thread, in its signal handler or interposed calls. Signal-safe only: memory reads and
// atomics on the mapped ring.
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstring>

#include "os/perf_event.h"
#include "os/raw_syscall.h"

namespace whatif::os {

WHATIF_SIGNAL_SAFE void PerfSampler::settle_first_period() {
  if (!first_period_pending_.load(std::memory_order_acquire)) return;
  if (!first_period_pending_.exchange(false, std::memory_order_acq_rel)) return;
  uint64_t period = period_ns_;
  int saved_errno = errno;  // a handler must not change the interrupted code's errno
  invoke_syscall(SYS_ioctl, fd_, PERF_EVENT_IOC_PERIOD, &period);
  errno = saved_errno;
}

WHATIF_SIGNAL_SAFE void PerfSampler::next_period() {
  if (!jitter_ || period_ns_ < 2) {
    settle_first_period();
    return;
  }
  first_period_pending_.store(false, std::memory_order_relaxed);  // this sets the period from now on
  uint64_t x = jitter_state_;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  jitter_state_ = x;
  const uint64_t drawn = period_ns_ - period_ns_ / 4 + x % (period_ns_ / 2);
  int saved_errno = errno;  // a handler must not change the interrupted code's errno
  // The ioctl restarts the count from now, so the time since the overflow (the signal's delivery,
  // about 25 us in a VM) would fall outside every period: 2.5% fewer samples than the CPU time says,
  // and every line's delay 2.5% short. The event's own count (task time while it was enabled, so
  // not a spinning pause's) says how far past the last period's end this sample came; the next
  // period is shortened by that much, so that overflow to overflow is the drawn period.
  uint64_t count = 0, late = 0;
  const bool counted = invoke_syscall(SYS_read, fd_, &count, sizeof(count)) == static_cast<long>(sizeof(count));
  if (counted && last_count_ != 0 && count > last_count_ && last_period_ != 0) {
    uint64_t since = count - last_count_;
    late = since >= last_period_ ? (since - last_period_) % last_period_ : 0;  // whole skipped periods drop out
  }
  uint64_t period = drawn - (late < drawn / 2 ? late : drawn / 2);
  if (period < kShortestPeriodNs) period = kShortestPeriodNs;  // a short configured period's draw
  invoke_syscall(SYS_ioctl, fd_, PERF_EVENT_IOC_PERIOD, &period);
  // The period runs from the ioctl's restart, and the count went on through the ioctl: read it
  // again, or the next sample's lateness would include this ioctl (several us in a VM under load:
  // 0.7% more samples than the CPU time, up to 2.5% once in CI).
  const bool restarted = counted && invoke_syscall(SYS_read, fd_, &count, sizeof(count)) == static_cast<long>(sizeof(count));
  last_count_ = restarted ? count : 0;
  last_period_ = period;
  errno = saved_errno;
}

WHATIF_SIGNAL_SAFE void PerfSampler::copy_out(uint64_t position, void* out, std::size_t bytes) const {
  const auto* data = static_cast<const unsigned char*>(ring_) + (mapping_bytes_ - ring_bytes_);
  std::size_t start = static_cast<std::size_t>(position & (ring_bytes_ - 1));
  std::size_t first = bytes < ring_bytes_ - start ? bytes : ring_bytes_ - start;
  std::memcpy(out, data + start, first);
  if (first < bytes) std::memcpy(static_cast<unsigned char*>(out) + first, data, bytes - first);
}

WHATIF_SIGNAL_SAFE uint64_t PerfSampler::header_at(uint64_t position) const {
  // Records are 8-byte aligned and the ring's size is a multiple of 8: a header never wraps.
  auto* data = static_cast<unsigned char*>(ring_) + (mapping_bytes_ - ring_bytes_);
  return __atomic_load_n(reinterpret_cast<uint64_t*>(data + (position & (ring_bytes_ - 1))), __ATOMIC_RELAXED);
}

WHATIF_SIGNAL_SAFE uint64_t PerfSampler::published_head() const {
  // Acquire pairs with the kernel's release store of data_head after writing records.
  return __atomic_load_n(&static_cast<perf_event_mmap_page*>(ring_)->data_head, __ATOMIC_ACQUIRE);
}

namespace {
// Published once by load_page_fault_entry before any kernel-mode sampler opens; read in handlers.
std::atomic<uint64_t> g_fault_entry_begin{0}, g_fault_entry_end{0};
}  // namespace

WHATIF_SIGNAL_SAFE bool in_page_fault_entry(uint64_t address) {
  return address != 0 && address >= g_fault_entry_begin.load(std::memory_order_relaxed) &&
         address < g_fault_entry_end.load(std::memory_order_relaxed);
}

void publish_page_fault_entry(const KernelRange& range) {
  g_fault_entry_begin.store(range.begin, std::memory_order_relaxed);
  g_fault_entry_end.store(range.end, std::memory_order_relaxed);
}

bool page_fault_entry_known() { return g_fault_entry_end.load(std::memory_order_relaxed) != 0; }

WHATIF_SIGNAL_SAFE uint64_t PerfSampler::decode_sample(uint64_t position, RawSample& sample) const {
  // Layout for IP | TID | CALLCHAIN: u64 ip; u32 pid, tid; u64 nr; u64 ips[nr] (then registers and
  // stack when sampled: decode_user, on the drain only).
  struct {
    uint64_t ip;
    uint32_t pid, tid;
    uint64_t nr;
  } fixed;
  copy_out(position + sizeof(perf_event_header), &fixed, sizeof(fixed));
  sample.ip = fixed.ip;
  sample.weight = 1;
  sample.tid = fixed.tid;
  sample.owner_scanned = false;
  sample.kernel_mode = is_kernel_address(fixed.ip);
  sample.kernel_entry = 0;
  uint64_t offset = position + sizeof(perf_event_header) + sizeof(fixed);
  uint32_t kept = 0;
  // A kernel-mode sampler may record the kernel callchain too (PERF_CONTEXT_KERNEL, kernel frames
  // innermost first, then PERF_CONTEXT_USER and the user frames): its last kernel frame is the
  // entry the thread came in through; only user frames are kept.
  bool kernel_frames = false;
  for (uint64_t i = 0; i < fixed.nr && kept < RawSample::kMaxCallchain; ++i) {
    uint64_t address;
    copy_out(offset + i * sizeof(uint64_t), &address, sizeof(address));
    if (address >= PERF_CONTEXT_MAX) {  // context markers (PERF_CONTEXT_USER, ...)
      kernel_frames = address == PERF_CONTEXT_KERNEL;
      continue;
    }
    if (kernel_frames) {
      sample.kernel_entry = address;
      continue;
    }
    sample.callchain[kept++] = address;
  }
  sample.callchain_length = kept;
  // A sample taken in the kernel (a system call, a page fault) stands for the user code that entered
  // it: the user callchain starts with the user IP at kernel entry.
  if (sample.kernel_mode && kept > 0) sample.ip = sample.callchain[0];
  return offset + fixed.nr * sizeof(uint64_t);
}

WHATIF_SIGNAL_SAFE void PerfSampler::scan_own(OwnSampleVisitor visit, void* context) {
  if (ring_ == nullptr) return;
  uint64_t head = published_head();
  uint64_t position = scanned_.position();
  // The drainer claims up to its head before it consumes, so position >= data_tail: these records
  // are unconsumed, or consumed so recently that the kernel has not had half a ring to reuse.
  if (!ScanCursor<uint64_t>::ahead(head, position) || head - position > ring_bytes_ / 2) return;
  if (scanned_.claim_until(head) != position) return;  // the drainer took them meanwhile
  RawSample sample;
  while (position < head) {
    perf_event_header header;
    uint64_t word = header_at(position);
    std::memcpy(&header, &word, sizeof(header));
    if (header.size < sizeof(header) || (header.size & 7) != 0 || header.size > head - position) break;
    if (header.type == PERF_RECORD_SAMPLE) {
      decode_sample(position, sample);
      visit(context, sample);
    }
    position += header.size;
  }
}

WHATIF_SIGNAL_SAFE void SamplingPause::set_all(bool enabled) {
  int saved_errno = errno;
  for (int fd : fds_) {
    if (fd >= 0) invoke_syscall(SYS_ioctl, fd, enabled ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
  }
  errno = saved_errno;
}

WHATIF_SIGNAL_SAFE bool SamplingPause::stop() {
  if (fds_[0] < 0 || !wanted_.load(std::memory_order_seq_cst)) return false;
  set_all(false);
  return true;
}

WHATIF_SIGNAL_SAFE void SamplingPause::resume() {
  set_all(true);
  // The switch cleared wanted_ before disabling: if it did so before this enable, it is seen here.
  if (!wanted_.load(std::memory_order_seq_cst)) set_all(false);
}

}  // namespace whatif::os
