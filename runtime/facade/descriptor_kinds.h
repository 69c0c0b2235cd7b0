// Which descriptors a long blocking I/O call counts as woken by another thread of the program (pipes
// and Unix sockets), remembered per descriptor so a server's thousands of slow reads and writes a
// second do not each pay an fstat and a getsockname. Application threads (the I/O and close shims).
#pragma once
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

  /// The kind remembered for `fd` and still valid at `now_ns`, else kUnknown.
  Kind lookup(int fd, uint64_t now_ns) const;
  /// Remembers `kind` (not kUnknown) for `fd`, valid until now_ns + kValidNs.
  void remember(int fd, Kind kind, uint64_t now_ns);
  /// `fd` was closed (or replaced): its next call looks it up again.
  void forget(int fd);
  /// Every descriptor in [first, last] was closed.
  void forget_range(unsigned int first, unsigned int last);

 private:
  // (expiry_ns with its two low bits cleared) | kind; 0: nothing remembered. Relaxed: an entry is
  // a hint, and any thread's stale read only costs a lookup or, within kValidNs, the old answer.
  std::atomic<uint64_t> entries_[kCached] = {};
};

}  // namespace whatif::facade
