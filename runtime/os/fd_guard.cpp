// A bitmap of the runtime's descriptors; atomics only, usable from signal handlers.
#include "os/fd_guard.h"

#include <atomic>
#include <cstdint>

namespace whatif::os {
namespace {
constexpr int kTrackedDescriptors = 65536;
std::atomic<uint64_t> g_protected[kTrackedDescriptors / 64];  // zero-initialised (static storage)

bool tracked(int fd) { return fd >= 0 && fd < kTrackedDescriptors; }
}  // namespace

WHATIF_SIGNAL_SAFE void protect_fd(int fd) {
  if (tracked(fd)) g_protected[fd / 64].fetch_or(uint64_t{1} << (fd % 64), std::memory_order_release);
}

WHATIF_SIGNAL_SAFE void unprotect_fd(int fd) {
  if (tracked(fd)) g_protected[fd / 64].fetch_and(~(uint64_t{1} << (fd % 64)), std::memory_order_release);
}

WHATIF_SIGNAL_SAFE bool is_protected_fd(int fd) {
  // Acquire pairs with protect_fd's release.
  return tracked(fd) && (g_protected[fd / 64].load(std::memory_order_acquire) >> (fd % 64)) & 1;
}

}  // namespace whatif::os
