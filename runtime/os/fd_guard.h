// The runtime's own file descriptors (profile, perf events), protected from programs that close
// every descriptor (daemons): the close shims skip them. Signal-safe lock-free bitmap, any thread.
#pragma once
#include "base/signal_safe.h"

namespace whatif::os {

/// Marks `fd` as the runtime's. Descriptors at or above 65536 are not tracked.
WHATIF_SIGNAL_SAFE void protect_fd(int fd);
/// Clears the mark before the runtime itself closes `fd`.
WHATIF_SIGNAL_SAFE void unprotect_fd(int fd);
WHATIF_SIGNAL_SAFE bool is_protected_fd(int fd);

}  // namespace whatif::os
