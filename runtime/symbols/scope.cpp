// Binary and source scopes: '%' wildcards, '!' exclusions, system-header (and Rust standard library)
// exclusion, dependency crates out of scope unless selected.
// Pure functions; any thread (the runtime calls them on the profiler thread).
#include <algorithm>
#include <string_view>

#include "symbols/symbol_map.h"

namespace whatif::symbols {
namespace {

std::string_view basename(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// A pattern without '/' may also match the last path component.
bool pattern_matches(std::string_view pattern, std::string_view path) {
  if (wildcard_match(pattern, path)) return true;
  return pattern.find('/') == std::string_view::npos && wildcard_match(pattern, basename(path));
}

/// In scope when some positive pattern matches (or there are none) and no '!' pattern does.
template <typename Match>
bool admitted(const std::vector<std::string>& patterns, Match&& match) {
  bool has_positive = false, positive = false;
  for (const auto& raw : patterns) {
    std::string_view pattern(raw);
    if (!pattern.empty() && pattern[0] == '!') {
      if (match(pattern.substr(1))) return false;
    } else {
      has_positive = true;
      positive = positive || match(pattern);
    }
  }
  return positive || !has_positive;
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view text) {
  // Greedy matching with backtracking to the last '%': linear in practice, no recursion.
  std::size_t p = 0, t = 0, star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '%') {
      star = p++;
      star_text = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '%') ++p;
  return p == pattern.size();
}

bool Scope::object_in_scope(const LoadedObject& object) const {
  return admitted(binary_patterns, [&](std::string_view pattern) {
    if (pattern == "MAIN") return object.is_main;
    if (pattern == "OWN") return own_library(object);
    return pattern_matches(pattern, object.path);
  });
}

bool Scope::own_library(const LoadedObject& object) const {
  if (object.is_main || object.path.empty() || object.path[0] != '/' || object.path == runtime_path) return false;
  return std::none_of(system_library_dirs.begin(), system_library_dirs.end(), [&](const std::string& dir) {
    return std::string_view(object.path).substr(0, dir.size()) == dir;
  });
}

bool Scope::file_in_scope(std::string_view file) const {
  if (file.empty()) return false;
  for (const auto& prefix : system_prefixes) {
    if (file.substr(0, prefix.size()) == prefix) return false;
  }
  bool dependency = std::any_of(dependency_patterns.begin(), dependency_patterns.end(),
                                [&](const std::string& pattern) { return wildcard_match(pattern, file); });
  if (dependency) {
    bool selected = std::any_of(source_patterns.begin(), source_patterns.end(), [&](const std::string& pattern) {
      return !pattern.empty() && pattern[0] != '!' && pattern != "%" && pattern_matches(pattern, file);
    });
    if (!selected) return false;
  }
  return admitted(source_patterns, [&](std::string_view pattern) { return pattern_matches(pattern, file); });
}

}  // namespace whatif::symbols
