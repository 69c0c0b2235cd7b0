// String interning for the symbol layer: file and function names handed out as string_views that
// stay valid for the owner's lifetime. Single-threaded (profiler thread or tools).
#pragma once
#include <string>
#include <string_view>
#include <unordered_set>

namespace whatif::symbols {

class Interner {
 public:
  /// Returns a view of a stored copy of `text`; equal texts give the same data pointer.
  std::string_view intern(std::string_view text) {
    return *strings_.emplace(text).first;  // node-based set: elements never move
  }

 private:
  std::unordered_set<std::string> strings_;
};

/// Lexically normalises a path: drops "//" and "/./", folds "dir/.."; a relative path keeps its
/// leading ".." components.
std::string normalize_path(std::string_view path);

/// True when `query` names `path` by whole trailing components ("main.c" matches "/src/main.c",
/// "ain.c" does not); an absolute query must equal the path.
bool path_matches(std::string_view path, std::string_view query);

}  // namespace whatif::symbols
