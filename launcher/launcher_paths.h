// Where the launcher finds its companions (libwhatif.so) relative to its own executable, so a build
// tree and an install both work without configuration. Launcher process only.
#pragma once
#include <filesystem>
#include <string>

namespace whatif::cli {

/// The directory holding the running `whatif` executable (empty if /proc is unavailable).
std::filesystem::path launcher_directory();

/// libwhatif.so: $WHATIF_RUNTIME, ../lib, the launcher's directory, or ../lib/whatif. Empty if none.
std::string find_runtime_library();

}  // namespace whatif::cli
