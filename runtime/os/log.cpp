// Implementation of the write(2)-based logger. log_raw is signal-safe; level is an atomic.
#include "os/log.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace whatif::log {
namespace {
std::atomic<Level> g_level{Level::kInfo};
}

void set_level(Level lvl) { g_level.store(lvl, std::memory_order_relaxed); }
Level level() { return g_level.load(std::memory_order_relaxed); }

WHATIF_SIGNAL_SAFE void log_raw(std::string_view text) {
  char buffer[1100];
  constexpr std::string_view kPrefix = "whatif: ";
  std::size_t n = 0;
  std::memcpy(buffer, kPrefix.data(), kPrefix.size());
  n += kPrefix.size();
  std::size_t body = text.size() < sizeof(buffer) - n - 1 ? text.size() : sizeof(buffer) - n - 1;
  std::memcpy(buffer + n, text.data(), body);
  n += body;
  buffer[n++] = '\n';
  int saved_errno = errno;
  std::size_t written = 0;
  while (written < n) {
    ssize_t r = ::write(STDERR_FILENO, buffer + written, n - written);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    written += static_cast<std::size_t>(r);
  }
  errno = saved_errno;
}

void fatal(std::string_view message, int code) {
  char buffer[1024];
  auto out = fmt::format_to_n(buffer, sizeof(buffer), "error: {}", message);
  std::size_t length = static_cast<std::size_t>(out.out - buffer);
  log_raw(std::string_view(buffer, length < sizeof(buffer) ? length : sizeof(buffer)));
  ::_exit(code);
}

}  // namespace whatif::log
