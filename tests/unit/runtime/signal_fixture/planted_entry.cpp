// Self-test fixture of the signal-safety check (never linked into anything): a WHATIF_SIGNAL_SAFE
// function whose callee, in another translation unit, allocates. The check must fail on it.
#include <cstddef>

#include "base/signal_safe.h"

namespace whatif_fixture {
void* format_record(std::size_t size);  // planted_helper.cpp

WHATIF_SIGNAL_SAFE void* on_fixture_signal(std::size_t size) { return format_record(size + 16); }
}  // namespace whatif_fixture
