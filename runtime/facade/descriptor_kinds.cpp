// The per-descriptor memory of long blocking I/O's kind (see descriptor_kinds.h). Application
// threads, outside signal context.
#include "facade/descriptor_kinds.h"

namespace whatif::facade {
namespace {
constexpr uint64_t kKindBits = 3;
}

DescriptorKinds::Kind DescriptorKinds::lookup(int fd, uint64_t now_ns) const {
  if (fd < 0 || fd >= kCached) return Kind::kUnknown;
  uint64_t entry = entries_[fd].load(std::memory_order_relaxed);
  if (entry == 0 || now_ns >= (entry & ~kKindBits)) return Kind::kUnknown;
  return static_cast<Kind>(entry & kKindBits);
}

void DescriptorKinds::remember(int fd, Kind kind, uint64_t now_ns) {
  if (fd < 0 || fd >= kCached || kind == Kind::kUnknown) return;
  entries_[fd].store(((now_ns + kValidNs) & ~kKindBits) | static_cast<uint64_t>(kind), std::memory_order_relaxed);
}

void DescriptorKinds::forget(int fd) {
  if (fd >= 0 && fd < kCached) {
    entries_[fd].store(0, std::memory_order_relaxed);
    epoll_sets_[fd].store(0, std::memory_order_relaxed);
  }
}

void DescriptorKinds::forget_range(unsigned int first, unsigned int last) {
  for (unsigned int fd = first; fd <= last && fd < static_cast<unsigned int>(kCached); ++fd) {
    entries_[fd].store(0, std::memory_order_relaxed);
    epoll_sets_[fd].store(0, std::memory_order_relaxed);
  }
}

void DescriptorKinds::note_epoll_registration(int epfd, bool names_fd) {
  if (epfd < 0 || epfd >= kCached) return;
  if (!names_fd) {
    epoll_sets_[epfd].store(kEpollOther, std::memory_order_relaxed);
    return;
  }
  uint8_t none = 0;  // a set that had one registration not naming its descriptor stays so
  epoll_sets_[epfd].compare_exchange_strong(none, kEpollNamesFds, std::memory_order_relaxed);
}

bool DescriptorKinds::epoll_names_fds(int epfd) const {
  return epfd >= 0 && epfd < kCached && epoll_sets_[epfd].load(std::memory_order_relaxed) == kEpollNamesFds;
}

}  // namespace whatif::facade
