// Which descriptors a long blocking I/O call counts as woken by another thread of the program (pipes,
// Unix sockets, eventfds, and TCP connections between two of the process's own sockets),
// remembered per descriptor so a server's thousands of slow reads and writes a second do not each
// pay an fstat and a getsockname; which epoll sets name their descriptors in their events; and the
// endpoints the process listens on or connected from. Application threads (the I/O, socket, epoll
// and close shims).
#pragma once
#include <sys/socket.h>

#include <atomic>
#include <cstdint>

namespace whatif::facade {

class DescriptorKinds {
 public:
  /// Descriptors below this are remembered; others are looked up at every call.
  static constexpr int kCached = 4096;
  /// How long an answer stands without a close seen: a descriptor closed where no shim sees it
  /// (inside libc, by a raw system call) and reused for a pipe is misjudged for at most this long.
  static constexpr uint64_t kValidNs = 100'000'000;

  enum class Kind : uint8_t { kUnknown = 0, kWokenByThread = 1, kOther = 2 };
  /// What is remembered of a descriptor: its kind, and whether it was non-blocking (O_NONBLOCK)
  /// when looked up.
  struct Entry {
    Kind kind = Kind::kUnknown;
    bool nonblocking = false;
  };

  /// The kind remembered for `fd` and still valid at `now_ns`, else kUnknown.
  Kind lookup(int fd, uint64_t now_ns) const { return lookup_entry(fd, now_ns).kind; }
  Entry lookup_entry(int fd, uint64_t now_ns) const;
  /// Remembers `kind` (not kUnknown) for `fd`, valid until now_ns + kValidNs.
  void remember(int fd, Kind kind, uint64_t now_ns) { remember(fd, Entry{kind, false}, now_ns); }
  void remember(int fd, Entry entry, uint64_t now_ns);
  /// `fd` was closed (or replaced): its next call looks it up again.
  void forget(int fd);
  /// `fd`'s kind or flags changed (a socket connected, fcntl(F_SETFL)): its next call looks it up again.
  void forget_kind(int fd);
  /// Every descriptor in [first, last] was closed.
  void forget_range(unsigned int first, unsigned int last);

  /// epoll_ctl added or changed a descriptor in the epoll set `epfd`, with `names_fd`: its event's
  /// data is the descriptor itself (data.fd == fd, as libevent and most loops register).
  void note_epoll_registration(int epfd, bool names_fd);
  /// Whether every registration seen in `epfd` named its descriptor, so a returned event's data.fd
  /// says which descriptor is ready (false when one did not, or none was seen).
  bool epoll_names_fds(int epfd) const;

  /// An IP socket's address as a key (family, address, port; IPv4-mapped IPv6 as IPv4); 0 for
  /// other families. wildcard_port_key: the port alone, for a listener bound to any address (0 for
  /// any other address).
  static uint64_t endpoint_key(const sockaddr* address, socklen_t length);
  static uint64_t wildcard_port_key(const sockaddr* address, socklen_t length);
  /// Whether `address` is a loopback address (127/8, ::1, IPv4-mapped 127/8).
  static bool is_loopback(const sockaddr* address, socklen_t length);
  /// `fd` listens on, or connected from, the endpoint `key` (from endpoint_key or
  /// wildcard_port_key). At most kEndpoints are remembered; the rest are not (their connections
  /// then count as another process's).
  void note_own_endpoint(int fd, uint64_t key);
  /// Whether a socket whose peer is `peer` is connected to one of this process's own endpoints.
  bool is_own_peer(const sockaddr* peer, socklen_t length) const;
  static constexpr int kEndpoints = 64;

 private:
  // (expiry_ns with its three low bits cleared) | nonblocking << 2 | kind; 0: nothing remembered. Relaxed: an entry is
  // a hint, and any thread's stale read only costs a lookup or, within kValidNs, the old answer.
  std::atomic<uint64_t> entries_[kCached] = {};
  // Per epoll set: 0 no registration seen, kEpollNamesFds, or kEpollOther (sticky until closed).
  static constexpr uint8_t kEpollNamesFds = 1, kEpollOther = 2;
  std::atomic<uint8_t> epoll_sets_[kCached] = {};
  // The process's own endpoints: key (0: free) and the descriptor that holds it, cleared when that
  // descriptor closes. Relaxed hints, as entries_.
  std::atomic<uint64_t> endpoint_keys_[kEndpoints] = {};
  std::atomic<int> endpoint_fds_[kEndpoints] = {};
  void forget_endpoints(unsigned int first, unsigned int last);
};

}  // namespace whatif::facade
