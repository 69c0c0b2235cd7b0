// DWARF CFI unwinding of a sampled thread's user stack from a snapshot (registers + a copy of the
// top of its stack), with libunwind's remote API loaded by dlopen. Runs on the profiler thread
// only (never in a signal handler): it allocates, takes the loader lock and caches objects.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace whatif::unwind {

/// perf's x86-64 user-register numbers (asm/perf_regs.h), the index of Snapshot::regs.
enum Register : int {
  kAx = 0, kBx, kCx, kDx, kSi, kDi, kBp, kSp, kIp, kFlags, kCs, kSs, kDs, kEs, kFs, kGs,
  kR8, kR9, kR10, kR11, kR12, kR13, kR14, kR15,
  kRegisterCount
};

/// One thread of this process at one instant: its general registers and a copy of its stack from
/// `stack_start` (the sampled sp) up. Addresses in it are this process's; only the copied stack
/// and this process's loaded objects are ever read.
struct Snapshot {
  const uint64_t* regs = nullptr;  ///< kRegisterCount values in perf's order; kIp and kSp required
  uint64_t stack_start = 0;        ///< the address of stack[0]
  const unsigned char* stack = nullptr;
  std::size_t stack_size = 0;
};

/// Unwinds snapshots with the .eh_frame of the objects this process has loaded. Not thread-safe:
/// one instance per profiler thread.
class Unwinder {
 public:
  Unwinder();
  ~Unwinder();
  Unwinder(const Unwinder&) = delete;
  Unwinder& operator=(const Unwinder&) = delete;

  /// Loads libunwind (dlopen, RTLD_LOCAL) on the first call; later calls repeat the first answer.
  /// False when it is unavailable: load_error() then says what is missing and how to fix it.
  bool load();
  /// Why load() failed; empty when it succeeded or was not tried.
  const std::string& load_error() const { return load_error_; }

  /// Called with each frame as it is found (index 0: the IP, then return addresses); returning
  /// true ends the unwind after that frame.
  using StopAt = bool (*)(void* context, uint64_t frame, std::size_t index);

  /// Writes the snapshot's IP, then the return addresses of its callers, innermost first, into
  /// frames[0..capacity), until `stop_at` (if given) says so. Stops at the first frame it cannot
  /// unwind (no CFI, stack beyond the snapshot). Returns how many it wrote: 0 when libunwind is not
  /// loaded or the snapshot is unusable, 1 when not even the first caller was found.
  std::size_t unwind(const Snapshot& snapshot, uint64_t* frames, std::size_t capacity, StopAt stop_at = nullptr,
                     void* context = nullptr);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string load_error_;
  bool tried_ = false;
};

}  // namespace whatif::unwind
