// perf_event_open wrappers: per-thread task-clock samplers with an mmap ring, and hardware
// execution-breakpoint counters. Opening happens on the sampled thread or the profiler thread;
// the profiler thread consumes the ring; the sampled thread may scan its newest samples first
// (scan_own, signal-safe), and a shared cursor says which of the two scanned each sample.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "base/signal_safe.h"

namespace whatif::os {

/// A sample's user registers and top of its user stack (PERF_SAMPLE_REGS_USER / STACK_USER), copied
/// out of the ring by the drain for unwinding on the profiler thread.
struct UserStack {
  /// perf's x86-64 user-register numbers (asm/perf_regs.h: AX, BX, CX, DX, SI, DI, BP, SP, IP, ...,
  /// R8..R15 = 16..23) index `regs`.
  static constexpr int kRegisterCount = 24;
  uint64_t regs[kRegisterCount] = {};  ///< the sampled registers; zero where not sampled
  uint64_t stack_start = 0;            ///< the sampled sp: where `bytes` begin
  uint32_t size = 0;                   ///< bytes of stack the kernel copied (0: none)
  const unsigned char* bytes = nullptr;
};

/// One sample read from a ring: the IP and up to kMaxCallchain user return addresses.
/// x86-64 kernel addresses occupy the upper half of the address space.
WHATIF_SIGNAL_SAFE inline bool is_kernel_address(uint64_t address) { return (address >> 63) != 0; }

/// The kernel's page-fault entry stub (`asm_exc_page_fault`, `page_fault` before Linux 5.8): where
/// a kernel-mode sample's kernel callchain ends when the thread entered the kernel by faulting on
/// a user instruction (first touch of memory, copy-on-write), as opposed to a system call or an
/// interrupt. Found in a kallsyms text by its name and the next symbol's address.
struct KernelRange {
  uint64_t begin = 0, end = 0;  ///< [begin, end); empty when unknown
  bool contains(uint64_t address) const { return address >= begin && address < end; }
};
/// Parses kallsyms lines ("ADDRESS TYPE NAME [module]") for the page-fault entry; empty if absent
/// or if the addresses are hidden (kptr_restrict prints zeros).
KernelRange find_page_fault_entry(const char* text, std::size_t length);
/// Reads `path` (/proc/kallsyms; only its first part, where the entry text's symbols are) once at
/// start-up, before any kernel-mode sampler opens, and publishes the range for
/// in_page_fault_entry. Returns whether it was found.
bool load_page_fault_entry(const char* path);
/// Publishes `range` as the page-fault entry (load_page_fault_entry's last step; tests).
void publish_page_fault_entry(const KernelRange& range);
/// Whether `address` (a kernel-mode sample's outermost kernel frame) is in the page-fault entry.
WHATIF_SIGNAL_SAFE bool in_page_fault_entry(uint64_t address);
/// Whether load_page_fault_entry found it: kernel-mode samplers then record kernel callchains.
bool page_fault_entry_known();

struct RawSample {
  static constexpr int kMaxCallchain = 32;
  uint64_t ip = 0;
  uint32_t tid = 0;
  uint32_t weight = 1;  ///< sampling periods this sample stands for (timer overruns make it > 1)
  uint32_t callchain_length = 0;
  /// The sampled thread scanned it before the drain (it credited it if its IP was in the selected
  /// line's published ranges; the drainer applies the same test).
  bool owner_scanned = false;
  /// Taken while the thread ran in the kernel (a kernel-mode sampler's, possibly sharing a user
  /// sampler's ring): `ip` is then the user IP at kernel entry.
  bool kernel_mode = false;
  /// Of a kernel-mode sample with a kernel callchain: its outermost kernel frame, the entry stub
  /// the thread came in through (a system call's, a page fault's, an interrupt's); 0 otherwise.
  uint64_t kernel_entry = 0;
  /// Registers and stack for unwinding: set by PerfSampler::drain when the sampler records them,
  /// valid only during the visit; null otherwise (scan_own, the timer sampler, no snapshot).
  const UserStack* user = nullptr;
  uint64_t callchain[kMaxCallchain];
};

/// The sampled thread's visitor for scan_own.
using OwnSampleVisitor = void (*)(void* context, const RawSample& sample);

/// Who scans which part of a ring: the sampled thread and the drainer each advance this cursor to
/// the head they saw (a record boundary), so every record is scanned by exactly one of them.
/// Positions are free-running ring offsets and compare modulo wrap-around.
template <typename Position>
class ScanCursor {
 public:
  /// Claims [previous, head) for the caller if head is ahead; returns previous.
  WHATIF_SIGNAL_SAFE Position claim_until(Position head) {
    Position previous = position_.load(std::memory_order_relaxed);
    // acq_rel pairs with the other claimant's: they agree on who owns which records, and records
    // the sampled thread published before its claim are visible to the drainer.
    while (ahead(head, previous) &&
           !position_.compare_exchange_weak(previous, head, std::memory_order_acq_rel, std::memory_order_relaxed)) {
    }
    return previous;
  }
  WHATIF_SIGNAL_SAFE Position position() const { return position_.load(std::memory_order_acquire); }
  /// a is strictly after b.
  WHATIF_SIGNAL_SAFE static bool ahead(Position a, Position b) {
    return static_cast<std::make_signed_t<Position>>(a - b) > 0;
  }

 private:
  std::atomic<Position> position_{0};
};

/// A task-clock sampling event on one thread, with its ring buffer. Move-only.
class PerfSampler {
 public:
  PerfSampler() = default;
  PerfSampler(const PerfSampler&) = delete;
  PerfSampler& operator=(const PerfSampler&) = delete;
  ~PerfSampler() { close(); }

  /// Bytes of user stack copied with each sample (PERF_SAMPLE_STACK_USER) for DWARF unwinding on
  /// the profiler thread: 8 KiB reaches the first in-scope caller of library code in practice
  /// (as perf's --call-graph dwarf default does) while a ring still holds a dozen samples.
  static constexpr uint32_t kStackBytes = 8192;
  /// The shortest period a sampler is ever given. A task-clock event's timer fires at most every
  /// 10 us; given a period at that floor, the event was throttled at once (Linux 6.18 in this VM)
  /// and no later PERF_EVENT_IOC_PERIOD took: without a signal it took no sample after, with one
  /// it kept firing every 10-30 us whatever period the handler set. About 1 thread in 100 drew such
  /// a first period and spent the rest of its life in its handler (a thread-per-task pool of 4000
  /// threads, native 3 s: 14 s, and one thread 8700 signals). A first period floored here samples
  /// a thread at the floor instead of before it: only threads shorter than the floor lose their
  /// small chance (2% at a 1-ms period) of a sample.
  static constexpr uint64_t kShortestPeriodNs = 20000;

  /// Opens a sampler on thread `tid` with the given period; samples carry IP + user callchain and,
  /// when `with_stack`, the user registers and the top kStackBytes of the user stack (falling back
  /// to none when the larger ring cannot be mapped). Every `wakeup_samples` samples the kernel
  /// sends `signal` to that thread (0: no signal).
  /// Returns 0 or -errno (EACCES/EPERM when perf is denied, ENOENT/ENODEV when unsupported).
  /// With `kernel_only`, samples are taken only while the thread runs in the kernel (system calls,
  /// page faults) instead of only in user mode: they carry the user registers and stack at kernel
  /// entry, and decode_sample reports the user IP, so that time goes to the line that entered the
  /// kernel. Such a sampler sends no signal (a signal raised in the kernel would interrupt the
  /// program's system call: a partial read, an EINTR it never saw before).
  /// `first_period_ns` (0: a whole period) is the first sample's period, a random phase: a thread
  /// that runs less than a period is then sampled with the probability its CPU time says (a
  /// thread-per-task pool's 0.9-ms tasks were never sampled at all). The first signal, or the
  /// first drain, sets the whole period (settle_first_period).
  int open(pid_t tid, uint64_t period_ns, int signal, uint32_t wakeup_samples, bool with_stack = true,
           bool kernel_only = false, uint64_t first_period_ns = 0);
  /// Opens one sampler on the calling thread `tid` for user mode and, with `with_kernel`, kernel mode
  /// too, that signals each sample with a synchronous SIGTRAP (attr.sigtrap, Linux 5.13+; si_code
  /// TRAP_PERF, si_perf_data `cookie`) instead of O_ASYNC. The kernel raises that signal on the
  /// thread's return to user mode, so a sample taken in a system call does not cut the call short
  /// (an O_ASYNC signal did: a read of /dev/zero returned early), and one event does what the
  /// user sampler and its kernel_only companion did. Each sampling event is an hrtimer, and each
  /// expiry an interrupt: ~40 us in this nested VM, so two events per thread cost a spinning thread
  /// 10-11% of its time at a 1-ms period, one 4%. No wake-ups either (a watermark of the whole
  /// ring: nobody polls it, the profiler drains it on its tick), where a wake-up per sample raised
  /// an irq_work, a self-IPI (2% more here). Closed on exec (attr.remove_on_exec, which sigtrap
  /// requires). Returns 0 or -errno (EINVAL on a kernel without sigtrap).
  int open_trapping(pid_t tid, uint64_t period_ns, uint64_t cookie, bool with_kernel, uint64_t first_period_ns = 0);
  /// Opens a signal-less sampler on `ring`'s thread whose records go to `ring`'s buffer
  /// (PERF_EVENT_IOC_SET_OUTPUT) with the same layout; it maps nothing and drains nothing itself,
  /// and it counts from the start (no enable() needed).
  /// A second mapping cost a new thread about 40 us of page allocation under the process's mmap
  /// lock: half of what the runtime added to the start of a thread-per-task pool's thread.
  int open_into(const PerfSampler& ring, pid_t tid, uint64_t period_ns, uint32_t wakeup_samples, bool kernel_only);
  /// The sampled thread's handler or the drainer, once a sample was taken: from now on every
  /// sample is a whole period apart (PERF_EVENT_IOC_PERIOD restarts the count at the call, which
  /// in the handler is right after the first sample). Once only.
  WHATIF_SIGNAL_SAFE void settle_first_period();
  /// The sampled thread's handler, after each of its samples, when the sampler jitters (set_jitter):
  /// the next sample comes after a period drawn uniformly from [3 period/4, 5 period/4), so that its
  /// mean stays the period. A fixed period strobes a program whose threads repeat a cycle of a whole
  /// number of periods: each sample lands at the same point of the cycle, and which point depends
  /// on the run (a spin lock's 1-ms cycle, 50% in its critical line, got 1% to 36% of the samples
  /// there; `perf record -c 1000000` shows the same). Random periods make the samples' times a
  /// renewal process, whose points fall uniformly over any cycle. Periods from [P/2, 3P/2) did as
  /// well against strobing, but the samples two threads take in the same millisecond then differed
  /// more, and the thread behind paid the difference: two threads running a line between barriers
  /// came out 4 points low (2 with the narrower range). Re-drawing only every 8th period left the
  /// phase free to lock again in between (a spin lock's line: 39% to 51% of the samples for 50%).
  WHATIF_SIGNAL_SAFE void next_period();
  /// Before enable: whether next_period draws random periods (seeded by `seed`) or keeps the period.
  void set_jitter(bool jitter, uint64_t seed) {
    jitter_ = jitter;
    jitter_state_ = seed | 1;
  }
  /// Whether samples carry registers and stack (RawSample::user).
  bool has_stack() const { return stack_ != nullptr; }
  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  int enable();
  int disable();

  /// Reads every complete record in the ring; calls visit(const RawSample&) for samples and
  /// counts lost records. Single consumer. RawSample::owner_scanned says whether the sampled
  /// thread scanned the sample first (scan_own). Returns the number of samples read.
  template <typename Visitor>
  std::size_t drain(Visitor&& visit);
  /// The sampled thread only (normal or signal context, not re-entered): visits the samples that
  /// neither it nor the drainer has scanned yet. Leaves everything to the drainer when that span
  /// exceeds half the ring (the kernel may reuse consumed space while this thread reads it).
  WHATIF_SIGNAL_SAFE void scan_own(OwnSampleVisitor visit, void* context);
  uint64_t lost() const { return lost_; }
  void close();

 private:
  bool next_record(RawSample& sample, bool& is_sample, uint64_t limit, uint64_t owner_scanned_until);
  /// How an event samples: which modes, and whether it signals by SIGTRAP (open_trapping).
  struct Modes {
    bool user = true;
    bool kernel = false;
    uint64_t trap_cookie = 0;  ///< nonzero: attr.sigtrap with this si_perf_data, no wake-ups
  };
  /// open and open_trapping: the event at its first period (a random phase), mapped; its period set.
  int open_first(pid_t tid, uint64_t period_ns, uint32_t wakeup_samples, bool with_stack, Modes modes,
                 uint64_t first_period_ns);
  int open_with(pid_t tid, uint64_t period_ns, uint32_t wakeup_samples, bool with_stack, Modes modes);
  /// perf_event_open of a task-clock sampler; the descriptor in fd_.
  int open_event(pid_t tid, uint64_t period_ns, uint32_t wakeup_samples, bool with_stack, Modes modes, bool enabled);
  /// Decodes ip, tid and callchain; returns the ring position just past the callchain.
  WHATIF_SIGNAL_SAFE uint64_t decode_sample(uint64_t position, RawSample& sample) const;
  /// Drain only: copies the registers and stack after the callchain at `position` into user_.
  void decode_user(uint64_t position, RawSample& sample);
  WHATIF_SIGNAL_SAFE uint64_t header_at(uint64_t position) const;
  WHATIF_SIGNAL_SAFE uint64_t published_head() const;
  WHATIF_SIGNAL_SAFE void copy_out(uint64_t position, void* out, std::size_t bytes) const;

  int fd_ = -1;
  ScanCursor<uint64_t> scanned_;
  void* ring_ = nullptr;
  std::size_t ring_bytes_ = 0;   // data area size (power of two)
  std::size_t mapping_bytes_ = 0;
  uint64_t lost_ = 0;
  uint64_t period_ns_ = 0;
  std::atomic<bool> first_period_pending_{false};
  bool jitter_ = false;
  uint64_t jitter_state_ = 1;  ///< xorshift64 state; the sampled thread's handler only
  uint64_t last_count_ = 0;    ///< the event's count at the last next_period (0: unknown); handler only
  uint64_t last_period_ = 0;   ///< the period set then; handler only
  std::unique_ptr<unsigned char[]> stack_;  // kStackBytes, when samples carry stacks
  UserStack user_;                          // the drained sample's registers and stack
};

/// A thread's sampling events, stopped while the thread spins in a pause (delays::catch_up_held). A
/// pause starts where the thread settles its delays, at a sample: with the events counting, the
/// spin's CPU time filled the next period, whose sample then landed in the code after the pause, so
/// periodic sampling charged every pause shorter than a period to the program's lines (N threads
/// on fewer CPUs: 16% more samples per unit of work while pauses ran, most in the lines whose
/// threads paused). Stopped, the spin is not sampled and the period goes on where it stopped.
class SamplingPause {
 public:
  static constexpr int kMaxEvents = 2;
  /// Before the sampled thread can be signalled: one of its events (a PerfSampler's descriptor).
  void add(int fd);
  /// The sampler's switch (the profiler thread): whether the events are meant to count. Cleared
  /// before they are disabled and set after they are enabled again, so a pause that ends meanwhile
  /// leaves them as the switch wants.
  void set_wanted(bool wanted) { wanted_.store(wanted, std::memory_order_seq_cst); }
  /// The owning thread, in a pause (signal context too): stops its events; false if they were not
  /// counting (nothing to resume).
  WHATIF_SIGNAL_SAFE bool stop();
  /// The owning thread, after the pause, when stop returned true: the events count again (unless
  /// the switch turned them off meanwhile).
  WHATIF_SIGNAL_SAFE void resume();

 private:
  WHATIF_SIGNAL_SAFE void set_all(bool enabled);
  int fds_[kMaxEvents] = {-1, -1};
  std::atomic<bool> wanted_{true};
};

template <typename Visitor>
std::size_t PerfSampler::drain(Visitor&& visit) {
  std::size_t count = 0;
  RawSample sample;
  bool is_sample = false;
  if (ring_ == nullptr) return 0;
  // Claim everything published so far and read no further (later records may go to the sampled
  // thread); what it claimed before, possibly beyond our head, it scanned: owner_scanned.
  uint64_t head = published_head();
  uint64_t owner_until = scanned_.claim_until(head);
  uint64_t limit = ScanCursor<uint64_t>::ahead(owner_until, head) ? owner_until : head;
  while (next_record(sample, is_sample, limit, owner_until)) {
    if (is_sample) {
      visit(static_cast<const RawSample&>(sample));
      ++count;
    }
  }
  return count;
}

/// A counting hardware execution breakpoint at `address` on thread `tid` (no signals: the kernel
/// counts hits). Returns an fd or -errno.
int open_breakpoint_counter(pid_t tid, uint64_t address);
/// Closes a descriptor from open_breakpoint_counter (or a sampler's).
void close_counter(int fd);
/// Reads a counting event's value; returns false on error.
bool read_counter(int fd, uint64_t& value);

/// Whether perf_event sampling is allowed here (0 or -errno); with `with_kernel`, whether samples
/// may include kernel mode too (perf_event_paranoid <= 1, or CAP_PERFMON).
int probe_perf_events(bool with_kernel = false);
/// Whether this kernel can signal samples with a synchronous SIGTRAP (PerfSampler::open_trapping;
/// attr.sigtrap needs Linux 5.13): 0 or -errno, EINVAL without it. On the calling thread.
int probe_trapping_sampler(bool with_kernel);
/// What one sched-out and sched-in of a task-clock sampling event costs the thread that uses the
/// probe: the kernel does the same for each of a thread's events at every context switch (stops
/// and restarts its hrtimer). A round times PERF_EVENT_IOC_DISABLE + ENABLE pairs against DISABLE
/// + DISABLE pairs (the ioctls alone). A switch is cheap while another timer on the CPU expires
/// first and dear while the event's is the earliest: rounds here came out at 2-3 or 15-25 us by
/// that alone, and which depends on the moment, so a figure worth acting on is a mean over rounds
/// spread in time. One thread (the profiler's). Move-only.
class SwitchCostProbe {
 public:
  SwitchCostProbe() = default;
  SwitchCostProbe(const SwitchCostProbe&) = delete;
  SwitchCostProbe& operator=(const SwitchCostProbe&) = delete;
  ~SwitchCostProbe() { close(); }
  /// Opens the event on the calling thread with a sampler's period. Returns 0 or -errno.
  int open(uint64_t period_ns);
  bool is_open() const { return fd_ >= 0; }
  /// One round of `pairs` restarts on the calling thread (the one that opened the probe): ns per
  /// restart, 0 when too cheap to see.
  uint64_t round(int pairs);
  void close();

 private:
  int fd_ = -1;
};

/// perf_event_paranoid's value, or -100 if unreadable.
int perf_event_paranoid();

}  // namespace whatif::os
