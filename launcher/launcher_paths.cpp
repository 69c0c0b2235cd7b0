// Locating the runtime library relative to the launcher executable. Launcher process only.
#include "launcher_paths.h"

#include <cstdlib>
#include <system_error>
#include "whatif/environment.h"

namespace whatif::cli {

std::filesystem::path launcher_directory() {
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::filesystem::path() : self.parent_path();
}

std::string find_runtime_library() {
  if (const char* configured = std::getenv(environment::kRuntime); configured != nullptr && *configured != '\0') {
    return std::filesystem::exists(configured) ? std::filesystem::absolute(configured).string() : std::string();
  }
  std::filesystem::path directory = launcher_directory();
  for (const std::filesystem::path& candidate :
       {directory.parent_path() / "lib" / "libwhatif.so", directory / "libwhatif.so",
        directory.parent_path() / "lib" / "whatif" / "libwhatif.so"}) {
    if (std::filesystem::exists(candidate)) return candidate.string();
  }
  return {};
}

}  // namespace whatif::cli
