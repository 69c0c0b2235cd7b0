// Implementation of the write(2)-based logger: raw syscalls only (os::write_all, os::exit_group),
// never libwhatif's own shims. log_raw is signal-safe; level is an atomic.
#include "os/log.h"

#include <unistd.h>

#include <cstring>

#include "os/os.h"

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
  // The raw syscall, never ::write: that is libwhatif's own shim, which resolves the original
  // symbols first, and fatal may be running inside that resolution.
  os::write_all(STDERR_FILENO, buffer, n);
}

void fatal(std::string_view message, int code) {
  char buffer[1024];
  auto out = fmt::format_to_n(buffer, sizeof(buffer), "error: {}", message);
  std::size_t length = static_cast<std::size_t>(out.out - buffer);
  log_raw(std::string_view(buffer, length < sizeof(buffer) ? length : sizeof(buffer)));
  os::exit_group(code);  // not ::_exit: interposed too
}

}  // namespace whatif::log
