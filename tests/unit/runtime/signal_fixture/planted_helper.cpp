// Self-test fixture of the signal-safety check: the planted malloc, one call below the
// WHATIF_SIGNAL_SAFE entry of planted_entry.cpp (a helper that looks harmless from its caller).
#include <cstdlib>

namespace whatif_fixture {
void* format_record(std::size_t size) {
  return std::malloc(size);
}
}  // namespace whatif_fixture
