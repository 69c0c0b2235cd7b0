// Logging for the runtime and tools: formats into a stack buffer and writes with write(2), so it
// never takes stdio locks. log_raw is signal-safe; the fmt-based helpers are for normal threads.
#pragma once
#include <atomic>
#include <cstddef>
#include <string_view>
#include <fmt/format.h>

#include "base/signal_safe.h"

namespace whatif::log {

enum class Level { kDebug, kInfo, kWarning, kError };

/// Sets the minimum level printed (from WHATIF_LOG / --verbose). Thread-safe.
void set_level(Level level);
Level level();

/// Writes "whatif: <text>\n" to stderr with the raw write syscall. Signal-safe.
WHATIF_SIGNAL_SAFE void log_raw(std::string_view text);

/// Formats on the stack (truncating at 1 KiB) and writes. Not for signal handlers.
template <typename... Args>
void write(Level lvl, fmt::format_string<Args...> format, Args&&... args) {
  if (lvl < level()) return;
  char buffer[1024];
  const char* prefix = lvl == Level::kWarning ? "warning: " : lvl == Level::kError ? "error: " : "";
  auto result = fmt::format_to_n(buffer, sizeof(buffer), "{}", prefix);
  auto rest = fmt::format_to_n(result.out, sizeof(buffer) - (result.out - buffer), format, std::forward<Args>(args)...);
  std::size_t length = static_cast<std::size_t>(rest.out - buffer);
  log_raw(std::string_view(buffer, length < sizeof(buffer) ? length : sizeof(buffer)));
}

template <typename... Args>
void info(fmt::format_string<Args...> format, Args&&... args) { write(Level::kInfo, format, std::forward<Args>(args)...); }
template <typename... Args>
void debug(fmt::format_string<Args...> format, Args&&... args) { write(Level::kDebug, format, std::forward<Args>(args)...); }
template <typename... Args>
void error(fmt::format_string<Args...> format, Args&&... args) { write(Level::kError, format, std::forward<Args>(args)...); }

/// Rate-limited warning: each call site prints at most `limit` times (default 1).
class WarnOnce {
 public:
  explicit constexpr WarnOnce(int limit = 1) : remaining_(limit) {}
  template <typename... Args>
  void operator()(fmt::format_string<Args...> format, Args&&... args) {
    if (remaining_.fetch_sub(1, std::memory_order_relaxed) > 0) write(Level::kWarning, format, std::forward<Args>(args)...);
  }

 private:
  std::atomic<int> remaining_;
};

template <typename... Args>
void warning(fmt::format_string<Args...> format, Args&&... args) { write(Level::kWarning, format, std::forward<Args>(args)...); }

/// Prints "whatif: error: ..." and ends the process with exit_group(code) (raw syscalls only, so it
/// works inside symbol resolution). Never returns.
[[noreturn]] void fatal(std::string_view message, int code = 70);

}  // namespace whatif::log
