// The per-descriptor memory of long blocking I/O's kind (see descriptor_kinds.h). Application
// threads, outside signal context.
#include "facade/descriptor_kinds.h"

#include <netinet/in.h>

#include <cstddef>
#include <cstring>

namespace whatif::facade {
namespace {
constexpr uint64_t kKindBits = 3, kNonBlockingBit = 4, kEntryBits = 7;
}

DescriptorKinds::Entry DescriptorKinds::lookup_entry(int fd, uint64_t now_ns) const {
  if (fd < 0 || fd >= kCached) return {};
  uint64_t entry = entries_[fd].load(std::memory_order_relaxed);
  if (entry == 0 || now_ns >= (entry & ~kEntryBits)) return {};
  return {static_cast<Kind>(entry & kKindBits), (entry & kNonBlockingBit) != 0};
}

void DescriptorKinds::remember(int fd, Entry entry, uint64_t now_ns) {
  if (fd < 0 || fd >= kCached || entry.kind == Kind::kUnknown) return;
  entries_[fd].store(((now_ns + kValidNs) & ~kEntryBits) | (entry.nonblocking ? kNonBlockingBit : 0) |
                         static_cast<uint64_t>(entry.kind),
                     std::memory_order_relaxed);
}

void DescriptorKinds::forget(int fd) {
  if (fd >= 0 && fd < kCached) {
    entries_[fd].store(0, std::memory_order_relaxed);
    epoll_sets_[fd].store(0, std::memory_order_relaxed);
  }
  if (fd >= 0) forget_endpoints(static_cast<unsigned int>(fd), static_cast<unsigned int>(fd));
}

void DescriptorKinds::forget_kind(int fd) {
  if (fd >= 0 && fd < kCached) entries_[fd].store(0, std::memory_order_relaxed);
}

void DescriptorKinds::forget_range(unsigned int first, unsigned int last) {
  forget_endpoints(first, last);
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

namespace {
constexpr uint64_t kIPv4 = 1ull << 62, kIPv6 = 2ull << 62, kPortOnly = 3ull << 62;

// The IPv4 address (network order) of an IPv4 or IPv4-mapped IPv6 socket address, and its port.
bool ipv4_of(const sockaddr* address, socklen_t length, uint32_t& ip, uint16_t& port) {
  if (address->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    ip = in->sin_addr.s_addr;
    port = in->sin_port;
    return true;
  }
  if (address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
      std::memcpy(&ip, in6->sin6_addr.s6_addr + 12, sizeof(ip));
      port = in6->sin6_port;
      return true;
    }
  }
  return false;
}
}  // namespace

uint64_t DescriptorKinds::endpoint_key(const sockaddr* address, socklen_t length) {
  if (address == nullptr) return 0;
  uint32_t ip = 0;
  uint16_t port = 0;
  if (ipv4_of(address, length, ip, port)) return kIPv4 | static_cast<uint64_t>(port) << 32 | ip;
  if (address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    uint64_t hash = 1469598103934665603ull;  // FNV-1a over the address, then the port
    for (unsigned char byte : in6->sin6_addr.s6_addr) hash = (hash ^ byte) * 1099511628211ull;
    hash = (hash ^ in6->sin6_port) * 1099511628211ull;
    return kIPv6 | (hash >> 2) | 1;
  }
  return 0;
}

uint64_t DescriptorKinds::wildcard_port_key(const sockaddr* address, socklen_t length) {
  if (address == nullptr) return 0;
  if (address->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(address);
    if (in->sin_addr.s_addr == htonl(INADDR_ANY)) return kPortOnly | in->sin_port;
  } else if (address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(address);
    if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr)) return kPortOnly | in6->sin6_port;
  }
  return 0;
}

bool DescriptorKinds::is_loopback(const sockaddr* address, socklen_t length) {
  if (address == nullptr) return false;
  uint32_t ip = 0;
  uint16_t port = 0;
  if (ipv4_of(address, length, ip, port)) return (ntohl(ip) >> 24) == 127;
  if (address->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr);
  }
  return false;
}

void DescriptorKinds::note_own_endpoint(int fd, uint64_t key) {
  if (fd < 0 || key == 0) return;
  for (int i = 0; i < kEndpoints; ++i) {
    uint64_t free = 0;
    if (endpoint_keys_[i].compare_exchange_strong(free, key, std::memory_order_relaxed)) {
      endpoint_fds_[i].store(fd, std::memory_order_relaxed);
      return;
    }
  }
}

bool DescriptorKinds::is_own_peer(const sockaddr* peer, socklen_t length) const {
  uint64_t exact = endpoint_key(peer, length);
  if (exact == 0) return false;
  // A listener on any address serves a loopback peer on its port (endpoint_key checked the family
  // and length: the port sits at the same offset in sockaddr_in and sockaddr_in6).
  static_assert(offsetof(sockaddr_in, sin_port) == offsetof(sockaddr_in6, sin6_port));
  uint16_t port = 0;
  std::memcpy(&port, reinterpret_cast<const char*>(peer) + offsetof(sockaddr_in, sin_port), sizeof(port));
  uint64_t any_address = is_loopback(peer, length) ? kPortOnly | port : 0;
  for (int i = 0; i < kEndpoints; ++i) {
    uint64_t key = endpoint_keys_[i].load(std::memory_order_relaxed);
    if (key != 0 && (key == exact || key == any_address)) return true;
  }
  return false;
}

void DescriptorKinds::forget_endpoints(unsigned int first, unsigned int last) {
  for (int i = 0; i < kEndpoints; ++i) {
    if (endpoint_keys_[i].load(std::memory_order_relaxed) == 0) continue;
    int fd = endpoint_fds_[i].load(std::memory_order_relaxed);
    if (fd >= 0 && static_cast<unsigned int>(fd) >= first && static_cast<unsigned int>(fd) <= last) {
      endpoint_keys_[i].store(0, std::memory_order_relaxed);
    }
  }
}

}  // namespace whatif::facade
